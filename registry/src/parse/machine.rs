//! The scanner every parse runs: one forward pass that finds thinking, call blocks and tag lines,
//! hands each block to its format's reader, and assembles what is left for display.
//!
//! The whole-text parse and [`StreamParser`](super::StreamParser) are the same machine: the
//! whole text is one chunk with the end of input known. A stream feeds chunks; the machine
//! stops where it needs more input and resumes there, keeping only the suffix that could still
//! start a call. Every search is forward-only ([`Finder`], [`ByteCache`]), so the total work is
//! linear in the output however it is split.

use std::ops::Range;
use std::sync::Arc;

use super::block::{Env, Item, Outcome, RawCall, Step};
use super::event::StreamEvent;
use super::formats::deepseek::{self, DeepSeekBlock};
use super::formats::end_tokens::EndTokenBlock;
use super::formats::gemma::GemmaBlock;
use super::formats::glm4::Glm4Block;
use super::formats::harmony::HarmonyBlock;
use super::formats::invoke::{self, InvokeBlock};
use super::formats::json_blocks::{BareBlock, FenceBlock, Wrapper, WrapperBlock};
use super::formats::kimi::KimiBlock;
use super::formats::markup::{FunctionBlock, ToolCallBlock};
use super::formats::mistral::MistralBlock;
use super::formats::react::{self, ReactBlock};
use super::formats::sections::SectionBlock;
use super::formats::tags::TagLine;
use super::markers::{
    ALL_MARKERS, Hit, HitCache, MAX_MARKER, Marker, Scanner, Thought, is_marker_prefix,
    may_begin_marker, trailing_end_tokens,
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

fn deepseek_tokens(ascii: bool) -> &'static deepseek::Tokens {
    if ascii {
        &deepseek::ASCII
    } else {
        &deepseek::FULLWIDTH
    }
}

/// The call blocks, one per format family.
#[derive(Debug)]
enum Block {
    ToolCall(ToolCallBlock),
    Function(FunctionBlock),
    Wrapper(WrapperBlock),
    Bare(BareBlock),
    Fence(FenceBlock),
    Mistral(MistralBlock),
    DeepSeek(DeepSeekBlock),
    Kimi(KimiBlock),
    Harmony(HarmonyBlock),
    Invoke(InvokeBlock),
    Section(SectionBlock),
    Gemma(GemmaBlock),
    Glm4(Glm4Block),
    React(ReactBlock),
    TagLine(TagLine),
    EndToken(EndTokenBlock),
}

impl Block {
    fn start(&self) -> usize {
        match self {
            Block::ToolCall(b) => b.start(),
            Block::Function(b) => b.start(),
            Block::Wrapper(b) => b.start(),
            Block::Bare(b) => b.start(),
            Block::Fence(b) => b.start(),
            Block::Mistral(b) => b.start(),
            Block::DeepSeek(b) => b.start(),
            Block::Kimi(b) => b.start(),
            Block::Harmony(b) => b.start(),
            Block::Invoke(b) => b.start(),
            Block::Section(b) => b.start(),
            Block::Gemma(b) => b.start(),
            Block::Glm4(b) => b.start(),
            Block::React(b) => b.start(),
            Block::TagLine(b) => b.start,
            Block::EndToken(b) => b.start,
        }
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>, tags: Option<&TagSet>) -> Step {
        match self {
            Block::ToolCall(b) => b.step(input, env),
            Block::Function(b) => b.step(input, env),
            Block::Wrapper(b) => b.step(input, env),
            Block::Bare(b) => b.step(input, env),
            Block::Fence(b) => b.step(input, env),
            Block::Mistral(b) => b.step(input),
            Block::DeepSeek(b) => b.step(input),
            Block::Kimi(b) => b.step(input),
            Block::Harmony(b) => b.step(input),
            Block::Invoke(b) => b.step(input, env),
            Block::Section(b) => b.step(input),
            Block::Gemma(b) => b.step(input),
            Block::Glm4(b) => b.step(input, env),
            Block::React(b) => b.step(input, env),
            Block::TagLine(b) => b.step(input, tags),
            Block::EndToken(b) => b.step(input),
        }
    }

    /// The name of the call being written, once the block is surely a call attempt.
    fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        match self {
            Block::ToolCall(b) => b.name_hint(input),
            Block::Function(b) => b.name_hint(),
            Block::Wrapper(b) => b.name_hint(input),
            Block::Mistral(b) => b.name_hint(input),
            Block::Harmony(b) => b.name_hint(),
            Block::Glm4(b) => b.name_hint(),
            Block::React(b) => b.name_hint(),
            _ => None,
        }
    }
}

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
    pub(crate) sink: Sink,
}

/// The whole-text parse: the machine fed one chunk with the end known.
pub(crate) fn parse_text(text: &str, tools: &dyn ToolSet, options: Options) -> Parsed {
    let mut machine = Machine::new(tools, options, false);
    machine.run(&Input::whole(text), tools);
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
            sink: Sink {
                events: events.then(Vec::new),
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
    /// everything is read).
    pub(crate) fn run(&mut self, input: &Input<'_>, tools: &dyn ToolSet) {
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

    /// A stream's chunk of plain text, from `from` to the end of the input, after text that is
    /// all decided: handed on without a scan. Plain: in text where calls count, past the start
    /// of the output and of a line after a removed block, and no byte of it can begin a pattern
    /// (a marker, a line start, a list's end); in a thought, no `<`. `false` when the chunk
    /// needs the scan.
    pub(crate) fn plain_chunk(&mut self, input: &Input<'_>, from: usize) -> bool {
        if matches!(self.mode, Mode::Think) {
            // In a thought only its closing token matters, and every one begins with `<`.
            if self.text_from != from || self.pos != from || input.bytes_from(from).contains(&b'<')
            {
                return false;
            }
            self.commit(input, input.end());
            self.pos = input.end();
            return true;
        }
        let decided = matches!(self.mode, Mode::Text)
            && self.text_from == from
            && self.pos == from
            && from != 0
            && from != self.line_start_at
            && (self.bare_off || self.region != Region::Content || self.sink.content.started());
        if !decided {
            return false;
        }
        let scanner = match &self.tags {
            Some(tags) => tags.scanner(),
            None => Scanner::base(),
        };
        if input
            .bytes_from(from)
            .iter()
            .any(|&b| scanner.begins_pattern(b))
        {
            return false;
        }
        self.commit(input, input.end());
        self.pos = input.end();
        true
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
        self.sink = Sink::default();
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
            && tags.starts_tag(input.bytes_from(self.pos))
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
                    let line = at + 1;
                    if line < self.text_from {
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

    /// The start of the line a pythonic call list ending at `end` (its `)]`) begins: a line
    /// not yet handed on that starts with `[` and a name.
    fn call_list_line(&self, input: &Input<'_>, end: usize, env: &Env<'_>) -> Option<usize> {
        if self.region != Region::Content
            || !env.formats.contains(Format::Pythonic)
            || end < self.text_from
        {
            return None;
        }
        let from = self.text_from;
        let line = match memchr::memrchr(b'\n', &input.bytes_from(from)[..end - from]) {
            Some(i) => from + i + 1,
            None => self.is_line_start(input, from).then_some(from)?,
        };
        starts_call_list(input.bytes_from(line)).then_some(line)
    }

    fn text_out_of_input(&mut self, input: &Input<'_>) -> bool {
        let end = input.end();
        if input.eof() {
            // A call list on the last line, ending the output.
            if end > self.list_checked {
                self.list_checked = end;
                let last = input.str(self.text_from..end).trim_end();
                let env_formats = self.options.formats;
                if last.ends_with(")]") && env_formats.contains(Format::Pythonic) {
                    let list_end = self.text_from + last.len();
                    let from = self.text_from;
                    let line = match memchr::memrchr(b'\n', last.as_bytes()) {
                        Some(i) => Some(from + i + 1),
                        None => self.is_line_start(input, from).then_some(from),
                    };
                    if let Some(line) = line
                        && self.region == Region::Content
                        && starts_call_list(input.bytes_from(line))
                    {
                        self.commit(input, line);
                        let block = BareBlock::list_ending(line, list_end);
                        self.enter_block(input, Block::Bare(block));
                        return true;
                    }
                }
            }
            // End-of-turn tokens ending the output are not text.
            let text = &input.bytes_from(self.text_from)[..end - self.text_from];
            self.commit(input, self.text_from + trailing_end_tokens(text));
            self.text_from = end;
            self.pos = end;
            return false;
        }
        let mut hold = self.held_suffix(input, &ALL_MARKERS);
        // End-of-turn tokens may be the end of the output: they wait, with what is held after
        // them.
        if hold >= self.text_from {
            let text = &input.bytes_from(self.text_from)[..hold - self.text_from];
            hold = self.text_from + trailing_end_tokens(text);
        }
        let from = self.text_from;
        let line = match memchr::memrchr(b'\n', &input.bytes_from(from)[..end - from]) {
            Some(i) => Some(from + i + 1),
            None => self.is_line_start(input, from).then_some(from),
        };
        if let Some(line) = line {
            let partial = input.bytes_from(line);
            let tag = self.tags.as_ref().is_some_and(|t| t.could_start(partial));
            let action = self.options.formats.contains(Format::React)
                && !partial.is_empty()
                && react::could_start(partial);
            // A line that may be a pythonic call list waits for its end.
            let list = self.options.formats.contains(Format::Pythonic)
                && self.region == Region::Content
                && partial.first() == Some(&b'[')
                && (partial.len() == 1 || starts_call_list(partial));
            if tag || action || list {
                hold = hold.min(line);
            }
        }
        self.commit(input, hold);
        self.pos = self.pos.max(hold);
        false
    }

    /// The start of the longest suffix of the uncommitted text that is a proper prefix of one
    /// of `markers`: the text that must wait for more input.
    fn held_suffix(&self, input: &Input<'_>, markers: &[&str]) -> usize {
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

    fn fence_at_line_start(&self, input: &Input<'_>, at: usize) -> bool {
        let mut start = at;
        while at - start < 3 && start > 0 && input.byte(start - 1) == Some(b' ') {
            start -= 1;
        }
        self.is_line_start(input, start)
    }

    fn marker_enabled(&self, marker: Marker, formats: Formats) -> bool {
        match marker {
            Marker::Think(_) => self.region == Region::Content,
            // A thought's end is taken above, in `scan_text`, when it closes the open thought.
            Marker::ThinkEnd | Marker::ThoughtEnd => false,
            Marker::Harmony => formats.contains(Format::Harmony),
            Marker::ToolCall => {
                formats.contains(Format::Hermes)
                    || formats.contains(Format::Function)
                    || formats.contains(Format::Glm)
            }
            Marker::Function => formats.contains(Format::Function),
            Marker::PythonTag => formats.contains(Format::PythonTag),
            Marker::PythonStart => formats.contains(Format::Pythonic),
            Marker::Granite | Marker::Functools => formats.contains(Format::Json),
            Marker::Kimi | Marker::KimiSingular => formats.contains(Format::Kimi),
            Marker::DeepSeekCalls { .. } | Marker::DeepSeekCall { .. } => {
                formats.contains(Format::DeepSeek)
            }
            Marker::MiniMax => formats.contains(Format::MiniMax),
            Marker::Dsml(_) => formats.contains(Format::Dsml),
            Marker::Section(section) => formats.contains(section.format()),
            Marker::Gemma(_) => formats.contains(Format::Gemma),
            Marker::Drop { format, .. } => formats.contains(format),
            Marker::Mistral => formats.contains(Format::Mistral),
            Marker::Tools | Marker::FunctionCall => formats.contains(Format::Json),
            Marker::FunctionAttr => formats.contains(Format::Function),
            Marker::LineValue => {
                self.region == Region::Content
                    && (formats.contains(Format::Json) || formats.contains(Format::Pythonic))
            }
            Marker::Fence | Marker::EndToken => true,
        }
    }

    /// Whether a marker the automaton found at `at` opens something here: it is enabled,
    /// not quoted in backticks, a fence starts its line, `functools` is a whole word.
    fn marker_counts(&self, input: &Input<'_>, at: usize, marker: Marker, env: &Env<'_>) -> bool {
        if !self.marker_enabled(marker, env.formats) {
            return false;
        }
        match marker {
            Marker::Fence => self.fence_at_line_start(input, at),
            Marker::Functools => {
                !Self::backtick_before(input, at)
                    && (at == 0
                        || input
                            .byte(at - 1)
                            .is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_')))
            }
            _ => !Self::backtick_before(input, at),
        }
    }

    fn enter(&mut self, input: &Input<'_>, marker: Marker, at: usize) {
        let block = match marker {
            Marker::Think(thought) => return self.start_think(at + thought.open().len(), thought),
            Marker::ThinkEnd | Marker::ThoughtEnd => return self.end_think(at),
            Marker::Harmony => Block::Harmony(HarmonyBlock::new(at)),
            Marker::ToolCall => Block::ToolCall(ToolCallBlock::new(at)),
            Marker::Function => Block::Function(FunctionBlock::new(at, false)),
            Marker::PythonTag => Block::Wrapper(WrapperBlock::new(at, Wrapper::PythonTag)),
            Marker::PythonStart => Block::Wrapper(WrapperBlock::new(at, Wrapper::PythonStart)),
            Marker::Granite => Block::Wrapper(WrapperBlock::new(at, Wrapper::Granite)),
            Marker::Functools => Block::Wrapper(WrapperBlock::new(at, Wrapper::Functools)),
            Marker::Kimi => Block::Kimi(KimiBlock::new(at, false)),
            Marker::KimiSingular => Block::Kimi(KimiBlock::new(at, true)),
            Marker::DeepSeekCalls { ascii } => {
                Block::DeepSeek(DeepSeekBlock::new(at, false, deepseek_tokens(ascii)))
            }
            Marker::DeepSeekCall { ascii } => {
                Block::DeepSeek(DeepSeekBlock::new(at, true, deepseek_tokens(ascii)))
            }
            Marker::MiniMax => Block::Invoke(InvokeBlock::new(at, &invoke::MINIMAX)),
            Marker::Dsml(i) => Block::Invoke(InvokeBlock::new(at, &invoke::DSML[usize::from(i)])),
            Marker::Section(section) => Block::Section(SectionBlock::new(at, section)),
            Marker::Gemma(dialect) => Block::Gemma(GemmaBlock::new(at, dialect)),
            Marker::Drop { len, .. } => return self.drop_token(at, usize::from(len)),
            Marker::Mistral => Block::Mistral(MistralBlock::new(at)),
            Marker::Tools => Block::Wrapper(WrapperBlock::new(at, Wrapper::Tools)),
            Marker::FunctionCall => Block::Wrapper(WrapperBlock::new(at, Wrapper::FunctionCall)),
            Marker::FunctionAttr => Block::Function(FunctionBlock::with_name_attribute(at)),
            Marker::LineValue => {
                // The line break stays with the text before.
                self.commit(input, at + 1);
                Block::Bare(BareBlock::line(at + 1))
            }
            Marker::EndToken => Block::EndToken(EndTokenBlock {
                start: at,
                cursor: at,
            }),
            Marker::Fence => Block::Fence(FenceBlock::new(
                at,
                self.region == Region::Content || self.options.calls_in_thinking,
            )),
        };
        self.enter_block(input, block);
    }

    fn enter_block(&mut self, _input: &Input<'_>, block: Block) {
        self.pos = block.start();
        self.mode = Mode::Block(block);
        self.announced = None;
        self.hint_off = false;
    }

    fn step_block(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        let Mode::Block(block) = &mut self.mode else {
            return false;
        };
        let start = block.start();
        let step = block.step(input, env, self.tags.as_deref());
        let hint = match &step {
            Step::NeedMore
                if self.sink.events.is_some() && self.announced.is_none() && !self.hint_off =>
            {
                block.name_hint(input)
            }
            _ => None,
        };
        if hint.is_none() && input.end() - start > HINT_WINDOW {
            self.hint_off = true;
        }
        let is_bare = matches!(block, Block::Bare(_));
        let is_name_line = matches!(block, Block::Glm4(_));
        match step {
            Step::NeedMore => {
                if let Some(name) = hint {
                    self.sink
                        .event(StreamEvent::CallStarted { name: name.clone() });
                    self.announced = Some(name);
                    self.args_from = start;
                }
                if self.announced.is_some() {
                    self.args_delta(input, input.end());
                }
                false
            }
            Step::NotACall { resume } => {
                if is_bare {
                    self.bare_off = true;
                }
                if is_name_line {
                    self.name_line_off = true;
                }
                self.pos = resume;
                self.mode = self.text_mode();
                true
            }
            Step::CodeBlock { body } => {
                self.fence_close = Finder::new("```");
                self.fence_from = start;
                self.pos = body;
                self.mode = Mode::FenceText;
                true
            }
            Step::Done(outcome) => {
                self.finish_block(input, env, outcome);
                true
            }
        }
    }

    fn args_delta(&mut self, input: &Input<'_>, upto: usize) {
        if upto > self.args_from {
            let delta = input.str(self.args_from..upto).to_owned();
            self.sink.event(StreamEvent::CallArgsDelta(delta));
            self.args_from = upto;
        }
    }

    fn finish_block(&mut self, input: &Input<'_>, env: &Env<'_>, outcome: Outcome) {
        let end = outcome.end;
        if self.check_hidden_text(input, self.text_from..end) {
            return;
        }
        if self.announced.is_some() {
            self.args_delta(input, end);
        }
        if outcome.keep_text {
            self.commit(input, end);
        } else {
            self.sink.cut(self.region, false);
            self.text_from = end;
            self.line_start_at = end;
        }
        if self.region == Region::Content {
            self.bare_off = true;
        }
        let mut announced = self.announced.take();
        for item in outcome.items {
            match item {
                Item::Found { call, format, span } => {
                    let RawCall {
                        mut name,
                        arguments,
                        id,
                    } = call;
                    // Llama 3.1's built-in tools are called as `brave_search.call(query=...)`.
                    if let Some(stripped) = name.strip_suffix(".call")
                        && !env.tools.contains(&name)
                    {
                        name = stripped.to_owned();
                    }
                    if announced.take().as_deref() != Some(name.as_str()) {
                        self.sink
                            .event(StreamEvent::CallStarted { name: name.clone() });
                    }
                    let call = ParsedCall {
                        name,
                        arguments,
                        id,
                        format,
                        span,
                    };
                    if env.tools.contains(&call.name) {
                        if self.sink.events_only {
                            self.sink.event(StreamEvent::Call(call));
                        } else {
                            self.sink.event(StreamEvent::Call(call.clone()));
                            self.sink.calls.push(call);
                        }
                    } else {
                        if self.sink.events_only {
                            self.sink.event(StreamEvent::Unknown(call));
                        } else {
                            self.sink.event(StreamEvent::Unknown(call.clone()));
                            self.sink.unknown.push(call);
                        }
                    }
                }
                Item::Thought(thought) => {
                    if self.region == Region::Content {
                        self.start_think(end, thought);
                        return;
                    }
                }
                Item::Error(error) => {
                    if self.sink.events_only {
                        self.sink.event(StreamEvent::Error(error));
                    } else {
                        self.sink.event(StreamEvent::Error(error.clone()));
                        self.sink.errors.push(error);
                    }
                }
            }
        }
        self.pos = end;
        self.text_from = end;
        self.mode = self.text_mode();
    }
}

/// Whether `line` begins like a pythonic call list: `[` and a name.
fn starts_call_list(line: &[u8]) -> bool {
    line.first() == Some(&b'[')
        && line
            .get(1)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
}
