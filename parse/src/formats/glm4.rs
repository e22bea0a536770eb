//! GLM-4-0414 and GLM-4-9B-Chat: a call is the whole message, the tool's name on the first line
//! and its arguments as a JSON object after it; the chat template puts `<|assistant|>` before
//! each further call
//! (<https://huggingface.co/THUDM/GLM-4-9B-0414/blob/main/tokenizer_config.json>,
//! <https://huggingface.co/THUDM/glm-4-9b-chat/blob/main/tokenizer_config.json>):
//!
//! ```text
//! get_weather
//! {"city": "Beijing"}
//! ```
//!
//! A word on a line of its own is common in prose, so the message is a call only when the name
//! is a tool of the set (any name, for a set that accepts every name) and nothing but one JSON
//! object follows it.

use std::ops::ControlFlow;

use crate::block::{Env, Item, MAX_NAME, Outcome, Reader, Step};
use crate::scan::{Input, Prefix, SeqEnd, Values};
use crate::vocab::Format;

use super::end_tokens::{EndToken, end_token_at};
use super::json::arguments_item;

/// What the template writes before each further call.
const NEXT_CALL: &str = "<|assistant|>";

/// A whole message of `NAME\n{json}` calls.
#[derive(Debug)]
pub(crate) struct Glm4Block {
    start: usize,
    items: Vec<Item>,
    state: State,
}

#[derive(Debug)]
enum State {
    Name {
        at: usize,
    },
    Arguments {
        name: String,
        at: usize,
        values: Values,
    },
    After {
        cursor: usize,
    },
}

impl Glm4Block {
    pub(crate) fn new(start: usize) -> Self {
        Self {
            start,
            items: Vec::new(),
            state: State::Name { at: start },
        }
    }
}

impl Reader for Glm4Block {
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        match &self.state {
            State::Arguments { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let not_a_call = Step::NotACall { resume: self.start };
        loop {
            match &mut self.state {
                State::Name { at } => {
                    let at = *at;
                    match self.name_line(input, env, at) {
                        ControlFlow::Continue(state) => self.state = state,
                        ControlFlow::Break(step) => return step,
                    }
                }
                State::Arguments { name, at, values } => match values.scan(input) {
                    SeqEnd::NeedMore => return Step::NeedMore,
                    SeqEnd::Ended {
                        complete: false, ..
                    } => {
                        return Step::Done(Outcome::cut_off(
                            self.start..input.end(),
                            Format::Glm4,
                            format_args!("inside the arguments of `{name}`"),
                        ));
                    }
                    SeqEnd::Ended { .. } => {
                        let Some(span) = values.spans.first().cloned() else {
                            return not_a_call;
                        };
                        self.items.push(arguments_item(
                            name,
                            input.str(span.clone()),
                            None,
                            Format::Glm4,
                            *at..span.end,
                        ));
                        self.state = State::After { cursor: span.end };
                    }
                },
                State::After { cursor } => {
                    let at = input.skip_ws(*cursor);
                    *cursor = at;
                    if at == input.end() {
                        if !input.eof() {
                            return Step::NeedMore;
                        }
                        return Step::Done(Outcome::new(at, std::mem::take(&mut self.items)));
                    }
                    match input.prefix(at, NEXT_CALL.as_bytes()) {
                        Prefix::Yes => {
                            self.state = State::Name {
                                at: input.skip_ws(at + NEXT_CALL.len()),
                            };
                            if input.skip_ws(at + NEXT_CALL.len()) == input.end() && !input.eof() {
                                self.state = State::After { cursor: at };
                                return Step::NeedMore;
                            }
                            continue;
                        }
                        Prefix::Partial => return Step::NeedMore,
                        Prefix::No => {}
                    }
                    match end_token_at(input, at) {
                        EndToken::Whole(len) => *cursor = at + len,
                        EndToken::Partial => return Step::NeedMore,
                        // Anything else after the calls makes the message prose.
                        EndToken::No => return not_a_call,
                    }
                }
            }
        }
    }
}

impl Glm4Block {
    /// The tool's name on a line of its own at `at`, and the `{` that opens its arguments on
    /// the next: a call starts here, or the message is prose.
    fn name_line(&self, input: &Input<'_>, env: &Env<'_>, at: usize) -> ControlFlow<Step, State> {
        let not_a_call = Step::NotACall { resume: self.start };
        let bytes = input.bytes_from(at);
        let len = bytes
            .iter()
            .take(MAX_NAME + 1)
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
            .count();
        let after = at + len;
        let newline = match input.prefix(after, b"\n") {
            Prefix::Yes => after + 1,
            _ if input.prefix(after, b"\r\n") == Prefix::Yes => after + 2,
            _ if after == input.end() && !input.eof() => return ControlFlow::Break(Step::NeedMore),
            _ if input.byte(after) == Some(b'\r') && after + 1 == input.end() && !input.eof() => {
                return ControlFlow::Break(Step::NeedMore);
            }
            _ => return ControlFlow::Break(not_a_call),
        };
        let name = input.str(at..after);
        if len == 0 || len > MAX_NAME || !env.tools.is_tool(name) {
            return ControlFlow::Break(not_a_call);
        }
        let body = input.skip_ws(newline);
        match input.byte(body) {
            None if !input.eof() => return ControlFlow::Break(Step::NeedMore),
            Some(b'{') => {}
            _ => return ControlFlow::Break(not_a_call),
        }
        ControlFlow::Continue(State::Arguments {
            name: name.to_owned(),
            at,
            values: Values::new(body, false, false),
        })
    }
}
