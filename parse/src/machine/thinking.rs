//! Thoughts: whether the output starts in one (`Thinking::Auto`), reading one up to its closing
//! token, and the tentative read of a whole text that a first `</think>` restarts as reasoning.

use std::ops::Range;
use std::sync::LazyLock;

use super::{CALL_IN_THOUGHT, Machine, Mode, TEMPLATE_OPENED};
use crate::block::Thought;
use crate::markers::HitCache;
use crate::scan::{Finder, Input};
use crate::sink::{Region, Sink};

impl Machine {
    /// The thought of [`TEMPLATE_OPENED`] whose closing token starts `text`.
    pub(super) fn template_thought_closing(text: &[u8]) -> Option<Thought> {
        TEMPLATE_OPENED
            .into_iter()
            .find(|t| text.starts_with(t.close.as_bytes()))
    }

    /// Where the first unquoted opening token of a thought of [`TEMPLATE_OPENED`] is, and the
    /// first unquoted closing token with its thought.
    fn undecided_first(&mut self, input: &Input<'_>) -> (Option<usize>, Option<(usize, Thought)>) {
        let mut open: Option<usize> = None;
        let mut close: Option<(usize, Thought)> = None;
        let undecided = self
            .undecided
            .get_or_insert_with(|| Box::new(super::Undecided::new()));
        for (thought, opens, closes) in &mut undecided.searches {
            if let Some(at) = Self::find_unquoted(opens, input, 0) {
                open = Some(open.map_or(at, |o| o.min(at)));
            }
            if let Some(at) = Self::find_unquoted(closes, input, 0)
                && close.is_none_or(|(c, _)| at < c)
            {
                close = Some((at, *thought));
            }
        }
        (open, close)
    }

    /// Looks for the `<think>` markers in text a block or code block read, which the scanner did
    /// not see: during a tentative read, the first `<think>` settles it as content and a first
    /// `</think>` restarts it as reasoning. Returns whether it restarted.
    pub(super) fn check_hidden_text(&mut self, input: &Input<'_>, range: Range<usize>) -> bool {
        if !self.tentative {
            return false;
        }
        let text = &input.bytes_from(range.start)[..range.end - range.start];
        // Every token of those thoughts spells `think` or `THINK`: a block without either,
        // nearly every one, is searched once, by one prebuilt searcher each.
        static HINK: LazyLock<[memchr::memmem::Finder<'static>; 2]> = LazyLock::new(|| {
            [
                memchr::memmem::Finder::new(b"think"),
                memchr::memmem::Finder::new(b"THINK"),
            ]
        });
        if HINK.iter().all(|f| f.find(text).is_none()) {
            return false;
        }
        let unquoted = |i: &usize| !Self::backtick_before(input, range.start + i);
        let first =
            |needle: &str| memchr::memmem::find_iter(text, needle.as_bytes()).find(unquoted);
        let open = TEMPLATE_OPENED.iter().filter_map(|t| first(t.open)).min();
        let close = (TEMPLATE_OPENED.iter())
            .filter_map(|t| Some((first(t.close)?, *t)))
            .min_by_key(|(at, _)| *at);
        match (open, close) {
            (_, None) => {
                if open.is_some() {
                    self.tentative = false;
                }
                false
            }
            (Some(open), Some((close, _))) if open < close => {
                self.tentative = false;
                false
            }
            (_, Some((_, thought))) => {
                self.restart_in_reasoning(thought);
                true
            }
        }
    }

    /// Starts the whole text again as reasoning, inside `thought` (only a whole text is read
    /// tentatively, so nothing has been sent).
    pub(super) fn restart_in_reasoning(&mut self, thought: Thought) {
        self.tentative = false;
        self.sink = Sink {
            max: self.options.max_calls,
            ..Sink::default()
        };
        self.region = Region::Reasoning;
        self.pos = 0;
        self.text_from = 0;
        self.bare_off = false;
        self.name_line_off = false;
        self.list_checked = 0;
        self.line_start_at = 0;
        self.hits = HitCache::default();
        self.think_end = thought;
        self.think_close = Finder::new(thought.close);
        self.forget_call_in_thought();
        self.mode = self.text_mode();
    }

    /// Starts the search of a new thought for a call tag.
    fn forget_call_in_thought(&mut self) {
        self.think_call = Finder::new(CALL_IN_THOUGHT);
        self.think_call_at = None;
    }

    /// Starts reading a thought whose text begins at `from`.
    pub(super) fn start_think(&mut self, from: usize, thought: Thought) {
        // Only a thought a template may open settles a tentative read, as only it settles a
        // stream's undecided start; a `</think>` in another family's thought is looked for
        // when it ends.
        if TEMPLATE_OPENED.contains(&thought) {
            self.tentative = false;
        }
        self.sink.cut(Region::Content, false);
        self.region = Region::Reasoning;
        if self.think_end != thought {
            self.think_end = thought;
            self.think_close = Finder::new(thought.close);
        }
        self.forget_call_in_thought();
        self.text_from = from;
        self.pos = self.text_from;
        self.mode = self.text_mode();
    }

    pub(super) fn end_think(&mut self, at: usize) {
        self.sink.cut(Region::Reasoning, true);
        self.region = Region::Content;
        self.text_from = at + self.think_end.close.len();
        self.pos = self.text_from;
        self.line_start_at = self.pos;
        self.mode = Mode::Text;
    }

    #[inline(never)]
    pub(super) fn step_undecided(&mut self, input: &Input<'_>) -> bool {
        let (open, close) = self.undecided_first(input);
        self.region = match (open, close) {
            (Some(open), Some((close, _))) if close < open => Region::Reasoning,
            (None, Some(_)) => Region::Reasoning,
            (Some(_), _) => Region::Content,
            (None, None) if input.eof() => Region::Content,
            (None, None) => return false,
        };
        if let (Region::Reasoning, Some((_, thought))) = (self.region, close) {
            self.think_end = thought;
            self.think_close = Finder::new(thought.close);
            self.forget_call_in_thought();
        }
        self.mode = self.text_mode();
        true
    }

    #[inline(never)]
    pub(super) fn step_think(&mut self, input: &Input<'_>) -> bool {
        // A call tag in a `<think>` thought: held until the thought closes (the call is part
        // of the reasoning) or the output ends without closing it (the call ends it).
        if self.think_end == Thought::THINK && self.think_call_at.is_none() {
            self.think_call_at = Self::find_unquoted(&mut self.think_call, input, self.pos);
        }
        if let Some(at) = Self::find_unquoted(&mut self.think_close, input, self.pos) {
            if self.check_hidden_text(input, self.text_from..at) {
                return true;
            }
            self.commit(input, at);
            self.end_think(at);
            return true;
        }
        if input.eof() {
            if self.check_hidden_text(input, self.text_from..input.end()) {
                return true;
            }
            if let Some(at) = self.think_call_at.take() {
                // The model went from its thought to a call without `</think>`.
                self.commit(input, at);
                self.sink.cut(Region::Reasoning, true);
                self.region = Region::Content;
                self.text_from = at;
                self.pos = at;
                self.line_start_at = at;
                self.mode = Mode::Text;
                return true;
            }
            // A closing token the output ends inside is not reasoning.
            let upto = self.unfinished_token(input, &[self.think_end.close]);
            self.commit(input, upto);
            self.pos = input.end();
            return false;
        }
        let hold = self.held_suffix(input, &[self.think_end.close, CALL_IN_THOUGHT]);
        let hold = self.think_call_at.map_or(hold, |at| hold.min(at));
        self.commit(input, hold);
        self.pos = self.pos.max(hold);
        false
    }
}
