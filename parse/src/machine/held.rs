//! What a stream decides at the end of the input it has: what it holds back (the start of a
//! marker, a line that may be a tag, an action or a call list, end-of-turn tokens), a last call
//! list, and plain chunks handed on without the scan.

use super::blocks::{Block, Kind};
use super::{Machine, Mode, Plain, Ready};
use crate::block::Env;
use crate::formats::end_tokens::trailing_end_tokens;
use crate::formats::json_blocks::BareBlock;
use crate::formats::react;
use crate::markers::{ALL_MARKERS, MAX_MARKER, Scanner, is_marker_prefix, may_begin_marker};
use crate::scan::{Extent, Input};
use crate::sink::Region;
use crate::vocab::Format;

impl Machine {
    /// A stream's chunk of plain text, from `from` to the end of the input, after text that is
    /// all decided ([`Machine::readiness`]): read without the scan. Plain: in text where calls
    /// count, no byte of it can begin a pattern (a marker, a line start, a list's end, an
    /// end-of-turn token), which a pair of bytes decides ([`Scanner::plain`]); in a thought, no
    /// first byte of its closing token. `None` when the chunk needs the scan; [`Plain::Span`] when the next text delta is a
    /// stretch of the input
    /// ([`Assembler::push_span`](crate::content::Assembler::push_span)) and
    /// [`Plain::Assembled`] when its assembler has it.
    #[inline]
    pub(crate) fn plain_chunk(&mut self, input: &Input<'_>, from: usize) -> Option<Plain> {
        let chunk = input.bytes_from(from);
        let plain = match self.ready {
            // In a thought only its closing token matters.
            Ready::Thought => !chunk.contains(&self.think_end.close.as_bytes()[0]),
            Ready::Text => self.scanner().plain(chunk),
            Ready::No => false,
        };
        if !plain {
            return None;
        }
        // A stream hands out what a push completes before the next push: nothing else is to
        // report, so the chunk's text is handed out from its assembler, or as it is.
        debug_assert!(self.sink.pending.is_empty());
        debug_assert!(self.pos == from && self.text_from == from);
        let end = input.end();
        self.pos = end;
        self.text_from = end;
        let region = self.region;
        let keep = !self.sink.events_only;
        let assembler = self.sink.assembler(region);
        let text = input.str(from..end);
        Some(
            match assembler.push_span(input.bytes_before(from), text, keep) {
                Some((held, visible)) => Plain::Span(region, from - held..from + visible),
                None => {
                    assembler.push(text);
                    Plain::Assembled(region)
                }
            },
        )
    }

    /// Whether the next chunk of a stream whose input ends at `end` may be
    /// [plain](Machine::plain_chunk): all text before it decided, and in a thought, or in text
    /// where calls count past the start of the output, of a line after a removed block and of
    /// a message that may be one bare call. Holds until the next scan: a plain chunk changes
    /// none of it.
    pub(crate) fn readiness(&self, end: usize) -> Ready {
        if self.text_from != end || self.pos != end {
            return Ready::No;
        }
        match self.mode {
            Mode::Think => Ready::Thought,
            Mode::Text
                if end != 0
                    && end != self.line_start_at
                    && (self.bare_off
                        || self.region != Region::Content
                        || self.sink.content.started()) =>
            {
                Ready::Text
            }
            _ => Ready::No,
        }
    }

    /// The automaton for this parse's markers and tags.
    #[inline]
    pub(super) fn scanner(&self) -> &Scanner {
        match &self.tags {
            Some(tags) => tags.scanner(),
            None => Scanner::base(),
        }
    }

    /// Whether a stream's chunk, added inside a call block, can wait to be read with the next
    /// one: it holds no byte a block's end or a marker's end can be (`>`, `}`, `]`, `)`, `|`,
    /// a line break, a non-ASCII byte), and the block has not been left unread for
    /// [`UNREAD_LIMIT`] bytes. Reading two chunks at once is the same as reading them one by one
    /// (the stream's result does not depend on how the output is split), so this only saves
    /// the work of a block's step per token; what a block decides before its end (its name, a
    /// start that turns out not to be a call) comes at most that many bytes later.
    pub(crate) fn block_waits(&mut self, chunk: &[u8]) -> bool {
        if !matches!(self.mode, Mode::Block(_)) {
            return false;
        }
        self.unread += chunk.len();
        let wait = self.unread < UNREAD_LIMIT
            && !chunk
                .iter()
                .any(|&b| matches!(b, b'>' | b'}' | b']' | b')' | b'|' | b'\n') || !b.is_ascii());
        if !wait {
            self.unread = 0;
        }
        wait
    }

    /// The start of the line a pythonic call list ending at `end` (its `)]`) begins: a line
    /// not yet handed on that starts with `[` and a name.
    pub(super) fn call_list_line(
        &self,
        input: &Input<'_>,
        end: usize,
        env: &Env<'_>,
    ) -> Option<usize> {
        if self.region != Region::Content
            || !env.formats.contains(Format::Pythonic)
            || end < self.text_from
        {
            return None;
        }
        let line = self.line_of(input, end)?;
        starts_call_list(input.bytes_from(line)).then_some(line)
    }

    /// The start of the line that ends at `upto` in the text not yet handed on: after the
    /// text's last line break before `upto`, else the text's start when a line starts there.
    fn line_of(&self, input: &Input<'_>, upto: usize) -> Option<usize> {
        let from = self.text_from;
        match memchr::memrchr(b'\n', &input.bytes_from(from)[..upto - from]) {
            Some(i) => Some(from + i + 1),
            None => self.is_line_start(input, from).then_some(from),
        }
    }

    /// Where the text not yet handed on ends without its trailing whitespace: the end of the
    /// output's last visible line, as far as the input goes.
    fn visible_end(&self, input: &Input<'_>) -> usize {
        self.text_from + input.str(self.text_from..input.end()).trim_end().len()
    }

    pub(super) fn text_out_of_input(&mut self, input: &Input<'_>) -> bool {
        let end = input.end();
        if input.eof() {
            // A call list on the last line, ending the output, or cut off by its end.
            if end > self.list_checked {
                self.list_checked = end;
                if self.options.formats.contains(Format::Pythonic) {
                    let list_end = self.visible_end(input);
                    let last = input.str(self.text_from..list_end);
                    let line = self.line_of(input, list_end);
                    // A list that ends the output with `)]`, or one the output ends inside
                    // (its brackets never close), which may be a call cut off.
                    if let Some(line) = line
                        && self.region == Region::Content
                        && starts_call_list(input.bytes_from(line))
                        && (last.ends_with(")]") || Extent::new(line).scan(input).is_none())
                    {
                        self.commit(input, line);
                        let block = BareBlock::list_ending(line, list_end);
                        self.enter_block(input, Block::of(line, block).kind(Kind::Bare));
                        return true;
                    }
                }
            }
            // End-of-turn tokens ending the output are not text, nor is a token the output
            // ends inside.
            let text = &input.bytes_from(self.text_from)[..end - self.text_from];
            let upto = (self.text_from + trailing_end_tokens(text))
                .min(self.unfinished_token(input, &ALL_MARKERS));
            self.commit(input, upto);
            self.text_from = end;
            self.pos = end;
            return false;
        }
        let mut hold = self.held_suffix(input, &ALL_MARKERS);
        // End-of-turn tokens may be the end of the output: they wait, those that end the input
        // and those before what is held (a token's last byte may begin another marker).
        if hold >= self.text_from {
            let text = &input.bytes_from(self.text_from)[..end - self.text_from];
            let ending = trailing_end_tokens(text);
            let before_held = trailing_end_tokens(&text[..hold - self.text_from]);
            hold = self.text_from + ending.min(before_held);
        }
        if let Some(line) = self.line_of(input, end) {
            let partial = input.bytes_from(line);
            let tag = self
                .tags
                .as_ref()
                .is_some_and(|t| t.rules().could_start(partial));
            let action = self.options.formats.contains(Format::React)
                && !partial.is_empty()
                && react::could_start(partial);
            // A line that may be a tag line or a ReAct action waits for its end.
            if tag || action {
                hold = hold.min(line);
            }
        }
        // A line that may be a pythonic call list waits for its end, and so does the
        // whitespace after it: the output's last visible line is what the end of the output
        // reads as a list cut off.
        if self.options.formats.contains(Format::Pythonic) && self.region == Region::Content {
            let visible = self.visible_end(input);
            if let Some(line) = self.line_of(input, visible) {
                let partial = &input.bytes_from(line)[..visible.max(line) - line];
                if partial.first() == Some(&b'[')
                    && (partial.len() == 1 || starts_call_list(partial))
                {
                    hold = hold.min(line);
                }
            }
        }
        self.commit(input, hold);
        self.pos = self.pos.max(hold);
        false
    }

    /// Where a token of `markers` that the end of the output cuts begins: the longest suffix
    /// of the uncommitted text that is a proper prefix of one, if it is two bytes or more (a
    /// lone `<` or `[` stays text). What was written of a token is markup, not text.
    pub(super) fn unfinished_token(&self, input: &Input<'_>, markers: &[&str]) -> usize {
        let end = input.end();
        let from = self.held_suffix(input, markers);
        if end - from >= 2 { from } else { end }
    }

    /// The start of the longest suffix of the uncommitted text that is a proper prefix of one
    /// of `markers`: the text that must wait for more input.
    pub(super) fn held_suffix(&self, input: &Input<'_>, markers: &[&str]) -> usize {
        let end = input.end();
        let from = self.text_from.max(end.saturating_sub(MAX_MARKER));
        let tail = &input.bytes_from(from)[..end - from];
        let all = std::ptr::eq(markers, ALL_MARKERS.as_slice());
        tail.iter()
            .enumerate()
            .filter(|(_, b)| may_begin_marker(**b))
            .find(|(i, b)| {
                let rest = &tail[*i..];
                if all {
                    return is_marker_prefix(rest);
                }
                markers.iter().any(|m| {
                    let m = m.as_bytes();
                    m[0] == **b && m.len() > rest.len() && m.starts_with(rest)
                })
            })
            .map_or(end, |(i, _)| from + i)
    }
}

/// How many bytes of a call block a stream leaves unread at most: see
/// [`Machine::block_waits`].
const UNREAD_LIMIT: usize = 32;

/// Whether `line` begins like a pythonic call list: `[` and a name.
pub(super) fn starts_call_list(line: &[u8]) -> bool {
    line.first() == Some(&b'[')
        && line
            .get(1)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
}
