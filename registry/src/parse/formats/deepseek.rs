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
//! A lone `<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>` is read too.

use super::json;
use crate::parse::block::RawCall;
use crate::parse::block::{Item, Outcome, Step};
use crate::parse::scan::{Finder, Input, delimited};
use crate::parse::vocab::{ErrorKind, Format};

const CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
const CALLS_END: &str = "<｜tool▁calls▁end｜>";
const CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
const CALL_END: &str = "<｜tool▁call▁end｜>";
const SEP: &str = "<｜tool▁sep｜>";

#[derive(Debug)]
pub(crate) struct DeepSeekBlock {
    start: usize,
    single: bool,
    end: Finder,
}

impl DeepSeekBlock {
    pub(crate) fn new(start: usize, single: bool) -> Self {
        Self {
            start,
            single,
            end: Finder::new(if single { CALL_END } else { CALLS_END }),
        }
    }

    pub(crate) fn start(&self) -> usize {
        self.start
    }

    pub(crate) fn step(&mut self, input: &Input<'_>) -> Step {
        let open = if self.single { CALL_BEGIN } else { CALLS_BEGIN };
        let body = self.start + open.len();
        let Some((body_end, end, complete)) = self.end.closing(input, body) else {
            return Step::NeedMore;
        };
        let text = input.str(body..body_end);
        let mut items = Vec::new();
        if self.single {
            items.push(call(text, body, complete));
        } else {
            items.extend(
                delimited(text, CALL_BEGIN, CALL_END)
                    .map(|(call_text, at, whole)| call(call_text, body + at, whole)),
            );
            if items.is_empty() {
                return Step::Done(Outcome::error(
                    self.start..end,
                    Format::DeepSeek,
                    if complete { ErrorKind::Malformed } else { ErrorKind::Truncated },
                    "the tool-call section holds no `<｜tool▁call▁begin｜>` call; nothing was called".into(),
                ));
            }
        }
        Step::Done(Outcome::new(end, items))
    }
}

/// One call's text between its begin and end tokens; `complete` is false when its end token
/// never came.
fn call(text: &str, at: usize, complete: bool) -> Item {
    let span = at..at + text.len();
    if !complete {
        return Item::error(
            span,
            Format::DeepSeek,
            ErrorKind::Truncated,
            "the output ends inside a tool call before `<｜tool▁call▁end｜>`: the call was cut off; nothing was called".into(),
        );
    }
    let Some((left, right)) = text.split_once(SEP) else {
        return Item::error(
            span,
            Format::DeepSeek,
            ErrorKind::Malformed,
            "the tool call has no `<｜tool▁sep｜>` between the name and the arguments".into(),
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
