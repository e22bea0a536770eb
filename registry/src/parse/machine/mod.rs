//! The scanner every parse runs: one forward pass that finds thinking, call blocks and tag lines,
//! hands each block to its format's reader, and assembles what is left for display.
//!
//! The whole-text parse and [`StreamParser`](super::StreamParser) are the same machine: the
//! whole text is one chunk with the end of input known. A stream feeds chunks; the machine
//! stops where it needs more input and resumes there, keeping only the suffix that could still
//! start a call. Every search is forward-only ([`Finder`], [`HitCache`]), so the total work is
//! linear in the output however it is split.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the machine, its modes, thinking, the scan of text |
//! | `blocks.rs` | the call blocks: entering, stepping and finishing one |
//! | `held.rs` | the end of the available input: what a stream holds back, a last call list, plain chunks |

use std::ops::Range;
use std::sync::Arc;

mod blocks;
mod held;
pub(crate) use held::{Plain, Ready};

use blocks::Block;

use super::block::{Env, Item, Outcome, RawCall, Step, Thought, ToolLookup};
use super::event::StreamEvent;
use super::formats::deepseek::{self, DeepSeekBlock};
use super::formats::end_tokens::EndTokenBlock;
use super::formats::end_tokens::trailing_end_tokens;
use super::formats::function::FunctionBlock;
use super::formats::gemma::GemmaBlock;
use super::formats::glm4::Glm4Block;
use super::formats::harmony::HarmonyBlock;
use super::formats::hermes::ToolCallBlock;
use super::formats::invoke::{self, InvokeBlock};
use super::formats::json_blocks::{BareBlock, FenceBlock, Wrapper, WrapperBlock};
use super::formats::kimi::KimiBlock;
use super::formats::mistral::MistralBlock;
use super::formats::react::{self, ReactBlock};
use super::formats::sections::SectionBlock;
use super::formats::tags::{TagLine, TagRules};
use super::markers::{
    ALL_MARKERS, Hit, HitCache, MAX_MARKER, Marker, Scanner, is_marker_prefix, may_begin_marker,
};
use super::scan::{Finder, Input};
use super::sink::{Region, Sink};
use super::tag_set::TagSet;
use super::tools::ToolSet;
use super::vocab::{Format, Formats, Options, Parsed, ParsedCall, Thinking};

/// Bytes kept before the earliest position still needed, for the look-behinds (line starts,
/// a backtick before a marker, `functools` before `[`).
const CONTEXT: usize = 16;

/// How far into a block its name is looked for while it streams in.
const HINT_WINDOW: usize = 1024;

#[derive(Debug)]
enum Mode {
    /// `Thinking::Auto` before a `<think>` or `</think>` has been seen.
    Undecided,
    /// Text where calls count.
    Text,
    /// Reasoning where calls do not count: only `</think>` matters.
    Think,
    /// A fenced code block: only its closing fence matters.
    FenceText,
    Block(Block),
}

/// The scanner. See the module documentation.
pub(crate) struct Machine {
    options: Options,
    tags: Option<Arc<TagSet>>,
    mode: Mode,
    region: Region,
    /// Everything before `pos` has been looked at in the current mode.
    pos: usize,
    /// Text from here on is not yet handed to the sink.
    text_from: usize,
    /// Whether a bare JSON or pythonic call can no longer be the whole message.
    bare_off: bool,
    /// How far the end of the output was looked at for a last call list.
    list_checked: usize,
    /// Whether the message has shown it is not GLM-4's `NAME\n{json}`.
    name_line_off: bool,
    /// A position that counts as a line start: just after a removed block.
    line_start_at: usize,
    hits: HitCache,
    think_open: Finder,
    /// The closing token of the thought being read (`</think>` unless a family's own thought
    /// token opened it), and its search.
    think_end: Thought,
    think_close: Finder,
    fence_close: Finder,
    /// Where the code block being read started.
    fence_from: usize,
    /// The call announced with `CallStarted` for the current block, and how much of the
    /// block's text has gone out as `CallArgsDelta`.
    announced: Option<String>,
    args_from: usize,
    /// Set once a block is too long for its name to be found early (the name is looked for in
    /// its first bytes only): the name then comes with the call.
    hint_off: bool,
    /// A whole text under `Thinking::Auto` is read as content straight away; the first
    /// `</think>` before any `<think>` restarts it as reasoning (see `resolve_tentative`).
    tentative: bool,
    /// Bytes a stream added to a call block since the block last read: see
    /// [`Machine::block_waits`].
    unread: usize,
    /// Whether a stream's next chunk may be read without the scan ([`Machine::readiness`],
    /// set after each scan).
    pub(crate) ready: Ready,
    pub(crate) sink: Sink,
}

/// The whole-text parse: the machine fed one chunk with the end known.
pub(crate) fn parse_text<T: ToolSet + ?Sized>(text: &str, tools: &T, options: Options) -> Parsed {
    let lookup: &dyn ToolLookup = &tools;
    let mut machine = Machine::new(&tools, options, false);
    machine.run(&Input::whole(text), lookup);
    machine.finish();
    machine.into_parsed()
}

impl Machine {
    pub(crate) fn new(tools: &dyn ToolSet, options: Options, events: bool) -> Self {
        let tags = if options.formats.contains(Format::Tag) {
            tools.tags()
        } else {
            None
        };
        let region = match options.thinking {
            Thinking::StartsInside => Region::Reasoning,
            _ => Region::Content,
        };
        let mut machine = Machine {
            options,
            tags,
            mode: Mode::Text,
            region,
            pos: 0,
            text_from: 0,
            bare_off: false,
            list_checked: 0,
            name_line_off: false,
            line_start_at: 0,
            hits: HitCache::default(),
            think_open: Finder::new("<think>"),
            think_end: Thought::Think,
            think_close: Finder::new("</think>"),
            fence_close: Finder::new("```"),
            fence_from: 0,
            announced: None,
            args_from: 0,
            hint_off: false,
            tentative: options.thinking == Thinking::Auto && !events,
            unread: 0,
            ready: Ready::No,
            sink: Sink {
                streaming: events,
                max: options.max_calls,
                ..Sink::default()
            },
        };
        machine.mode = match options.thinking {
            // A stream cannot restart what it has sent, so it holds the text until it knows.
            Thinking::Auto if events => Mode::Undecided,
            _ => machine.text_mode(),
        };
        machine
    }

    /// The earliest position the machine may still read; a stream can drop what comes before.
    pub(crate) fn keep_from(&self) -> usize {
        let earliest = match &self.mode {
            Mode::Undecided => 0,
            Mode::Block(block) => block.start().min(self.text_from),
            _ => self.text_from,
        };
        earliest.saturating_sub(CONTEXT)
    }

    /// Runs over the available input until it needs more (or, at the end of input, until
    /// everything is read). The modes' steps are kept out of line (`#[inline(never)]`): a
    /// stream enters here at every push it scans, and with every step inlined the loop sets up
    /// a large frame each time.
    pub(crate) fn run(&mut self, input: &Input<'_>, tools: &dyn ToolLookup) {
        let env = Env {
            tools,
            formats: self.options.formats,
        };
        loop {
            let before = (
                self.region,
                self.pos,
                self.text_from,
                std::mem::discriminant(&self.mode),
            );
            let more = match self.mode {
                Mode::Undecided => self.step_undecided(input),
                Mode::Text => self.step_text(input, &env),
                Mode::Think => self.step_think(input),
                Mode::FenceText => self.step_fence_text(input),
                Mode::Block(_) => self.step_block(input, &env),
            };
            if !more {
                break;
            }
            debug_assert!(
                before
                    != (
                        self.region,
                        self.pos,
                        self.text_from,
                        std::mem::discriminant(&self.mode)
                    )
                    || matches!(self.mode, Mode::Block(_)),
                "the scanner made no progress"
            );
        }
    }

    /// Ends the parse: trailing whitespace is dropped and the last deltas go out.
    pub(crate) fn finish(&mut self) {
        self.sink.flush(Region::Content);
        self.sink.flush(Region::Reasoning);
    }

    pub(crate) fn into_parsed(self) -> Parsed {
        let sink = self.sink;
        Parsed {
            calls: sink.calls,
            content: sink.content.into_string(),
            reasoning: sink.reasoning.into_string(),
            errors: sink.errors,
            unknown: sink.unknown,
            left_out: sink.left_out,
        }
    }

    fn text_mode(&self) -> Mode {
        if self.region == Region::Reasoning && !self.options.calls_in_thinking {
            Mode::Think
        } else {
            Mode::Text
        }
    }

    fn commit(&mut self, input: &Input<'_>, upto: usize) {
        if upto > self.text_from {
            self.sink.text(self.region, input.str(self.text_from..upto));
            self.text_from = upto;
        }
    }

    fn is_line_start(&self, input: &Input<'_>, at: usize) -> bool {
        at == 0 || at == self.line_start_at || input.byte(at - 1) == Some(b'\n')
    }

    fn backtick_before(input: &Input<'_>, at: usize) -> bool {
        at > 0 && input.byte(at - 1) == Some(b'`')
    }

    /// The first match of `finder` at or after `from` that is not written in backticks.
    fn find_unquoted(finder: &mut Finder, input: &Input<'_>, mut from: usize) -> Option<usize> {
        loop {
            let at = finder.find(input, from)?;
            if !Self::backtick_before(input, at) {
                return Some(at);
            }
            from = at + 1;
        }
    }

    /// Looks for the `<think>` markers in text a block or code block read, which the scanner did
    /// not see: during a tentative read, the first `<think>` settles it as content and a first
    /// `</think>` restarts it as reasoning. Returns whether it restarted.
    fn check_hidden_text(&mut self, input: &Input<'_>, range: Range<usize>) -> bool {
        if !self.tentative {
            return false;
        }
        let text = &input.bytes_from(range.start)[..range.end - range.start];
        let unquoted = |i: &usize| !Self::backtick_before(input, range.start + i);
        let open = memchr::memmem::find_iter(text, b"<think>").find(unquoted);
        let close = memchr::memmem::find_iter(text, b"</think>").find(unquoted);
        match (open, close) {
            (_, None) => {
                if open.is_some() {
                    self.tentative = false;
                }
                false
            }
            (Some(open), Some(close)) if open < close => {
                self.tentative = false;
                false
            }
            (_, Some(_)) => {
                self.restart_in_reasoning();
                true
            }
        }
    }

    /// Starts the whole text again as reasoning (only a whole text is read tentatively, so
    /// nothing has been sent).
    fn restart_in_reasoning(&mut self) {
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
        self.think_end = Thought::Think;
        self.think_close = Finder::new("</think>");
        self.mode = self.text_mode();
    }

    /// Starts reading a thought whose text begins at `from`.
    fn start_think(&mut self, from: usize, thought: Thought) {
        // Only `<think>` settles a tentative read, as only it settles a stream's undecided
        // start; a `</think>` in another family's thought is looked for when it ends.
        if thought == Thought::Think {
            self.tentative = false;
        }
        self.sink.cut(Region::Content, false);
        self.region = Region::Reasoning;
        if self.think_end != thought {
            self.think_end = thought;
            self.think_close = Finder::new(thought.close());
        }
        self.text_from = from;
        self.pos = self.text_from;
        self.mode = self.text_mode();
    }

    /// Removes a token that only wraps the answer; the text around it joins as around a block.
    fn drop_token(&mut self, at: usize, len: usize) {
        self.sink.cut(self.region, false);
        self.text_from = at + len;
        self.pos = self.text_from;
        self.line_start_at = self.pos;
    }

    fn end_think(&mut self, at: usize) {
        self.sink.cut(Region::Reasoning, true);
        self.region = Region::Content;
        self.text_from = at + self.think_end.close().len();
        self.pos = self.text_from;
        self.line_start_at = self.pos;
        self.mode = Mode::Text;
    }

    // ---- modes -------------------------------------------------------------------------------

    #[inline(never)]
    fn step_undecided(&mut self, input: &Input<'_>) -> bool {
        let close = Self::find_unquoted(&mut self.think_close, input, 0);
        let open = if input.eof() {
            // The whole text is here: only a `<think>` before the first `</think>` matters,
            // so prose without thinking is searched once.
            close.and_then(|close| {
                memchr::memmem::find_iter(&input.bytes_from(0)[..close], b"<think>")
                    .find(|&at| !Self::backtick_before(input, at))
            })
        } else {
            Self::find_unquoted(&mut self.think_open, input, 0)
        };
        self.region = match (open, close) {
            (Some(open), Some(close)) if close < open => Region::Reasoning,
            (None, Some(_)) => Region::Reasoning,
            (Some(_), _) => Region::Content,
            (None, None) if input.eof() => Region::Content,
            (None, None) => return false,
        };
        self.mode = self.text_mode();
        true
    }

    #[inline(never)]
    fn step_think(&mut self, input: &Input<'_>) -> bool {
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
            self.commit(input, input.end());
            self.pos = input.end();
            return false;
        }
        let hold = self.held_suffix(input, &[self.think_end.close()]);
        self.commit(input, hold);
        self.pos = self.pos.max(hold);
        false
    }

    #[inline(never)]
    fn step_fence_text(&mut self, input: &Input<'_>) -> bool {
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

    #[inline(never)]
    fn step_text(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
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
    fn whole_message_value(&mut self, input: &Input<'_>, env: &Env<'_>) -> Option<bool> {
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
                if (b.is_ascii_alphabetic() || b == b'_')
                    && env.formats.contains(Format::Glm4)
                    && !self.name_line_off
                {
                    self.commit(input, first);
                    self.enter_block(input, Block::Glm4(Glm4Block::new(first)));
                    return Some(true);
                }
                if b != b'<' {
                    let json = env.formats.contains(Format::Json) && matches!(b, b'[' | b'{');
                    let python = env.formats.contains(Format::Pythonic)
                        && (b == b'[' || b.is_ascii_alphabetic() || b == b'_');
                    if json || python {
                        self.commit(input, first);
                        self.enter_block(input, Block::Bare(BareBlock::new(first)));
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
    fn tag_line_at_start(&mut self, input: &Input<'_>) -> bool {
        if let Some(tags) = &self.tags
            && self.pos == self.text_from
            && (self.pos == 0 || self.pos == self.line_start_at)
            && tags.rules().starts_tag(input.bytes_from(self.pos))
        {
            let line = self.pos;
            self.enter_block(
                input,
                Block::TagLine(TagLine {
                    start: line,
                    scanned: line,
                }),
            );
            return true;
        }
        false
    }

    /// A ReAct `Action:` line right at the start of the output or after a removed block.
    fn action_at_start(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        if env.formats.contains(Format::React)
            && self.pos == self.text_from
            && (self.pos == 0 || self.pos == self.line_start_at)
            && input
                .bytes_from(self.pos)
                .starts_with(react::ACTION.as_bytes())
        {
            let line = self.pos;
            self.enter_block(input, Block::React(ReactBlock::new(line)));
            return true;
        }
        false
    }

    /// The text up to the next marker or tag line the automaton finds, and that block entered.
    fn scan_text(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
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
                    if line < self.text_from || !self.is_line_start(input, line) {
                        continue;
                    }
                    self.commit(input, line);
                    self.enter_block(
                        input,
                        Block::TagLine(TagLine {
                            start: line,
                            scanned: line,
                        }),
                    );
                    return true;
                }
                Hit::React => {
                    let line = at + 1;
                    if line < self.text_from || !env.formats.contains(Format::React) {
                        continue;
                    }
                    self.commit(input, line);
                    self.enter_block(input, Block::React(ReactBlock::new(line)));
                    return true;
                }
                Hit::ListEnd => {
                    if let Some(line) = self.call_list_line(input, at, env) {
                        self.commit(input, line);
                        let block = BareBlock::list_ending(line, at + 2);
                        self.enter_block(input, Block::Bare(block));
                        return true;
                    }
                }
                Hit::Marker(_) if at < self.pos => {}
                Hit::Marker(Marker::ThinkEnd)
                    if self.tentative && !Self::backtick_before(input, at) =>
                {
                    // `</think>` before any `<think>`: the template opened the thought.
                    self.restart_in_reasoning();
                    return true;
                }
                Hit::Marker(Marker::Think(Thought::Think))
                    if self.tentative
                        && self.region == Region::Reasoning
                        && !Self::backtick_before(input, at) =>
                {
                    // `<think>` inside another family's thought: the output opens its
                    // thoughts, so a later `</think>` does not make the start one.
                    self.tentative = false;
                    self.pos = at + 1;
                }
                Hit::Marker(Marker::ThinkEnd | Marker::ThoughtEnd | Marker::EndToken)
                    if self.region == Region::Reasoning
                        && input
                            .bytes_from(at)
                            .starts_with(self.think_end.close().as_bytes())
                        && !Self::backtick_before(input, at) =>
                {
                    self.commit(input, at);
                    self.end_think(at);
                    return true;
                }
                Hit::Marker(marker) => {
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

    fn fence_at_line_start(&self, input: &Input<'_>, at: usize) -> bool {
        let mut start = at;
        while at - start < 3 && start > 0 && input.byte(start - 1) == Some(b' ') {
            start -= 1;
        }
        self.is_line_start(input, start)
    }
}
