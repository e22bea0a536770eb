//! A begin token, one JSON (or pythonic) value of calls, an end token: the families whose chat
//! templates wrap a list of calls in tokens of their own.
//!
//! | family | what the model writes | defined by |
//! | --- | --- | --- |
//! | InternLM2 / 2.5 | `<\|action_start\|><\|plugin\|>\n{"name": …, "parameters": {…}}<\|action_end\|>` | <https://github.com/InternLM/InternLM/blob/main/chat/chat_format.md> |
//! | Command R7B, Command A | `<\|START_ACTION\|>[{"tool_call_id": "0", "tool_name": …, "parameters": {…}}]<\|END_ACTION\|>` | <https://huggingface.co/CohereForAI/c4ai-command-r7b-12-2024/blob/main/tokenizer_config.json>, <https://docs.cohere.com/docs/tool-use> |
//! | Hunyuan A13B | `<tool_calls>[{"name": …, "arguments": {…}}]</tool_calls>` | <https://github.com/Tencent-Hunyuan/Hunyuan-A13B/blob/main/agent/README.md> |
//! | Liquid LFM2 | `<\|tool_call_start\|>[get_weather(city="Paris")]<\|tool_call_end\|>` | <https://huggingface.co/LiquidAI/LFM2-1.2B> |
//!
//! The end token may be missing after a complete value: servers cut stop tokens.

use serde_json::Value;

use super::json::{self, Shape, value_items};
use crate::block::{Env, Family, Item, Open, Outcome, Reader, Step, Thought, Token, close_with};
use crate::scan::{Input, SeqEnd, Values};
use crate::vocab::{ErrorKind, Format};

/// The sections' row of the family table, with the tokens of the same families that only wrap
/// the answer (removed) and Command R's thought.
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Section::InternLm.token(|at, _| Box::new(SectionBlock::new(at, Section::InternLm))),
        Section::CommandR.token(|at, _| Box::new(SectionBlock::new(at, Section::CommandR))),
        Section::Hunyuan.token(|at, _| Box::new(Tagged::Undecided(at))),
        Section::Lfm2.token(|at, _| Box::new(SectionBlock::new(at, Section::Lfm2))),
        Token::thought(Thought {
            open: "<|START_THINKING|>",
            close: "<|END_THINKING|>",
        }),
        Token::dropped("<|START_RESPONSE|>", Format::CommandR),
        Token::dropped("<|END_RESPONSE|>", Format::CommandR),
        Token::dropped("<answer>", Format::Hunyuan),
        Token::dropped("</answer>", Format::Hunyuan),
    ],
};

/// Hunyuan's `<tool_calls>`, which DeepSeek V4's DSML shares once a server drops its marker:
/// a section that begins with `<invoke ` is DSML's (`invoke.rs`), any other Hunyuan's.
#[derive(Debug)]
enum Tagged {
    /// Not known yet: the section's token begins at this offset.
    Undecided(usize),
    /// Known: the reader of the section.
    Read(Box<dyn Reader>),
}

impl Reader for Tagged {
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        if let Tagged::Undecided(at) = *self {
            let open = Section::Hunyuan.open();
            *self = Tagged::Read(match super::invoke::begins_with_invoke(input, at, open) {
                None => return Step::NeedMore,
                Some(true) => super::invoke::plain_v4(at),
                Some(false) => Box::new(SectionBlock::new(at, Section::Hunyuan)),
            });
        }
        match self {
            Tagged::Read(reader) => reader.step(input, env),
            Tagged::Undecided(_) => Step::NeedMore,
        }
    }

    fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        match self {
            Tagged::Read(reader) => reader.name_hint(input),
            Tagged::Undecided(_) => None,
        }
    }
}

/// The families of this reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    InternLm,
    CommandR,
    Hunyuan,
    Lfm2,
}

impl Section {
    /// The section's token in the family table, read by the reader `open` makes.
    const fn token(self, open: Open) -> Token {
        Token::opens(self.open(), self.format(), open)
    }

    /// The token that opens the section.
    const fn open(self) -> &'static str {
        match self {
            Section::InternLm => "<|action_start|><|plugin|>",
            Section::CommandR => "<|START_ACTION|>",
            Section::Hunyuan => "<tool_calls>",
            Section::Lfm2 => "<|tool_call_start|>",
        }
    }

    fn close(self) -> &'static str {
        match self {
            Section::InternLm => "<|action_end|>",
            Section::CommandR => "<|END_ACTION|>",
            Section::Hunyuan => "</tool_calls>",
            Section::Lfm2 => "<|tool_call_end|>",
        }
    }

    /// The format the section's calls are in.
    const fn format(self) -> Format {
        match self {
            Section::InternLm => Format::InternLm,
            Section::CommandR => Format::CommandR,
            Section::Hunyuan => Format::Hunyuan,
            Section::Lfm2 => Format::Lfm2,
        }
    }

    fn python(self) -> bool {
        self == Section::Lfm2
    }
}

/// A section: its begin token, a value, its end token.
#[derive(Debug)]
struct SectionBlock {
    start: usize,
    section: Section,
    values: Values,
    closing: Option<(usize, Outcome)>,
}

impl SectionBlock {
    fn new(start: usize, section: Section) -> Self {
        Self {
            start,
            section,
            values: Values::new(start + section.open().len(), section.python(), false),
            closing: None,
        }
    }
}

impl Reader for SectionBlock {
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        if self.closing.is_none() {
            let format = self.section.format();
            match self.values.scan(input) {
                SeqEnd::NeedMore => return Step::NeedMore,
                SeqEnd::Ended {
                    complete: false, ..
                } => {
                    return Step::Done(Outcome::cut_off(
                        self.start..input.end(),
                        format,
                        format_args!("inside the calls after `{}`", self.section.open()),
                    ));
                }
                SeqEnd::Ended { at, complete: true } => {
                    let Some(span) = self.values.spans.first().cloned() else {
                        if input.ends_at(at) {
                            return Step::Done(Outcome::cut_off(
                                self.start..input.end(),
                                format,
                                format_args!("right after `{}`", self.section.open()),
                            ));
                        }
                        // `<tool_calls>` in prose, not followed by calls.
                        return Step::NotACall {
                            resume: self.start + 1,
                        };
                    };
                    let text = input.str(span.clone());
                    let items = match self.section {
                        Section::CommandR => command_r_items(text, span.clone()),
                        section => value_items(
                            text,
                            span.clone(),
                            format,
                            section.python().then_some(env.tools),
                        ),
                    };
                    self.closing = Some((at, Outcome::new(span.end, items)));
                }
            }
        }
        let Some((cursor, outcome)) = &mut self.closing else {
            return Step::NeedMore;
        };
        close_with(input, cursor, self.section.close(), outcome)
    }
}

/// Command R's list of `{"tool_call_id", "tool_name", "parameters"}`.
fn command_r_items(text: &str, span: std::ops::Range<usize>) -> Vec<Item> {
    let format = Format::CommandR;
    let value = match json::value(text) {
        Ok(value) => value,
        Err(error) => {
            return vec![Item::error(
                span,
                format,
                ErrorKind::Malformed,
                format!(
                    "the action is not valid JSON: {error}; write it as [{{\"tool_call_id\": \"0\", \"tool_name\": \"...\", \"parameters\": {{...}}}}]"
                ),
            )];
        }
    };
    let rename = |mut item: Value| {
        if let Value::Object(object) = &mut item {
            for (from, to) in [("tool_name", "name"), ("tool_call_id", "id")] {
                if !object.contains_key(to)
                    && let Some(value) = object.remove(from)
                {
                    object.insert(to.to_owned(), value);
                }
            }
        }
        item
    };
    let value = match value {
        Value::Array(items) => Value::Array(items.into_iter().map(rename).collect()),
        other => rename(other),
    };
    match json::calls(value, Shape::Wrapped) {
        Ok(calls) => calls
            .into_iter()
            .map(|call| Item::found(call, format, span.clone()))
            .collect(),
        Err(not) => vec![Item::not_call(not, format, span)],
    }
}

#[cfg(test)]
mod tests {
    use crate::{self as parse, Format};

    #[test]
    fn command_r_keeps_the_tool_call_id() {
        let output = r#"<|START_ACTION|>[{"tool_call_id": "0", "tool_name": "f", "parameters": {}}, {"tool_call_id": "1", "tool_name": "f", "parameters": {"a": 1}}]<|END_ACTION|>"#;
        let parsed = parse::text(output, &["f"]);
        let ids: Vec<_> = parsed.calls.iter().map(|c| c.id.as_deref()).collect();
        assert_eq!(ids, [Some("0"), Some("1")]);
        assert_eq!(parsed.calls[0].format, Format::CommandR);
    }
}
