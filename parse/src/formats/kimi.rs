//! Kimi K2's special-token section:
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! The call id is `functions.NAME:INDEX`; the name is what lies between.

use super::json;
use crate::block::RawCall;
use crate::block::{Env, Family, Item, Outcome, Reader, Step, Token};
use crate::scan::{Finder, Input, delimited_json};
use crate::vocab::{ErrorKind, Format};

const CALL_BEGIN: &str = "<|tool_call_begin|>";
const ARGUMENT_BEGIN: &str = "<|tool_call_argument_begin|>";
const CALL_END: &str = "<|tool_call_end|>";

/// The section's first token, and the singular spelling some versions use.
const SECTION: &str = "<|tool_calls_section_begin|>";
const SINGULAR: &str = "<|tool_call_section_begin|>";

/// Kimi K2's row of the family table.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens(SECTION, Format::Kimi, |at, _| {
            Box::new(KimiBlock::new(at, false))
        }),
        Token::opens(SINGULAR, Format::Kimi, |at, _| {
            Box::new(KimiBlock::new(at, true))
        }),
    ],
};

#[derive(Debug)]
struct KimiBlock {
    start: usize,
    open: &'static str,
    end: Finder,
}

impl KimiBlock {
    /// `singular`: the `<|tool_call_section_begin|>` spelling some versions use.
    fn new(start: usize, singular: bool) -> Self {
        let (open, close) = if singular {
            (SINGULAR, "<|tool_call_section_end|>")
        } else {
            (SECTION, "<|tool_calls_section_end|>")
        };
        Self {
            start,
            open,
            end: Finder::new(close),
        }
    }
}

impl Reader for KimiBlock {
    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        let body = self.start + self.open.len();
        let Some((body_end, end, complete)) = self.end.closing(input, body) else {
            return Step::NeedMore;
        };
        let text = input.str(body..body_end);
        // A string holding `<|tool_call_end|>` does not end a call: K2's tokenizer writes the
        // token there too.
        let items: Vec<Item> =
            delimited_json(text, CALL_BEGIN, ARGUMENT_BEGIN, CALL_END, !complete)
                .map(|(call_text, at, whole)| call(call_text, body + at, whole))
                .collect();
        if items.is_empty() && complete && text.trim().is_empty() {
            // An empty section calls nothing and says nothing: removed.
            return Step::Done(Outcome::new(end, Vec::new()));
        }
        if items.is_empty() {
            return Step::Done(Outcome::error(
                self.start..end,
                Format::Kimi,
                if complete {
                    ErrorKind::Malformed
                } else {
                    ErrorKind::Truncated
                },
                "the tool-call section holds no `<|tool_call_begin|>` call; nothing was called"
                    .into(),
            ));
        }
        Step::Done(Outcome::new(end, items))
    }
}

fn call(text: &str, at: usize, complete: bool) -> Item {
    let span = at..at + text.len();
    if !complete {
        return Item::cut_off(
            span,
            Format::Kimi,
            "inside a tool call before `<|tool_call_end|>`",
        );
    }
    let Some((id, arguments)) = text.split_once(ARGUMENT_BEGIN) else {
        return Item::error(
            span,
            Format::Kimi,
            ErrorKind::Malformed,
            "the tool call has no `<|tool_call_argument_begin|>`".into(),
        );
    };
    let id = id.trim();
    let name = id.strip_prefix("functions.").unwrap_or(id);
    let name = match name.rsplit_once(':') {
        Some((name, index)) if index.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => name,
    };
    match json::value(arguments.trim()).map(json::arguments_object) {
        Ok(Ok(arguments)) => Item::found(
            RawCall {
                name: name.to_owned(),
                arguments,
                id: Some(id.to_owned()),
                typed: false,
            },
            Format::Kimi,
            span,
        ),
        Ok(Err(message)) => Item::error(
            span,
            Format::Kimi,
            ErrorKind::Arguments,
            format!("the arguments of `{name}` are wrong: {message}"),
        ),
        Err(error) => Item::error(
            span,
            Format::Kimi,
            ErrorKind::Malformed,
            format!("the arguments of `{name}` are not valid JSON: {error}"),
        ),
    }
}
