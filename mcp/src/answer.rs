//! Results both ways: a registry result as rmcp's `CallToolResult` (what the server answers),
//! and a mounted MCP server's answer as a [`ToolResult`]: every block in order (decoded only
//! within the registry's content limits), the structured value unwrapped when the server wraps
//! it, and the text that only repeats the value left out.

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents, ResultType};
use serde_json::Value;

use tool_registry_core::Registry;
use tool_registry_core::Tool;
use tool_registry_core::call::push_bounded;
use tool_registry_core::content::{
    Audio, Block, BlockKind, ContentLimits, File, Image, Resource, ResourceBody, ResourceLink,
    too_many_blocks, wire,
};
use tool_registry_core::format::McpParts;
use tool_registry_core::format::mcp::{content_block, file_name, unwrap_structured};
use tool_registry_core::{ToolError, ToolResult};

/// What the handler of one mounted tool knows of it.
#[derive(Clone)]
pub(super) struct Mounted {
    pub(super) module: String,
    /// Its name on the server.
    pub(super) remote: String,
    /// Its name here.
    pub(super) local: String,
    /// Whether the server wraps its values (see [`tool_registry_core::format::mcp`]).
    pub(super) wrapped: bool,
    /// The registry's bounds on blocks, checked before a block is decoded.
    pub(super) limits: ContentLimits,
}

/// An MCP result as a tool result, every block kept in order:
///
/// - with `structuredContent` (unwrapped when the tool's schema says the server wraps it), that
///   is the value, and a text block that only repeats it (as JSON, or as the string it is) is
///   left out; any other text is a text block;
/// - without, the text blocks joined are the value, read as JSON where they are JSON (no value
///   when there is no text), and the other blocks follow;
/// - `isError` is a handler error with the text, at most
///   [`MAX_ERROR_BYTES`](tool_registry_core::call::MAX_ERROR_BYTES) of it.
///
/// Failed or not, an answer of more blocks than the registry's `max_blocks` is
/// `invalid_output` before any block is read, as is text for the value longer than
/// `max_result_bytes`, before it is joined. A block that cannot be read (base64 that is not, a
/// kind this version does not know, more bytes than a block may hold) makes the answer
/// `invalid_output` too; the registry then checks the blocks it reads (MIME types against
/// bytes, link schemes, sizes) and the value against the tool's output schema.
pub(super) fn answer(result: CallToolResult, mounted: &Mounted) -> Result<ToolResult, ToolError> {
    let limits = &mounted.limits;
    let invalid = |path: String, message: String| ToolError::InvalidOutput {
        tool: mounted.local.clone(),
        path,
        message,
    };
    if result.content.len() > limits.max_blocks {
        let refused = too_many_blocks(Some(result.content.len()), limits.max_blocks);
        return Err(invalid(
            format!("blocks[{}]", refused.index),
            refused.message,
        ));
    }
    if result.is_error == Some(true) {
        return Err(ToolError::Handler {
            tool: mounted.local.clone(),
            message: error_text(&result.content),
        });
    }
    let structured = result
        .structured_content
        .map(|value| match mounted.wrapped {
            true => unwrap_structured(value),
            false => value,
        });
    let mut texts = Vec::new();
    // The bytes the value's text comes to joined: counted before it is.
    let mut text_bytes = 0usize;
    let mut blocks = Vec::with_capacity(result.content.len());
    for block in result.content {
        let block = match (block, &structured) {
            (ContentBlock::Text(text), None) => {
                text_bytes += usize::from(!texts.is_empty()) + text.text.len();
                if text_bytes > limits.max_result_bytes {
                    return Err(invalid(
                        String::new(),
                        format!(
                            "the answer's text, its value without `structuredContent`, comes to more than the limit of {} bytes a result",
                            limits.max_result_bytes
                        ),
                    ));
                }
                texts.push(text.text);
                continue;
            }
            (ContentBlock::Text(text), Some(value)) if repeats(&text.text, value) => continue,
            (other, _) => block_of(other, limits)
                .map_err(|message| invalid(format!("blocks[{}]", blocks.len()), message))?,
        };
        blocks.push(block);
    }
    let content = match structured {
        Some(value) => value,
        None if texts.is_empty() => Value::Null,
        None => {
            let text = texts.join("\n");
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        }
    };
    let mut result = ToolResult::ok(content);
    result.blocks = blocks.into();
    Ok(result)
}

/// The text blocks of a failed answer joined, as far as
/// [`MAX_ERROR_BYTES`](tool_registry_core::call::MAX_ERROR_BYTES) goes: what is past it is never copied.
fn error_text(content: &[ContentBlock]) -> String {
    let mut message = String::new();
    for text in content.iter().filter_map(ContentBlock::as_text) {
        let fits = (message.is_empty() || push_bounded(&mut message, "\n"))
            && push_bounded(&mut message, &text.text);
        if !fits {
            break;
        }
    }
    message
}

/// Whether `text` only repeats `value`: the string it is, or its JSON. A value that is one
/// `result` member (the Python SDK's wrapper, which carries no marker) is repeated by its
/// member too.
fn repeats(text: &str, value: &Value) -> bool {
    let inner = match value {
        Value::Object(map) if map.len() == 1 => map.get("result"),
        _ => None,
    };
    let mut parsed = None;
    let mut is = |candidate: &Value| match candidate {
        Value::String(string) if string == text => true,
        _ => parsed
            .get_or_insert_with(|| serde_json::from_str::<Value>(text).ok())
            .as_ref()
            .is_some_and(|parsed| parsed == candidate),
    };
    is(value) || inner.is_some_and(is)
}

/// One non-text MCP content block as a block: an embedded binary resource under the
/// `attachment:` scheme is a [`File`] again; binary data is decoded only when its base64 can
/// hold no more than `limits` allow a block.
fn block_of(block: ContentBlock, limits: &ContentLimits) -> Result<Block, String> {
    Ok(match block {
        ContentBlock::Text(text) => Block::Text(text.text),
        ContentBlock::Image(image) => Block::Image(Image::new(
            image.mime_type,
            binary(BlockKind::Image, &image.data, limits)?,
        )),
        ContentBlock::Audio(audio) => Block::Audio(Audio::new(
            audio.mime_type,
            binary(BlockKind::Audio, &audio.data, limits)?,
        )),
        ContentBlock::ResourceLink(link) => Block::ResourceLink(ResourceLink {
            uri: link.uri,
            name: link.name,
            title: link.title,
            description: link.description,
            mime_type: link.mime_type,
            size: link.size,
        }),
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Block::Resource(Resource {
                uri,
                mime_type,
                body: ResourceBody::Text(text),
            }),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => {
                let data = binary(BlockKind::Resource, &blob, limits)?;
                match (file_name(&uri), mime_type) {
                    (Some(name), Some(mime_type)) => {
                        Block::File(File::new(name, data).with_mime_type(mime_type))
                    }
                    (Some(name), None) => Block::File(File::new(name, data)),
                    (None, mime_type) => Block::Resource(Resource {
                        uri,
                        mime_type,
                        body: ResourceBody::Blob(data),
                    }),
                }
            }
            _ => return Err("an embedded resource of a kind this version does not read".into()),
        },
        _ => return Err("a content block of a kind this version does not read".into()),
    })
}

/// Base64 text as bytes, refused before decoding when it holds more than a block may.
fn binary(kind: BlockKind, text: &str, limits: &ContentLimits) -> Result<bytes::Bytes, String> {
    // Four characters of base64 make three bytes, less up to two of padding.
    let at_least = (text.len() / 4 * 3).saturating_sub(2);
    if at_least > limits.max_block_bytes {
        return Err(format!(
            "the {kind} block holds at least {at_least} bytes, more than the limit of {} bytes a block",
            limits.max_block_bytes
        ));
    }
    wire::decode(text)
}

/// `result`, the answer of the tool `name`, as rmcp's `CallToolResult`: the registry's MCP
/// result message ([`Registry::result_message`] for MCP) built as rmcp's types, the text and
/// the structured value moved in, a block read into rmcp's type from the registry's wire form.
pub(crate) fn call_tool_result(
    registry: &Registry,
    name: &str,
    result: &ToolResult,
) -> Result<CallToolResult, ErrorData> {
    let tool = registry.get(name, tool_registry_core::Listing::every());
    typed_answer(tool.as_ref().and_then(Tool::output_schema), result)
}

/// [`call_tool_result`] for a tool whose output schema is at hand.
pub(super) fn typed_answer(
    output_schema: Option<&Value>,
    result: &ToolResult,
) -> Result<CallToolResult, ErrorData> {
    let parts = McpParts::new(output_schema, result);
    let mut content = Vec::with_capacity(usize::from(parts.text.is_some()) + result.blocks.len());
    content.extend(parts.text.map(ContentBlock::text));
    for block in &result.blocks {
        let block = serde_json::from_value(content_block(block)).map_err(|error| {
            ErrorData::internal_error(format!("a block is not MCP's shape: {error}"), None)
        })?;
        content.push(block);
    }
    let mut answer = match parts.is_error {
        false => CallToolResult::success(content),
        true => CallToolResult::error(content),
    };
    answer.structured_content = parts.structured;
    answer.result_type = Some(ResultType::COMPLETE);
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ContentBlock, ResourceContents};
    use serde_json::json;

    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    fn mounted(wrapped: bool) -> Mounted {
        Mounted {
            module: "m".into(),
            remote: "t".into(),
            local: "m.t".into(),
            wrapped,
            limits: ContentLimits::new(64, 1024),
        }
    }

    fn result(content: Vec<ContentBlock>, structured: Option<Value>) -> CallToolResult {
        let mut result = CallToolResult::success(content);
        result.structured_content = structured;
        result
    }

    fn image() -> ContentBlock {
        ContentBlock::image(wire::encode(PNG), "image/png")
    }

    fn kinds(result: &ToolResult) -> Vec<BlockKind> {
        result.blocks.iter().map(Block::kind).collect()
    }

    #[test]
    fn structured_content_is_the_value_and_its_repeats_are_left_out() {
        let link = rmcp::model::Resource::new("https://e.com/a", "a").with_size(3);
        let answer = result(
            vec![
                ContentBlock::text("[1, 2]"),
                image(),
                ContentBlock::text("a caption"),
                ContentBlock::resource_link(link),
            ],
            Some(json!({"result": [1, 2]})),
        );
        let read = super::answer(answer, &mounted(true)).unwrap();
        assert_eq!(read.content, json!([1, 2]));
        assert_eq!(
            kinds(&read),
            [BlockKind::Image, BlockKind::Text, BlockKind::ResourceLink]
        );
        assert_eq!(read.blocks[0], Block::from(Image::png(PNG)));
        assert_eq!(
            read.blocks[2],
            Block::from(ResourceLink::new("https://e.com/a", "a").with_size(3))
        );

        // Unmarked, the wrapper stays; a text of its one `result` member is still a repeat, and
        // so is a string value's own text.
        let theirs = result(vec![ContentBlock::text("3")], Some(json!({"result": 3})));
        let read = super::answer(theirs, &mounted(false)).unwrap();
        assert_eq!(read.content, json!({"result": 3}));
        assert!(read.blocks.is_empty());
        let string = result(
            vec![ContentBlock::text("hi")],
            Some(json!({"result": "hi"})),
        );
        let read = super::answer(string, &mounted(true)).unwrap();
        assert_eq!(read.content, json!("hi"));
        assert!(read.blocks.is_empty());
    }

    #[test]
    fn without_structured_content_the_text_is_the_value_and_the_rest_follows() {
        let answer = result(
            vec![
                ContentBlock::text("{\"n\":"),
                image(),
                ContentBlock::text("1}"),
            ],
            None,
        );
        let read = super::answer(answer, &mounted(false)).unwrap();
        assert_eq!(read.content, json!({"n": 1}));
        assert_eq!(kinds(&read), [BlockKind::Image]);
        let only_image = super::answer(result(vec![image()], None), &mounted(false)).unwrap();
        assert_eq!(only_image.content, Value::Null);
        let plain = super::answer(
            result(vec![ContentBlock::text("hi")], None),
            &mounted(false),
        );
        assert_eq!(plain.unwrap().content, json!("hi"));
    }

    #[test]
    fn an_attachment_is_a_file_again_and_other_resources_stay_resources() {
        let file = ContentBlock::resource(
            ResourceContents::blob(wire::encode(b"a,b\n"), "attachment:q3%20data.csv")
                .with_mime_type("text/csv"),
        );
        let blob = ContentBlock::resource(
            ResourceContents::blob(wire::encode(PNG), "kb://p").with_mime_type("image/png"),
        );
        let text = ContentBlock::embedded_text("kb://t", "body");
        let read = super::answer(result(vec![file, blob, text], None), &mounted(false)).unwrap();
        assert_eq!(
            read.blocks,
            [
                Block::from(File::new("q3 data.csv", b"a,b\n".to_vec())),
                Block::from(Resource::blob("kb://p", "image/png", PNG)),
                Block::from(Resource::text("kb://t", "body")),
            ]
        );
    }

    #[test]
    fn unreadable_blocks_are_invalid_output_naming_the_block() {
        let refused = |content: Vec<ContentBlock>| match super::answer(
            result(content, None),
            &mounted(false),
        ) {
            Err(ToolError::InvalidOutput {
                tool,
                path,
                message,
            }) => {
                assert_eq!(tool, "m.t");
                format!("{path}: {message}")
            }
            other => panic!("{other:?}"),
        };
        let bad = ContentBlock::image("not base64!", "image/png");
        let message = refused(vec![ContentBlock::text("x"), image(), bad]);
        assert!(
            message.starts_with("blocks[1]: invalid base64"),
            "{message}"
        );
        let big = ContentBlock::image(wire::encode(&[0; 100]), "image/png");
        let message = refused(vec![big]);
        assert!(
            message.contains("image block holds at least 100 bytes, more than the limit of 64"),
            "{message}"
        );
        let failed = CallToolResult::error(vec![ContentBlock::text("no"), image()]);
        match super::answer(failed, &mounted(false)) {
            Err(ToolError::Handler { message, .. }) => assert_eq!(message, "no"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_dimension_of_an_answer_is_bounded_before_it_is_read_whole() {
        let link = || ContentBlock::resource_link(rmcp::model::Resource::new("kb://a", "a"));
        let mut limits = mounted(false);
        limits.limits = limits.limits.with_max_blocks(3);
        let refused =
            |answer: CallToolResult, mounted: &Mounted| match super::answer(answer, mounted) {
                Err(ToolError::InvalidOutput { path, message, .. }) => format!("{path}: {message}"),
                other => panic!("{other:?}"),
            };
        // Too many blocks, failed or not, before any is read.
        let many = refused(result(vec![link(); 4], None), &limits);
        assert!(
            many.starts_with("blocks[3]: the result holds 4 blocks, more than the limit of 3"),
            "{many}"
        );
        let failed_many = refused(CallToolResult::error(vec![link(); 4]), &limits);
        assert!(failed_many.starts_with("blocks[3]:"), "{failed_many}");
        assert!(super::answer(result(vec![link(); 3], None), &limits).is_ok());

        // The text that would be the value, counted before it is joined (the bound is 1,024).
        let texts = vec![
            ContentBlock::text("a".repeat(600)),
            ContentBlock::text("b".repeat(600)),
        ];
        let long = refused(result(texts, None), &mounted(false));
        assert!(
            long.contains("more than the limit of 1024 bytes a result"),
            "{long}"
        );
        let texts = vec![
            ContentBlock::text("a".repeat(600)),
            ContentBlock::text("b".repeat(423)),
        ];
        let fits = super::answer(result(texts, None), &mounted(false)).unwrap();
        assert_eq!(fits.content.as_str().unwrap().len(), 1024);

        // A failure's text is joined only as far as the bound on error text.
        use tool_registry_core::call::{CUT_MARK, MAX_ERROR_BYTES};
        let texts = vec![ContentBlock::text("e".repeat(MAX_ERROR_BYTES)); 100];
        match super::answer(CallToolResult::error(texts), &mounted(false)) {
            Err(ToolError::Handler { message, .. }) => {
                assert_eq!(message.len(), MAX_ERROR_BYTES);
                assert!(message.ends_with(CUT_MARK));
            }
            other => panic!("{other:?}"),
        }
        let short = vec![ContentBlock::text("no"), ContentBlock::text("really")];
        match super::answer(CallToolResult::error(short), &mounted(false)) {
            Err(ToolError::Handler { message, .. }) => assert_eq!(message, "no\nreally"),
            other => panic!("{other:?}"),
        }
    }

    /// The typed answer the server sends is the registry's MCP result message, whatever the
    /// result holds: a value, a message only, nothing, an error, every kind of block, with and
    /// without an output schema (an object one and a wrapped one).
    #[test]
    fn the_typed_answer_is_the_registrys_mcp_message() {
        use tool_registry_core::ToolCall;
        use tool_registry_core::ToolSpec;
        use tool_registry_core::format::Provider;

        let registry = Registry::builder().without_linked().build().unwrap();
        let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        for (name, schema) in [
            ("plain", None),
            ("object", Some(object)),
            ("wrapped", Some(json!({"type": "array"}))),
        ] {
            let mut spec = ToolSpec::builder(name);
            if let Some(schema) = schema {
                spec = spec.output_schema(schema);
            }
            registry.register(spec.build().unwrap(), None).unwrap();
        }
        let link = tool_registry_core::content::ResourceLink::new("kb://q3", "q3")
            .with_mime_type("text/csv");
        let results = [
            ToolResult::ok(json!({"n": 3})),
            ToolResult::ok(json!([1, "two"])),
            ToolResult::ok(json!("text")),
            ToolResult::ok(Value::Null),
            ToolResult::ok(json!({"n": 1}))
                .with_block(Block::text("a caption"))
                .with_block(Image::png(PNG.to_vec()))
                .with_block(File::new("q3.csv", b"a,b\n".to_vec()))
                .with_block(link)
                .with_block(Resource::text("kb://notes", "a note")),
            ToolResult::failure("it broke"),
        ];
        for name in ["plain", "object", "wrapped", "unknown"] {
            for result in &results {
                let typed = call_tool_result(&registry, name, result).unwrap();
                let mut typed = serde_json::to_value(typed).unwrap();
                assert_eq!(typed["resultType"], "complete");
                typed.as_object_mut().unwrap().remove("resultType");
                let call = ToolCall::new(name, Value::Null);
                let message = registry
                    .result_message(Provider::Mcp, &call, result)
                    .message;
                assert_eq!(typed, message, "{name}: {result:?}");
            }
        }
    }
}
