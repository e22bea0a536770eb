//! gpt-oss's Harmony response format
//! (<https://cookbook.openai.com/articles/openai-harmony>, <https://github.com/openai/harmony>):
//! every message has a header, `<|start|>ROLE<|channel|>CHANNEL<|message|>`, and ends with
//! `<|end|>`, `<|return|>` or, for a call, `<|call|>`.
//!
//! ```text
//! <|channel|>analysis<|message|>The user wants the weather.<|end|>
//! <|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}<|call|>
//! ```
//!
//! - A header with a recipient, `to=functions.NAME` (after the channel or before
//!   `<|channel|>`), is a call; its message is the JSON arguments. Other recipients, the
//!   built-in tools, are called by their full name as the template names them
//!   (`browser.search`, `container.exec`, `python`). `python`'s message is the code itself
//!   (the template: "The recipient will always be `python`"; the code runs as written), so a
//!   message to it that is not a JSON object is the call `python` with `{"code": TEXT}`, up
//!   to `<|call|>`. Code has no end of its own, so without `<|call|>` it may be cut off: it is
//!   reported as cut off and never called (keep the stop token in the output to run it).
//! - The `analysis` channel is reasoning, up to its `<|end|>`.
//! - `final`, and `commentary` without a recipient (a preamble the user sees), are content:
//!   only the header is removed.
//!
//! Raw output usually starts after the prompt's `<|start|>assistant`, so with `<|channel|>`,
//! or with the rest of the role header, ` to=functions.NAME<|channel|>…`, which is read as a
//! header when the output begins with it.

use memchr::memmem;

use super::json::arguments_item;
use crate::block::{Env, Family, Item, Outcome, RawCall, Reader, Step, Thought, Token, close_with};
use crate::scan::{Input, SeqEnd, Values};
use crate::vocab::{ErrorKind, Format};

const START: &str = "<|start|>";
const CHANNEL: &str = "<|channel|>";
const CONSTRAIN: &str = "<|constrain|>";
const MESSAGE: &str = "<|message|>";
const CALL: &str = "<|call|>";

/// The `analysis` channel's message: reasoning up to its `<|end|>`, opened once its header is
/// read.
const ANALYSIS: Thought = Thought {
    open: MESSAGE,
    close: "<|end|>",
};

/// Harmony's row of the family table: a message header starts at either token.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens(START, Format::Harmony, |at, _| {
            Box::new(HarmonyBlock::new(at))
        }),
        Token::opens(CHANNEL, Format::Harmony, |at, _| {
            Box::new(HarmonyBlock::new(at))
        }),
    ],
};

/// The longest header read; a longer one is prose that mentions a Harmony token.
const MAX_HEADER: usize = 256;

/// A Harmony message, from its `<|start|>` or `<|channel|>`.
#[derive(Debug)]
pub(crate) struct HarmonyBlock {
    start: usize,
    state: State,
}

#[derive(Debug)]
enum State {
    Header,
    Arguments {
        name: String,
        values: Values,
    },
    /// The code of a message to `python`, from `body` up to `<|call|>` or the end.
    Code {
        body: usize,
    },
    /// The arguments are read; `<|call|>` may follow whitespace.
    Closing {
        after: usize,
        outcome: Outcome,
    },
}

/// What a header says.
struct Header<'h> {
    channel: Option<&'h str>,
    recipient: Option<&'h str>,
}

impl HarmonyBlock {
    fn new(start: usize) -> Self {
        Self {
            start,
            state: State::Header,
        }
    }

    /// The rest of a role header the prompt began (`<|start|>assistant`), from its recipient:
    /// ` to=functions.NAME<|channel|>commentary json<|message|>…` at the start of an output.
    pub(crate) fn continued(start: usize) -> Self {
        Self::new(start)
    }
}

/// The built-in tool whose message is code, not JSON.
const PYTHON: &str = "python";

/// Whether a message's text begins a JSON object (after whitespace).
fn starts_json(text: &str) -> bool {
    text.trim_start().starts_with('{')
}

/// What begins the rest of a role header at the start of an output.
pub(crate) const RECIPIENT: &str = "to=";

impl Reader for HarmonyBlock {
    /// The name of the call being written, once its header is read.
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        match &self.state {
            State::Arguments { name, .. } => Some(name.clone()),
            _ => None,
        }
    }

    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        loop {
            match &mut self.state {
                State::Header => {
                    if let Some(step) = self.header(input) {
                        return step;
                    }
                }
                State::Arguments { name, values } => match values.scan(input) {
                    SeqEnd::NeedMore => return Step::NeedMore,
                    SeqEnd::Ended {
                        complete: false, ..
                    } => {
                        return Step::Done(Outcome::cut_off(
                            self.start..input.end(),
                            Format::Harmony,
                            format_args!("inside the arguments of `{name}` before `<|call|>`"),
                        ));
                    }
                    SeqEnd::Ended { at, complete: true } => {
                        let Some(span) = values.spans.first().cloned() else {
                            if input.ends_at(at) {
                                return Step::Done(Outcome::cut_off(
                                    self.start..input.end(),
                                    Format::Harmony,
                                    format_args!("right after the header of the call of `{name}`"),
                                ));
                            }
                            return Step::Done(Outcome::error(
                                self.start..at,
                                Format::Harmony,
                                ErrorKind::Malformed,
                                format!(
                                    "the message to `{name}` is not a JSON object; write the arguments as {{\"key\": value}} after `<|message|>`"
                                ),
                            ));
                        };
                        let item = arguments_item(
                            name,
                            input.str(span.clone()),
                            None,
                            Format::Harmony,
                            self.start..span.end,
                        );
                        self.state = State::Closing {
                            after: at,
                            outcome: Outcome::new(span.end, vec![item]),
                        };
                    }
                },
                State::Code { body } => {
                    let body = *body;
                    let text = input.bytes_from(body);
                    let end = match memmem::find(text, CALL.as_bytes()) {
                        Some(len) => body + len,
                        // Code has no end of its own: without `<|call|>` it may be cut off,
                        // and cut-off code never runs.
                        None if input.eof() => {
                            return Step::Done(Outcome::cut_off(
                                self.start..input.end(),
                                Format::Harmony,
                                "inside the code for `python` before `<|call|>`",
                            ));
                        }
                        None => return Step::NeedMore,
                    };
                    let code = input.str(body..end);
                    let mut arguments = serde_json::Map::new();
                    arguments.insert("code".to_owned(), serde_json::Value::from(code));
                    let call = RawCall {
                        name: PYTHON.to_owned(),
                        arguments: serde_json::Value::Object(arguments),
                        id: None,
                        typed: true,
                    };
                    let item = Item::found(call, Format::Harmony, self.start..end);
                    return Step::Done(Outcome::new(end + CALL.len(), vec![item]));
                }
                State::Closing { after, outcome } => {
                    // The server may have cut the `<|call|>` stop token.
                    return close_with(input, after, CALL, outcome);
                }
            }
        }
    }
}

impl HarmonyBlock {
    /// Reads the header up to `<|message|>`; `None` when the arguments are to be read next.
    fn header(&mut self, input: &Input<'_>) -> Option<Step> {
        let available = input.bytes_from(self.start);
        let window = &available[..available.len().min(MAX_HEADER)];
        let Some(len) = memmem::find(window, MESSAGE.as_bytes()) else {
            if window.len() < MAX_HEADER && !input.eof() {
                return Some(Step::NeedMore);
            }
            if input.eof()
                && window.len() < MAX_HEADER
                && read_header(unfinished(input.str(self.start..input.end()))).is_some()
            {
                // A header the output ends inside is markup: a call's is cut off, another's is
                // removed.
                if memmem::find(window, b"to=").is_some() {
                    return Some(Step::Done(Outcome::cut_off(
                        self.start..input.end(),
                        Format::Harmony,
                        "inside a message header before `<|message|>`",
                    )));
                }
                return Some(Step::Done(Outcome::new(input.end(), Vec::new())));
            }
            return Some(self.not_a_message());
        };
        let body = self.start + len + MESSAGE.len();
        let Some(header) = read_header(input.str(self.start..self.start + len)) else {
            return Some(self.not_a_message());
        };
        match header.recipient {
            Some(PYTHON) if !starts_json(input.str(body..input.end())) => {
                // Code, not JSON; a message not begun yet waits for its first byte.
                if input.str(body..input.end()).trim_start().is_empty() && !input.eof() {
                    return Some(Step::NeedMore);
                }
                self.state = State::Code { body };
                None
            }
            Some(recipient) if !matches!(recipient, "assistant" | "user") => {
                let name = recipient.strip_prefix("functions.").unwrap_or(recipient);
                self.state = State::Arguments {
                    name: name.to_owned(),
                    values: Values::new(body, false, false),
                };
                None
            }
            _ => {
                let items = if header.channel == Some("analysis") {
                    vec![Item::Thought(ANALYSIS)]
                } else {
                    Vec::new()
                };
                Some(Step::Done(Outcome::new(body, items)))
            }
        }
    }

    fn not_a_message(&self) -> Step {
        Step::NotACall {
            resume: self.start + 1,
        }
    }
}

/// The channel and recipient of a header (`<|start|>ROLE [to=R]<|channel|>CHANNEL [to=R]
/// [<|constrain|>TYPE]`, or from `<|channel|>` on); `None` when it is not one.
fn read_header(header: &str) -> Option<Header<'_>> {
    let (role, channel) = match header.strip_prefix(START) {
        Some(rest) => match rest.split_once(CHANNEL) {
            Some((role, channel)) => (role, Some(channel)),
            None => (rest, None),
        },
        // The rest of a role header: its recipient, then the channel.
        None if header.starts_with(RECIPIENT) => {
            let (role, channel) = header.split_once(CHANNEL)?;
            (role, Some(channel))
        }
        None => ("", Some(header.strip_prefix(CHANNEL)?)),
    };
    let role_words = words(role)?;
    let channel_words = match channel {
        Some(channel) => words(channel)?,
        None => Vec::new(),
    };
    let recipient = role_words
        .iter()
        .chain(&channel_words)
        .find_map(|word| word.strip_prefix("to="));
    Some(Header {
        channel: channel_words.first().copied(),
        recipient,
    })
}

/// The words of a header part; `None` when one holds what no header does (markup, quotes).
fn words(text: &str) -> Option<Vec<&str>> {
    text.split(CONSTRAIN)
        .flat_map(str::split_ascii_whitespace)
        .map(|word| {
            word.bytes()
                .all(|b| {
                    b.is_ascii_alphanumeric()
                        || matches!(b, b'_' | b'.' | b'-' | b':' | b'=' | b'/')
                })
                .then_some(word)
        })
        .collect()
}

/// A header the output ends inside, without the token it ends inside (`<|constr`).
fn unfinished(header: &str) -> &str {
    let cut = (1..=header.len().min(MESSAGE.len().max(CONSTRAIN.len())))
        .filter(|&len| header.is_char_boundary(header.len() - len))
        .find(|&len| {
            let tail = &header[header.len() - len..];
            [CONSTRAIN, MESSAGE, CHANNEL]
                .iter()
                .any(|token| token.len() > len && token.starts_with(tail))
        });
    match cut {
        Some(len) if len < header.len() => &header[..header.len() - len],
        _ => header,
    }
}
