//! Pythonic calls, `[get_weather(city="Paris"), get_time()]` (Llama 3.2 and 4), and Python
//! literals: what models write when a JSON value comes out with single quotes, `True` or
//! `None`.
//!
//! A small recursive-descent reader, depth-limited, that never evaluates anything. A call's
//! values are handed to the caller as written ([`Written`]) to be typed by the tool's schema
//! ([`TypeArgs`], in `typing.rs`); a value may also be a bare word (`mode=fast`), as mlx-lm's
//! pythonic parser reads them.

use serde_json::{Map, Number, Value};

use crate::vocab::MAX_DEPTH;
use tool_registry_json::unique;

/// A call read from Python syntax.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PyCall {
    pub(crate) name: String,
    pub(crate) arguments: Map<String, Value>,
}

/// How a value was written, in the syntaxes that tell strings from other values (pythonic,
/// Gemma): what the declared type decides from.
#[derive(Debug)]
pub(crate) enum Written<'t> {
    /// Unquoted: a number, `True`, `None`, a bare word. `literal` is what the syntax reads it
    /// as on its own, `None` for a bare word.
    Bare {
        text: &'t str,
        literal: Option<Value>,
    },
    /// A quoted string, unescaped.
    Quoted(String),
    /// A list or a dict.
    Nested(Value),
}

/// How the caller types the arguments of the calls read (by the tool's schema, in
/// `typing.rs`, which stands above this reader).
pub(crate) trait TypeArgs {
    /// A call of `tool` starts.
    fn call(&mut self, tool: &str);
    /// The value of argument `key` of the current call, as written.
    fn value(&mut self, key: &str, written: Written<'_>) -> Value;
    /// The current call's arguments are all read.
    fn done(&mut self, arguments: &mut Map<String, Value>);
}

/// Reads one Python literal (strings, numbers, `True`/`False`/`None`, lists, tuples, dicts)
/// as JSON. JSON itself is accepted too.
pub(crate) fn literal(text: &str) -> Result<Value, String> {
    let mut p = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        depth: 0,
    };
    p.ws();
    let value = p.value()?;
    p.ws();
    p.end()?;
    Ok(value)
}

/// Reads `[f(a=1), g()]` or a single `f(a=1)`, each value typed by `typing`.
pub(crate) fn calls(text: &str, typing: &mut dyn TypeArgs) -> Result<Vec<PyCall>, String> {
    let mut p = Reader {
        bytes: text.as_bytes(),
        text,
        pos: 0,
        // A call's arguments are an object: the values in them are one level down.
        depth: 1,
    };
    p.ws();
    let mut calls = Vec::new();
    if p.eat(b'[') {
        loop {
            p.ws();
            if p.eat(b']') {
                break;
            }
            calls.push(p.call(typing)?);
            p.ws();
            if p.eat(b',') {
                continue;
            }
            p.expect(b']', "`,` or `]` after a call")?;
            break;
        }
        if calls.is_empty() {
            return Err("the list holds no calls".into());
        }
    } else {
        calls.push(p.call(typing)?);
    }
    p.ws();
    p.end()?;
    Ok(calls)
}

struct Reader<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
    /// The lists, tuples and dicts the reader is in (and a call's arguments).
    depth: usize,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, b: u8, what: &str) -> Result<(), String> {
        if self.eat(b) {
            Ok(())
        } else {
            Err(self.unexpected(what))
        }
    }

    fn unexpected(&self, what: &str) -> String {
        match self
            .text
            .get(self.pos..)
            .and_then(|rest| rest.chars().next())
        {
            Some(c) => format!("expected {what} at byte {}, found `{c}`", self.pos),
            None => format!("expected {what}, but the text ends"),
        }
    }

    fn end(&self) -> Result<(), String> {
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(self.unexpected("the end"))
        }
    }

    fn ws(&mut self) {
        while let Some(b) = self.peek() {
            if matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c') {
                self.pos += 1;
            } else if b == b'\\' && matches!(self.bytes.get(self.pos + 1), Some(b'\n')) {
                self.pos += 2;
            } else {
                break;
            }
        }
    }

    fn ident(&mut self) -> &str {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b >= 0x80 {
                self.pos += 1;
            } else {
                break;
            }
        }
        // Stopped at an ASCII byte or the end: a char boundary.
        &self.text[start..self.pos]
    }

    fn call(&mut self, typing: &mut dyn TypeArgs) -> Result<PyCall, String> {
        let name = self.ident().to_owned();
        if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
            return Err(self.unexpected("a function name"));
        }
        self.ws();
        self.expect(b'(', "`(` after the function name")?;
        typing.call(&name);
        let mut arguments = Map::new();
        loop {
            self.ws();
            if self.eat(b')') {
                break;
            }
            let key_start = self.pos;
            let key = self.ident().to_owned();
            self.ws();
            if key.is_empty() || !self.eat(b'=') {
                self.pos = key_start;
                return Err(format!(
                    "argument {} of `{name}` has no name; write every argument as name=value",
                    arguments.len() + 1
                ));
            }
            self.ws();
            let value = typing.value(&key, self.written()?);
            unique::insert(&mut arguments, key, value)
                .map_err(|error| format!("{error} in the call of `{name}`"))?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(b')', "`,` or `)` after an argument")?;
            break;
        }
        typing.done(&mut arguments);
        Ok(PyCall { name, arguments })
    }

    /// An argument's value as written: a literal, or else a bare word up to the next `,` or
    /// `)`.
    fn written(&mut self) -> Result<Written<'a>, String> {
        match self.peek() {
            Some(b'"' | b'\'') => return self.string(false).map(Written::Quoted),
            Some(b'[' | b'(' | b'{') => return self.value().map(Written::Nested),
            _ => {}
        }
        let start = self.pos;
        if let Ok(value) = self.value() {
            let end = self.pos;
            self.ws();
            if matches!(self.peek(), Some(b',' | b')')) {
                return Ok(match value {
                    Value::String(s) => Written::Quoted(s),
                    literal => Written::Bare {
                        text: &self.text[start..end],
                        literal: Some(literal),
                    },
                });
            }
        }
        self.pos = start;
        let len = self.bytes[start..]
            .iter()
            .position(|b| matches!(b, b',' | b')'))
            .unwrap_or(self.bytes.len() - start);
        // Stopped at an ASCII byte or the end: a char boundary.
        let word = self.text[start..start + len].trim();
        let code = |b: u8| b"'\"[]{}()=\n".contains(&b);
        if word.is_empty() || word.bytes().any(code) {
            return Err(self.unexpected(
                "a value (a string, number, list, dict, True, False, None or a bare word)",
            ));
        }
        self.pos = start + len;
        Ok(Written::Bare {
            text: word,
            literal: None,
        })
    }

    /// A value; a list, tuple or dict one level below the one it is in, at most
    /// [`MAX_DEPTH`].
    fn value(&mut self) -> Result<Value, String> {
        if !matches!(self.peek(), Some(b'[' | b'(' | b'{')) {
            return self.value_inner();
        }
        if self.depth == MAX_DEPTH {
            return Err(format!("the value nests deeper than {MAX_DEPTH} levels"));
        }
        self.depth += 1;
        let value = self.value_inner();
        self.depth -= 1;
        value
    }

    fn value_inner(&mut self) -> Result<Value, String> {
        match self.peek() {
            Some(b'"' | b'\'') => self.string(false).map(Value::String),
            Some(b'[') => {
                self.pos += 1;
                self.sequence(b']').map(Value::Array)
            }
            Some(b'(') => {
                self.pos += 1;
                self.sequence(b')').map(Value::Array)
            }
            Some(b'{') => {
                self.pos += 1;
                self.dict().map(Value::Object)
            }
            Some(b'-' | b'+' | b'.' | b'0'..=b'9') => self.number(),
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                let start = self.pos;
                let word = self.ident().to_owned();
                let word = word.as_str();
                let prefixed_string = word.len() <= 2
                    && word
                        .bytes()
                        .all(|b| matches!(b.to_ascii_lowercase(), b'r' | b'b' | b'u' | b'f'))
                    && matches!(self.peek(), Some(b'"' | b'\''));
                if prefixed_string {
                    let raw = word.bytes().any(|b| b.eq_ignore_ascii_case(&b'r'));
                    return self.string(raw).map(Value::String);
                }
                match word {
                    "True" | "true" => Ok(Value::Bool(true)),
                    "False" | "false" => Ok(Value::Bool(false)),
                    "None" | "null" => Ok(Value::Null),
                    _ => {
                        self.pos = start;
                        Err(self.unexpected(
                            "a literal value (a string, number, list, dict, True, False or None)",
                        ))
                    }
                }
            }
            _ => Err(self.unexpected("a value")),
        }
    }

    fn sequence(&mut self, close: u8) -> Result<Vec<Value>, String> {
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.eat(close) {
                return Ok(items);
            }
            items.push(self.value()?);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(
                close,
                if close == b']' {
                    "`,` or `]`"
                } else {
                    "`,` or `)`"
                },
            )?;
            return Ok(items);
        }
    }

    fn dict(&mut self) -> Result<Map<String, Value>, String> {
        let mut map = Map::new();
        loop {
            self.ws();
            if self.eat(b'}') {
                return Ok(map);
            }
            let key = match self.value()? {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => "null".to_owned(),
                _ => return Err("a dict key must be a string or a number".into()),
            };
            self.ws();
            self.expect(b':', "`:` after a dict key")?;
            self.ws();
            let value = self.value()?;
            unique::insert(&mut map, key, value)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            self.expect(b'}', "`,` or `}`")?;
            return Ok(map);
        }
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.pos;
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.' | b'_') {
                // A sign is part of a number only at its start or after an exponent marker.
                if matches!(b, b'-' | b'+')
                    && self.pos > start
                    && !matches!(self.bytes[self.pos - 1], b'e' | b'E')
                {
                    break;
                }
                self.pos += 1;
            } else {
                break;
            }
        }
        let raw: String = self.text[start..self.pos]
            .chars()
            .filter(|c| *c != '_')
            .collect();
        let raw = raw.strip_prefix('+').unwrap_or(&raw);
        if let Ok(i) = raw.parse::<i64>() {
            return Ok(Value::Number(i.into()));
        }
        if let Ok(u) = raw.parse::<u64>() {
            return Ok(Value::Number(u.into()));
        }
        match raw.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n)
                if !raw.eq_ignore_ascii_case("inf")
                    && !raw.to_ascii_lowercase().contains("nan") =>
            {
                Ok(Value::Number(n))
            }
            _ => {
                self.pos = start;
                Err(self.unexpected("a number"))
            }
        }
    }

    fn string(&mut self, raw: bool) -> Result<String, String> {
        let quote = self.bytes[self.pos];
        let triple = self.bytes[self.pos..].starts_with(&[quote, quote, quote]);
        self.pos += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let rest = &self.bytes[self.pos..];
            let Some(i) = memchr::memchr2(quote, b'\\', rest) else {
                return Err("a string is not closed".into());
            };
            out.push_str(&self.text[self.pos..self.pos + i]);
            self.pos += i;
            if rest[i] == quote {
                if !triple {
                    self.pos += 1;
                    return Ok(out);
                }
                if self.bytes[self.pos..].starts_with(&[quote, quote, quote]) {
                    self.pos += 3;
                    return Ok(out);
                }
                out.push(quote as char);
                self.pos += 1;
                continue;
            }
            // A backslash.
            let Some(&next) = self.bytes.get(self.pos + 1) else {
                return Err("a string ends in a backslash".into());
            };
            if raw {
                out.push('\\');
                // In a raw string a backslash still keeps the next quote from closing it.
                let width = utf8_width(next);
                out.push_str(&self.text[self.pos + 1..self.pos + 1 + width]);
                self.pos += 1 + width;
                continue;
            }
            self.pos += 2;
            match next {
                b'n' => out.push('\n'),
                b't' => out.push('\t'),
                b'r' => out.push('\r'),
                b'0' => out.push('\0'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'\n' => {}
                b'\\' | b'\'' | b'"' | b'/' => out.push(next as char),
                b'x' => out.push(self.hex_escape(2)?),
                b'u' => out.push(self.unicode_escape()?),
                b'U' => out.push(self.hex_escape(8)?),
                _ => {
                    // Python keeps unknown escapes as written.
                    out.push('\\');
                    let width = utf8_width(next);
                    out.push_str(&self.text[self.pos - 1..self.pos - 1 + width]);
                    self.pos += width - 1;
                }
            }
        }
    }

    fn hex(&mut self, digits: usize) -> Result<u32, String> {
        let hex = self
            .text
            .get(self.pos..self.pos + digits)
            .filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| format!("expected {digits} hex digits in an escape"))?;
        self.pos += digits;
        u32::from_str_radix(hex, 16).map_err(|e| e.to_string())
    }

    fn hex_escape(&mut self, digits: usize) -> Result<char, String> {
        let code = self.hex(digits)?;
        char::from_u32(code).ok_or_else(|| format!("`{code:x}` is not a character"))
    }

    /// `\uXXXX`, joining a UTF-16 surrogate pair as JSON writes them.
    fn unicode_escape(&mut self) -> Result<char, String> {
        let first = self.hex(4)?;
        if (0xD800..0xDC00).contains(&first) && self.bytes[self.pos..].starts_with(b"\\u") {
            self.pos += 2;
            let second = self.hex(4)?;
            let code = 0x10000 + ((first - 0xD800) << 10) + (second.wrapping_sub(0xDC00) & 0x3FF);
            return char::from_u32(code).ok_or_else(|| "a broken surrogate pair".to_owned());
        }
        char::from_u32(first).ok_or_else(|| format!("`{first:x}` is not a character"))
    }
}

fn utf8_width(first: u8) -> usize {
    match first {
        0x00..=0x7F => 1,
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn literals() {
        assert_eq!(
            literal("{'a': [1, -2.5, True, None], \"b\": (3,), 'c': {}}").unwrap(),
            json!({"a": [1, -2.5, true, null], "b": [3], "c": {}})
        );
        assert_eq!(
            literal(r"'Martha\'s \u00e9\n'").unwrap(),
            json!("Martha's é\n")
        );
        assert_eq!(literal(r"r'C:\new'").unwrap(), json!("C:\\new"));
        assert_eq!(
            literal("'''a 'quoted' b'''").unwrap(),
            json!("a 'quoted' b")
        );
        assert_eq!(literal("1_000").unwrap(), json!(1000));
        assert!(literal("[1, 2").is_err());
        assert!(literal("os.system('x')").is_err());
        assert!(literal(&"[".repeat(200)).is_err());
    }

    /// Values as the syntax reads them, without a schema.
    struct Untyped;

    impl TypeArgs for Untyped {
        fn call(&mut self, _: &str) {}
        fn value(&mut self, _: &str, written: Written<'_>) -> Value {
            match written {
                Written::Bare { text, literal } => {
                    literal.unwrap_or_else(|| Value::String(text.to_owned()))
                }
                Written::Quoted(text) => Value::String(text),
                Written::Nested(value) => value,
            }
        }
        fn done(&mut self, _: &mut Map<String, Value>) {}
    }

    fn calls(text: &str) -> Result<Vec<PyCall>, String> {
        super::calls(text, &mut Untyped)
    }

    /// A literal nests [`MAX_DEPTH`] levels and no deeper; in a call, its arguments are the
    /// first.
    #[test]
    fn values_nest_as_deep_as_the_bound_and_no_deeper() {
        let lists = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
        let nested = |levels: usize| (0..levels).fold(json!(1), |value, _| json!([value]));
        let too_deep = format!("the value nests deeper than {MAX_DEPTH} levels");

        assert_eq!(literal(&lists(MAX_DEPTH)).unwrap(), nested(MAX_DEPTH));
        assert_eq!(literal(&lists(MAX_DEPTH + 1)).unwrap_err(), too_deep);

        let call = calls(&format!("f(a={})", lists(MAX_DEPTH - 1))).unwrap();
        assert_eq!(call[0].arguments["a"], nested(MAX_DEPTH - 1));
        let error = calls(&format!("f(a={})", lists(MAX_DEPTH))).unwrap_err();
        assert_eq!(error, too_deep);
        // A dict is a level as a list is.
        let dicts = |levels: usize| format!("{}1{}", "{'k': ".repeat(levels), "}".repeat(levels));
        assert!(calls(&format!("f(a={})", dicts(MAX_DEPTH - 1))).is_ok());
        let error = calls(&format!("f(a={})", dicts(MAX_DEPTH))).unwrap_err();
        assert_eq!(error, too_deep);
    }

    #[test]
    fn calls_with_keywords() {
        let parsed =
            calls("[get_weather(city='San Francisco', metric=\"celsius\"), get_time()]").unwrap();
        assert_eq!(parsed.len(), 2);
        assert_eq!(parsed[0].name, "get_weather");
        assert_eq!(
            Value::Object(parsed[0].arguments.clone()),
            json!({"city": "San Francisco", "metric": "celsius"})
        );
        assert_eq!(parsed[1].arguments.len(), 0);
        assert_eq!(
            calls("brave_search.call(query=\"x\")").unwrap()[0].name,
            "brave_search.call"
        );
        assert!(
            calls("[f('positional')]")
                .unwrap_err()
                .contains("has no name")
        );
        assert!(calls("[]").is_err());
    }

    #[test]
    fn bare_words_are_values() {
        let parsed = calls("[f(mode=fast, city=New York, n=3, ok=True)]").unwrap();
        assert_eq!(
            Value::Object(parsed[0].arguments.clone()),
            json!({"mode": "fast", "city": "New York", "n": 3, "ok": true})
        );
        assert!(calls("[f(x=os.system('x'))]").is_err());
        assert!(calls("[f(x=)]").is_err());
    }
}
