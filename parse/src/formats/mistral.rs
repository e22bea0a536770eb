//! Mistral's `[TOOL_CALLS]`, in the forms its tokenizer versions produce:
//!
//! - `[TOOL_CALLS] [{"name": "add", "arguments": {"a": 1}}, …]` (v0.3, Mixtral);
//! - `[TOOL_CALLS]add[ARGS]{"a": 1}` (tokenizer v11+, Mistral Small 3.2, Magistral), with
//!   `[CALL_ID]abc123def[ARGS]` in some versions;
//! - `[TOOL_CALLS]add{"a": 1}`: the same once a server drops the special `[ARGS]` token.
//!
//! Whitespace may stand around the name (`[TOOL_CALLS] add [ARGS] {"a": 1}`,
//! `[TOOL_CALLS]add\n{"a": 1}`), as servers that re-tokenize the output write it.
//!
//! Each `[TOOL_CALLS]` starts a block of its own; several in a row are several calls.
//!
//! Mistral's reasoning models (Magistral, Ministral 3) think first, in `[THINK]…[/THINK]`
//! (Magistral's system prompt asks for it; the tokenizer has both as control tokens), then
//! write the answer and the calls: `[THINK]…[/THINK]Let me check.[TOOL_CALLS]get_weather[ARGS]{…}`.

use std::ops::ControlFlow;

use super::json::value_items;
use super::json::{self, sniff_name};
use crate::block::{Env, Family, Item, MAX_NAME, Outcome, RawCall, Reader, Step, Thought, Token};
use crate::scan::{Input, Prefix, SeqEnd, Values};
use crate::vocab::{ErrorKind, Format};

const MARKER: &str = "[TOOL_CALLS]";
const ARGS: &str = "[ARGS]";
const CALL_ID: &str = "[CALL_ID]";

/// Mistral's row of the family table.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens(MARKER, Format::Mistral, |at, _| {
            Box::new(MistralBlock::new(at))
        }),
        Token::thought(THINK),
    ],
};

/// The thought of Mistral's reasoning models (Magistral, Ministral 3), written before the
/// answer and its calls.
pub(crate) const THINK: Thought = Thought {
    open: "[THINK]",
    close: "[/THINK]",
};

#[derive(Debug)]
struct MistralBlock {
    start: usize,
    /// How far whitespace after the marker has been skipped.
    cursor: usize,
    state: State,
}

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
    fn new(start: usize) -> Self {
        Self {
            start,
            cursor: start + MARKER.len(),
            state: State::Start,
        }
    }
}

impl Reader for MistralBlock {
    fn name_hint(&self, input: &Input<'_>) -> Option<String> {
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

    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        let start = self.start;
        loop {
            let next = match &mut self.state {
                State::Start => self.begin(input),
                State::List(values) => return list(start, values, input),
                State::Name { from, scanned } => name(start, *from, scanned, input),
                State::AfterName {
                    name,
                    after,
                    cursor,
                } => after_name(start, name, *after, cursor, input),
                State::Id { name, from } => call_id(start, name, *from, input),
                State::Args { name, id, values } => return args(start, name, id, values, input),
            };
            match next {
                ControlFlow::Continue(state) => self.state = state,
                ControlFlow::Break(step) => return step,
            }
        }
    }
}

impl MistralBlock {
    /// What follows `[TOOL_CALLS]`: a JSON list or object, or a name.
    fn begin(&mut self, input: &Input<'_>) -> ControlFlow<Step, State> {
        let at = input.skip_ws(self.cursor);
        self.cursor = at;
        match input.byte(at) {
            None if !input.eof() => ControlFlow::Break(Step::NeedMore),
            None => ControlFlow::Break(truncated(self.start, input)),
            Some(b'[' | b'{') => ControlFlow::Continue(State::List(Values::new(at, false, false))),
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => ControlFlow::Continue(State::Name {
                from: at,
                scanned: at,
            }),
            Some(_) => ControlFlow::Break(malformed(
                self.start,
                at,
                "`[TOOL_CALLS]` is not followed by a call; write [TOOL_CALLS][{\"name\": \"...\", \"arguments\": {...}}]",
            )),
        }
    }
}

/// `[TOOL_CALLS] [{…}, …]`: the list (or object) of calls.
fn list(start: usize, values: &mut Values, input: &Input<'_>) -> Step {
    match values.scan(input) {
        SeqEnd::NeedMore => Step::NeedMore,
        SeqEnd::Ended {
            complete: false, ..
        } => truncated(start, input),
        SeqEnd::Ended { .. } => {
            let Some(span) = values.spans.first().cloned() else {
                return truncated(start, input);
            };
            let items = value_items(input.str(span.clone()), span.clone(), Format::Mistral, None);
            Step::Done(Outcome::new(span.end, items))
        }
    }
}

/// `[TOOL_CALLS]name`: the name, from `from`, scanned as far as `scanned`.
fn name(
    start: usize,
    from: usize,
    scanned: &mut usize,
    input: &Input<'_>,
) -> ControlFlow<Step, State> {
    let more = input
        .bytes_from(*scanned)
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
        .count();
    *scanned += more;
    let after = *scanned;
    if after - from > MAX_NAME {
        return ControlFlow::Break(malformed(
            start,
            from,
            "the name after `[TOOL_CALLS]` is too long to be a tool name",
        ));
    }
    if after == input.end() && !input.eof() {
        return ControlFlow::Break(Step::NeedMore);
    }
    let name = input.str(from..after).to_owned();
    ControlFlow::Continue(State::AfterName {
        name,
        after,
        cursor: after,
    })
}

/// After the name: `[ARGS]`, `[CALL_ID]`, or (once a server dropped `[ARGS]`) the object.
fn after_name(
    start: usize,
    name: &mut String,
    after: usize,
    cursor: &mut usize,
    input: &Input<'_>,
) -> ControlFlow<Step, State> {
    let args = input.skip_ws(*cursor);
    *cursor = args;
    match (
        input.prefix(args, ARGS.as_bytes()),
        input.prefix(args, CALL_ID.as_bytes()),
        input.byte(args),
    ) {
        (Prefix::Yes, _, _) => ControlFlow::Continue(State::Args {
            name: std::mem::take(name),
            id: None,
            values: Values::new(args + ARGS.len(), false, false),
        }),
        (_, Prefix::Yes, _) => ControlFlow::Continue(State::Id {
            name: std::mem::take(name),
            from: args + CALL_ID.len(),
        }),
        (Prefix::Partial, _, _) | (_, Prefix::Partial, _) => ControlFlow::Break(Step::NeedMore),
        (_, _, Some(b'{')) => ControlFlow::Continue(State::Args {
            name: std::mem::take(name),
            id: None,
            values: Values::new(args, false, false),
        }),
        (_, _, None) if !input.eof() => ControlFlow::Break(Step::NeedMore),
        (_, _, None) => ControlFlow::Break(truncated(start, input)),
        _ if input.ends_inside(args, ARGS.as_bytes())
            || input.ends_inside(args, CALL_ID.as_bytes()) =>
        {
            ControlFlow::Break(truncated(start, input))
        }
        _ => {
            let message = format!(
                "`[TOOL_CALLS]{name}` is not followed by its arguments; write [TOOL_CALLS]{name}[ARGS]{{...}}"
            );
            ControlFlow::Break(malformed(start, after, &message))
        }
    }
}

/// `[CALL_ID]id[ARGS]`: the id, from `from`.
fn call_id(
    start: usize,
    name: &mut String,
    from: usize,
    input: &Input<'_>,
) -> ControlFlow<Step, State> {
    // Call ids are short: `[ARGS]` must come within MAX_ID bytes.
    let bytes = input.bytes_from(from);
    let window = &bytes[..bytes.len().min(MAX_ID + ARGS.len())];
    let Some(i) = memchr::memmem::find(window, ARGS.as_bytes()) else {
        if window.len() == MAX_ID + ARGS.len() {
            return ControlFlow::Break(malformed(
                start,
                from,
                "`[CALL_ID]` is not followed by `[ARGS]`",
            ));
        }
        if input.eof() {
            return ControlFlow::Break(truncated(start, input));
        }
        return ControlFlow::Break(Step::NeedMore);
    };
    let id = input.str(from..from + i).trim().to_owned();
    ControlFlow::Continue(State::Args {
        name: std::mem::take(name),
        id: Some(id),
        values: Values::new(from + i + ARGS.len(), false, false),
    })
}

/// The JSON object of arguments after `[ARGS]` (or the name), read into the call.
fn args(
    start: usize,
    name: &mut String,
    id: &mut Option<String>,
    values: &mut Values,
    input: &Input<'_>,
) -> Step {
    match values.scan(input) {
        SeqEnd::NeedMore => Step::NeedMore,
        SeqEnd::Ended {
            complete: false, ..
        } => truncated(start, input),
        SeqEnd::Ended { at, .. } => {
            let Some(span) = values.spans.first().cloned() else {
                if input.ends_at(at) {
                    return truncated(start, input);
                }
                return malformed(
                    start,
                    at,
                    "`[ARGS]` is not followed by a JSON object of arguments",
                );
            };
            let item = match json::value(input.str(span.clone())).map(json::arguments_object) {
                Ok(Ok(arguments)) => Item::found(
                    RawCall {
                        name: std::mem::take(name),
                        arguments,
                        id: id.take(),
                        typed: false,
                    },
                    Format::Mistral,
                    start..span.end,
                ),
                Ok(Err(message)) => Item::error(
                    start..span.end,
                    Format::Mistral,
                    ErrorKind::Arguments,
                    format!("the arguments of `{name}` are wrong: {message}"),
                ),
                Err(error) => Item::error(
                    start..span.end,
                    Format::Mistral,
                    ErrorKind::Malformed,
                    format!("the arguments of `{name}` are not valid JSON: {error}"),
                ),
            };
            Step::Done(Outcome::new(span.end, vec![item]))
        }
    }
}

fn malformed(start: usize, at: usize, message: &str) -> Step {
    Step::Done(Outcome::error(
        start..at,
        Format::Mistral,
        ErrorKind::Malformed,
        message.to_owned(),
    ))
}

fn truncated(start: usize, input: &Input<'_>) -> Step {
    Step::Done(Outcome::cut_off(
        start..input.end(),
        Format::Mistral,
        "inside a `[TOOL_CALLS]` call",
    ))
}
