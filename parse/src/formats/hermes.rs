//! The `<tool_call>` element, and Hermes / Qwen2.5 / Qwen3's JSON inside it:
//! `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one JSON value (or several) per
//! block; arguments may be a JSON string holding JSON. Other families write the same element
//! around their own calls, handed over once the first byte shows whose: Qwen3-Coder's
//! `<function=…>` (`function.rs`) and GLM-4.5's bare name (`glm.rs`). ("Tag" in this crate means
//! a response tag, `TAG: argument`; markup is made of elements.)
//!
//! The end of the element, `</tool_call>`, may be missing when the JSON inside is complete
//! (models stop right after the last brace); an incomplete call at the end of the output is
//! reported as truncated.

use std::ops::ControlFlow;

use super::function::{FUNCTION, FunctionBlock};
use super::glm::GlmBlock;
use super::json::{self, Shape, json_item};
use crate::block::{Env, Family, Outcome, Reader, Step, Token, close_with};
use crate::scan::{Input, Prefix, SeqEnd, Values};
use crate::vocab::{ErrorKind, Format};

const TOOL_CALL: &str = "<tool_call>";
const TOOL_CALL_END: &str = "</tool_call>";

/// The `<tool_call>` element's row of the family table: what follows the token says whose
/// call it holds, so it counts for each of the three families that write it.
pub(crate) const FAMILY: Family = Family {
    tokens: &[Token::opens(TOOL_CALL, Format::Hermes, |at, _| {
        Box::new(ToolCallBlock::new(at))
    })
    .or(Format::Function)
    .or(Format::Glm)],
};

/// A `<tool_call>` block.
#[derive(Debug)]
struct ToolCallBlock {
    start: usize,
    /// How far whitespace after `<tool_call>` has been skipped.
    cursor: usize,
    state: ToolCallState,
}

#[derive(Debug)]
enum ToolCallState {
    Start,
    Json(Values),
    Function(FunctionBlock),
    Glm(GlmBlock),
    /// The body is read; `</tool_call>` may follow whitespace.
    Closing {
        after: usize,
        outcome: Outcome,
    },
}

impl ToolCallBlock {
    fn new(start: usize) -> Self {
        Self {
            start,
            cursor: start + TOOL_CALL.len(),
            state: ToolCallState::Start,
        }
    }
}

impl Reader for ToolCallBlock {
    /// The name of the call being written, once it is known.
    fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        match &self.state {
            ToolCallState::Json(values) => {
                let from = values
                    .spans
                    .first()
                    .map_or_else(|| values.open_start(), |s| Some(s.start))?;
                json::sniff_name(input.str(from..input.end()), 512).map(str::to_owned)
            }
            ToolCallState::Function(f) => f.name_hint(input),
            ToolCallState::Glm(g) => g.name_hint(input),
            _ => None,
        }
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        loop {
            let next = match &mut self.state {
                ToolCallState::Start => self.begin(input, env),
                ToolCallState::Json(values) => json_values(self.start, values, input),
                ToolCallState::Function(function) => match function.step(input, env) {
                    Step::NeedMore => return Step::NeedMore,
                    Step::NotACall { .. } | Step::CodeBlock { .. } => {
                        return Step::NotACall {
                            resume: self.start + 1,
                        };
                    }
                    Step::Done(outcome) => {
                        let after = outcome.end;
                        ControlFlow::Continue(ToolCallState::Closing { after, outcome })
                    }
                },
                // GLM reads up to and including `</tool_call>` itself.
                ToolCallState::Glm(glm) => return glm.step(input, env),
                ToolCallState::Closing { after, outcome } => {
                    return close_with(input, after, TOOL_CALL_END, outcome);
                }
            };
            match next {
                ControlFlow::Continue(state) => self.state = state,
                ControlFlow::Break(step) => return step,
            }
        }
    }
}

impl ToolCallBlock {
    /// What follows `<tool_call>`: JSON, a `<function=…>` element, or GLM's bare name.
    fn begin(&mut self, input: &Input<'_>, env: &Env<'_>) -> ControlFlow<Step, ToolCallState> {
        let at = input.skip_ws(self.cursor);
        self.cursor = at;
        let Some(b) = input.byte(at) else {
            if !input.eof() {
                return ControlFlow::Break(Step::NeedMore);
            }
            return ControlFlow::Break(Step::Done(Outcome::cut_off(
                self.start..input.end(),
                Format::Hermes,
                "right after `<tool_call>`",
            )));
        };
        match b {
            b'{' | b'[' if env.formats.contains(Format::Hermes) => {
                ControlFlow::Continue(ToolCallState::Json(Values::new(at, false, true)))
            }
            b'<' => {
                match input.prefix(at, FUNCTION.as_bytes()) {
                    Prefix::Yes if env.formats.contains(Format::Function) => {
                        return ControlFlow::Continue(ToolCallState::Function(FunctionBlock::new(
                            at, true,
                        )));
                    }
                    Prefix::Partial => return ControlFlow::Break(Step::NeedMore),
                    _ if env.formats.contains(Format::Function)
                        && input.ends_inside(at, FUNCTION.as_bytes()) =>
                    {
                        return ControlFlow::Break(Step::Done(Outcome::cut_off(
                            self.start..input.end(),
                            Format::Hermes,
                            "inside a `<tool_call>` before its call",
                        )));
                    }
                    _ => {}
                }
                ControlFlow::Break(match input.prefix(at, TOOL_CALL_END.as_bytes()) {
                    Prefix::Yes => Step::Done(Outcome::error(
                        self.start..at + TOOL_CALL_END.len(),
                        Format::Hermes,
                        ErrorKind::Malformed,
                        "the `<tool_call>` block is empty; write the call inside it as {\"name\": \"...\", \"arguments\": {...}}".into(),
                    )),
                    Prefix::Partial => Step::NeedMore,
                    Prefix::No => Step::NotACall { resume: self.start + 1 },
                })
            }
            b if (b.is_ascii_alphabetic() || b == b'_') && env.formats.contains(Format::Glm) => {
                ControlFlow::Continue(ToolCallState::Glm(GlmBlock::new(self.start, at)))
            }
            _ => ControlFlow::Break(Step::NotACall {
                resume: self.start + 1,
            }),
        }
    }
}

/// The JSON values inside a `<tool_call>` that started at `start`, read into calls.
fn json_values(
    start: usize,
    values: &mut Values,
    input: &Input<'_>,
) -> ControlFlow<Step, ToolCallState> {
    match values.scan(input) {
        SeqEnd::NeedMore => ControlFlow::Break(Step::NeedMore),
        SeqEnd::Ended {
            complete: false, ..
        } => ControlFlow::Break(Step::Done(Outcome::cut_off(
            start..input.end(),
            Format::Hermes,
            "inside a `<tool_call>` before its JSON is complete",
        ))),
        SeqEnd::Ended { at, complete: true } => {
            let Some(last_end) = values.last_end() else {
                return ControlFlow::Break(Step::NotACall { resume: start + 1 });
            };
            let mut items = Vec::new();
            for span in &values.spans {
                items.extend(json_item(
                    input.str(span.clone()),
                    span.clone(),
                    Format::Hermes,
                    Shape::Wrapped,
                ));
            }
            let outcome = Outcome::new(last_end, items);
            ControlFlow::Continue(ToolCallState::Closing { after: at, outcome })
        }
    }
}
