//! A call's result as the message each provider expects back, paired with the call by its id.
//!
//! - OpenAI Chat Completions: `{"role": "tool", "tool_call_id", "content"}`
//!   (<https://platform.openai.com/docs/guides/function-calling>).
//! - OpenAI Responses: `{"type": "function_call_output", "call_id", "output"}`
//!   (<https://platform.openai.com/docs/api-reference/responses/create#responses-create-input>).
//! - Anthropic: a `{"type": "tool_result", "tool_use_id", "content", "is_error"}` block of the
//!   next user message (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>).
//! - Gemini: a `{"functionResponse": {"id", "name", "response"}}` part, whose `response` holds
//!   `output` or `error` (<https://ai.google.dev/api/caching#FunctionResponse>).
//! - MCP: a `CallToolResult` `{"content": [...], "structuredContent", "isError"}`
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result>):
//!   `content` is a text block of the value (none when there is no value), then every block in
//!   MCP's shapes (a file as an embedded resource, see `mcp.rs`); `structuredContent` when the
//!   tool declares an output schema and the call succeeded, wrapped as `{"result": value}` when
//!   that schema is not an object schema.
//!
//! # Blocks
//!
//! A result without [blocks](crate::content) keeps the plain form above: its value as text.
//! With blocks, the value comes first as text (Gemini keeps it in `response`), then each block
//! in order, as the provider's own part where it has one. What a provider cannot take becomes,
//! in its place, a text that names it and says why, such as `[audio/wav, 5120 bytes: Anthropic
//! tool results carry no audio]`: nothing is left out silently. Chat Completions' `tool`
//! message takes text only, so its images, audio and PDFs go in a `user` message after it
//! (`Registry::result_messages`), each announced in the `tool` message in its place.
//!
//! | block | OpenAI Chat Completions | OpenAI Responses | Anthropic | Gemini |
//! | --- | --- | --- | --- | --- |
//! | value | `text` part of the `tool` message | `input_text` | `text` | `response`'s `output` or `error` |
//! | text | `text` part | `input_text` | `text` | `inlineData`, `text/plain` |
//! | image: PNG, JPEG, WebP | `image_url` (data URL) in the `user` message | `input_image` (data URL) | `image` (base64 source) | `inlineData` |
//! | image: GIF | as PNG | as PNG | as PNG | text: left out |
//! | image: any other (SVG, ...) | text: left out | text: left out | text: left out | text: left out |
//! | audio: WAV, MP3 | `input_audio` (base64, `wav`/`mp3`) in the `user` message | text: left out | text: left out | text: left out |
//! | audio: any other | text: left out | text: left out | text: left out | text: left out |
//! | file: PDF | `file` (`file_data` data URL, `filename`) in the `user` message | `input_file` (`file_data` data URL, `filename`) | `document` (base64 PDF source, `title`) | `inlineData`, `application/pdf`, `displayName` |
//! | file: text (`text/*`, JSON, XML, in UTF-8) | its text in a `text` part, after a line that names it | `input_file` | `document` (plain-text source, `title`) | `inlineData`, `text/plain`, `displayName` |
//! | file: office document, spreadsheet | text: left out | `input_file` | text: left out | text: left out |
//! | file: any other (zip, ...) | text: left out | text: left out | text: left out | text: left out |
//! | resource link | text: its URI, name, type, size and description (no provider's model fetches a link) | the same | the same | the same |
//! | embedded resource | as a file of its MIME type named by its URI (text without a file name: as text, after a line that names it, for OpenAI) | the same | the same | the same |
//!
//! A named image (a file, an embedded resource) goes after a text that names it where the
//! image part has no field for a name (OpenAI Responses, Anthropic). MIME types are read
//! without parameters, `image/jpg`, `audio/x-wav` and `audio/mp3` as their standard names.
//!
//! What each provider accepts, as it documents it (and as `tools/tests/provider_types.rs`
//! checks against the types of its official SDK):
//!
//! - OpenAI Chat Completions: a `tool` message's content is a string or `text` parts; a `user`
//!   message's parts are `text`, `image_url`, `input_audio` (`wav`, `mp3`) and `file`
//!   (<https://platform.openai.com/docs/api-reference/chat/create>); its `file` parts are PDFs
//!   only, and for text "read the file in your application and send its contents as a text
//!   content part" (<https://developers.openai.com/api/docs/guides/file-inputs>).
//! - OpenAI Responses: a `function_call_output`'s `output` is a string or a list of
//!   `input_text`, `input_image` and `input_file` parts, with no audio
//!   (<https://platform.openai.com/docs/guides/function-calling>,
//!   <https://platform.openai.com/docs/api-reference/responses/create#responses-create-input>);
//!   `input_file` takes PDFs, text and code, rich documents, presentations and spreadsheets
//!   (<https://developers.openai.com/api/docs/guides/file-inputs>). OpenAI's images are PNG, JPEG,
//!   WebP and non-animated GIF (<https://platform.openai.com/docs/guides/images-vision>).
//! - Anthropic: a `tool_result`'s `content` is a string or `text`, `image` and `document`
//!   blocks (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>);
//!   images are JPEG, PNG, GIF and WebP (<https://docs.anthropic.com/en/docs/build-with-claude/vision>);
//!   documents are base64 PDFs (<https://docs.anthropic.com/en/docs/build-with-claude/pdf-support>)
//!   or plain text (<https://docs.anthropic.com/en/docs/build-with-claude/citations>).
//! - Gemini: a `functionResponse`'s `parts` hold media as `inlineData` (`mimeType`, base64
//!   `data`, `displayName`), images (PNG, JPEG, WebP) and documents (PDF, plain text)
//!   (<https://ai.google.dev/gemini-api/docs/function-calling#multimodal>,
//!   `FunctionResponsePart` at <https://ai.google.dev/api/caching#FunctionResponse>); they
//!   hold no text field, so text goes as `text/plain` data.

use serde_json::{Map, Value, json};

use super::Provider;
use super::parts::{
    ANTHROPIC, CHAT, GEMINI, RESPONSES, answer_value, parts, parts_or_text, text_of, text_part,
};
use crate::call::ToolCall;
use crate::call::ToolResult;

/// `result`, the answer to `call`, as the message `provider` expects back; for MCP, a
/// successful value is also the structured content of a tool that declares `output_schema`.
pub(crate) fn result_message(
    provider: Provider,
    output_schema: Option<&Value>,
    call: &ToolCall,
    result: &ToolResult,
) -> Value {
    let id = call.id.as_deref().unwrap_or_default();
    let text = text_of(result);
    match provider {
        Provider::OpenAi => chat_messages(call, result, text).swap_remove(0),
        Provider::Responses => {
            let output = parts_or_text(result, &RESPONSES, text);
            json!({ "type": "function_call_output", "call_id": id, "output": output })
        }
        Provider::Anthropic => json!({
            "type": "tool_result",
            "tool_use_id": id,
            "content": parts_or_text(result, &ANTHROPIC, text),
            "is_error": !result.success,
        }),
        Provider::Gemini => {
            let key = if result.success { "output" } else { "error" };
            let mut response = Map::new();
            response.insert(key.into(), answer_value(result));
            let mut part = Map::new();
            if let Some(id) = &call.id {
                part.insert("id".into(), id.clone().into());
            }
            part.insert("name".into(), call.name.clone().into());
            part.insert("response".into(), Value::Object(response));
            if let Some(parts) = parts(result, &GEMINI) {
                part.insert("parts".into(), Value::Array(parts.here));
            }
            json!({ "functionResponse": part })
        }
        Provider::Mcp => mcp_message(output_schema, text, result),
    }
}
/// What to append to a conversation for one tool result ([`Registry::result_message`](crate::Registry::result_message)):
/// the provider's result message and, for OpenAI Chat Completions when the result holds images,
/// audio or PDFs (which a `tool` message cannot carry), the `user` message that carries them
/// after it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultMessage {
    /// The provider's result message: a Chat Completions `tool` message, a Responses
    /// `function_call_output` item, an Anthropic `tool_result` block, a Gemini
    /// `functionResponse` part, an MCP `CallToolResult`.
    pub message: Value,
    /// The `user` message with the media `message` announces (OpenAI Chat Completions only).
    pub media: Option<Value>,
}

impl ResultMessage {
    /// `result`, the answer to `call`, for `provider`; for MCP, a successful value is also the
    /// structured content of a tool that declares `output_schema`.
    pub(crate) fn of(
        provider: Provider,
        output_schema: Option<&Value>,
        call: &ToolCall,
        result: &ToolResult,
    ) -> Self {
        let mut messages = result_messages(provider, output_schema, call, result).into_iter();
        let message = messages.next().unwrap_or(Value::Null);
        Self {
            message,
            media: messages.next(),
        }
    }

    /// Every message to append, in order: [`message`](Self::message), then
    /// [`media`](Self::media) when there is one.
    pub fn into_messages(self) -> Vec<Value> {
        std::iter::once(self.message).chain(self.media).collect()
    }
}

impl From<ResultMessage> for Value {
    /// The provider's result message alone.
    fn from(answer: ResultMessage) -> Self {
        answer.message
    }
}

/// Every message to append for `result`, in order: for OpenAI Chat Completions the `tool`
/// message, then a `user` message with the media a tool message cannot carry, when there are
/// any; for the others the one message of [`result_message`].
pub(crate) fn result_messages(
    provider: Provider,
    output_schema: Option<&Value>,
    call: &ToolCall,
    result: &ToolResult,
) -> Vec<Value> {
    match provider {
        Provider::OpenAi => chat_messages(call, result, text_of(result)),
        _ => vec![result_message(provider, output_schema, call, result)],
    }
}

/// The Chat Completions messages of `result`: the `tool` message (its text as one string when
/// there are no blocks, else text parts), then a `user` message with the media it announces,
/// when there are any. `text` is [`text_of`] the result.
fn chat_messages(call: &ToolCall, result: &ToolResult, text: String) -> Vec<Value> {
    let id = call.id.as_deref().unwrap_or_default();
    let Some(parts) = parts(result, &CHAT) else {
        return vec![json!({ "role": "tool", "tool_call_id": id, "content": text })];
    };
    let mut messages = vec![json!({ "role": "tool", "tool_call_id": id, "content": parts.here })];
    if !parts.after.is_empty() {
        let intro = format!(
            "The media of the result of tool call {id} ({}), announced in that result:",
            call.name
        );
        let content: Vec<Value> = std::iter::once(text_part(&intro))
            .chain(parts.after)
            .collect();
        messages.push(json!({ "role": "user", "content": content }));
    }
    messages
}

/// `result`'s parts for a provider whose result holds a list of them, or `text` when the
/// result has no blocks (the shape every plain result keeps).
/// The MCP `CallToolResult` of `result`: `text` (the value as the model reads it) as the first
/// block unless there is no value, then every block; `structuredContent` as the header says.
fn mcp_message(output_schema: Option<&Value>, text: String, result: &ToolResult) -> Value {
    let parts = McpParts::of(output_schema, text, result);
    let mut content = Vec::with_capacity(1 + result.blocks.len());
    if let Some(text) = parts.text {
        content.push(json!({ "type": "text", "text": text }));
    }
    content.extend(result.blocks.iter().map(super::mcp::content_block));
    let mut message = Map::new();
    message.insert("content".into(), Value::Array(content));
    if let Some(structured) = parts.structured {
        message.insert("structuredContent".into(), structured);
    }
    message.insert("isError".into(), parts.is_error.into());
    Value::Object(message)
}

/// What MCP's `CallToolResult` of a result holds besides its blocks (which follow the text,
/// each as [`content_block`](super::mcp::content_block) writes it): the one message of
/// [`Registry::result_message`](crate::Registry::result_message) for [`Provider::Mcp`], in parts, for the MCP server to build rmcp's type
/// from without a `Value` in between.
pub struct McpParts {
    /// The first text block: the value as the model reads it; `None` when there is no value.
    pub text: Option<String>,
    /// `structuredContent`, for a successful value of a tool that declares an output schema.
    pub structured: Option<Value>,
    /// `isError`.
    pub is_error: bool,
}

impl McpParts {
    /// The parts of `result` (`text` being [`text_of`] it) for a tool of `output_schema`.
    fn of(output_schema: Option<&Value>, text: String, result: &ToolResult) -> Self {
        let has_value = !matches!((&result.content, &result.message), (Value::Null, None));
        Self {
            text: has_value.then_some(text),
            structured: output_schema
                .filter(|_| result.success)
                .and_then(|schema| super::mcp::structured_content(schema, &result.content)),
            is_error: !result.success,
        }
    }

    /// The parts of `result` for a tool of `output_schema`.
    pub fn new(output_schema: Option<&Value>, result: &ToolResult) -> Self {
        Self::of(output_schema, text_of(result), result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::wire::decode;
    use crate::media::{Audio, Block, File, Image, Resource, ResourceLink};

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n";
    const WAV: &[u8] = b"RIFF\0\0\0\0WAVE";

    fn call() -> ToolCall {
        let mut call = ToolCall::new("report__get", json!({}));
        call.id = Some("call_1".into());
        call
    }

    /// A value and one block of every kind, some of which no provider takes.
    fn every_kind() -> ToolResult {
        let link = ResourceLink::new("kb://q3", "q3")
            .with_mime_type("application/pdf")
            .with_description("the archive");
        ToolResult::ok(json!({ "quarter": 3 }))
            .with_block(Block::text("Summary below."))
            .with_block(Image::png(PNG.to_vec()))
            .with_block(Audio::wav(WAV.to_vec()))
            .with_block(File::new("q3.pdf", b"%PDF-1.7".to_vec()))
            .with_block(File::new("q3.csv", b"a,b\n1,2\n".to_vec()))
            .with_block(File::new("q3.zip", b"PK\x03\x04".to_vec()))
            .with_block(link)
            .with_block(Resource::text("kb://notes", "a note"))
            .with_block(Resource::blob("kb://logo", "image/png", PNG.to_vec()))
            .with_block(Image::new("image/svg+xml", b"<svg/>".to_vec()))
            .with_block(Block::text(""))
    }

    fn message(provider: Provider, result: &ToolResult) -> Value {
        result_message(provider, None, &call(), result)
    }

    /// The `type` of each part.
    fn types(parts: &Value) -> Vec<&str> {
        let parts = parts.as_array().expect("a list of parts");
        parts
            .iter()
            .map(|part| part["type"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn a_result_without_blocks_keeps_its_plain_form() {
        let result = ToolResult::ok(json!({ "n": 1 }));
        let chat = result_messages(Provider::OpenAi, None, &call(), &result);
        assert_eq!(
            chat,
            [json!({ "role": "tool", "tool_call_id": "call_1", "content": r#"{"n":1}"# })]
        );
        assert_eq!(
            message(Provider::Responses, &result)["output"],
            r#"{"n":1}"#
        );
        assert_eq!(
            message(Provider::Anthropic, &result)["content"],
            r#"{"n":1}"#
        );
        let gemini = message(Provider::Gemini, &result);
        assert_eq!(
            gemini["functionResponse"]["response"],
            json!({ "output": { "n": 1 } })
        );
        assert!(gemini["functionResponse"].get("parts").is_none());
        for provider in Provider::ALL {
            let messages = result_messages(provider, None, &call(), &result);
            assert_eq!(messages, [message(provider, &result)], "{provider}");
        }
    }

    #[test]
    fn responses_output_is_a_list_of_input_parts() {
        let output = &message(Provider::Responses, &every_kind())["output"];
        assert_eq!(
            types(output),
            [
                "input_text",  // the value
                "input_text",  // the text block
                "input_image", // the PNG
                "input_text",  // the audio, refused
                "input_file",  // the PDF
                "input_file",  // the CSV
                "input_text",  // the zip, refused
                "input_text",  // the link, refused
                "input_text",  // the text resource, which has no file name
                "input_text",  // the label of the PNG resource
                "input_image", // the PNG resource
                "input_text",  // the SVG, refused
            ]
        );
        assert_eq!(output[0]["text"], r#"{"quarter":3}"#);
        assert_eq!(output[1]["text"], "Summary below.");
        assert_eq!(output[2]["image_url"], "data:image/png;base64,iVBORw0KGgo=");
        assert_eq!(
            output[3]["text"],
            "[audio/wav, 12 bytes: OpenAI function call outputs carry no audio]"
        );
        assert_eq!(
            output[4],
            json!({
                "type": "input_file",
                "file_data": "data:application/pdf;base64,JVBERi0xLjc=",
                "filename": "q3.pdf",
            })
        );
        assert_eq!(
            output[5],
            json!({
                "type": "input_file",
                "file_data": "data:text/csv;base64,YSxiCjEsMgo=",
                "filename": "q3.csv",
            })
        );
        assert!(
            output[6]["text"]
                .as_str()
                .unwrap()
                .starts_with("[q3.zip (application/zip")
        );
        assert_eq!(
            output[7]["text"],
            "[resource link kb://q3 (q3, application/pdf): the archive: \
             OpenAI function call outputs carry no resource links]"
        );
        assert_eq!(
            output[8]["text"],
            "[kb://notes (text/plain, 6 bytes)]\na note"
        );
        assert_eq!(output[9]["text"], "[kb://logo (image/png, 8 bytes)]");
        assert_eq!(
            output[11]["text"],
            "[image/svg+xml, 6 bytes: OpenAI takes PNG, JPEG, GIF and WebP images]"
        );
    }

    #[test]
    fn anthropic_content_is_text_image_and_document_blocks() {
        let message = message(Provider::Anthropic, &every_kind());
        assert_eq!(message["is_error"], false);
        let content = &message["content"];
        assert_eq!(
            types(content),
            [
                "text", "text", "image", "text", "document", "document", "text", "text",
                "document", "text", "image", "text",
            ]
        );
        assert_eq!(
            content[2]["source"],
            json!({ "type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo=" })
        );
        assert_eq!(
            content[3]["text"],
            "[audio/wav, 12 bytes: Anthropic tool results carry no audio]"
        );
        assert_eq!(
            content[4],
            json!({
                "type": "document",
                "source": { "type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjc=" },
                "title": "q3.pdf",
            })
        );
        assert_eq!(
            content[5],
            json!({
                "type": "document",
                "source": { "type": "text", "media_type": "text/plain", "data": "a,b\n1,2\n" },
                "title": "q3.csv",
            })
        );
        assert_eq!(
            content[6]["text"],
            "[q3.zip (application/zip, 4 bytes): Anthropic documents are PDF or plain text]"
        );
        assert_eq!(content[8]["title"], "kb://notes");
        assert_eq!(content[9]["text"], "[kb://logo (image/png, 8 bytes)]");
    }

    #[test]
    fn gemini_keeps_the_value_in_response_and_the_rest_in_parts() {
        let message = message(Provider::Gemini, &every_kind());
        let response = &message["functionResponse"];
        assert_eq!(response["response"], json!({ "output": { "quarter": 3 } }));
        let parts = response["parts"].as_array().unwrap();
        let inline: Vec<(&str, String, Option<&str>)> = parts
            .iter()
            .map(|part| {
                let blob = &part["inlineData"];
                let data = decode(blob["data"].as_str().unwrap()).unwrap();
                let name = blob.get("displayName").and_then(Value::as_str);
                let mime = blob["mimeType"].as_str().unwrap();
                (mime, String::from_utf8_lossy(&data).into_owned(), name)
            })
            .collect();
        let text = |text: &str| ("text/plain", text.to_owned(), None);
        assert_eq!(inline.len(), 10, "{inline:?}");
        assert_eq!(inline[0], text("Summary below."));
        assert_eq!(inline[1].0, "image/png");
        assert_eq!(
            inline[2],
            text("[audio/wav, 12 bytes: Gemini function responses carry no audio]")
        );
        assert_eq!(
            inline[3],
            ("application/pdf", "%PDF-1.7".into(), Some("q3.pdf"))
        );
        assert_eq!(
            inline[4],
            ("text/plain", "a,b\n1,2\n".into(), Some("q3.csv"))
        );
        assert!(
            inline[5]
                .1
                .ends_with("Gemini function responses take PDF and plain text]")
        );
        assert!(inline[6].1.contains("kb://q3"));
        assert_eq!(
            inline[7],
            ("text/plain", "a note".into(), Some("kb://notes"))
        );
        assert_eq!(inline[8].2, Some("kb://logo"));
        assert!(
            inline[9]
                .1
                .ends_with("Gemini takes PNG, JPEG and WebP images]")
        );
    }

    #[test]
    fn chat_says_in_the_tool_message_what_the_user_message_after_it_carries() {
        let messages = result_messages(Provider::OpenAi, None, &call(), &every_kind());
        assert_eq!(messages.len(), 2);
        let tool = &messages[0];
        assert_eq!(tool["role"], "tool");
        assert_eq!(tool["tool_call_id"], "call_1");
        assert_eq!(tool, &message(Provider::OpenAi, &every_kind()));
        let said: Vec<&str> = (tool["content"].as_array().unwrap().iter())
            .map(|part| {
                assert_eq!(part["type"], "text");
                part["text"].as_str().unwrap()
            })
            .collect();
        let after = "in the user message after this result]";
        assert_eq!(said[0], r#"{"quarter":3}"#);
        assert_eq!(said[1], "Summary below.");
        assert_eq!(said[2], format!("[image/png, 8 bytes: {after}"));
        assert_eq!(said[3], format!("[audio/wav, 12 bytes: {after}"));
        assert_eq!(
            said[4],
            format!("[q3.pdf (application/pdf, 8 bytes): {after}")
        );
        assert_eq!(said[5], "[q3.csv (text/csv, 8 bytes)]\na,b\n1,2\n");
        assert!(said[6].ends_with("OpenAI Chat Completions takes PDF files only]"));
        assert!(said[7].ends_with("OpenAI Chat Completions messages carry no resource links]"));
        assert_eq!(said[8], "[kb://notes (text/plain, 6 bytes)]\na note");
        assert_eq!(said[9], format!("[kb://logo (image/png, 8 bytes): {after}"));
        assert!(said[10].ends_with("OpenAI takes PNG, JPEG, GIF and WebP images]"));
        assert_eq!(said.len(), 11);

        let user = &messages[1];
        assert_eq!(user["role"], "user");
        let content = &user["content"];
        assert_eq!(
            types(content),
            ["text", "image_url", "input_audio", "file", "image_url"]
        );
        assert!(
            content[0]["text"]
                .as_str()
                .unwrap()
                .contains("call_1 (report__get)")
        );
        assert_eq!(
            content[2]["input_audio"],
            json!({ "data": "UklGRgAAAABXQVZF", "format": "wav" })
        );
        assert_eq!(
            content[3]["file"],
            json!({ "file_data": "data:application/pdf;base64,JVBERi0xLjc=", "filename": "q3.pdf" })
        );
    }

    #[test]
    fn chat_with_text_only_blocks_is_one_message() {
        let result = ToolResult::ok("done").with_block(File::new("a.txt", b"hi".to_vec()));
        let messages = result_messages(Provider::OpenAi, None, &call(), &result);
        assert_eq!(
            messages,
            [
                json!({ "role": "tool", "tool_call_id": "call_1", "content": [
                { "type": "text", "text": "done" },
                { "type": "text", "text": "[a.txt (text/plain, 2 bytes)]\nhi" },
            ] })
            ]
        );
    }

    #[test]
    fn a_failure_with_blocks_is_still_an_error() {
        let result = ToolResult::failure("the chart is empty").with_block(Image::png(PNG.to_vec()));
        let anthropic = message(Provider::Anthropic, &result);
        assert_eq!(anthropic["is_error"], true);
        assert_eq!(anthropic["content"][0]["text"], "the chart is empty");
        assert_eq!(anthropic["content"][1]["type"], "image");
        let gemini = &message(Provider::Gemini, &result)["functionResponse"];
        assert_eq!(gemini["response"], json!({ "error": "the chart is empty" }));
        assert_eq!(gemini["parts"][0]["inlineData"]["mimeType"], "image/png");
    }

    #[test]
    fn a_result_of_blocks_only_has_no_value_part() {
        let result = ToolResult::from_blocks(vec![Image::jpeg(b"\xff\xd8\xff".to_vec()).into()]);
        let content = &message(Provider::Anthropic, &result)["content"];
        assert_eq!(types(content), ["image"]);
        assert_eq!(content[0]["source"]["media_type"], "image/jpeg");
        let output = &message(Provider::Responses, &result)["output"];
        assert_eq!(types(output), ["input_image"]);
        // Empty text is nothing to say: the plain form stays.
        let empty = ToolResult::from_blocks(vec![Block::text("")]);
        assert_eq!(message(Provider::Anthropic, &empty)["content"], "null");
    }

    #[test]
    fn mime_aliases_and_parameters_are_read_as_their_types() {
        let result = ToolResult::from_blocks(vec![
            Image::new("image/JPG", b"\xff\xd8\xff".to_vec()).into(),
            Audio::new("audio/mp3", b"ID3".to_vec()).into(),
            File::new("n.md", b"# hi".to_vec())
                .with_mime_type("text/markdown; charset=utf-8")
                .into(),
        ]);
        let content = &message(Provider::Anthropic, &result)["content"];
        assert_eq!(content[0]["source"]["media_type"], "image/jpeg");
        assert_eq!(content[2]["source"]["data"], "# hi");
        let chat = result_messages(Provider::OpenAi, None, &call(), &result);
        assert_eq!(chat[1]["content"][2]["input_audio"]["format"], "mp3");
        assert_eq!(
            chat[0]["content"][2]["text"],
            "[n.md (text/markdown, 4 bytes)]\n# hi"
        );
    }

    #[test]
    fn text_that_is_not_utf8_is_a_binary_file() {
        let result = ToolResult::from_blocks(vec![File::new("a.txt", b"\xff\xfe".to_vec()).into()]);
        assert_eq!(
            message(Provider::Anthropic, &result)["content"][0]["text"],
            "[a.txt (text/plain, 2 bytes): Anthropic documents are PDF or plain text]"
        );
    }

    #[test]
    fn an_embedded_resource_is_a_file_named_by_its_uri() {
        let pdf = |uri| Resource::blob(uri, "application/pdf", b"%PDF-1.7".to_vec());
        let result = ToolResult::from_blocks(vec![
            pdf("https://example.com/r/q3.pdf?v=2").into(),
            pdf("kb://q4").into(),
        ]);
        let output = &message(Provider::Responses, &result)["output"];
        assert_eq!(output[0]["filename"], "q3.pdf");
        assert_eq!(output[1]["type"], "input_file");
        assert!(output[1].get("filename").is_none(), "no file name to give");
        let content = &message(Provider::Anthropic, &result)["content"];
        assert_eq!(content[0]["title"], "https://example.com/r/q3.pdf?v=2");
        assert_eq!(content[1]["title"], "kb://q4");
    }

    #[test]
    fn office_documents_go_to_responses_as_files() {
        let docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
        let result = ToolResult::from_blocks(vec![
            File::new("a.docx", b"PK\x03\x04".to_vec())
                .with_mime_type(docx)
                .into(),
            Audio::new("audio/ogg", b"OggS".to_vec()).into(),
        ]);
        let output = &message(Provider::Responses, &result)["output"];
        assert_eq!(output[0]["type"], "input_file");
        assert_eq!(output[0]["filename"], "a.docx");
        let chat = result_messages(Provider::OpenAi, None, &call(), &result);
        assert_eq!(chat.len(), 1, "neither a docx nor an OGG clip goes to chat");
        assert!(
            chat[0]["content"][1]["text"]
                .as_str()
                .unwrap()
                .ends_with("takes WAV and MP3 audio]")
        );
    }
}
