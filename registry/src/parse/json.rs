//! JSON calls: `{"name": …, "arguments": {…}}` and the shapes around it (Hermes, Llama 3.x,
//! Mistral, xLAM, fenced blocks), read from values the scanner has delimited.

use std::ops::Range;

use serde_json::{Map, Value};

use super::block::{Env, Item, NotCall, Outcome, RawCall, Step};
use super::markers::END_TOKENS;
use super::scan::{Input, Prefix, SeqEnd, Values};
use super::{ErrorKind, Format, Formats, pythonic};

/// Reads a value as JSON, falling back to Python literal syntax (`{'a': True}`), which models
/// trained on Python write often enough.
pub(crate) fn value(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Ok(value),
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
/// an array). Used to announce a call before it completes, and to tell a cut-off call from
/// prose. Reads at most `limit` bytes.
pub(crate) fn sniff_name(text: &str, limit: usize) -> Option<&str> {
    let bytes = &text.as_bytes()[..text.len().min(limit)];
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < bytes.len() && super::scan::is_ws(bytes[*i]) {
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

/// The wrappers that introduce one or more values: `<|python_tag|>` (Llama 3.1),
/// `<|python_start|>` (Llama 4), `<|tool_call|>` (Granite 3) and `functools[` (Phi-4-mini).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrapper {
    PythonTag,
    PythonStart,
    Granite,
    Functools,
}

impl Wrapper {
    fn marker(self) -> &'static str {
        match self {
            Wrapper::PythonTag => "<|python_tag|>",
            Wrapper::PythonStart => "<|python_start|>",
            Wrapper::Granite => "<|tool_call|>",
            Wrapper::Functools => "functools",
        }
    }

    fn format(self) -> Format {
        match self {
            Wrapper::PythonTag => Format::PythonTag,
            Wrapper::PythonStart => Format::Pythonic,
            Wrapper::Granite | Wrapper::Functools => Format::Json,
        }
    }

    fn python(self) -> bool {
        matches!(self, Wrapper::PythonTag | Wrapper::PythonStart)
    }

    /// End tokens that may follow the values and belong to the block.
    fn closers(self) -> &'static [&'static str] {
        match self {
            Wrapper::PythonTag => &["<|eom_id|>", "<|eot_id|>"],
            Wrapper::PythonStart => &["<|python_end|>"],
            Wrapper::Granite | Wrapper::Functools => &[],
        }
    }
}

/// A wrapper and the values after it.
#[derive(Debug)]
pub(crate) struct WrapperBlock {
    start: usize,
    wrapper: Wrapper,
    values: Values,
    closing: Option<(usize, Outcome)>,
    /// Whether the block is known to hold calls (only `functools[` needs a look first), and
    /// how far whitespace before that look has been skipped.
    checked: bool,
    cursor: usize,
}

impl WrapperBlock {
    pub(crate) fn new(start: usize, wrapper: Wrapper) -> Self {
        let body = start + wrapper.marker().len();
        let multi = wrapper != Wrapper::Functools;
        Self {
            start,
            wrapper,
            values: Values::new(body, wrapper.python(), multi),
            closing: None,
            checked: wrapper != Wrapper::Functools,
            cursor: start + "functools[".len(),
        }
    }

    pub(crate) fn start(&self) -> usize {
        self.start
    }

    pub(crate) fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        let from = self
            .values
            .spans
            .first()
            .map(|s| s.start)
            .or_else(|| self.values.open_start())?;
        sniff_name(input.str(from..input.end()), 512).map(str::to_owned)
    }

    pub(crate) fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        let format = self.wrapper.format();
        if !self.checked {
            // `functools[0]` in prose: only `functools[{` opens calls.
            let object = input.skip_ws(self.cursor);
            self.cursor = object;
            match input.byte(object) {
                Some(b'{') => self.checked = true,
                None if !input.eof() => return Step::NeedMore,
                _ => {
                    return Step::NotACall {
                        resume: self.start + "functools[".len(),
                    };
                }
            }
        }
        if self.closing.is_none() {
            match self.values.scan(input) {
                SeqEnd::NeedMore => return Step::NeedMore,
                SeqEnd::Ended {
                    complete: false, ..
                } => {
                    return Step::Done(Outcome::error(
                        self.start..input.end(),
                        format,
                        ErrorKind::Truncated,
                        format!(
                            "the output ends inside the call after `{}`: the call was cut off; nothing was called",
                            self.wrapper.marker()
                        ),
                    ));
                }
                SeqEnd::Ended { at, complete: true } => {
                    let Some(last_end) = self.values.last_end() else {
                        if self.wrapper == Wrapper::Functools {
                            return Step::NotACall {
                                resume: self.start + "functools[".len(),
                            };
                        }
                        let end = self.start + self.wrapper.marker().len();
                        return Step::Done(Outcome::error(
                            self.start..end,
                            format,
                            ErrorKind::Malformed,
                            format!(
                                "`{}` is not followed by a call; write {{\"name\": \"...\", \"parameters\": {{...}}}} after it",
                                self.wrapper.marker()
                            ),
                        ));
                    };
                    let mut items = Vec::new();
                    for span in &self.values.spans {
                        items.extend(value_items(
                            input.str(span.clone()),
                            span.clone(),
                            format,
                            self.wrapper.python(),
                        ));
                    }
                    self.closing = Some((at, Outcome::new(last_end, items)));
                }
            }
        }
        let Some((cursor, outcome)) = &mut self.closing else {
            return Step::NeedMore;
        };
        let at = input.skip_ws(*cursor);
        *cursor = at;
        for closer in self.wrapper.closers() {
            match input.prefix(at, closer.as_bytes()) {
                Prefix::Yes => {
                    outcome.end = at + closer.len();
                    break;
                }
                Prefix::Partial => return Step::NeedMore,
                Prefix::No => {}
            }
        }
        if at == input.end() && !input.eof() && !self.wrapper.closers().is_empty() {
            return Step::NeedMore;
        }
        Step::Done(std::mem::take(outcome))
    }
}

/// The calls a bare value stands for, if it is entirely calls: `Err` when any part is not.
fn bare_calls(text: &str, formats: Formats) -> Result<Vec<(RawCall, Format)>, ()> {
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if first != b'{'
        && formats.contains(Format::Pythonic)
        && let Ok(calls) = pythonic::calls(text)
    {
        return Ok(calls
            .into_iter()
            .map(|c| {
                (
                    RawCall {
                        name: c.name,
                        arguments: Value::Object(c.arguments),
                        id: None,
                    },
                    Format::Pythonic,
                )
            })
            .collect());
    }
    if !formats.contains(Format::Json) || !matches!(first, b'{' | b'[') {
        return Err(());
    }
    let value = value(text).map_err(|_| ())?;
    let calls = calls(value, Shape::Bare).map_err(|_| ())?;
    Ok(calls.into_iter().map(|c| (c, Format::Json)).collect())
}

/// The items for bare values that are all calls and name at least one known tool.
fn known_calls(input: &Input<'_>, spans: &[Range<usize>], env: &Env<'_>) -> Option<Vec<Item>> {
    let mut items = Vec::new();
    let mut known = false;
    for span in spans {
        for (call, format) in bare_calls(input.str(span.clone()), env.formats).ok()? {
            known |= env.tools.contains(&call.name)
                || call
                    .name
                    .strip_suffix(".call")
                    .is_some_and(|n| env.tools.contains(n));
            items.push(Item::found(call, format, span.clone()));
        }
    }
    known.then_some(items)
}

/// A cut-off bare call is reported only when it names a known tool; otherwise it is prose.
fn truncated_known(
    input: &Input<'_>,
    start: usize,
    env: &Env<'_>,
    format: Format,
) -> Option<Outcome> {
    let text = input.str(start..input.end());
    let name = sniff_name(text, 4096).or_else(|| sniff_python_name(text))?;
    env.tools.contains(name).then(|| {
        Outcome::error(
            start..input.end(),
            format,
            ErrorKind::Truncated,
            format!("the output ends inside the call of `{name}` before its JSON is complete: the call was cut off; nothing was called"),
        )
    })
}

/// The name of the first call in a partial pythonic list, `[name(` or `name(`.
fn sniff_python_name(text: &str) -> Option<&str> {
    let rest = text.trim_start();
    let rest = rest.strip_prefix('[').map_or(rest, str::trim_start);
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        .count();
    (len > 0 && rest[len..].starts_with('(')).then(|| &rest[..len])
}

/// JSON or a pythonic list as the whole message: `[{"name": …, "arguments": …}]`,
/// `{"name": …, "parameters": …}` (Llama 3.x, several joined by `;`), `[f(a=1)]`.
#[derive(Debug)]
pub(crate) struct BareBlock {
    start: usize,
    values: Values,
}

impl BareBlock {
    pub(crate) fn new(start: usize) -> Self {
        Self {
            start,
            values: Values::new(start, true, true),
        }
    }

    pub(crate) fn start(&self) -> usize {
        self.start
    }

    pub(crate) fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let not_a_call = Step::NotACall { resume: self.start };
        match self.values.scan(input) {
            SeqEnd::NeedMore => Step::NeedMore,
            SeqEnd::Ended {
                complete: false, ..
            } => match truncated_known(input, self.start, env, Format::Json) {
                Some(outcome) => Step::Done(outcome),
                None => not_a_call,
            },
            SeqEnd::Ended { at, .. } => match only_end_tokens(input, at) {
                None => Step::NeedMore,
                // Anything after the values makes them part of the prose.
                Some(false) => not_a_call,
                Some(true) => match known_calls(input, &self.values.spans, env) {
                    Some(items) => Step::Done(Outcome::new(input.end(), items)),
                    None => not_a_call,
                },
            },
        }
    }
}

/// Whether only whitespace and end-of-turn tokens follow `at` to the end of the output;
/// `None` while the input may still say otherwise.
fn only_end_tokens(input: &Input<'_>, mut at: usize) -> Option<bool> {
    loop {
        at = input.skip_ws(at);
        if at == input.end() {
            return input.eof().then_some(true);
        }
        let mut partial = false;
        let mut matched = None;
        for token in END_TOKENS {
            match input.prefix(at, token.as_bytes()) {
                Prefix::Yes => matched = Some(token.len()),
                Prefix::Partial => partial = true,
                Prefix::No => {}
            }
        }
        match matched {
            Some(len) => at += len,
            None if partial => return None,
            None => return Some(false),
        }
    }
}

/// Whether the backticks at `at` begin their line (after at most three spaces).
fn fence_line(input: &Input<'_>, body: usize, at: usize) -> bool {
    let mut start = at;
    while at - start < 3 && start > body && input.byte(start - 1) == Some(b' ') {
        start -= 1;
    }
    start == body || input.byte(start - 1) == Some(b'\n')
}

/// A fenced code block. Calls count in a ```` ```json ````, ```` ```tool_call ````,
/// ```` ```tool_code ```` or unlabelled fence that holds nothing but calls of known tools;
/// any other fence is text, and markers inside it are not calls.
#[derive(Debug)]
pub(crate) struct FenceBlock {
    start: usize,
    calls_allowed: bool,
    state: FenceState,
}

#[derive(Debug)]
enum FenceState {
    Info { scanned: usize },
    Values { body: usize, values: Values },
}

impl FenceBlock {
    pub(crate) fn new(start: usize, calls_allowed: bool) -> Self {
        Self {
            start,
            calls_allowed,
            state: FenceState::Info { scanned: start + 3 },
        }
    }

    pub(crate) fn start(&self) -> usize {
        self.start
    }

    pub(crate) fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        loop {
            match &mut self.state {
                FenceState::Info { scanned } => {
                    let Some(i) = memchr::memchr(b'\n', input.bytes_from(*scanned)) else {
                        if input.eof() {
                            return Step::CodeBlock { body: input.end() };
                        }
                        *scanned = input.end();
                        return Step::NeedMore;
                    };
                    let newline = *scanned + i;
                    let body = newline + 1;
                    let info = input
                        .str(self.start + 3..newline)
                        .trim()
                        .to_ascii_lowercase();
                    let callable = matches!(
                        info.as_str(),
                        "" | "json" | "json5" | "tool_call" | "tool_calls" | "tool_code"
                    );
                    if !callable || !self.calls_allowed {
                        return Step::CodeBlock { body };
                    }
                    self.state = FenceState::Values {
                        body,
                        values: Values::new(body, true, true),
                    };
                }
                FenceState::Values { body, values } => {
                    let body = *body;
                    return match values.scan(input) {
                        SeqEnd::NeedMore => Step::NeedMore,
                        SeqEnd::Ended {
                            complete: false, ..
                        } => match truncated_known(input, body, env, Format::Json) {
                            Some(outcome) => Step::Done(outcome),
                            None => Step::CodeBlock { body },
                        },
                        SeqEnd::Ended { at, .. } if values.spans.is_empty() => {
                            let _ = at;
                            Step::CodeBlock { body }
                        }
                        SeqEnd::Ended { at, .. } => {
                            let end = match input.prefix(at, b"```") {
                                Prefix::Partial => return Step::NeedMore,
                                Prefix::Yes if fence_line(input, body, at) => at + 3,
                                // A fence cut off after its calls.
                                Prefix::No if at == input.end() && input.eof() => at,
                                _ => return Step::CodeBlock { body },
                            };
                            match known_calls(input, &values.spans, env) {
                                Some(items) => Step::Done(Outcome::new(end, items)),
                                None => Step::CodeBlock { body },
                            }
                        }
                    };
                }
            }
        }
    }
}

/// The calls in one value written in JSON or Python syntax, for readers of wrapped values.
pub(crate) fn value_items(
    text: &str,
    span: Range<usize>,
    format: Format,
    python: bool,
) -> Vec<Item> {
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if python && (first.is_ascii_alphabetic() || first == b'_') {
        return pythonic_items(text, span, format);
    }
    if python && first == b'[' {
        // A JSON list of calls, or else a Python one.
        return match value(text).map(|value| calls(value, Shape::Wrapped)) {
            Ok(Ok(calls)) => found_items(calls, format, &span),
            _ => pythonic_items(text, span, format),
        };
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

fn pythonic_items(text: &str, span: Range<usize>, format: Format) -> Vec<Item> {
    match pythonic::calls(text) {
        Ok(calls) => calls
            .into_iter()
            .map(|c| {
                Item::found(
                    RawCall {
                        name: c.name,
                        arguments: serde_json::Value::Object(c.arguments),
                        id: None,
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
