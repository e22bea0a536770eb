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
//! - MCP: a `CallToolResult` `{"content": [{"type": "text", "text"}], "structuredContent",
//!   "isError"}`, with `structuredContent` when the tool declares an output schema
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-result>).

use serde_json::{Map, Value, json};

use super::Provider;
use crate::call::ToolCall;
use crate::call::ToolResult;

/// `result`, the answer to `call`, as the message `provider` expects back; for MCP, a
/// successful object is also the structured content of a tool that `declares_output`.
pub(crate) fn result_message(
    provider: Provider,
    declares_output: bool,
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
        Provider::Mcp => {
            let mut message = Map::new();
            message.insert("content".into(), json!([{ "type": "text", "text": text }]));
            if declares_output && result.success && result.content.is_object() {
                message.insert("structuredContent".into(), result.content.clone());
            }
            message.insert("isError".into(), (!result.success).into());
            Value::Object(message)
        }
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
