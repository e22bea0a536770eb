//! The ReAct text form (Yao et al., <https://arxiv.org/abs/2210.03629>; the prompt LangChain
//! publishes as `hwchase17/react`, <https://smith.langchain.com/hub/hwchase17/react>):
//!
//! ```text
//! Thought: I should look up the weather.
//! Action: get_weather
//! Action Input: {"city": "Paris"}
//! ```
//!
//! `Action:` starts a line and names the tool; the next line is `Action Input:` with the
//! arguments as a JSON object. Plain words after `Action:` are common in prose, so the line is a
//! call only when it names a tool of the set (any name, for a set that accepts every name) and
//! `Action Input:` follows.
//!
//! `Thought:` lines stay in the content as written: a ReAct transcript shows its thoughts, and
//! a stream could not take back a thought it already showed once no action follows it.

use std::ops::ControlFlow;

use crate::block::{Env, MAX_NAME, Outcome, Reader, Step};
use crate::scan::{Input, Prefix, SeqEnd, Values};
use crate::vocab::{ErrorKind, Format};

use super::json::arguments_item;

/// What starts the line that names the tool.
pub(crate) const ACTION: &str = "Action:";
const ACTION_INPUT: &str = "Action Input:";

/// An `Action:` line and its `Action Input:`.
#[derive(Debug)]
pub(crate) struct ReactBlock {
    start: usize,
    state: State,
}

#[derive(Debug)]
enum State {
    Name { scanned: usize },
    Input { name: String, cursor: usize },
    Arguments { name: String, values: Values },
}

impl ReactBlock {
    /// A block whose `Action:` starts its line at `start`.
    pub(crate) fn new(start: usize) -> Self {
        Self {
            start,
            state: State::Name {
                scanned: start + ACTION.len(),
            },
        }
    }
}

impl Reader for ReactBlock {
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        match &self.state {
            State::Arguments { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let not_a_call = Step::NotACall {
            resume: self.start + 1,
        };
        loop {
            match &mut self.state {
                State::Name { scanned } => {
                    let line_end = match memchr::memchr(b'\n', input.bytes_from(*scanned)) {
                        Some(i) => *scanned + i,
                        None if input.eof() => input.end(),
                        None if input.end() - self.start > MAX_NAME => return not_a_call,
                        None => {
                            *scanned = input.end();
                            return Step::NeedMore;
                        }
                    };
                    let name = input.str(self.start + ACTION.len()..line_end).trim();
                    let word = !name.is_empty()
                        && name.len() <= MAX_NAME
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
                    if !word || !env.tools.is_tool(name) {
                        return not_a_call;
                    }
                    if line_end == input.end() {
                        return Step::Done(truncated(self.start, input, name));
                    }
                    self.state = State::Input {
                        name: name.to_owned(),
                        cursor: line_end + 1,
                    };
                }
                State::Input { name, cursor } => {
                    match Self::action_input(self.start, input, name, cursor) {
                        ControlFlow::Continue(state) => self.state = state,
                        ControlFlow::Break(step) => return step,
                    }
                }
                State::Arguments { name, values } => {
                    return match values.scan(input) {
                        SeqEnd::NeedMore => Step::NeedMore,
                        SeqEnd::Ended {
                            complete: false, ..
                        } => Step::Done(truncated(self.start, input, name)),
                        SeqEnd::Ended { .. } => {
                            let Some(span) = values.spans.first().cloned() else {
                                return not_a_call;
                            };
                            let item = arguments_item(
                                name,
                                input.str(span.clone()),
                                None,
                                Format::React,
                                self.start..span.end,
                            );
                            Step::Done(Outcome::new(span.end, vec![item]))
                        }
                    };
                }
            }
        }
    }
}

impl ReactBlock {
    /// The `Action Input:` line after the action of `name`, up to the `{` its JSON opens with.
    fn action_input(
        start: usize,
        input: &Input<'_>,
        name: &mut String,
        cursor: &mut usize,
    ) -> ControlFlow<Step, State> {
        let at = input.skip_ws(*cursor);
        *cursor = at;
        match input.prefix(at, ACTION_INPUT.as_bytes()) {
            Prefix::Yes => {}
            Prefix::Partial => return ControlFlow::Break(Step::NeedMore),
            Prefix::No if at == input.end() && !input.eof() => {
                return ControlFlow::Break(Step::NeedMore);
            }
            Prefix::No if input.ends_inside(at, ACTION_INPUT.as_bytes()) => {
                return ControlFlow::Break(Step::Done(truncated(start, input, name)));
            }
            Prefix::No => return ControlFlow::Break(Step::NotACall { resume: start + 1 }),
        }
        let value = at + ACTION_INPUT.len();
        let first = input.skip_ws(value);
        match input.byte(first) {
            None if !input.eof() => return ControlFlow::Break(Step::NeedMore),
            None => return ControlFlow::Break(Step::Done(truncated(start, input, name))),
            Some(b'{') => {}
            Some(_) => {
                return ControlFlow::Break(Step::Done(Outcome::error(
                    start..first,
                    Format::React,
                    ErrorKind::Malformed,
                    format!(
                        "the Action Input of `{name}` is not a JSON object; write it as Action Input: {{\"key\": value}}"
                    ),
                )));
            }
        }
        ControlFlow::Continue(State::Arguments {
            name: std::mem::take(name),
            values: Values::new(first, false, false),
        })
    }
}

/// Whether `partial`, the start of a line seen so far, could still become `Action:`.
pub(crate) fn could_start(partial: &[u8]) -> bool {
    partial.len() < ACTION.len() && ACTION.as_bytes().starts_with(partial)
}

fn truncated(start: usize, input: &Input<'_>, name: &str) -> Outcome {
    let end = input.end();
    Outcome::cut_off(
        start..end,
        Format::React,
        format_args!("before the Action Input of `{name}` is complete"),
    )
}
