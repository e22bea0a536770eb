//! The scanner every parse runs: one forward pass that finds thinking, call blocks and tag lines,
//! hands each block to its format's reader, and assembles what is left for display.
//!
//! The whole-text parse and [`StreamParser`](super::StreamParser) are the same machine: the
//! whole text is one chunk with the end of input known. A stream feeds chunks; the machine
//! stops where it needs more input and resumes there, keeping only the suffix that could still
//! start a call. Every search is forward-only ([`Finder`], [`HitCache`]), so the total work is
//! linear in the output however it is split.
//!
//! Each file adds the methods of one job to [`Machine`]; they call one another as methods, and
//! import only what this file and `blocks.rs` define, never each other's items, so no circle
//! runs between the files.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the machine's state, its modes, the loop that runs them, what a stream is told ([`Ready`], [`Plain`]) |
//! | `blocks.rs` | the call block being read: its family's reader behind the one reader trait, and what its not being a call tells the scan (a leaf: the trait only) |
//! | `text.rs` | the scan of text where calls count: markers, tag and action lines, a whole-message value, fenced code |
//! | `thinking.rs` | thoughts: whether the output starts in one, reading one to its close, restarting a tentative read |
//! | `enter.rs` | which marker is enabled and counts where it stands, and what it opens: a family's block, thought or removed token through its row of the family table, or the scanner's own |
//! | `outcome.rs` | a block stepped, and what its outcome leaves in the parse: calls, errors, a thought, text |
//! | `held.rs` | the end of the available input: what a stream holds back, a last call list, plain chunks |

use std::ops::Range;
use std::sync::Arc;

mod blocks;
mod enter;
mod held;
mod outcome;
mod text;
mod thinking;

use blocks::Block;

use super::block::{Env, Thought, ToolLookup};
use super::markers::HitCache;
use super::scan::{Finder, Input};
use super::sink::{Region, Sink};
use super::tag_set::TagSet;
use super::tools::ToolSet;
use super::vocab::{Format, Options, Parsed, Thinking};

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
    /// The searches of a stream's undecided start.
    undecided: Option<Box<Undecided>>,
    /// The closing token of the thought being read (`</think>` unless a family's own thought
    /// token opened it), and its search.
    think_end: Thought,
    think_close: Finder,
    /// The search of a `<think>` thought for a call tag ([`CALL_IN_THOUGHT`]), and where the
    /// first one stands: a thought the output never closes ends there.
    think_call: Finder,
    think_call_at: Option<usize>,
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
    /// Where the output starts: after the markup its generation prompt left open
    /// ([`Options::generation_prompt`](crate::Options::generation_prompt)), which the machine
    /// reads first; nothing before it is text, and spans are counted from it.
    pub(crate) origin: usize,
    /// Whether a stream's next chunk may be read without the scan ([`Machine::readiness`],
    /// set after each scan).
    pub(crate) ready: Ready,
    pub(crate) sink: Sink,
}

/// The whole-text parse: the machine fed one chunk with the end known.
pub(crate) fn parse_text<T: ToolSet + ?Sized>(text: &str, tools: &T, options: Options) -> Parsed {
    let lookup: &dyn ToolLookup = &tools;
    let mut machine = Machine::new(&tools, options, false);
    let opened;
    let text = match options.opened() {
        Some(markup) => {
            opened = [markup, text].concat();
            &opened
        }
        None => text,
    };
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
            undecided: None,
            think_end: Thought::THINK,
            think_close: Finder::new("</think>"),
            think_call: Finder::new(CALL_IN_THOUGHT),
            think_call_at: None,
            fence_close: Finder::new("```"),
            fence_from: 0,
            announced: None,
            args_from: 0,
            hint_off: false,
            tentative: options.thinking == Thinking::Auto && !events,
            unread: 0,
            origin: options.opened().map_or(0, str::len),
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
            Mode::Block(block) => block.start.min(self.text_from),
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

    /// Ends the parse: the whitespace after the last text is kept or dropped, and the last
    /// deltas go out.
    pub(crate) fn finish(&mut self) {
        self.sink.content.end();
        self.sink.reasoning.end();
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
        // The markup the prompt left open is never text, whatever reads it.
        self.text_from = self.text_from.max(self.origin);
        if upto > self.text_from {
            self.sink.text(self.region, input.str(self.text_from..upto));
            self.text_from = upto;
        }
    }
}

/// Whether a stream's next chunk may be read without the scan: see [`Machine::readiness`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ready {
    No,
    /// In text where calls count: when no byte of the chunk can begin a pattern.
    Text,
    /// In a thought: when the chunk holds no first byte of its closing token.
    Thought,
}

/// What a stream did with a chunk.
#[derive(Debug)]
pub(crate) enum Plain {
    /// Read by the scan: what it completes is pending.
    Scan,
    /// Nothing read now (a call block waits for more, see [`Machine::block_waits`]); nothing
    /// pending.
    Wait,
    /// Read: this stretch of the input (the whitespace that waited before the chunk and the
    /// chunk up to its last visible byte; empty when the chunk is all whitespace) is the next
    /// delta of this region's text, and nothing else is pending.
    Span(Region, Range<usize>),
    /// Read: what the chunk adds to this region's text is all there is to report, in its
    /// assembler.
    Assembled(Region),
}

/// The thoughts a chat template may open for the model: when the output shows a closing token
/// of one before any opening token, it started inside it ([`Thinking::Auto`]).
/// The call tag that ends a `<think>` thought the output never closes: Qwen 3.5 and GLM write
/// their calls with it and may leave out `</think>` before one (llama.cpp issue #21118, "Qwen3.5
/// sometimes does not emit closing </think> tag when calling tools"; sglang's GLM-4.5 reasoning
/// detector: "GLM45 can interrupt reasoning with tool token (<tool_call>) without closing
/// </think>"). In a thought that does close, a call is part of the reasoning, as ever.
const CALL_IN_THOUGHT: &str = "<tool_call>";

const TEMPLATE_OPENED: [Thought; 3] = [
    Thought::THINK,
    crate::formats::kimi_k3::THINK,
    crate::formats::mistral::THINK,
];

/// The searches of a stream's undecided start ([`Thinking::Auto`]): the first opening and the
/// first closing token of each thought of [`TEMPLATE_OPENED`], found forward only, so that the
/// text held is searched once.
#[derive(Debug)]
struct Undecided {
    searches: Vec<(Thought, Finder, Finder)>,
}

impl Undecided {
    fn new() -> Self {
        Self {
            searches: (TEMPLATE_OPENED.iter())
                .map(|t| (*t, Finder::new(t.open), Finder::new(t.close)))
                .collect(),
        }
    }
}
