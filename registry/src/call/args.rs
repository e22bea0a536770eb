//! The arguments of a call: [`ToolArgs`], their limits, and reading them into what a tool
//! takes, with errors that name the path of the bad field.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ToolError;
use super::admit::{dispose, too_deep};

/// The arguments of one call, as the model wrote them.
///
/// JSON text is deserialized straight into the tool's argument type, without an intermediate
/// [`Value`]. Convert from `&str`, `&String` or `Value`.
#[derive(Debug, Clone)]
pub enum ToolArgs<'a> {
    /// JSON text, e.g. `{"query": "rust"}`. Empty or blank text means `{}`.
    Text(&'a str),
    /// An already parsed JSON value.
    Value(Value),
}

impl<'a> From<&'a str> for ToolArgs<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for ToolArgs<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl From<Value> for ToolArgs<'_> {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

/// The most bytes of argument text a tool accepts unless it sets its own limit with
/// `#[tool(max_args_bytes = N)]`: 1 MiB. Text is measured as given; a [`Value`] as the compact
/// JSON it serializes to.
pub const MAX_ARGS_BYTES: usize = 1 << 20;

/// How deep arrays and objects may nest in the arguments of any tool: 127 levels, the most that
/// `serde_json` reads from text (its recursion limit is 128), so text and [`Value`] arguments
/// meet the same limit.
pub const MAX_ARGS_DEPTH: usize = 127;

/// Deserializes the arguments into `T`, naming the path of the first bad field.
#[doc(hidden)]
pub fn parse_args<T: DeserializeOwned>(args: ToolArgs<'_>) -> Result<T, ToolError> {
    match args {
        ToolArgs::Text(text) => {
            let trimmed = text.trim_start();
            if trimmed.is_empty() || trimmed.trim_end() == "null" {
                return from_value(Value::Object(Default::default()));
            }
            if !trimmed.starts_with('{') {
                return Err(not_an_object());
            }
            // The common case, a good call, parses once without path tracking; only a bad call
            // is parsed again to name the path of the problem.
            let mut de = serde_json::Deserializer::from_str(text);
            if let Ok(value) = T::deserialize(&mut de)
                && de.end().is_ok()
            {
                return Ok(value);
            }
            if text_nests_deeper(text, MAX_ARGS_DEPTH) {
                return Err(too_deep());
            }
            let mut de = serde_json::Deserializer::from_str(text);
            let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
                let path = if e.inner().is_syntax() || e.inner().is_eof() {
                    String::new()
                } else {
                    e.path().to_string()
                };
                invalid(path, strip_position(e.inner()))
            })?;
            de.end()
                .map_err(|e| invalid(String::new(), strip_position(&e)))?;
            Ok(value)
        }
        ToolArgs::Value(Value::Null) => from_value(Value::Object(Default::default())),
        ToolArgs::Value(value @ Value::Object(_)) => from_value(value),
        ToolArgs::Value(_) => Err(not_an_object()),
    }
}

/// The arguments as a JSON object, for a tool that takes them as a [`Value`] (a run-time tool):
/// the same rules and errors as [`parse_args`].
pub(crate) fn args_value(args: ToolArgs<'_>) -> Result<Value, ToolError> {
    match args {
        ToolArgs::Value(Value::Null) => Ok(Value::Object(Default::default())),
        ToolArgs::Value(value @ Value::Object(_)) => Ok(value),
        ToolArgs::Value(other) => {
            dispose(other);
            Err(not_an_object())
        }
        text @ ToolArgs::Text(_) => parse_args::<Value>(text),
    }
}

/// Whether arrays and objects nest more than `limit` levels deep in JSON text (strings skipped);
/// asked only of text that did not parse, to tell a depth problem from others.
fn text_nests_deeper(text: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in text.as_bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ToolError> {
    if let Ok(parsed) = T::deserialize(&value) {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(value)
        .map_err(|e| invalid(e.path().to_string(), e.inner().to_string()))
}

fn not_an_object() -> ToolError {
    invalid(
        String::new(),
        "the arguments must be a JSON object of named arguments, such as {\"query\": \"...\"}"
            .to_owned(),
    )
}

pub(super) fn invalid(path: String, message: String) -> ToolError {
    let path = if path == "." { String::new() } else { path };
    ToolError::InvalidArguments {
        tool: String::new(),
        path,
        message,
    }
}

/// serde_json's message without its " at line 1 column 7" suffix, which means nothing to a model
/// that wrote the arguments on one line; the column is kept for syntax errors.
fn strip_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if error.is_syntax() || error.is_eof() {
        return format!("malformed JSON: {text}");
    }
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
