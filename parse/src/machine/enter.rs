//! Entering what a marker opens: whether the marker is enabled by the formats and counts where
//! it stands (not in backticks, a fence at a line start), and the call block, thought or
//! removed token it starts.

use super::blocks::{Block, Kind};
use super::{Machine, Mode};
use crate::block::{Does, Env, Thought};
use crate::formats::end_tokens::EndTokenBlock;
use crate::formats::json_blocks::{BareBlock, FenceBlock};
use crate::markers::{Marker, with_lead};
use crate::scan::Input;
use crate::sink::Region;
use crate::vocab::{Format, Formats};

impl Machine {
    /// Removes a token that only wraps the answer; the text around it joins as around a block.
    pub(super) fn drop_token(&mut self, at: usize, len: usize) {
        self.sink.cut(self.region, false);
        self.text_from = at + len;
        self.pos = self.text_from;
        self.line_start_at = self.pos;
    }

    pub(super) fn marker_enabled(&self, marker: Marker, formats: Formats) -> bool {
        match marker {
            Marker::Think => self.region == Region::Content,
            // A thought's end is taken above, in `scan_text`, when it closes the open thought.
            Marker::ThinkEnd | Marker::ThoughtEnd => false,
            Marker::Token(id) => {
                let token = id.token();
                match token.does {
                    Does::Think(_) => self.region == Region::Content,
                    Does::Open(_) | Does::Drop => token.formats.meets(formats),
                }
            }
            Marker::LineValue => {
                self.region == Region::Content
                    && (formats.contains(Format::Json) || formats.contains(Format::Pythonic))
            }
            Marker::Fence | Marker::EndToken => true,
        }
    }

    /// The marker a hit at `at` stands for, with where it begins: a token of the family table
    /// is the end of a token with a lead ([`Token::lead`](crate::block::Token::lead))
    /// when that lead, not yet handed on as text, stands before it (`<tool_call>` after MiniMax
    /// M3's namespace token is M3's section, from the namespace token).
    pub(super) fn with_lead(
        &self,
        input: &Input<'_>,
        marker: Marker,
        at: usize,
        env: &Env<'_>,
    ) -> (Marker, usize) {
        if let Marker::Token(id) = marker
            && let Some((led, start)) = with_lead(input, id.token(), at, self.text_from, |led| {
                led.formats.meets(env.formats)
            })
        {
            return (Marker::Token(led), start);
        }
        (marker, at)
    }

    /// Whether a marker the automaton found at `at` opens something here: it is enabled,
    /// not quoted in backticks, a fence starts its line, `functools` is a whole word.
    pub(super) fn marker_counts(
        &self,
        input: &Input<'_>,
        at: usize,
        marker: Marker,
        env: &Env<'_>,
    ) -> bool {
        if !self.marker_enabled(marker, env.formats) {
            return false;
        }
        match marker {
            Marker::Fence => self.fence_at_line_start(input, at),
            Marker::Token(id) if id.token().word => {
                !Self::backtick_before(input, at)
                    && (at == 0
                        || input
                            .byte(at - 1)
                            .is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_')))
            }
            _ => !Self::backtick_before(input, at),
        }
    }

    pub(super) fn enter(&mut self, input: &Input<'_>, marker: Marker, at: usize) {
        let block = match marker {
            Marker::Think => {
                return self.start_think(at + Thought::THINK.open.len(), Thought::THINK);
            }
            Marker::ThinkEnd | Marker::ThoughtEnd => return self.end_think(at),
            Marker::Token(id) => {
                let token = id.token();
                match token.does {
                    Does::Open(open) => Block::new(at, open(at, token.text)),
                    Does::Drop => return self.drop_token(at, token.text.len()),
                    Does::Think(thought) => {
                        return self.start_think(at + thought.open.len(), thought);
                    }
                }
            }
            Marker::LineValue => {
                // The line break stays with the text before.
                self.commit(input, at + 1);
                Block::of(at + 1, BareBlock::line(at + 1)).kind(Kind::Bare)
            }
            Marker::EndToken => Block::of(at, EndTokenBlock::new(at)),
            Marker::Fence => Block::of(
                at,
                FenceBlock::new(
                    at,
                    self.region == Region::Content || self.options.calls_in_thinking,
                ),
            )
            .line(),
        };
        self.enter_block(input, block);
    }

    pub(super) fn enter_block(&mut self, _input: &Input<'_>, block: Block) {
        self.pos = block.start;
        self.mode = Mode::Block(block);
        self.announced = None;
        self.hint_off = false;
    }
}
