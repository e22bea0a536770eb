//! Gemma's function-call tokens, one call per pair:
//!
//! - FunctionGemma (<https://ai.google.dev/gemma/docs/functiongemma/formatting-and-best-practices>):
//!   `<start_function_call>call:get_weather{city:<escape>Paris<escape>,days:3}<end_function_call>`
//! - Gemma 4 (<https://ai.google.dev/gemma/docs/capabilities/text/function-calling-gemma4>):
//!   `<|tool_call>call:get_weather{city:<|"|>Paris<|"|>,days:3}<tool_call|>`
//!
//! Inside the braces keys are bare, strings are enclosed in the escape token (`<escape>` or
//! `<|"|>`), and numbers, `true`, `false`, `null`, lists `[…]` and objects `{…}` are written as in
//! JSON. A value may also be written bare, without the escape tokens (`city:London`), as
//! FunctionGemma models do: the word, or what it reads as in JSON when there is no schema. The
//! arguments are typed by the tool's schema (`typing.rs`).

use serde_json::{Map, Number, Value};

use crate::block::{self, Env, Family, Item, Outcome, RawCall, Step, Thought, Token, ToolLookup};
use crate::scan::{Finder, Input, Prefix};
use crate::typing::{ToolTypes, Written, typed_written};
use crate::vocab::{ErrorKind, Format, MAX_DEPTH};
use tool_registry_json::unique;

/// Gemma's row of the family table: both dialects' call tokens, and Gemma 4's thought.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens(Dialect::FunctionGemma.open(), Format::Gemma, |at, _| {
            Box::new(GemmaBlock::new(at, Dialect::FunctionGemma))
        }),
        Token::opens(Dialect::Gemma4.open(), Format::Gemma, |at, _| {
            Box::new(GemmaBlock::new(at, Dialect::Gemma4))
        }),
        Token::thought(Thought {
            open: "<|channel>thought",
            close: "<channel|>",
        }),
    ],
};

/// FunctionGemma's or Gemma 4's spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    FunctionGemma,
    Gemma4,
}

impl Dialect {
    const fn open(self) -> &'static str {
        match self {
            Dialect::FunctionGemma => "<start_function_call>",
            Dialect::Gemma4 => "<|tool_call>",
        }
    }

    fn close(self) -> &'static str {
        match self {
            Dialect::FunctionGemma => "<end_function_call>",
            Dialect::Gemma4 => "<tool_call|>",
        }
    }

    fn quote(self) -> &'static str {
        match self {
            Dialect::FunctionGemma => "<escape>",
            Dialect::Gemma4 => "<|\"|>",
        }
    }
}

const CALL: &str = "call:";

/// One call between the dialect's tokens.
#[derive(Debug)]
struct GemmaBlock {
    start: usize,
    dialect: Dialect,
    /// Whether `call:` follows the open token.
    checked: bool,
    end: Finder,
    /// How far the quote tokens have been counted, and whether an odd number of them came
    /// before: an end token inside a string is text of the string.
    counted: usize,
    in_string: bool,
}

impl GemmaBlock {
    fn new(start: usize, dialect: Dialect) -> Self {
        Self {
            start,
            dialect,
            checked: false,
            end: Finder::new(dialect.close()),
            counted: start + dialect.open().len(),
            in_string: false,
        }
    }

    /// Where the call's end token is, outside its strings: the end of the body, the end of the
    /// block, and whether the token came (at the end of the output the block runs to the end).
    /// `None`: more input will tell.
    fn closing(&mut self, input: &Input<'_>) -> Option<(usize, usize, bool)> {
        let close = self.dialect.close();
        loop {
            let Some(at) = self.end.find(input, self.counted) else {
                return input.eof().then(|| (input.end(), input.end(), false));
            };
            let between = &input.bytes_from(self.counted)[..at - self.counted];
            let quotes =
                memchr::memmem::find_iter(between, self.dialect.quote().as_bytes()).count();
            self.in_string ^= quotes % 2 == 1;
            if !self.in_string {
                return Some((at, at + close.len(), true));
            }
            self.counted = at + 1;
        }
    }
}

// `Reader` in this file is the reader of a call's values.
impl block::Reader for GemmaBlock {
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let body = self.start + self.dialect.open().len();
        if !self.checked {
            match input.prefix(input.skip_ws(body), CALL.as_bytes()) {
                Prefix::Yes => self.checked = true,
                Prefix::Partial => return Step::NeedMore,
                Prefix::No if input.skip_ws(body) == input.end() && !input.eof() => {
                    return Step::NeedMore;
                }
                Prefix::No if input.ends_inside(input.skip_ws(body), CALL.as_bytes()) => {
                    return Step::Done(Outcome::cut_off(
                        self.start..input.end(),
                        Format::Gemma,
                        format_args!("right after `{}`", self.dialect.open()),
                    ));
                }
                Prefix::No => {
                    return Step::NotACall {
                        resume: self.start + 1,
                    };
                }
            }
        }
        let Some((mut body_end, end, complete)) = self.closing(input) else {
            return Step::NeedMore;
        };
        if !complete {
            // The end token may be missing after a complete call (servers cut stop tokens),
            // and so may its end.
            body_end -= partial_end(input.str(body..body_end), self.dialect.close());
        }
        let span = self.start..end;
        let text = input.str(body..body_end).trim();
        let text = &text[CALL.len()..];
        let item = match read_call(text, self.dialect.quote(), env.tools) {
            Ok((name, arguments)) => Item::found(
                RawCall {
                    name,
                    arguments: Value::Object(arguments),
                    id: None,
                    typed: true,
                },
                Format::Gemma,
                span,
            ),
            Err(_) if !complete => Item::cut_off(
                span,
                Format::Gemma,
                format_args!("inside a call before `{}`", self.dialect.close()),
            ),
            Err(message) => Item::error(
                span,
                Format::Gemma,
                ErrorKind::Malformed,
                format!(
                    "the call is not valid: {message}; write it as call:NAME{{key:{q}text{q},number:1}}",
                    q = self.dialect.quote()
                ),
            ),
        };
        Step::Done(Outcome::new(end, vec![item]))
    }
}

/// The length of the longest end of `text` that begins `token` without being all of it.
fn partial_end(text: &str, token: &str) -> usize {
    (1..token.len())
        .rev()
        .find(|&len| text.ends_with(&token[..len]))
        .unwrap_or(0)
}

/// `NAME{…}` after `call:`, the arguments typed by the tool's schema.
fn read_call(
    text: &str,
    quote: &'static str,
    tools: &dyn ToolLookup,
) -> Result<(String, Map<String, Value>), String> {
    let brace = text
        .find('{')
        .ok_or_else(|| "the name is not followed by `{`".to_owned())?;
    let name = text[..brace].trim();
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Err(format!("`{name}` is not a function name"));
    }
    let mut reader = Reader {
        text,
        pos: brace + 1,
        quote,
        depth: 1,
    };
    let arguments = reader.object(Some(&ToolTypes::of(tools, name)))?;
    reader.ws();
    if reader.pos != text.len() {
        return Err(format!(
            "unexpected text after the arguments at byte {}",
            reader.pos
        ));
    }
    Ok((name.to_owned(), arguments))
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    quote: &'static str,
    /// The lists and objects the reader is in, the arguments' object the first.
    depth: usize,
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn ws(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn eat(&mut self, c: char) -> bool {
        self.ws();
        if self.rest().starts_with(c) {
            self.pos += c.len_utf8();
            true
        } else {
            false
        }
    }

    fn expected(&self, what: &str) -> String {
        match self.rest().chars().next() {
            Some(c) => format!("expected {what} at byte {}, found `{c}`", self.pos),
            None => format!("expected {what}, but the text ends"),
        }
    }

    /// A string enclosed in the escape token, if one starts here.
    fn string(&mut self) -> Result<Option<String>, String> {
        let Some(rest) = self.rest().strip_prefix(self.quote) else {
            return Ok(None);
        };
        let len = rest
            .find(self.quote)
            .ok_or_else(|| format!("a string is not closed with `{}`", self.quote))?;
        let string = rest[..len].to_owned();
        self.pos += self.quote.len() * 2 + len;
        Ok(Some(string))
    }

    /// A value; a list or an object one level below the one it is in, at most [`MAX_DEPTH`].
    fn value(&mut self) -> Result<Value, String> {
        self.ws();
        if !self.rest().starts_with(['{', '[']) {
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
        self.ws();
        if let Some(string) = self.string()? {
            return Ok(Value::String(string));
        }
        if self.eat('{') {
            return self.object(None).map(Value::Object);
        }
        if self.eat('[') {
            let mut items = Vec::new();
            if self.eat(']') {
                return Ok(Value::Array(items));
            }
            loop {
                items.push(self.value()?);
                if self.eat(',') {
                    continue;
                }
                if self.eat(']') {
                    return Ok(Value::Array(items));
                }
                return Err(self.expected("`,` or `]`"));
            }
        }
        match self.bare()? {
            Written::Bare { text, literal } => {
                Ok(literal.unwrap_or_else(|| Value::String(text.to_owned())))
            }
            _ => Err(self.expected("a value")),
        }
    }

    /// The members of an object after its `{`; with the tool's types, the call's arguments,
    /// each typed by its declared kinds.
    fn object(&mut self, types: Option<&ToolTypes<'_>>) -> Result<Map<String, Value>, String> {
        let mut object = Map::new();
        if self.eat('}') {
            return Ok(object);
        }
        loop {
            self.ws();
            let key = match self.string()? {
                Some(key) => key,
                None => {
                    // A bare key runs to its `:`, spaces and all (`Basic LLM Chain:{…}`).
                    let len = self
                        .rest()
                        .find(|c: char| c == ':' || c == '\n' || "{}[],".contains(c))
                        .unwrap_or(self.rest().len());
                    let key = self.rest()[..len].trim_end();
                    if key.is_empty() {
                        return Err(self.expected("a key"));
                    }
                    let key = key.to_owned();
                    self.pos += len;
                    key
                }
            };
            if !self.eat(':') {
                return Err(self.expected("`:` after a key"));
            }
            let value = match types {
                Some(types) => typed_written(self.written()?, types.kinds(&key)),
                None => self.value()?,
            };
            unique::insert(&mut object, key, value)?;
            if self.eat(',') {
                continue;
            }
            if self.eat('}') {
                return Ok(object);
            }
            return Err(self.expected("`,` or `}`"));
        }
    }

    /// An argument's value as written.
    fn written(&mut self) -> Result<Written<'a>, String> {
        self.ws();
        if let Some(string) = self.string()? {
            return Ok(Written::Quoted(string));
        }
        if self.rest().starts_with(['{', '[']) {
            return self.value().map(Written::Nested);
        }
        self.bare()
    }

    /// A value without the escape tokens, up to the next `,`, bracket or brace: `true`,
    /// `false`, `null` and numbers as in JSON, any other word as written.
    fn bare(&mut self) -> Result<Written<'a>, String> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| "{}[],".contains(c))
            .unwrap_or(rest.len());
        let word = rest[..len].trim();
        if word.is_empty() || word.contains(self.quote) {
            return Err(self.expected("a value"));
        }
        let literal = match word {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            "null" => Some(Value::Null),
            _ => serde_json::from_str::<Number>(word).ok().map(Value::Number),
        };
        self.pos += len;
        Ok(Written::Bare {
            text: word,
            literal,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_call(text: &str, quote: &'static str) -> Result<(String, Map<String, Value>), String> {
        super::read_call(text, quote, &crate::AnyTool)
    }

    /// The arguments' object and the values in it nest [`MAX_DEPTH`] levels and no deeper.
    #[test]
    fn a_value_nests_as_deep_as_the_bound_and_no_deeper() {
        let call = |levels: usize| {
            let lists = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
            read_call(&format!("f{{a:{lists}}}"), "<escape>")
        };
        let (_, arguments) = call(MAX_DEPTH - 1).unwrap();
        let nested = (1..MAX_DEPTH).fold(json!(1), |value, _| json!([value]));
        assert_eq!(arguments["a"], nested);
        assert_eq!(
            call(MAX_DEPTH).unwrap_err(),
            format!("the value nests deeper than {MAX_DEPTH} levels")
        );
        // An object is a level as a list is.
        let objects = |levels: usize| {
            let value = format!("{}1{}", "{k:".repeat(levels), "}".repeat(levels));
            read_call(&format!("f{{a:{value}}}"), "<escape>")
        };
        assert!(objects(MAX_DEPTH - 1).is_ok());
        assert!(objects(MAX_DEPTH).is_err());
    }

    #[test]
    fn reads_nested_values_with_either_quote() {
        let (name, args) = read_call(
            "f{a:<escape>x, y<escape>,b:[1,2.5,true,null],c:{d:<escape>}<escape>}}",
            "<escape>",
        )
        .unwrap();
        assert_eq!(name, "f");
        assert_eq!(
            Value::Object(args),
            json!({"a": "x, y", "b": [1, 2.5, true, null], "c": {"d": "}"}})
        );
        let (_, args) = read_call("g{s:<|\"|>hi<|\"|>}", "<|\"|>").unwrap();
        assert_eq!(Value::Object(args), json!({"s": "hi"}));
        let (_, args) = read_call("g{s:hi there,n:007,m:[a,2]}", "<escape>").unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"s": "hi there", "n": "007", "m": ["a", 2]})
        );
        assert!(read_call("g{s:<escape>open}", "<escape>").is_err());
        assert!(read_call("g{s:}", "<escape>").is_err());
    }
}
