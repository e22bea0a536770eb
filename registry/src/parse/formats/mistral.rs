//! Mistral's `[TOOL_CALLS]`, in the forms its tokenizer versions produce:
//!
//! - `[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}}, …]` (v0.3, Mixtral);
//! - `[TOOL_CALLS]add[ARGS]{"a": 1}` (tokenizer v11+, Mistral Small 3.2, Magistral), with
//!   `[CALL_ID]abc123def[ARGS]` in some versions;
//! - `[TOOL_CALLS]add{"a": 1}`: the same once a server drops the special `[ARGS]` token.
//!
//! Each `[TOOL_CALLS]` starts a block of its own; several in a row are several calls.

use super::json::value_items;
use super::json::{self, Shape, sniff_name};
use crate::parse::block::{Item, Outcome, RawCall, Step};
use crate::parse::scan::{Input, Prefix, SeqEnd, Values};
use crate::parse::vocab::{ErrorKind, Format};

const MARKER: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";

#[derive(Debug)]
pub(crate) struct MistralBlock {
    start: usize,
    /// How far whitespace after the marker has been skipped.
    cursor: usize,
    state: State,
}

/// The longest tool name read after `[TOOL_CALLS]`.
const MAX_NAME: usize = 256;
/// The longest call id read after `[CALL_ID]`.
const MAX_ID: usize = 64;

#[derive(Debug)]
enum State {
    Start,
    List(Values),
    Name {
        from: usize,
        scanned: usize,
    },
    AfterName {
        name: String,
        after: usize,
        cursor: usize,
    },
    Id {
        name: String,
        from: usize,
    },
    Args {
        name: String,
        id: Option<String>,
        values: Values,
    },
}

impl MistralBlock {
    pub(crate) fn new(start: usize) -> Self {
        Self {
            start,
            cursor: start + MARKER.len(),
            state: State::Start,
        }
    }

    pub(crate) fn start(&self) -> usize {
        self.start
    }

    pub(crate) fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        match &self.state {
            State::Args { name, .. } | State::Id { name, .. } => Some(name.clone()),
            State::List(values) => {
                let from = values
                    .spans
                    .first()
                    .map(|s| s.start)
                    .or_else(|| values.open_start())?;
                sniff_name(input.str(from..input.end()), 512).map(str::to_owned)
            }
            _ => None,
        }
    }

    fn malformed(&self, at: usize, message: &str) -> Step {
        Step::Done(Outcome::error(
            self.start..at,
            Format::Mistral,
            ErrorKind::Malformed,
            message.to_owned(),
        ))
    }

    fn truncated(&self, input: &Input<'_>) -> Step {
        Step::Done(Outcome::error(
            self.start..input.end(),
            Format::Mistral,
            ErrorKind::Truncated,
            "the output ends inside a `[TOOL_CALLS]` call: the call was cut off; nothing was called".into(),
        ))
    }

    pub(crate) fn step(&mut self, input: &Input<'_>) -> Step {
        loop {
            match &mut self.state {
                State::Start => {
                    let at = input.skip_ws(self.cursor);
                    self.cursor = at;
                    match input.byte(at) {
                        None if !input.eof() => return Step::NeedMore,
                        None => return self.truncated(input),
                        Some(b'[' | b'{') => {
                            self.state = State::List(Values::new(at, false, false))
                        }
                        Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                            self.state = State::Name {
                                from: at,
                                scanned: at,
                            }
                        }
                        Some(_) => {
                            return self.malformed(
                                at,
                                "`[TOOL_CALLS]` is not followed by a call; write [TOOL_CALLS][{\"name\": \"...\", \"arguments\": {...}}]",
                            );
                        }
                    }
                }
                State::List(values) => {
                    return match values.scan(input) {
                        SeqEnd::NeedMore => Step::NeedMore,
                        SeqEnd::Ended {
                            complete: false, ..
                        } => self.truncated(input),
                        SeqEnd::Ended { .. } => {
                            let Some(span) = values.spans.first().cloned() else {
                                return self.truncated(input);
                            };
                            let items = value_items(
                                input.str(span.clone()),
                                span.clone(),
                                Format::Mistral,
                                false,
                            );
                            Step::Done(Outcome::new(span.end, items))
                        }
                    };
                }
                State::Name { from, scanned } => {
                    let more = input
                        .bytes_from(*scanned)
                        .iter()
                        .take_while(|b| {
                            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
                        })
                        .count();
                    *scanned += more;
                    let (from, after) = (*from, *scanned);
                    if after - from > MAX_NAME {
                        return self.malformed(
                            from,
                            "the name after `[TOOL_CALLS]` is too long to be a tool name",
                        );
                    }
                    if after == input.end() && !input.eof() {
                        return Step::NeedMore;
                    }
                    let name = input.str(from..after).to_owned();
                    self.state = State::AfterName {
                        name,
                        after,
                        cursor: after,
                    };
                }
                State::AfterName {
                    name,
                    after,
                    cursor,
                } => {
                    let after = *after;
                    let args = input.skip_ws(*cursor);
                    *cursor = args;
                    match (
                        input.prefix(after, ARGS.as_bytes()),
                        input.prefix(after, CALL_ID.as_bytes()),
                        input.byte(args),
                    ) {
                        (Prefix::Yes, _, _) => {
                            self.state = State::Args {
                                name: std::mem::take(name),
                                id: None,
                                values: Values::new(after + ARGS.len(), false, false),
                            };
                        }
                        (_, Prefix::Yes, _) => {
                            self.state = State::Id {
                                name: std::mem::take(name),
                                from: after + CALL_ID.len(),
                            }
                        }
                        (Prefix::Partial, _, _) | (_, Prefix::Partial, _) => return Step::NeedMore,
                        (_, _, Some(b'{')) => {
                            self.state = State::Args {
                                name: std::mem::take(name),
                                id: None,
                                values: Values::new(args, false, false),
                            }
                        }
                        (_, _, None) if !input.eof() => return Step::NeedMore,
                        (_, _, None) => return self.truncated(input),
                        _ => {
                            let message = format!(
                                "`[TOOL_CALLS]{name}` is not followed by its arguments; write [TOOL_CALLS]{name}[ARGS]{{...}}"
                            );
                            return self.malformed(after, &message);
                        }
                    }
                }
                State::Id { name, from } => {
                    let from = *from;
                    // Call ids are short: `[ARGS]` must come within MAX_ID bytes.
                    let bytes = input.bytes_from(from);
                    let window = &bytes[..bytes.len().min(MAX_ID + ARGS.len())];
                    let Some(i) = memchr::memmem::find(window, ARGS.as_bytes()) else {
                        if window.len() == MAX_ID + ARGS.len() {
                            return self.malformed(from, "`[CALL_ID]` is not followed by `[ARGS]`");
                        }
                        if input.eof() {
                            return self.truncated(input);
                        }
                        return Step::NeedMore;
                    };
                    let id = input.str(from..from + i).trim().to_owned();
                    let name = std::mem::take(name);
                    self.state = State::Args {
                        name,
                        id: Some(id),
                        values: Values::new(from + i + ARGS.len(), false, false),
                    };
                }
                State::Args { name, id, values } => {
                    return match values.scan(input) {
                        SeqEnd::NeedMore => Step::NeedMore,
                        SeqEnd::Ended {
                            complete: false, ..
                        } => self.truncated(input),
                        SeqEnd::Ended { at, .. } => {
                            let Some(span) = values.spans.first().cloned() else {
                                return self.malformed(
                                    at,
                                    "`[ARGS]` is not followed by a JSON object of arguments",
                                );
                            };
                            let item = match json::value(input.str(span.clone()))
                                .map(json::arguments_object)
                            {
                                Ok(Ok(arguments)) => Item::found(
                                    RawCall {
                                        name: std::mem::take(name),
                                        arguments,
                                        id: id.take(),
                                    },
                                    Format::Mistral,
                                    self.start..span.end,
                                ),
                                Ok(Err(message)) => Item::error(
                                    self.start..span.end,
                                    Format::Mistral,
                                    ErrorKind::Arguments,
                                    format!("the arguments of `{name}` are wrong: {message}"),
                                ),
                                Err(error) => Item::error(
                                    self.start..span.end,
                                    Format::Mistral,
                                    ErrorKind::Malformed,
                                    format!(
                                        "the arguments of `{name}` are not valid JSON: {error}"
                                    ),
                                ),
                            };
                            let _ = Shape::Wrapped;
                            Step::Done(Outcome::new(span.end, vec![item]))
                        }
                    };
                }
            }
        }
    }
}
