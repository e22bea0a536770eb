//! What the block readers and the scanner say to each other: a reader's step, the outcome of
//! a block, the calls and errors in it, the thoughts, and what a reader asks of the tools
//! ([`ToolLookup`]). The readers and the scanner depend on it; it depends only on `vocab.rs`.

use std::borrow::Cow;
use std::fmt::Display;
use std::ops::Range;

use serde_json::Value;

use super::scan::{Input, Prefix};
use super::vocab::{ErrorKind, Format, Formats, ParseError};

/// The longest tool name a reader reads: past it, what looked like a name is prose.
pub(crate) const MAX_NAME: usize = 256;

/// One call read from JSON or Python syntax, before the tool set is consulted.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawCall {
    pub(crate) name: String,
    pub(crate) arguments: Value,
    pub(crate) id: Option<String>,
    /// Whether the values were typed by the tool's schema as they were read (values written
    /// as text, pythonic and Gemma values); otherwise they are JSON as the model wrote it, and
    /// the scanner types them as it takes the call (`typing::type_json_arguments`).
    pub(crate) typed: bool,
}

/// Why a value is not a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotCall {
    /// Not call-shaped at all.
    Shape(String),
    /// Call-shaped, but the arguments are not an object.
    Arguments { name: String, message: String },
}

/// What a reader asks of the tools: whether a name is a tool, and its arguments' schema. Every
/// [`ToolSet`](super::ToolSet) answers it (in `tools.rs`); the readers see only this, so they
/// stand below the tool sets, their compiled tags and the marker table.
pub(crate) trait ToolLookup {
    /// [`ToolSet::contains`](super::ToolSet::contains).
    fn is_tool(&self, name: &str) -> bool;
    /// [`ToolSet::schema`](super::ToolSet::schema).
    fn tool_schema(&self, name: &str) -> Option<Cow<'_, Value>>;
    /// [`ToolSet::types_by_json`](super::ToolSet::types_by_json).
    fn json_typed(&self) -> bool;
}

/// What the block readers see of the parse.
pub(crate) struct Env<'a> {
    pub(crate) tools: &'a dyn ToolLookup,
    pub(crate) formats: Formats,
}

/// What a block reader says after looking at more input.
#[derive(Debug)]
pub(crate) enum Step {
    /// The block goes on past the available input.
    NeedMore,
    /// The marker was not a call after all (prose that mentions it); scanning resumes at
    /// `resume` and the text is kept.
    NotACall { resume: usize },
    /// A fenced code block of text: the closing fence is looked for from `body`.
    CodeBlock { body: usize },
    /// The block is read.
    Done(Outcome),
}

/// A block read to its end.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Where the block ends.
    pub(crate) end: usize,
    /// The calls and errors in it, in order.
    pub(crate) items: Vec<Item>,
    /// Whether the block's text stays in the display text (errors, tags that are not
    /// stripped) rather than being cut out.
    pub(crate) keep_text: bool,
}

impl Outcome {
    /// A block ending at `end` with these items; kept as text when any item is an error.
    pub(crate) fn new(end: usize, items: Vec<Item>) -> Self {
        let keep_text = items.iter().any(|i| matches!(i, Item::Error(_)));
        Self {
            end,
            items,
            keep_text,
        }
    }

    /// A block that is one error, a call cut off by the end of the output ([`cut_off`]).
    pub(crate) fn cut_off(span: Range<usize>, format: Format, place: impl Display) -> Self {
        Self::error(span, format, ErrorKind::Truncated, cut_off(place))
    }

    /// A block that is one error; its text is kept.
    pub(crate) fn error(
        span: Range<usize>,
        format: Format,
        kind: ErrorKind,
        message: String,
    ) -> Self {
        Self {
            end: span.end,
            items: vec![Item::error(span, format, kind, message)],
            keep_text: true,
        }
    }
}

/// The message of a call the end of the output cut off, said the same way by every reader:
/// where the output ends (`inside the call of `add` before `</function>``), then that nothing
/// was called.
fn cut_off(place: impl Display) -> String {
    format!("the output ends {place}: the call was cut off; nothing was called")
}

/// The ways a model's thought is delimited in its output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Thought {
    /// `<think>…</think>`.
    Think,
    /// Command R7B / Command A: `<|START_THINKING|>…<|END_THINKING|>`.
    CommandR,
    /// Gemma 4: `<|channel>thought…<channel|>`.
    Gemma,
    /// Seed-OSS: `<seed:think>…</seed:think>`.
    Seed,
    /// gpt-oss: the `analysis` channel's message, up to `<|end|>` (opened by the Harmony
    /// reader, which reads the message header).
    Harmony,
}

impl Thought {
    /// The token that opens the thought.
    pub(crate) fn open(self) -> &'static str {
        match self {
            Thought::Think => "<think>",
            Thought::CommandR => "<|START_THINKING|>",
            Thought::Gemma => "<|channel>thought",
            Thought::Seed => "<seed:think>",
            Thought::Harmony => "<|message|>",
        }
    }

    /// The token that closes it.
    pub(crate) fn close(self) -> &'static str {
        match self {
            Thought::Think => "</think>",
            Thought::CommandR => "<|END_THINKING|>",
            Thought::Gemma => "<channel|>",
            Thought::Seed => "</seed:think>",
            Thought::Harmony => "<|end|>",
        }
    }
}

/// One thing found in a block.
#[derive(Debug)]
pub(crate) enum Item {
    Found {
        call: RawCall,
        format: Format,
        span: Range<usize>,
    },
    Error(ParseError),
    /// The text after the block is a thought, up to the thought's closing token (gpt-oss's
    /// `analysis` channel, whose header the Harmony reader reads). The last item of a block.
    Thought(Thought),
}

impl Item {
    pub(crate) fn found(call: RawCall, format: Format, span: Range<usize>) -> Self {
        Item::Found { call, format, span }
    }

    /// The error of a call cut off by the end of the output ([`cut_off`]).
    pub(crate) fn cut_off(span: Range<usize>, format: Format, place: impl Display) -> Self {
        Item::error(span, format, ErrorKind::Truncated, cut_off(place))
    }

    pub(crate) fn error(
        span: Range<usize>,
        format: Format,
        kind: ErrorKind,
        message: String,
    ) -> Self {
        Item::Error(ParseError {
            kind,
            format,
            message,
            span,
        })
    }

    /// The error for a value that is not a call.
    pub(crate) fn not_call(not: NotCall, format: Format, span: Range<usize>) -> Self {
        match not {
            NotCall::Shape(why) => Item::error(
                span,
                format,
                ErrorKind::Malformed,
                format!("{why}; write the call as {{\"name\": \"...\", \"arguments\": {{...}}}}"),
            ),
            NotCall::Arguments { name, message } => Item::error(
                span,
                format,
                ErrorKind::Arguments,
                format!("the arguments of `{name}` are wrong: {message}"),
            ),
        }
    }
}

/// The end of a call whose arguments are whole: its closing `token` after optional whitespace
/// from `*after`, taken when it is there and waited for while more input may still bring it. A
/// missing one is fine: servers cut stop tokens. `*after` keeps the position reached, so a
/// stream does not skip the whitespace again.
#[inline]
pub(crate) fn close_with(
    input: &Input<'_>,
    after: &mut usize,
    token: &str,
    outcome: &mut Outcome,
) -> Step {
    let at = input.skip_ws(*after);
    *after = at;
    match input.prefix(at, token.as_bytes()) {
        Prefix::Partial => return Step::NeedMore,
        Prefix::Yes => outcome.end = at + token.len(),
        Prefix::No if at == input.end() && !input.eof() => return Step::NeedMore,
        Prefix::No => {}
    }
    Step::Done(std::mem::take(outcome))
}
