//! JSON calls: `{"name": …, "arguments": {…}}` and the shapes around it (Hermes, Llama 3.x,
//! Mistral, xLAM, fenced blocks), read from values the scanner has delimited.

use std::ops::Range;

use serde_json::{Map, Value};

use super::pythonic;
use crate::block::{Item, NotCall, RawCall, ToolLookup};
use crate::typing::ByTools;
use crate::vocab::{ErrorKind, Format};
use tool_registry_json::unique;

/// Reads a value as JSON, falling back to Python literal syntax (`{'a': True}`), which models
/// trained on Python write often enough. An object that writes a key twice is refused
/// ([`unique`]): which of the two a call means cannot be known.
pub(crate) fn value(text: &str) -> Result<Value, String> {
    match unique::from_str(text) {
        Ok(value) => Ok(value),
        Err(error) if unique::is_duplicate(&error) => Err(strip_position(&error)),
        Err(error) => pythonic::literal(text).map_err(|_| strip_position(&error)),
    }
}

/// How strictly an object must look like a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// Inside an explicit wrapper: a `name` is enough, arguments default to `{}`.
    Wrapped,
    /// Bare JSON: `name` and `arguments` (or `parameters`) must both be there.
    Bare,
}

/// The calls in a value: one object, or an array of them.
pub(crate) fn calls(value: Value, shape: Shape) -> Result<Vec<RawCall>, NotCall> {
    match value {
        Value::Array(items) if !items.is_empty() => {
            items.into_iter().map(|item| call(item, shape)).collect()
        }
        Value::Array(_) => Err(NotCall::Shape("an empty list holds no call".into())),
        value => call(value, shape).map(|c| vec![c]),
    }
}

/// One call from an object.
pub(crate) fn call(value: Value, shape: Shape) -> Result<RawCall, NotCall> {
    let Value::Object(mut object) = value else {
        return Err(NotCall::Shape(
            "a call must be a JSON object with \"name\" and \"arguments\"".into(),
        ));
    };
    // The OpenAI shape: {"type": "function", "function": {"name", "arguments"}, "id"}.
    match object.remove("function") {
        Some(Value::Object(function)) => {
            let id = take_id(&mut object);
            let mut call = call(Value::Object(function), Shape::Wrapped)?;
            call.id = call.id.or(id);
            return Ok(call);
        }
        Some(other) if !object.contains_key("name") => {
            object.insert("name".to_owned(), other);
        }
        _ => {}
    }
    let name = match object.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_owned(),
        Some(_) => {
            return Err(NotCall::Shape(
                "the call's \"name\" must be a non-empty string".into(),
            ));
        }
        None => return Err(NotCall::Shape("the call has no \"name\"".into())),
    };
    let keys: &[&str] = match shape {
        Shape::Bare => &["arguments", "parameters"],
        Shape::Wrapped => &["arguments", "parameters", "args", "input"],
    };
    let arguments = keys.iter().find_map(|key| object.remove(*key));
    let arguments = match (arguments, shape) {
        (None, Shape::Bare) => {
            return Err(NotCall::Shape(
                "bare JSON needs \"arguments\" or \"parameters\"".into(),
            ));
        }
        (None, Shape::Wrapped) => Value::Object(Map::new()),
        (Some(arguments), _) => {
            arguments_object(arguments).map_err(|message| NotCall::Arguments {
                name: name.clone(),
                message,
            })?
        }
    };
    let id = take_id(&mut object);
    Ok(RawCall {
        name,
        arguments,
        id,
        typed: false,
    })
}

fn take_id(object: &mut Map<String, Value>) -> Option<String> {
    match object.remove("id").or_else(|| object.remove("call_id")) {
        Some(Value::String(id)) => Some(id),
        _ => None,
    }
}

/// The arguments as an object: an object as it is, JSON text holding an object parsed, empty
/// text or `null` as `{}`.
pub(crate) fn arguments_object(arguments: Value) -> Result<Value, String> {
    match arguments {
        Value::Object(_) => Ok(arguments),
        Value::Null => Ok(Value::Object(Map::new())),
        Value::String(text) if text.trim().is_empty() => Ok(Value::Object(Map::new())),
        Value::String(text) => match value(text.trim()) {
            Ok(object @ Value::Object(_)) => Ok(object),
            Ok(_) => Err("the arguments must be a JSON object of named arguments".into()),
            Err(error) => Err(format!("the arguments are not valid JSON: {error}")),
        },
        _ => Err(
            "the arguments must be a JSON object of named arguments, such as {\"query\": \"...\"}"
                .into(),
        ),
    }
}

/// serde_json's message without " at line 1 column 7" when the value is on one line.
pub(crate) fn strip_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if error.line() <= 1
        && let Some(at) = text.rfind(" at line ")
    {
        return format!(
            "{} (at byte {})",
            &text[..at],
            error.column().saturating_sub(1)
        );
    }
    text
}

/// The name a partial JSON call object gives itself, if it has written it yet: the string
/// value of the first `"name"` key at the top level of the object (or of the first object of
/// an array), or in its `"function"` object (the OpenAI shape). Used to announce a call before it completes, and to tell a cut-off call from
/// prose. Reads at most `limit` bytes.
pub(crate) fn sniff_name(text: &str, limit: usize) -> Option<&str> {
    let bytes = &text.as_bytes()[..text.len().min(limit)];
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < bytes.len() && crate::scan::is_ws(bytes[*i]) {
            *i += 1;
        }
    };
    skip_ws(&mut i);
    if bytes.get(i) == Some(&b'[') {
        i += 1;
        skip_ws(&mut i);
    }
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    // Walk the object's members: key, colon, value (skipped by bracket depth).
    loop {
        skip_ws(&mut i);
        let key = string_at(bytes, &mut i)?;
        skip_ws(&mut i);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i += 1;
        skip_ws(&mut i);
        if key == b"name" {
            let start = i + 1;
            string_at(bytes, &mut i)?;
            return std::str::from_utf8(&bytes[start..i - 1]).ok();
        }
        if key == b"function"
            && bytes.get(i) == Some(&b'{')
            && let Some(name) = sniff_name(&text[i..bytes.len()], limit - i)
        {
            return Some(name);
        }
        // Skip the value.
        let mut depth = 0u32;
        loop {
            match bytes.get(i)? {
                b'"' => {
                    string_at(bytes, &mut i)?;
                    continue;
                }
                b'{' | b'[' => depth += 1,
                b'}' | b']' if depth == 0 => return None,
                b'}' | b']' => depth -= 1,
                b',' if depth == 0 => {
                    i += 1;
                    break;
                }
                _ => {}
            }
            i += 1;
        }
    }
}

/// The raw bytes of the JSON string at `i` (between its quotes); moves `i` past it.
fn string_at<'a>(bytes: &'a [u8], i: &mut usize) -> Option<&'a [u8]> {
    if bytes.get(*i) != Some(&b'"') {
        return None;
    }
    let start = *i + 1;
    let mut j = start;
    while j < bytes.len() {
        match bytes[j] {
            b'\\' => j += 2,
            b'"' => {
                *i = j + 1;
                return Some(&bytes[start..j]);
            }
            _ => j += 1,
        }
    }
    None
}

// ---- blocks --------------------------------------------------------------------------------

/// The call of `name` whose arguments are the JSON object `text`, or the error saying what is
/// wrong with them: for readers whose syntax gives the name apart from the arguments.
pub(crate) fn arguments_item(
    name: &str,
    text: &str,
    id: Option<String>,
    format: Format,
    span: Range<usize>,
) -> Item {
    match value(text.trim()).map(arguments_object) {
        Ok(Ok(arguments)) => Item::found(
            RawCall {
                name: name.to_owned(),
                arguments,
                id,
                typed: false,
            },
            format,
            span,
        ),
        Ok(Err(message)) => Item::error(
            span,
            format,
            ErrorKind::Arguments,
            format!("the arguments of `{name}` are wrong: {message}"),
        ),
        Err(error) => Item::error(
            span,
            format,
            ErrorKind::Malformed,
            format!("the arguments of `{name}` are not valid JSON: {error}"),
        ),
    }
}

/// The calls in one value written in JSON, or also in Python syntax when `python` gives the
/// tools its values are typed by.
pub(crate) fn value_items(
    text: &str,
    span: Range<usize>,
    format: Format,
    python: Option<&dyn ToolLookup>,
) -> Vec<Item> {
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if let Some(tools) = python {
        if first.is_ascii_alphabetic() || first == b'_' {
            return pythonic_items(text, span, format, tools);
        }
        if first == b'[' {
            // A JSON list of calls, or else a Python one.
            return match value(text).map(|value| calls(value, Shape::Wrapped)) {
                Ok(Ok(calls)) => found_items(calls, format, &span),
                _ => pythonic_items(text, span, format, tools),
            };
        }
    }
    json_item(text, span, format, Shape::Wrapped)
}

/// The items for one JSON value inside a wrapper.
pub(crate) fn json_item(text: &str, span: Range<usize>, format: Format, shape: Shape) -> Vec<Item> {
    match value(text) {
        Err(error) => vec![Item::error(
            span,
            format,
            ErrorKind::Malformed,
            format!(
                "the call is not valid JSON: {error}; write it as {{\"name\": \"...\", \"arguments\": {{...}}}}"
            ),
        )],
        Ok(value) => match calls(value, shape) {
            Ok(calls) => found_items(calls, format, &span),
            Err(not) => vec![Item::not_call(not, format, span)],
        },
    }
}

fn found_items(calls: Vec<RawCall>, format: Format, span: &Range<usize>) -> Vec<Item> {
    calls
        .into_iter()
        .map(|call| Item::found(call, format, span.clone()))
        .collect()
}

fn pythonic_items(
    text: &str,
    span: Range<usize>,
    format: Format,
    tools: &dyn ToolLookup,
) -> Vec<Item> {
    match pythonic::calls(text, &mut ByTools::new(tools)) {
        Ok(calls) => calls
            .into_iter()
            .map(|c| {
                Item::found(
                    RawCall {
                        name: c.name,
                        arguments: serde_json::Value::Object(c.arguments),
                        id: None,
                        typed: true,
                    },
                    format,
                    span.clone(),
                )
            })
            .collect(),
        Err(error) => vec![Item::error(
            span,
            format,
            ErrorKind::Malformed,
            format!("the call is not valid: {error}; write calls as [name(arg=value, ...)]"),
        )],
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn call_shapes() {
        let c = call(json!({"name": "f", "arguments": "{\"a\": 1}"}), Shape::Bare).unwrap();
        assert_eq!(c.arguments, json!({"a": 1}));
        let c = call(json!({"name": "f", "parameters": {"b": 2}}), Shape::Bare).unwrap();
        assert_eq!(c.arguments, json!({"b": 2}));
        let c = call(
            json!({"type": "function", "id": "x", "function": {"name": "f", "arguments": {}}}),
            Shape::Bare,
        )
        .unwrap();
        assert_eq!((c.name.as_str(), c.id.as_deref()), ("f", Some("x")));
        assert!(call(json!({"name": "f"}), Shape::Bare).is_err());
        assert_eq!(
            call(json!({"name": "f"}), Shape::Wrapped)
                .unwrap()
                .arguments,
            json!({})
        );
        assert!(matches!(
            call(json!({"name": "f", "arguments": [1]}), Shape::Wrapped),
            Err(NotCall::Arguments { .. })
        ));
        assert!(call(json!({"city": "Paris"}), Shape::Wrapped).is_err());
    }

    #[test]
    fn sniffs_the_top_level_name_only() {
        assert_eq!(
            sniff_name(r#"{"name": "search", "argu"#, 512),
            Some("search")
        );
        assert_eq!(
            sniff_name(r#"[ {"arguments": {"name": "Bob"}, "name": "greet"}"#, 512),
            Some("greet")
        );
        assert_eq!(
            sniff_name(r#"{"arguments": {"name": "Bob"}, "na"#, 512),
            None
        );
        assert_eq!(sniff_name(r#"{"query": "x"}"#, 512), None);
        assert_eq!(sniff_name("hello", 512), None);
    }
}
