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

use serde_json::{Map, Value, json};

use super::Provider;
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
        Provider::OpenAi => json!({ "role": "tool", "tool_call_id": id, "content": text }),
        Provider::Responses => {
            json!({ "type": "function_call_output", "call_id": id, "output": text })
        }
        Provider::Anthropic => json!({
            "type": "tool_result",
            "tool_use_id": id,
            "content": text,
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
            json!({ "functionResponse": part })
        }
        Provider::Mcp => mcp_message(output_schema, text, result),
    }
}
/// What the model reads: the content, or for a failure with nothing in it the message.
fn answer_value(result: &ToolResult) -> Value {
    match (&result.content, &result.message) {
        (Value::Null, Some(message)) => Value::String(message.clone()),
        (content, _) => content.clone(),
    }
}

/// [`answer_value`] as text: a string as it is, anything else as compact JSON.
fn text_of(result: &ToolResult) -> String {
    match answer_value(result) {
        Value::String(text) => text,
        other => other.to_string(),
    }
}

/// The MCP `CallToolResult` of `result`: `text` (the value as the model reads it) as the first
/// block unless there is no value, then every block; `structuredContent` as the header says.
fn mcp_message(output_schema: Option<&Value>, text: String, result: &ToolResult) -> Value {
    let mut content = Vec::with_capacity(1 + result.blocks.len());
    if !matches!((&result.content, &result.message), (Value::Null, None)) {
        content.push(json!({ "type": "text", "text": text }));
    }
    content.extend(result.blocks.iter().map(super::mcp::content_block));
    let mut message = Map::new();
    message.insert("content".into(), Value::Array(content));
    let structured = output_schema
        .filter(|_| result.success)
        .and_then(|schema| super::mcp::structured_content(schema, &result.content));
    if let Some(structured) = structured {
        message.insert("structuredContent".into(), structured);
    }
    message.insert("isError".into(), (!result.success).into());
    Value::Object(message)
}
