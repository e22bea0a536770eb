//! Kimi K3's tagged messages ("XTML"), as Moonshot's encoder `encoding_k3.py` writes them
//! (<https://huggingface.co/moonshotai/Kimi-K3/blob/main/encoding_k3.py>): an element opens
//! with `<|open|>NAME ATTRIBUTES<|sep|>` and closes with `<|close|>NAME<|sep|>`, and a message
//! holds `think`, `response` and `tools`, in that order:
//!
//! ```text
//! <|open|>message role="assistant"<|sep|><|open|>think<|sep|>The user wants the weather.<|close|>think<|sep|>
//! <|open|>response<|sep|>Let me check.<|close|>response<|sep|>
//! <|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>
//! <|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>
//! <|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>
//! <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|><|end_of_msg|>
//! ```
//!
//! (one line here; the encoder writes no line breaks between elements.)
//!
//! - `think` is reasoning; the generation prompt opens it (`…<|open|>think<|sep|>`), so the
//!   output usually starts inside it and holds only its close.
//! - `response` is content, `tools` holds the calls, `message` wraps them all: their tags are
//!   removed.
//! - A call is `<|open|>call tool="NAME" index="N"<|sep|>`, its arguments, `<|close|>call<|sep|>`.
//!   An argument's `type` says how its value is written: `string` as it is (no escaping), any
//!   other type as JSON. Arguments that are not an object come as one
//!   `<|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>` element, whose object's keys are
//!   the arguments. Attribute values escape `&` and `"` as `&amp;` and `&quot;`.
//! - A value ends at the `<|close|>argument<|sep|>` that the next element or the call's close
//!   follows, so a value holding the text of a K3 tag keeps it.

use serde_json::{Map, Value};

use super::json;
use crate::block::{Env, Family, Item, MAX_NAME, Outcome, RawCall, Reader, Step, Thought, Token};
use crate::scan::{Input, Prefix};
use crate::typing::{ToolTypes, typed_json, typed_string};
use crate::vocab::{ErrorKind, Format};
use tool_registry_json::unique;

const SEP: &str = "<|sep|>";
const CALL: &str = "<|open|>call ";
const CALL_END: &str = "<|close|>call<|sep|>";
const ARGUMENT: &str = "<|open|>argument ";
const ARGUMENT_END: &str = "<|close|>argument<|sep|>";
const JSON: &str = "<|open|>json ";
const JSON_END: &str = "<|close|>json<|sep|>";

/// K3's thought: the `think` element.
pub(crate) const THINK: Thought = Thought {
    open: "<|open|>think<|sep|>",
    close: "<|close|>think<|sep|>",
};

/// Kimi K3's row of the family table: its thought, the calls, and the tags that only wrap the
/// response, the calls and the message.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::thought(THINK),
        Token::opens(CALL, Format::KimiK3, |at, _| Box::new(K3Call::new(at))),
        Token::opens("<|open|>message ", Format::KimiK3, |at, _| {
            Box::new(MessageHeader { start: at })
        }),
        Token::dropped("<|open|>response<|sep|>", Format::KimiK3),
        Token::dropped("<|close|>response<|sep|>", Format::KimiK3),
        Token::dropped("<|open|>tools<|sep|>", Format::KimiK3),
        Token::dropped("<|close|>tools<|sep|>", Format::KimiK3),
        Token::dropped("<|close|>message<|sep|>", Format::KimiK3),
        Token::dropped("<|end_of_msg|>", Format::KimiK3),
    ],
};

/// The longest tag read, attributes and all; a longer one is prose that mentions a K3 token.
const MAX_TAG: usize = 2 * MAX_NAME + 256;

/// `<|open|>message role="…"<|sep|>`: removed, as its close is.
#[derive(Debug)]
struct MessageHeader {
    start: usize,
}

impl Reader for MessageHeader {
    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        match tag(input, self.start + "<|open|>message ".len()) {
            Tag::NeedMore => Step::NeedMore,
            Tag::Read { end, .. } => Step::Done(Outcome::new(end, Vec::new())),
            Tag::Cut | Tag::Not => Step::NotACall {
                resume: self.start + 1,
            },
        }
    }
}

/// A start tag's attributes read, or why not.
enum Tag<'t> {
    /// The tag goes on past the available input.
    NeedMore,
    /// The output ends inside the tag.
    Cut,
    /// Not a tag: no `<|sep|>` within [`MAX_TAG`] bytes, or attributes that are not
    /// `key="value"` pairs.
    Not,
    Read {
        attributes: Vec<(&'t str, String)>,
        /// Where the tag ends, after its `<|sep|>`.
        end: usize,
    },
}

/// The attributes of the start tag whose name ends at `at` (`key="value" …<|sep|>`).
fn tag<'t>(input: &Input<'t>, at: usize) -> Tag<'t> {
    let available = input.bytes_from(at);
    let window = &available[..available.len().min(MAX_TAG)];
    let Some(len) = memchr::memmem::find(window, SEP.as_bytes()) else {
        return if window.len() == MAX_TAG {
            Tag::Not
        } else if input.eof() {
            Tag::Cut
        } else {
            Tag::NeedMore
        };
    };
    match attributes(input.str(at..at + len)) {
        Some(attributes) => Tag::Read {
            attributes,
            end: at + len + SEP.len(),
        },
        None => Tag::Not,
    }
}

/// `key="value"` pairs, the values unescaped; `None` when the text is not such pairs.
fn attributes(mut text: &str) -> Option<Vec<(&str, String)>> {
    let mut pairs = Vec::new();
    loop {
        text = text.trim_start();
        if text.is_empty() {
            return Some(pairs);
        }
        let (key, rest) = text.split_once("=\"")?;
        if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        let (value, rest) = rest.split_once('"')?;
        pairs.push((key, value.replace("&quot;", "\"").replace("&amp;", "&")));
        text = rest;
    }
}

fn attribute<'a>(attributes: &'a [(&str, String)], key: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, v)| v.as_str())
}

/// One `<|open|>call …<|sep|>` element, read element by element so that a stream resumes where
/// it stopped.
#[derive(Debug)]
struct K3Call {
    start: usize,
    name: Option<String>,
    /// Where the next element (an argument, or the call's close) starts.
    next: usize,
    arguments: Map<String, Value>,
    /// The value being read: where it starts, its key and type, and how far its end was
    /// looked for.
    value: Option<Pending>,
}

#[derive(Debug)]
struct Pending {
    from: usize,
    key: String,
    kind: String,
    /// The end tag this value's element closes with.
    end_tag: &'static str,
    searched: usize,
}

impl K3Call {
    fn new(start: usize) -> Self {
        Self {
            start,
            name: None,
            next: start + CALL.len(),
            arguments: Map::new(),
            value: None,
        }
    }

    fn cut_off(&self, input: &Input<'_>) -> Step {
        let place = match &self.name {
            Some(name) => format!("inside the call of `{name}` before `{CALL_END}`"),
            None => "inside a call's start tag".to_owned(),
        };
        Step::Done(Outcome::cut_off(
            self.start..input.end(),
            Format::KimiK3,
            place,
        ))
    }

    /// A malformed call, its text up to `end` kept.
    fn malformed(&self, end: usize, message: String) -> Step {
        Step::Done(Outcome::error(
            self.start..end,
            Format::KimiK3,
            ErrorKind::Malformed,
            message,
        ))
    }
}

impl Reader for K3Call {
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        self.name.clone()
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        if self.name.is_none() {
            match tag(input, self.next) {
                Tag::NeedMore => return Step::NeedMore,
                Tag::Cut => return self.cut_off(input),
                Tag::Not => {
                    return Step::NotACall {
                        resume: self.start + 1,
                    };
                }
                Tag::Read { attributes, end } => {
                    let Some(name) = attribute(&attributes, "tool").filter(|n| !n.is_empty())
                    else {
                        return self.malformed(
                            end,
                            format!(
                                "the call has no tool name; write {CALL}tool=\"NAME\" index=\"1\"{SEP}"
                            ),
                        );
                    };
                    self.name = Some(name.to_owned());
                    self.next = end;
                }
            }
        }
        loop {
            if self.value.is_some() {
                match self.read_value(input, env) {
                    Some(step) => return step,
                    None => continue,
                }
            }
            let at = input.skip_ws(self.next);
            let rest = input.bytes_from(at);
            if rest.is_empty() {
                return if input.eof() {
                    self.cut_off(input)
                } else {
                    Step::NeedMore
                };
            }
            let mut waiting = false;
            for (open, end_tag) in [(ARGUMENT, ARGUMENT_END), (JSON, JSON_END)] {
                match input.prefix(at, open.as_bytes()) {
                    Prefix::Yes => match tag(input, at + open.len()) {
                        Tag::NeedMore => return Step::NeedMore,
                        Tag::Cut => return self.cut_off(input),
                        Tag::Not => {
                            return self.malformed(
                                at,
                                format!(
                                    "an argument's start tag is not written as {ARGUMENT}key=\"KEY\" type=\"TYPE\"{SEP}"
                                ),
                            );
                        }
                        Tag::Read { attributes, end } => {
                            let key = attribute(&attributes, "key").unwrap_or_default();
                            if open == ARGUMENT && key.is_empty() {
                                return self.malformed(
                                    end,
                                    format!("an argument has no key; write {ARGUMENT}key=\"KEY\" type=\"TYPE\"{SEP}"),
                                );
                            }
                            self.value = Some(Pending {
                                from: end,
                                key: key.to_owned(),
                                kind: attribute(&attributes, "type")
                                    .unwrap_or("string")
                                    .to_owned(),
                                end_tag,
                                searched: end,
                            });
                        }
                    },
                    Prefix::Partial => waiting = true,
                    Prefix::No => {}
                }
                if self.value.is_some() {
                    break;
                }
            }
            if self.value.is_some() {
                continue;
            }
            match input.prefix(at, CALL_END.as_bytes()) {
                Prefix::Yes => {
                    let end = at + CALL_END.len();
                    let name = self.name.take().unwrap_or_default();
                    let item = Item::found(
                        RawCall {
                            name,
                            arguments: Value::Object(std::mem::take(&mut self.arguments)),
                            id: None,
                            typed: true,
                        },
                        Format::KimiK3,
                        self.start..end,
                    );
                    return Step::Done(Outcome::new(end, vec![item]));
                }
                Prefix::Partial => waiting = true,
                Prefix::No => {}
            }
            waiting |= [ARGUMENT, JSON, CALL_END]
                .iter()
                .any(|t| input.ends_inside(at, t.as_bytes()));
            if waiting {
                return if input.eof() {
                    self.cut_off(input)
                } else {
                    Step::NeedMore
                };
            }
            let name = self.name.as_deref().unwrap_or_default();
            return self.malformed(
                at,
                format!(
                    "the call of `{name}` holds something other than {ARGUMENT}key=\"KEY\" type=\"TYPE\"{SEP}VALUE{ARGUMENT_END} elements before {CALL_END}"
                ),
            );
        }
    }
}

impl K3Call {
    /// Reads on in the value being read: `None` once it is read (reading goes on with the next
    /// element), else the step to return.
    fn read_value(&mut self, input: &Input<'_>, env: &Env<'_>) -> Option<Step> {
        let pending = self.value.as_mut()?;
        loop {
            let window = input.bytes_from(pending.searched);
            let Some(i) = memchr::memmem::find(window, pending.end_tag.as_bytes()) else {
                if input.eof() {
                    return Some(self.cut_off(input));
                }
                pending.searched = input
                    .end()
                    .saturating_sub(pending.end_tag.len() - 1)
                    .max(pending.searched);
                return Some(Step::NeedMore);
            };
            let close = pending.searched + i;
            let after = close + pending.end_tag.len();
            // The value ends here when the next element or the call's close follows.
            let next = input.skip_ws(after);
            let follows = [ARGUMENT, JSON, CALL_END]
                .iter()
                .map(|t| input.prefix(next, t.as_bytes()))
                .fold(Prefix::No, |best, p| match (best, p) {
                    (Prefix::Yes, _) | (_, Prefix::Yes) => Prefix::Yes,
                    (Prefix::Partial, _) | (_, Prefix::Partial) => Prefix::Partial,
                    _ => Prefix::No,
                });
            match follows {
                Prefix::Yes => {}
                Prefix::Partial => return Some(Step::NeedMore),
                Prefix::No if next == input.end() && !input.eof() => {
                    return Some(Step::NeedMore);
                }
                // The output ends after the value: the call is cut off either way.
                Prefix::No if next == input.end() => {}
                Prefix::No => {
                    // A tag's text inside the value.
                    pending.searched = close + 1;
                    continue;
                }
            }
            let pending = self.value.take()?;
            let raw = input.str(pending.from..close);
            if let Err(message) = self.take_value(pending, raw, env) {
                return Some(self.malformed(after, message));
            }
            self.next = after;
            return None;
        }
    }

    /// Adds a value read as written to the arguments.
    fn take_value(&mut self, pending: Pending, raw: &str, env: &Env<'_>) -> Result<(), String> {
        let name = self.name.as_deref().unwrap_or_default();
        let types = ToolTypes::of(env.tools, name);
        if pending.end_tag == JSON_END {
            let object = json::value(raw.trim())
                .ok()
                .and_then(|v| match v {
                    Value::Object(map) => Some(map),
                    _ => None,
                })
                .ok_or_else(|| {
                    format!("the arguments of `{name}` in {JSON}…{JSON_END} are not a JSON object")
                })?;
            for (key, value) in object {
                let value = typed_json(value, types.kinds(&key));
                insert(&mut self.arguments, name, key, value)?;
            }
            return Ok(());
        }
        let kinds = types.kinds(&pending.key);
        let value = if pending.kind == "string" {
            typed_string(raw.to_owned(), kinds)
        } else {
            match json::value(raw.trim()) {
                Ok(value) => typed_json(value, kinds),
                Err(message) => {
                    return Err(format!(
                        "argument `{}` of `{name}` is typed `{}` but is not valid JSON: {message}",
                        pending.key, pending.kind
                    ));
                }
            }
        };
        insert(&mut self.arguments, name, pending.key, value)
    }
}

fn insert(
    arguments: &mut Map<String, Value>,
    name: &str,
    key: String,
    value: Value,
) -> Result<(), String> {
    unique::insert(arguments, key, value).map_err(|repeated| {
        format!("the arguments of `{name}` are wrong: {repeated}; give each argument once")
    })
}
