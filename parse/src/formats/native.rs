//! Native tool calls, as providers return them: an OpenAI Chat Completions response or message,
//! a `tool_calls` array, a Responses API output, Anthropic content blocks, or a Gemini response,
//! content or parts (`{"functionCall": {"name", "args", "id"}}`,
//! <https://ai.google.dev/api/caching#FunctionCall>). The message text is parsed as text too,
//! for servers that leave the calls in it.

use std::ops::Range;

use serde_json::Value;

use super::json;
use crate::block::ToolLookup;
use crate::typing::type_json_arguments;
use crate::vocab::{ErrorKind, Format, Options, ParseError, Parsed, ParsedCall};
use tool_registry_json::unique;

/// `Some` when `text` is one of the native shapes. The message text is read by `parse_text`, the
/// whole-text parse, which stands above the readers.
pub(crate) fn parse(
    text: &str,
    tools: &dyn ToolLookup,
    options: Options,
    parse_text: impl FnOnce(&str) -> Parsed,
) -> Option<Parsed> {
    let trimmed = text.trim();
    if !matches!(trimmed.as_bytes().first(), Some(b'{' | b'[')) {
        return None;
    }
    let value = match unique::from_str(trimmed) {
        Ok(value) => value,
        Err(error) if unique::is_duplicate(&error) => {
            // Read again as serde_json would, only to tell a native shape that writes a key
            // twice (refused) from other JSON (left to the text formats).
            let lenient: Value = serde_json::from_str(trimmed).ok()?;
            Native::read(&lenient)?;
            return Some(refused(&error, text.len()));
        }
        Err(_) => return None,
    };
    let native = Native::read(&value)?;
    let parsed = parse_text(&native.text);
    Some(native.into_parsed(parsed, tools, options, 0..text.len()))
}

/// A native shape that writes a key twice: which of the two values was meant cannot be known,
/// so nothing in it is called.
fn refused(error: &serde_json::Error, len: usize) -> Parsed {
    Parsed {
        errors: vec![ParseError {
            kind: ErrorKind::Malformed,
            format: Format::Native,
            message: format!(
                "the response is not valid: {}; write each key once",
                json::strip_position(error)
            ),
            span: 0..len,
        }],
        ..Parsed::default()
    }
}

impl Native {
    /// The message text, reasoning and calls of a native shape; `None` for any other JSON.
    fn read(value: &Value) -> Option<Self> {
        let mut native = Native::default();
        match value {
            Value::Object(object) => {
                if let Some(message) = value.pointer("/choices/0/message") {
                    native.message(message);
                } else if let Some(Value::Array(parts)) = value
                    .pointer("/candidates/0/content/parts")
                    .or_else(|| object.get("parts"))
                {
                    // Gemini: a response, or one content.
                    parts.iter().for_each(|part| native.part(part));
                } else if object.contains_key("functionCall") {
                    native.part(value);
                } else if let Some(Value::Array(output)) = object.get("output") {
                    // Responses API.
                    output.iter().for_each(|item| native.item(item));
                } else if object.contains_key("tool_calls") || object.get("role").is_some() {
                    native.message(value);
                } else if object
                    .get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| matches!(t, "function_call" | "tool_use"))
                {
                    native.item(value);
                } else {
                    return None;
                }
            }
            Value::Array(items)
                if items.iter().any(|item| item.get("functionCall").is_some())
                    && items.iter().all(|item| {
                        item.get("functionCall").is_some()
                            || (item.get("text").is_some() && item.get("type").is_none())
                    }) =>
            {
                // Gemini parts.
                items.iter().for_each(|part| native.part(part));
            }
            Value::Array(items) => {
                let native_items = !items.is_empty()
                    && items.iter().all(|item| {
                        let kind = item.get("type").and_then(Value::as_str);
                        matches!(
                            kind,
                            Some(
                                "function"
                                    | "function_call"
                                    | "tool_use"
                                    | "text"
                                    | "output_text"
                                    | "message"
                            )
                        ) && (item.get("function").is_some()
                            || item.get("name").is_some()
                            || kind != Some("function"))
                    });
                if !native_items {
                    return None;
                }
                items.iter().for_each(|item| native.item(item));
            }
            _ => return None,
        }
        Some(native)
    }

    /// The calls read natively, then what parsing the message text found (`parsed`);
    /// reasoning first.
    fn into_parsed(
        self,
        mut parsed: Parsed,
        tools: &dyn ToolLookup,
        options: Options,
        span: Range<usize>,
    ) -> Parsed {
        let native = self;
        let mut calls = Vec::new();
        let mut unknown = Vec::new();
        let mut errors = Vec::new();
        for (name, arguments, id) in native.calls {
            match json::arguments_object(arguments) {
                Ok(mut arguments) => {
                    let known = tools.is_tool(&name);
                    if known {
                        type_json_arguments(&mut arguments, tools, &name);
                    }
                    let call = ParsedCall {
                        name,
                        arguments,
                        id,
                        format: Format::Native,
                        span: span.clone(),
                    };
                    match known {
                        true => calls.push(call),
                        false => unknown.push(call),
                    }
                }
                Err(message) => errors.push(ParseError {
                    kind: ErrorKind::Arguments,
                    format: Format::Native,
                    message: format!("the arguments of `{name}` are wrong: {message}"),
                    span: span.clone(),
                }),
            }
        }
        calls.append(&mut parsed.calls);
        unknown.append(&mut parsed.unknown);
        errors.append(&mut parsed.errors);
        // The native calls come first: what the text's parse kept past the cap with them is
        // left out too.
        let max = options.max_calls.unwrap_or(usize::MAX);
        let left_out = &mut parsed.left_out;
        left_out.calls += calls.len().saturating_sub(max);
        left_out.unknown += unknown.len().saturating_sub(max);
        left_out.errors += errors.len().saturating_sub(max);
        calls.truncate(max);
        unknown.truncate(max);
        errors.truncate(max);
        parsed.calls = calls;
        parsed.unknown = unknown;
        parsed.errors = errors;
        if let Some(reasoning) = native.reasoning.filter(|r| !r.trim().is_empty()) {
            parsed.reasoning = if parsed.reasoning.is_empty() {
                reasoning.trim().to_owned()
            } else {
                format!("{}\n\n{}", reasoning.trim(), parsed.reasoning)
            };
        }
        parsed
    }
}

#[derive(Default)]
struct Native {
    text: String,
    reasoning: Option<String>,
    calls: Vec<(String, Value, Option<String>)>,
}

impl Native {
    /// A Gemini part: text (a `thought` part is reasoning) or a function call.
    fn part(&mut self, part: &Value) {
        if let Some(call) = part.get("functionCall") {
            let name = call.get("name").and_then(Value::as_str).unwrap_or_default();
            let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
            let arguments = call.get("args").cloned().unwrap_or(Value::Null);
            self.calls.push((name.to_owned(), arguments, id));
        } else if let Some(text) = part.get("text").and_then(Value::as_str) {
            if part.get("thought") == Some(&Value::Bool(true)) {
                self.reasoning
                    .get_or_insert_with(String::new)
                    .push_str(text);
            } else {
                self.text.push_str(text);
            }
        }
    }

    fn message(&mut self, message: &Value) {
        match message.get("content") {
            Some(Value::String(text)) => self.text.push_str(text),
            Some(Value::Array(parts)) => parts.iter().for_each(|part| self.item(part)),
            _ => {}
        }
        if let Some(reasoning) = ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|k| message.get(*k)?.as_str())
        {
            self.reasoning = Some(reasoning.to_owned());
        }
        if let Some(Value::Array(calls)) = message.get("tool_calls") {
            calls.iter().for_each(|call| self.item(call));
        }
    }

    fn item(&mut self, item: &Value) {
        let kind = item.get("type").and_then(Value::as_str).unwrap_or_default();
        let id = ["id", "call_id"]
            .iter()
            .find_map(|k| item.get(*k)?.as_str())
            .map(str::to_owned);
        match kind {
            "text" | "output_text" => {
                if let Some(text) = item.get("text").and_then(Value::as_str) {
                    self.text.push_str(text);
                }
            }
            "message" => self.message(item),
            "tool_use" => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                self.calls.push((
                    name.to_owned(),
                    item.get("input").cloned().unwrap_or(Value::Null),
                    id,
                ));
            }
            _ => {
                let function = item
                    .get("function")
                    .filter(|f| f.is_object())
                    .unwrap_or(item);
                if let Some(name) = function.get("name").and_then(Value::as_str) {
                    let arguments = function.get("arguments").cloned().unwrap_or(Value::Null);
                    self.calls.push((name.to_owned(), arguments, id));
                }
            }
        }
    }
}
