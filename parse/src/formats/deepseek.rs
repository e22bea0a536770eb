//! DeepSeek's special-token section (V3, R1, V3.1):
//!
//! ```text
//! <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//! ```json
//! {"city": "Paris"}
//! ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//! ```
//!
//! V3.1 writes `<｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁call▁end｜>`.
//! A lone `<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>` is read too, and every token also with the
//! ASCII `|` for the fullwidth `｜` (`<|tool▁calls▁begin|>`), as servers that re-encode the
//! tokens as text write them. As llama.cpp's DeepSeek parser (`common/chat.cpp`) does, the
//! section's first token is also read in its plain spellings (`<｜tool_calls_begin｜>`,
//! `<｜tool calls begin｜>`, `<｜tool\_calls\_begin｜>`, `<｜tool▁calls｜>`), and the first call's
//! begin token may be missing (`<｜tool▁calls▁begin｜>function<｜tool▁sep｜>…`), as it is from
//! a stream that lost it. The templates: <https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/tokenizer_config.json>,
//! <https://huggingface.co/deepseek-ai/DeepSeek-V3.1/blob/main/tokenizer_config.json>.

use super::json;
use crate::block::RawCall;
use crate::block::{Env, Family, Item, Outcome, Reader, Step, Token};
use crate::scan::{Finder, Input, delimited_json};
use crate::vocab::{ErrorKind, Format};

/// DeepSeek's row of the family table: the section's first token in every spelling read, and
/// a call's begin token, which opens a lone call.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens("<｜tool▁calls▁begin｜>", Format::DeepSeek, open),
        // The plain spellings llama.cpp's DeepSeek parser accepts for the section's first token.
        Token::opens("<｜tool_calls_begin｜>", Format::DeepSeek, open),
        Token::opens("<｜tool calls begin｜>", Format::DeepSeek, open),
        Token::opens("<｜tool\\_calls\\_begin｜>", Format::DeepSeek, open),
        Token::opens("<｜tool▁calls｜>", Format::DeepSeek, open),
        Token::opens(FULLWIDTH.call_begin, Format::DeepSeek, open),
        Token::opens("<|tool▁calls▁begin|>", Format::DeepSeek, open),
        Token::opens(ASCII.call_begin, Format::DeepSeek, open),
    ],
};

/// The block a token of [`FAMILY`] opens: a section, or a lone call after its begin token, in
/// the token's bars.
fn open(at: usize, token: &'static str) -> Box<dyn Reader> {
    let tokens = if token.starts_with("<|") {
        &ASCII
    } else {
        &FULLWIDTH
    };
    let single = token == tokens.call_begin;
    Box::new(DeepSeekBlock::new(at, token.len(), single, tokens))
}

/// One spelling of the tokens.
#[derive(Debug)]
struct Tokens {
    calls_end: &'static str,
    call_begin: &'static str,
    call_end: &'static str,
    sep: &'static str,
}

/// The tokens as the tokenizer defines them, with fullwidth bars.
const FULLWIDTH: Tokens = Tokens {
    calls_end: "<｜tool▁calls▁end｜>",
    call_begin: "<｜tool▁call▁begin｜>",
    call_end: "<｜tool▁call▁end｜>",
    sep: "<｜tool▁sep｜>",
};

/// The same tokens with ASCII bars.
const ASCII: Tokens = Tokens {
    calls_end: "<|tool▁calls▁end|>",
    call_begin: "<|tool▁call▁begin|>",
    call_end: "<|tool▁call▁end|>",
    sep: "<|tool▁sep|>",
};

#[derive(Debug)]
struct DeepSeekBlock {
    start: usize,
    /// The length of the opening token.
    open: usize,
    single: bool,
    tokens: &'static Tokens,
    end: Finder,
}

impl DeepSeekBlock {
    /// A section (or, `single`, one call) whose opening token of `open` bytes starts at
    /// `start`.
    fn new(start: usize, open: usize, single: bool, tokens: &'static Tokens) -> Self {
        Self {
            start,
            open,
            single,
            tokens,
            end: Finder::new(if single {
                tokens.call_end
            } else {
                tokens.calls_end
            }),
        }
    }
}

impl Reader for DeepSeekBlock {
    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        let t = self.tokens;
        let body = self.start + self.open;
        let Some((body_end, end, complete)) = self.end.closing(input, body) else {
            return Step::NeedMore;
        };
        let text = input.str(body..body_end);
        let mut items = Vec::new();
        if self.single {
            items.push(call(text, body, complete, t));
        } else {
            // A first call whose begin token is missing (llama.cpp's parser takes it as
            // optional): the text up to the first end token, when no begin token comes first.
            let mut rest = (text, body);
            let lead = text.len() - text.trim_start().len();
            let after = &text[lead..];
            let first_end = after.find(t.call_end);
            let first = &after[..first_end.unwrap_or(after.len())];
            if !first.is_empty() && !first.contains(t.call_begin) {
                items.push(call(first, body + lead, first_end.is_some(), t));
                let next = lead + first.len() + first_end.map_or(0, |_| t.call_end.len());
                rest = (&text[next..], body + next);
            }
            items.extend(
                delimited_json(rest.0, t.call_begin, t.sep, t.call_end, !complete)
                    .map(|(call_text, at, whole)| call(call_text, rest.1 + at, whole, t)),
            );
            if items.is_empty() && complete && text.trim().is_empty() {
                // An empty section calls nothing and says nothing: removed.
                return Step::Done(Outcome::new(end, Vec::new()));
            }
            if items.is_empty() {
                return Step::Done(Outcome::error(
                    self.start..end,
                    Format::DeepSeek,
                    if complete {
                        ErrorKind::Malformed
                    } else {
                        ErrorKind::Truncated
                    },
                    format!(
                        "the tool-call section holds no `{}` call; nothing was called",
                        t.call_begin
                    ),
                ));
            }
        }
        Step::Done(Outcome::new(end, items))
    }
}

/// One call's text between its begin and end tokens; `complete` is false when its end token
/// never came.
fn call(text: &str, at: usize, complete: bool, t: &Tokens) -> Item {
    let span = at..at + text.len();
    if !complete {
        return Item::cut_off(
            span,
            Format::DeepSeek,
            format_args!("inside a tool call before `{}`", t.call_end),
        );
    }
    let Some((left, right)) = text.split_once(t.sep) else {
        return Item::error(
            span,
            Format::DeepSeek,
            ErrorKind::Malformed,
            format!(
                "the tool call has no `{}` between the name and the arguments",
                t.sep
            ),
        );
    };
    let (name, arguments) = if left.trim() == "function" {
        // V3 / R1: `function<｜tool▁sep｜>NAME\n```json\n{…}\n````.
        let right = right.trim_start();
        let (name, rest) = right.split_once('\n').unwrap_or((right, ""));
        (name.trim(), unfence(rest))
    } else {
        // V3.1: `NAME<｜tool▁sep｜>{…}`.
        (left.trim(), unfence(right))
    };
    match json::value(arguments).map(json::arguments_object) {
        Ok(Ok(arguments)) if !name.is_empty() => Item::found(
            RawCall {
                name: name.to_owned(),
                arguments,
                id: None,
                typed: false,
            },
            Format::DeepSeek,
            span,
        ),
        Ok(Ok(_)) => Item::error(
            span,
            Format::DeepSeek,
            ErrorKind::Malformed,
            "the tool call has no name".into(),
        ),
        Ok(Err(message)) => Item::error(
            span,
            Format::DeepSeek,
            ErrorKind::Arguments,
            format!("the arguments of `{name}` are wrong: {message}"),
        ),
        Err(error) => Item::error(
            span,
            Format::DeepSeek,
            ErrorKind::Malformed,
            format!("the arguments of `{name}` are not valid JSON: {error}"),
        ),
    }
}

/// The JSON inside an optional ```` ```json ```` fence.
fn unfence(text: &str) -> &str {
    let text = text.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.split_once('\n').map_or(rest, |(_, body)| body);
    rest.trim_end().strip_suffix("```").unwrap_or(rest).trim()
}
