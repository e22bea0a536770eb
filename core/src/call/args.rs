//! The arguments of a call: [`ToolArgs`], their limits, and reading them into what a tool
//! takes, with errors that name the path of the bad field.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ToolError;
use tool_registry_json::depth::measure;

use super::depth::{MAX_ARGS_DEPTH, dispose, too_deep};
use super::unique::UniqueValue;

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

/// Deserializes the arguments into `T`, naming the path of the first bad field.
///
/// Each tool instantiates this, so it holds only what depends on `T`: one pass over JSON text.
/// The path of a bad field is found afterwards, without `T`, from where in the text the error
/// was raised ([`refusal`]), and arguments given as a [`Value`] are written out as text first,
/// so that no tool instantiates its deserializer more than once.
#[doc(hidden)]
pub fn parse_args<T: DeserializeOwned>(args: ToolArgs<'_>) -> Result<T, ToolError> {
    let text = args_text(args)?;
    let mut de = serde_json::Deserializer::from_str(&text);
    match T::deserialize(&mut de) {
        Ok(value) => match de.end() {
            Ok(()) => Ok(value),
            Err(error) => Err(refusal(&text, &error)),
        },
        Err(error) => Err(refusal(&text, &error)),
    }
}

/// The arguments as JSON text of an object: blank text and `null` are `{}`; anything but an
/// object is refused; a [`Value`] is written out.
pub(crate) fn args_text(args: ToolArgs<'_>) -> Result<Cow<'_, str>, ToolError> {
    match args {
        ToolArgs::Text(text) => {
            // JSON's whitespace is ASCII: read as bytes, an object's text is known by its first.
            let trimmed = text.trim_ascii_start();
            if trimmed.starts_with('{') {
                Ok(Cow::Borrowed(text))
            } else if trimmed.is_empty() || trimmed.trim_ascii_end() == "null" {
                Ok(Cow::Borrowed("{}"))
            } else {
                Err(not_an_object())
            }
        }
        ToolArgs::Value(Value::Null) => Ok(Cow::Borrowed("{}")),
        ToolArgs::Value(value @ Value::Object(_)) => {
            // Deeper than any text may nest: refused as text would be, and never written out
            // (the writer recurses). Measured first, the text is written into room made once.
            let Ok(len) = measure(&value, MAX_ARGS_DEPTH, usize::MAX) else {
                dispose(value);
                return Err(too_deep());
            };
            let mut text = Vec::with_capacity(len);
            serde_json::to_writer(&mut text, &value).map_err(|_| not_an_object())?;
            Ok(Cow::Owned(
                String::from_utf8(text).map_err(|_| not_an_object())?,
            ))
        }
        ToolArgs::Value(other) => {
            dispose(other);
            Err(not_an_object())
        }
    }
}

/// Why `text` was refused: too deep when it nests deeper than [`MAX_ARGS_DEPTH`]; malformed
/// JSON (with its column); or a field that does not fit, named by its path, which is where the
/// deserializer stood when it raised the error ([`path_at`]).
#[cold]
#[inline(never)]
fn refusal(text: &str, error: &serde_json::Error) -> ToolError {
    if text_nests_deeper(text, MAX_ARGS_DEPTH) {
        return too_deep();
    }
    if error.is_syntax() || error.is_eof() {
        return invalid(String::new(), strip_position(error));
    }
    let message = strip_position(error);
    let Some(at) = offset_of(text, error.line(), error.column()) else {
        return invalid(String::new(), message);
    };
    let (mut path, after_key) = path_at(&text.as_bytes()[..at]);
    // An enum written as `{"variant": ...}` whose variant is unknown: the key read last is the
    // variant, not a field.
    if after_key && message.starts_with("unknown variant") {
        path.truncate(path.rfind(['.', '[']).unwrap_or(0));
    }
    invalid(path, message)
}

/// The byte offset of a `serde_json` error position (line from 1, column in bytes from the
/// start of the line), if it is one.
fn offset_of(text: &str, line: usize, column: usize) -> Option<usize> {
    let start = match line {
        0 => return None,
        1 => 0,
        _ => memchr::memchr_iter(b'\n', text.as_bytes()).nth(line - 2)? + 1,
    };
    Some((start + column).min(text.len()))
}

/// The path (`area.stops[1].city`) of the value a JSON text's reader stands in after reading
/// `read`: every object whose key has been read, every array at the item it is at. Where a
/// deserializer raises an error (just after the key, the value or the object it refuses), this
/// is the path of what it refused, as a path-tracking deserializer would name it. Also says
/// whether the last thing read is an object's key.
fn path_at(read: &[u8]) -> (String, bool) {
    enum Frame {
        Object {
            key: Option<String>,
            wants_key: bool,
        },
        Array {
            index: usize,
        },
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut after_key = false;
    let mut at = 0;
    while at < read.len() {
        let byte = read[at];
        if !byte.is_ascii_whitespace() {
            after_key = false;
        }
        match byte {
            b'"' => {
                let end = string_end(read, at);
                match frames.last_mut() {
                    Some(Frame::Object { key, wants_key }) if *wants_key => {
                        *key = Some(
                            std::str::from_utf8(&read[at..end])
                                .ok()
                                .and_then(|raw| serde_json::from_str::<String>(raw).ok())
                                .unwrap_or_default(),
                        );
                        *wants_key = false;
                        after_key = true;
                    }
                    _ => {}
                }
                at = end;
                continue;
            }
            b'{' | b'[' => {
                frames.push(if byte == b'{' {
                    Frame::Object {
                        key: None,
                        wants_key: true,
                    }
                } else {
                    Frame::Array { index: 0 }
                });
            }
            b'}' | b']' => {
                frames.pop();
            }
            b',' => match frames.last_mut() {
                Some(Frame::Object { key, wants_key }) => (*key, *wants_key) = (None, true),
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
        at += 1;
    }
    let mut path = String::new();
    for frame in &frames {
        match frame {
            Frame::Object { key: Some(key), .. } => {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
            }
            Frame::Array { index } => {
                path.push_str(&format!("[{index}]"));
            }
            _ => break,
        }
    }
    (path, after_key)
}

/// The end of the JSON string starting at `start` (just past its closing quote), or the end of
/// `read` when it is cut off.
fn string_end(read: &[u8], start: usize) -> usize {
    let mut at = start + 1;
    while at < read.len() {
        match read[at] {
            b'\\' => at += 2,
            b'"' => return at + 1,
            _ => at += 1,
        }
    }
    read.len()
}

/// The arguments as a JSON object, for a tool that takes them as a [`Value`] (a run-time tool):
/// the same rules and errors as [`parse_args`], a key written twice included.
pub(crate) fn args_value(args: ToolArgs<'_>) -> Result<Value, ToolError> {
    match args {
        ToolArgs::Value(Value::Null) => Ok(Value::Object(Default::default())),
        ToolArgs::Value(value @ Value::Object(_)) => Ok(value),
        ToolArgs::Value(other) => {
            dispose(other);
            Err(not_an_object())
        }
        text @ ToolArgs::Text(_) => parse_args::<UniqueValue>(text).map(|UniqueValue(value)| value),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        count: u32,
        area: Option<Area>,
        #[serde(default)]
        stops: Vec<Area>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(default)]
        weights: BTreeMap<String, u8>,
        grid: Option<Vec<Vec<i8>>>,
        mode: Option<Mode>,
        modes: Option<Vec<Mode>>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Area {
        city: String,
        radius: u16,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Walk,
        Drive,
    }

    /// The path a path-tracking deserializer names, as `parse_args` writes it.
    fn tracked(text: &str) -> Option<String> {
        let mut de = serde_json::Deserializer::from_str(text);
        match serde_path_to_error::deserialize::<_, Outer>(&mut de) {
            Ok(_) => de.end().err().map(|_| String::new()),
            Err(e) if e.inner().is_syntax() || e.inner().is_eof() => Some(String::new()),
            Err(e) => Some(match e.path().to_string() {
                dot if dot == "." => String::new(),
                path => path,
            }),
        }
    }

    fn found(text: &str) -> Option<String> {
        match parse_args::<Outer>(ToolArgs::Text(text)) {
            Ok(_) => None,
            Err(ToolError::InvalidArguments { path, .. }) => Some(path),
            Err(other) => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn the_path_of_a_bad_field_is_the_one_a_tracking_pass_names() {
        let cases = [
            (json!({"name": 1, "count": 1}), "name"),
            (json!({"name": "a", "count": -1}), "count"),
            (json!({"name": "a", "count": 1, "extra": true}), "extra"),
            (json!({"name": "a"}), ""),
            (
                json!({"name": "a", "count": 1, "area": {"city": "Oslo"}}),
                "area",
            ),
            (
                json!({"name": "a", "count": 1, "area": {"city": "Oslo", "radius": 1, "x": 1}}),
                "area.x",
            ),
            (
                json!({"name": "a", "count": 1, "stops": [{"city": "a", "radius": 1}, {"city": 2, "radius": 1}]}),
                "stops[1].city",
            ),
            (
                json!({"name": "a", "count": 1, "stops": [{}, 1]}),
                "stops[0]",
            ),
            (
                json!({"name": "a", "count": 1, "tags": ["a", "b", 3]}),
                "tags[2]",
            ),
            (json!({"name": "a", "count": 1, "tags": {"a": 1}}), "tags"),
            (
                json!({"name": "a", "count": 1, "weights": {"x y": 300}}),
                "weights.x y",
            ),
            (
                json!({"name": "a", "count": 1, "grid": [[1], [2, 300]]}),
                "grid[1][1]",
            ),
            (
                json!({"name": "a", "count": 1, "grid": [[1], {}]}),
                "grid[1]",
            ),
            (json!({"name": "a", "count": 1, "mode": "fly"}), "mode"),
            (json!({"name": "a", "count": 1, "mode": {"fly": 1}}), "mode"),
            (
                json!({"name": "a", "count": 1, "modes": ["walk", "fly"]}),
                "modes[1]",
            ),
            (json!({"name": "a\"}", "count": "1"}), "count"),
        ];
        for (args, path) in cases {
            for text in [
                args.to_string(),
                serde_json::to_string_pretty(&args).unwrap(),
            ] {
                assert_eq!(found(&text).as_deref(), Some(path), "{text}");
                assert_eq!(tracked(&text).as_deref(), Some(path), "{text}");
            }
        }
        // Escaped keys are named as they read.
        let text = r#"{"name": "a", "count": 1, "weights": {"a\u0020b": "x"}}"#;
        assert_eq!(found(text).as_deref(), Some("weights.a b"));
        assert_eq!(found(text), tracked(text));
    }

    /// Values shaped like `Outer`, some of them wrong.
    fn outer_like() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i32>().prop_map(Value::from),
            (0u32..400).prop_map(Value::from),
            "[a-z\" \\\\{}]{0,6}".prop_map(Value::from),
        ];
        let value = scalar.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop_oneof![
                        Just("city".to_owned()),
                        Just("radius".to_owned()),
                        "[a-z]{1,3}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        let keys = prop_oneof![
            Just("name"),
            Just("count"),
            Just("area"),
            Just("stops"),
            Just("tags"),
            Just("weights"),
            Just("grid"),
            Just("mode"),
            Just("modes"),
            Just("other"),
        ];
        prop::collection::btree_map(keys, value, 0..8)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn paths_match_a_tracking_pass_on_any_shape(args in outer_like(), pretty in any::<bool>()) {
            let text = if pretty {
                serde_json::to_string_pretty(&args).unwrap()
            } else {
                args.to_string()
            };
            prop_assert_eq!(found(&text), tracked(&text), "{}", text);
        }
    }

    #[test]
    fn values_read_as_text_does() {
        let args = json!({"name": "a", "count": 1, "stops": [{"city": "a", "radius": "x"}]});
        let from_value = parse_args::<Outer>(ToolArgs::Value(args.clone())).unwrap_err();
        let from_text = parse_args::<Outer>(ToolArgs::Text(&args.to_string())).unwrap_err();
        assert_eq!(from_value.to_string(), from_text.to_string());
        assert!(
            matches!(from_value, ToolError::InvalidArguments { path, .. } if path == "stops[0].radius")
        );
    }

    #[test]
    fn a_key_written_twice_is_refused_alike_for_compiled_and_run_time_tools() {
        let text = r#"{"name": "a", "count": 1, "area": {"city": "x", "city": "y", "radius": 1}}"#;
        let compiled = parse_args::<Outer>(ToolArgs::Text(text)).unwrap_err();
        let run_time = args_value(ToolArgs::Text(text)).unwrap_err();
        assert_eq!(compiled.to_string(), run_time.to_string());
        assert!(
            matches!(&run_time, ToolError::InvalidArguments { path, message, .. }
                if path == "area.city" && message == "duplicate field `city`"),
            "{run_time:?}"
        );
        let top = args_value(ToolArgs::Text(r#"{"q": 1, "q": 2}"#)).unwrap_err();
        assert!(
            matches!(&top, ToolError::InvalidArguments { path, .. } if path == "q"),
            "{top:?}"
        );
    }
}
