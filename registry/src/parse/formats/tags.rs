//! Response tags (the knowledge-base bot spec): a line `TAG: argument` is a call of the tool
//! declared with `#[tool(tag = "TAG")]`; the tool's pattern (compiled in the tool set's
//! [`TagSet`]) splits the argument into its groups. The prompt block that teaches a model the
//! tags is [`format`](crate::format)'s.

use crate::parse::block::{Item, Outcome, RawCall, Step};
use crate::parse::scan::Input;
use crate::parse::tag_set::TagSet;
use crate::parse::vocab::{ErrorKind, Format};

/// A `TAG: argument` line.
#[derive(Debug)]
pub(crate) struct TagLine {
    pub(crate) start: usize,
    pub(crate) scanned: usize,
}

impl TagLine {
    pub(crate) fn step(&mut self, input: &Input<'_>, tags: Option<&TagSet>) -> Step {
        let line_end = match memchr::memchr(b'\n', input.bytes_from(self.scanned)) {
            Some(i) => self.scanned + i,
            None if input.eof() => input.end(),
            None => {
                self.scanned = input.end();
                return Step::NeedMore;
            }
        };
        let line = input.str(self.start..line_end).trim_end();
        let Some(tags) = tags else {
            return Step::NotACall {
                resume: self.start + 1,
            };
        };
        Step::Done(match tags.read_line(line) {
            Ok(call) => Outcome {
                end: line_end,
                items: vec![Item::found(
                    RawCall {
                        name: call.tool,
                        arguments: call.arguments,
                        id: None,
                    },
                    Format::Tag,
                    self.start..line_end,
                )],
                keep_text: !call.strip,
            },
            Err(message) => Outcome::error(
                self.start..line_end,
                Format::Tag,
                ErrorKind::TagMismatch,
                message,
            ),
        })
    }
}
