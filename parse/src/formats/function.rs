//! `<function=NAME>` elements: Qwen3-Coder's `<function=NAME><parameter=KEY>VALUE</parameter></function>`
//! (inside a `<tool_call>`, which `hermes.rs` reads, or on its own), values typed by the tool's
//! schema; Functionary's and Llama 3.1's `<function=NAME>{json}</function>`; and
//! `<function name="NAME">`, which some fine-tunes write. Where each `<parameter=…>` value ends
//! is `parameters.rs`'s.

use std::ops::ControlFlow;

use serde_json::{Map, Value};

use super::json;
use super::parameters::{ParamsStep, ValueScan, params_step};
use crate::block::{
    Env, Family, Item, MAX_NAME, Outcome, RawCall, Reader, Step, Thought, Token, close_with,
};
use crate::scan::{Input, Prefix, SeqEnd, Values};
use crate::vocab::{ErrorKind, Format};

pub(super) const FUNCTION: &str = "<function=";
const FUNCTION_ATTRIBUTE: &str = "<function name=";
const FUNCTION_END: &str = "</function>";
const PARAMETER: &str = "<parameter=";

/// The row of `<function=…>` elements in the family table: the element in both spellings, and
/// Seed-OSS's tokens around it, its thought and the `<seed:tool_call>` it wraps its calls in
/// (removed).
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens(FUNCTION, Format::Function, |at, _| {
            Box::new(FunctionBlock::new(at, false))
        }),
        Token::opens(FUNCTION_ATTRIBUTE, Format::Function, |at, _| {
            Box::new(FunctionBlock::with_name_attribute(at))
        }),
        Token::thought(Thought {
            open: "<seed:think>",
            close: "</seed:think>",
        }),
        Token::dropped("<seed:tool_call>", Format::Function),
        Token::dropped("</seed:tool_call>", Format::Function),
    ],
};

/// A `<function=NAME>` block, alone or inside `<tool_call>`.
#[derive(Debug)]
pub(crate) struct FunctionBlock {
    start: usize,
    inside: bool,
    /// `<function name="NAME">`: the name in an attribute.
    attribute: bool,
    state: FunctionState,
}

#[derive(Debug)]
enum FunctionState {
    Name,
    Body {
        name: String,
        at: usize,
    },
    Json {
        name: String,
        values: Values,
    },
    Params {
        name: String,
        /// Where the next `<parameter=` or `</function>` is looked for.
        at: usize,
        arguments: Map<String, Value>,
        /// Why the call is refused once read: a parameter given twice (boxed: the block stays
        /// within the size the scanner's modes are kept at).
        repeated: Option<Box<str>>,
        /// The value being read, when one is.
        value: Option<ValueScan>,
    },
    Closing {
        after: usize,
        outcome: Outcome,
    },
    /// A call read outside `<tool_call>`: the `</tool_call>` of an element whose opening the
    /// model left out (Qwen3-Coder does) may follow whitespace, and is taken with the call.
    Stray {
        after: usize,
        outcome: Outcome,
    },
}

/// The end of the `<tool_call>` element, which a `<function=…>` written without its opening may
/// still be followed by.
const TOOL_CALL_END: &str = "</tool_call>";

impl FunctionBlock {
    pub(crate) fn new(start: usize, inside: bool) -> Self {
        Self {
            start,
            inside,
            attribute: false,
            state: FunctionState::Name,
        }
    }

    /// `<function name="NAME">{json}</function>` (or with `<parameter=…>` elements), a form
    /// some fine-tunes write.
    pub(crate) fn with_name_attribute(start: usize) -> Self {
        Self {
            attribute: true,
            ..Self::new(start, false)
        }
    }
}

impl Reader for FunctionBlock {
    /// The name, once the body has shown this is a call.
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        match &self.state {
            FunctionState::Json { name, .. } | FunctionState::Params { name, .. } => {
                Some(name.clone())
            }
            _ => None,
        }
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        loop {
            let next = match &mut self.state {
                FunctionState::Name => self.name(input),
                FunctionState::Body { name, at } => {
                    let p = input.skip_ws(*at);
                    *at = p;
                    let Some(b) = input.byte(p) else {
                        if !input.eof() {
                            return Step::NeedMore;
                        }
                        return Step::Done(truncated(self.start, input, name));
                    };
                    let name = std::mem::take(name);
                    self.body(input, name, p, b)
                }
                FunctionState::Json { name, values } => {
                    json_arguments(self.start, name, values, input)
                }
                FunctionState::Params {
                    name,
                    at,
                    arguments,
                    repeated,
                    value,
                } => match params_step(input, env, name, at, arguments, repeated, value) {
                    ParamsStep::NeedMore => return Step::NeedMore,
                    ParamsStep::Truncated => {
                        return Step::Done(truncated(self.start, input, name));
                    }
                    ParamsStep::End(end) => {
                        if let Some(repeated) = repeated.take() {
                            let error = Item::error(
                                self.start..end,
                                Format::Function,
                                ErrorKind::Arguments,
                                format!(
                                    "the arguments of `{name}` are wrong: {repeated}; give each parameter once"
                                ),
                            );
                            return Step::Done(Outcome::new(end, vec![error]));
                        }
                        let call = RawCall {
                            name: std::mem::take(name),
                            arguments: Value::Object(std::mem::take(arguments)),
                            id: None,
                            typed: true,
                        };
                        let outcome = Outcome::new(
                            end,
                            vec![Item::found(call, Format::Function, self.start..end)],
                        );
                        if self.inside {
                            return Step::Done(outcome);
                        }
                        ControlFlow::Continue(FunctionState::Stray {
                            after: end,
                            outcome,
                        })
                    }
                },
                FunctionState::Closing { after, outcome } => {
                    match close_with(input, after, FUNCTION_END, outcome) {
                        Step::Done(outcome) if !self.inside => {
                            ControlFlow::Continue(FunctionState::Stray {
                                after: outcome.end,
                                outcome,
                            })
                        }
                        step => return step,
                    }
                }
                FunctionState::Stray { after, outcome } => {
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

impl FunctionBlock {
    /// The `NAME` of `<function=NAME>`, up to `>` (spaces and any character but `<` and a line
    /// break included, trimmed). A name cut off by a line break or `<` still counts when
    /// `<parameter=` follows (the `>` left out); a template placeholder (`{{ name }}`) is not a
    /// name.
    fn name(&self, input: &Input<'_>) -> ControlFlow<Step, FunctionState> {
        if self.attribute {
            return self.attribute_name(input);
        }
        let from = self.start + FUNCTION.len();
        let bytes = input.bytes_from(from);
        let limit = bytes.len().min(MAX_NAME + 1);
        let not_a_call = ControlFlow::Break(Step::NotACall {
            resume: self.start + 1,
        });
        let placeholder = |name: &str| ["{{", "}}", "{%"].iter().any(|p| name.contains(p));
        let Some(i) = bytes[..limit]
            .iter()
            .position(|b| matches!(b, b'>' | b'<' | b'\n' | b'\r'))
        else {
            return match (limit == bytes.len(), input.eof()) {
                (true, false) => ControlFlow::Break(Step::NeedMore),
                (true, true) if !placeholder(input.str(from..input.end())) => {
                    ControlFlow::Break(self.name_cut_off(input))
                }
                _ => not_a_call,
            };
        };
        let name = input.str(from..from + i).trim();
        if name.is_empty() || placeholder(name) {
            return not_a_call;
        }
        if bytes[i] == b'>' {
            return ControlFlow::Continue(FunctionState::Body {
                name: name.to_owned(),
                at: from + i + 1,
            });
        }
        // No `>`: a call only when its first parameter follows.
        let p = input.skip_ws(from + i);
        match input.prefix(p, PARAMETER.as_bytes()) {
            Prefix::Yes => ControlFlow::Continue(FunctionState::Body {
                name: name.to_owned(),
                at: p,
            }),
            Prefix::Partial => ControlFlow::Break(Step::NeedMore),
            Prefix::No if p == input.end() && !input.eof() => ControlFlow::Break(Step::NeedMore),
            Prefix::No if input.ends_inside(p, PARAMETER.as_bytes()) => {
                ControlFlow::Break(Step::Done(truncated(self.start, input, name)))
            }
            Prefix::No => not_a_call,
        }
    }

    /// The end of the output came before the name of `<function=` (or `<function name=`) was
    /// read to its `>`.
    fn name_cut_off(&self, input: &Input<'_>) -> Step {
        let marker = if self.attribute {
            FUNCTION_ATTRIBUTE
        } else {
            FUNCTION
        };
        Step::Done(Outcome::cut_off(
            self.start..input.end(),
            Format::Function,
            format_args!("inside the name of a `{marker}` call"),
        ))
    }

    /// The `"NAME">` of `<function name="NAME">`, in double or single quotes.
    fn attribute_name(&self, input: &Input<'_>) -> ControlFlow<Step, FunctionState> {
        let from = self.start + FUNCTION_ATTRIBUTE.len();
        let not_a_call = ControlFlow::Break(Step::NotACall {
            resume: self.start + 1,
        });
        let bytes = input.bytes_from(from);
        let Some(&quote) = bytes.first() else {
            return match input.eof() {
                true => ControlFlow::Break(self.name_cut_off(input)),
                false => ControlFlow::Break(Step::NeedMore),
            };
        };
        if !matches!(quote, b'"' | b'\'') {
            return not_a_call;
        }
        let limit = bytes.len().min(MAX_NAME + 2);
        let Some(len) = bytes[1..limit].iter().position(|b| *b == quote) else {
            return match (limit == bytes.len(), input.eof()) {
                (true, false) => ControlFlow::Break(Step::NeedMore),
                (true, true) => ControlFlow::Break(self.name_cut_off(input)),
                _ => not_a_call,
            };
        };
        let name = input.str(from + 1..from + 1 + len).trim();
        let close = input.skip_ws(from + len + 2);
        match input.byte(close) {
            Some(b'>') if !name.is_empty() && !name.contains("{{") => {
                ControlFlow::Continue(FunctionState::Body {
                    name: name.to_owned(),
                    at: close + 1,
                })
            }
            None if !input.eof() => ControlFlow::Break(Step::NeedMore),
            None => ControlFlow::Break(self.name_cut_off(input)),
            _ => not_a_call,
        }
    }

    /// What the body starts with (byte `b` at `p`): a JSON object, `<parameter=…>` elements, or
    /// `</function>` right away.
    fn body(
        &mut self,
        input: &Input<'_>,
        name: String,
        p: usize,
        b: u8,
    ) -> ControlFlow<Step, FunctionState> {
        match b {
            b'{' => ControlFlow::Continue(FunctionState::Json {
                name,
                values: Values::new(p, false, false),
            }),
            b'<' => match (
                input.prefix(p, PARAMETER.as_bytes()),
                input.prefix(p, FUNCTION_END.as_bytes()),
            ) {
                (Prefix::Yes, _) => ControlFlow::Continue(FunctionState::Params {
                    name,
                    at: p,
                    arguments: Map::new(),
                    repeated: None,
                    value: None,
                }),
                (_, Prefix::Yes) => {
                    let call = RawCall {
                        name,
                        arguments: Value::Object(Map::new()),
                        id: None,
                        typed: true,
                    };
                    let end = p + FUNCTION_END.len();
                    ControlFlow::Break(Step::Done(Outcome::new(
                        end,
                        vec![Item::found(call, Format::Function, self.start..end)],
                    )))
                }
                (Prefix::Partial, _) | (_, Prefix::Partial) => {
                    self.state = FunctionState::Body { name, at: p };
                    ControlFlow::Break(Step::NeedMore)
                }
                _ if input.ends_inside(p, PARAMETER.as_bytes())
                    || input.ends_inside(p, FUNCTION_END.as_bytes()) =>
                {
                    ControlFlow::Break(Step::Done(truncated(self.start, input, &name)))
                }
                _ => ControlFlow::Break(self.not_a_call(input, name)),
            },
            _ => ControlFlow::Break(self.not_a_call(input, name)),
        }
    }

    fn not_a_call(&self, input: &Input<'_>, name: String) -> Step {
        if !self.inside {
            // `<function=name>` in prose, not followed by a body.
            return Step::NotACall {
                resume: self.start + 1,
            };
        }
        let _ = input;
        Step::Done(Outcome::error(
            self.start..self.start + FUNCTION.len() + name.len() + 1,
            Format::Function,
            ErrorKind::Malformed,
            format!(
                "`<function={name}>` is not followed by `<parameter=...>` blocks, a JSON object or `</function>`; write each argument as <parameter=NAME>VALUE</parameter>"
            ),
        ))
    }
}

/// The JSON object of arguments of `<function=NAME>{…}`, read into the call.
fn json_arguments(
    start: usize,
    name: &mut String,
    values: &mut Values,
    input: &Input<'_>,
) -> ControlFlow<Step, FunctionState> {
    match values.scan(input) {
        SeqEnd::NeedMore => ControlFlow::Break(Step::NeedMore),
        SeqEnd::Ended {
            complete: false, ..
        } => ControlFlow::Break(Step::Done(truncated(start, input, name))),
        SeqEnd::Ended { at, complete: true } => {
            let Some(span) = values.spans.first().cloned() else {
                return ControlFlow::Break(Step::NotACall { resume: start + 1 });
            };
            let item = match json::value(input.str(span.clone())).map(json::arguments_object) {
                Ok(Ok(arguments)) => {
                    let call = RawCall {
                        name: std::mem::take(name),
                        arguments,
                        id: None,
                        typed: false,
                    };
                    Item::found(call, Format::Function, start..span.end)
                }
                Ok(Err(message)) => Item::error(
                    start..span.end,
                    Format::Function,
                    ErrorKind::Arguments,
                    format!("the arguments of `{name}` are not a JSON object: {message}"),
                ),
                Err(error) => Item::error(
                    start..span.end,
                    Format::Function,
                    ErrorKind::Malformed,
                    format!("the arguments of `{name}` are not valid JSON: {error}"),
                ),
            };
            ControlFlow::Continue(FunctionState::Closing {
                after: at,
                outcome: Outcome::new(span.end, vec![item]),
            })
        }
    }
}

fn truncated(start: usize, input: &Input<'_>, name: &str) -> Outcome {
    Outcome::cut_off(
        start..input.end(),
        Format::Function,
        format_args!("inside the call of `{name}` before `</function>`"),
    )
}
