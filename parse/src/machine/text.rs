//! The scan of text where calls count: the automaton's next marker, tag line, `Action:` line or
//! call list end, whether it counts where it stands, and the block it opens; a bare value that
//! is the whole message; fenced code, read to its closing fence.

use std::sync::Arc;

use super::blocks::{Block, Kind};
use super::{Machine, TEMPLATE_OPENED};
use crate::block::{Does, Env};
use crate::formats::glm4::Glm4Block;
use crate::formats::harmony::{self, HarmonyBlock};
use crate::formats::json_blocks::BareBlock;
use crate::formats::react::{self, ReactBlock};
use crate::formats::tags::{TagLine, TagRules};
use crate::markers::{Hit, Marker, Scanner};
use crate::scan::{Finder, Input, Prefix};
use crate::sink::Region;
use crate::vocab::Format;

impl Machine {
    pub(super) fn is_line_start(&self, input: &Input<'_>, at: usize) -> bool {
        at == 0 || at == self.line_start_at || input.byte(at - 1) == Some(b'\n')
    }

    pub(super) fn backtick_before(input: &Input<'_>, at: usize) -> bool {
        at > 0 && input.byte(at - 1) == Some(b'`')
    }

    /// The first match of `finder` at or after `from` that is not written in backticks.
    pub(super) fn find_unquoted(
        finder: &mut Finder,
        input: &Input<'_>,
        mut from: usize,
    ) -> Option<usize> {
        loop {
            let at = finder.find(input, from)?;
            if !Self::backtick_before(input, at) {
                return Some(at);
            }
            from = at + 1;
        }
    }

    #[inline(never)]
    pub(super) fn step_fence_text(&mut self, input: &Input<'_>) -> bool {
        loop {
            match self.fence_close.find(input, self.pos) {
                Some(at) if self.fence_at_line_start(input, at) => {
                    if self.check_hidden_text(input, self.fence_from..at + 3) {
                        return true;
                    }
                    self.commit(input, at + 3);
                    self.pos = at + 3;
                    self.mode = self.text_mode();
                    return true;
                }
                Some(at) => self.pos = at + 1,
                None if input.eof() => {
                    if self.check_hidden_text(input, self.fence_from..input.end()) {
                        return true;
                    }
                    self.commit(input, input.end());
                    self.pos = input.end();
                    return false;
                }
                None => {
                    let hold = self.held_suffix(input, &["```"]);
                    self.commit(input, hold);
                    self.pos = self.pos.max(hold);
                    return false;
                }
            }
        }
    }

    pub(super) fn fence_at_line_start(&self, input: &Input<'_>, at: usize) -> bool {
        let mut start = at;
        while at - start < 3 && start > 0 && input.byte(start - 1) == Some(b' ') {
            start -= 1;
        }
        self.is_line_start(input, start)
    }

    #[inline(never)]
    pub(super) fn step_text(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        if let Some(progress) = self.whole_message_value(input, env) {
            return progress;
        }
        if self.tag_line_at_start(input) || self.action_at_start(input, env) {
            return true;
        }
        self.scan_text(input, env)
    }

    /// A bare JSON or pythonic call must be the whole message: decides it at the first visible
    /// byte. `Some` when the step ends here (with whether it made progress).
    pub(super) fn whole_message_value(&mut self, input: &Input<'_>, env: &Env<'_>) -> Option<bool> {
        if self.region == Region::Content && !self.bare_off && !self.sink.content.started() {
            let first = input.skip_ws(self.text_from);
            if first < self.pos {
                self.bare_off = true;
            } else if first == input.end() {
                if !input.eof() {
                    // Only whitespace so far: hand it on, so that it is skipped once.
                    self.commit(input, first);
                    self.pos = first;
                    return Some(false);
                }
            } else {
                let b = input.byte(first).unwrap_or(b'<');
                // The rest of a Harmony role header the prompt began.
                if b == b't' && env.formats.contains(Format::Harmony) {
                    match input.prefix(first, harmony::RECIPIENT.as_bytes()) {
                        Prefix::Yes => {
                            self.commit(input, first);
                            self.enter_block(
                                input,
                                Block::of(first, HarmonyBlock::continued(first)),
                            );
                            return Some(true);
                        }
                        Prefix::Partial => {
                            self.commit(input, first);
                            self.pos = first;
                            return Some(false);
                        }
                        Prefix::No => {}
                    }
                }
                if (b.is_ascii_alphabetic() || b == b'_')
                    && env.formats.contains(Format::Glm4)
                    && !self.name_line_off
                {
                    self.commit(input, first);
                    let block = Block::of(first, Glm4Block::new(first)).kind(Kind::NameLine);
                    self.enter_block(input, block);
                    return Some(true);
                }
                if b != b'<' {
                    let json = env.formats.contains(Format::Json) && matches!(b, b'[' | b'{');
                    let python = env.formats.contains(Format::Pythonic)
                        && (b == b'[' || b.is_ascii_alphabetic() || b == b'_');
                    if json || python {
                        self.commit(input, first);
                        let block = Block::of(first, BareBlock::new(first)).kind(Kind::Bare);
                        self.enter_block(input, block);
                        return Some(true);
                    }
                    self.bare_off = true;
                }
            }
        }
        None
    }

    /// A tag line right at the start of the output or after a removed block (elsewhere a line
    /// starts after `\n`, which the automaton finds).
    pub(super) fn tag_line_at_start(&mut self, input: &Input<'_>) -> bool {
        if let Some(tags) = &self.tags
            && self.pos == self.text_from
            && (self.pos == 0 || self.pos == self.line_start_at)
            && tags.rules().starts_tag(input.bytes_from(self.pos))
        {
            let rules = Arc::clone(tags.rules());
            self.enter_tag_line(input, self.pos, rules);
            return true;
        }
        false
    }

    fn enter_tag_line(&mut self, input: &Input<'_>, line: usize, tags: Arc<TagRules>) {
        self.enter_block(input, Block::of(line, TagLine::new(line, tags)).line());
    }

    /// A ReAct `Action:` line right at the start of the output or after a removed block.
    pub(super) fn action_at_start(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        if env.formats.contains(Format::React)
            && self.pos == self.text_from
            && (self.pos == 0 || self.pos == self.line_start_at)
            && input
                .bytes_from(self.pos)
                .starts_with(react::ACTION.as_bytes())
        {
            let line = self.pos;
            self.enter_block(input, Block::of(line, ReactBlock::new(line)).line());
            return true;
        }
        false
    }

    /// The text up to the next marker or tag line the automaton finds, and that block entered.
    ///
    /// Long: the hot loop of the parse, one match over what the automaton can hit, each hit's
    /// rule beside the others and the loop in one frame.
    pub(super) fn scan_text(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        let scanner = match &self.tags {
            Some(tags) => tags.scanner(),
            None => Scanner::base(),
        };
        // From one byte back: the `\n` of a tag line may already be handed on.
        let mut from = self.pos.saturating_sub(1);
        loop {
            let Some((at, hit)) = self.hits.find(scanner, input, from) else {
                return self.text_out_of_input(input);
            };
            from = at + 1;
            match hit {
                Hit::Tag => {
                    let line = at;
                    // Only a tag set's automaton finds tags.
                    let Some(tags) = &self.tags else { continue };
                    if line < self.text_from || !self.is_line_start(input, line) {
                        continue;
                    }
                    let rules = Arc::clone(tags.rules());
                    self.commit(input, line);
                    self.enter_tag_line(input, line, rules);
                    return true;
                }
                Hit::React => {
                    let line = at + 1;
                    if line < self.text_from || !env.formats.contains(Format::React) {
                        continue;
                    }
                    self.commit(input, line);
                    self.enter_block(input, Block::of(line, ReactBlock::new(line)).line());
                    return true;
                }
                Hit::ListEnd => {
                    if let Some(line) = self.call_list_line(input, at, env) {
                        self.commit(input, line);
                        let block = BareBlock::list_ending(line, at + 2);
                        self.enter_block(input, Block::of(line, block).kind(Kind::Bare));
                        return true;
                    }
                }
                Hit::Marker(_) if at < self.pos => {}
                Hit::Marker(Marker::ThinkEnd | Marker::ThoughtEnd)
                    if self.tentative
                        && !Self::backtick_before(input, at)
                        && let Some(thought) =
                            Self::template_thought_closing(input.bytes_from(at)) =>
                {
                    // `</think>` (or another thought's close) before any opening: the template
                    // opened the thought.
                    self.restart_in_reasoning(thought);
                    return true;
                }
                Hit::Marker(Marker::Think)
                    if self.tentative
                        && self.region == Region::Reasoning
                        && !Self::backtick_before(input, at) =>
                {
                    // `<think>` inside another family's thought: the output opens its
                    // thoughts, so a later `</think>` does not make the start one.
                    self.tentative = false;
                    self.pos = at + 1;
                }
                Hit::Marker(Marker::Token(id))
                    if self.tentative
                        && self.region == Region::Reasoning
                        && matches!(id.token().does, Does::Think(t) if TEMPLATE_OPENED.contains(&t))
                        && !Self::backtick_before(input, at) =>
                {
                    // The same for the other thoughts a template may open (`[THINK]`,
                    // `<|open|>think<|sep|>`), as a stream's undecided start takes them.
                    self.tentative = false;
                    self.pos = at + 1;
                }
                Hit::Marker(Marker::ThinkEnd | Marker::ThoughtEnd | Marker::EndToken)
                    if self.region == Region::Reasoning
                        && input
                            .bytes_from(at)
                            .starts_with(self.think_end.close.as_bytes())
                        && !Self::backtick_before(input, at) =>
                {
                    self.commit(input, at);
                    self.end_think(at);
                    return true;
                }
                Hit::Marker(marker) => {
                    let (marker, at) = self.with_lead(input, marker, at, env);
                    if self.marker_counts(input, at, marker, env) {
                        self.commit(input, at);
                        self.enter(input, marker, at);
                        return true;
                    }
                    self.pos = at + 1;
                }
            }
        }
    }
}
