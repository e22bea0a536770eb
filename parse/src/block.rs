//! What the block readers and the scanner say to each other: the one trait every family's
//! reader implements ([`Reader`]) and the row a family adds to the family table ([`Family`],
//! its [`Token`]s), a reader's step, the outcome of a block, the calls and errors in it, the
//! thoughts, and what a reader asks of the tools ([`ToolLookup`]). The readers and the scanner
//! depend on it; it depends only on `vocab.rs` and `scan.rs`.

use std::borrow::Cow;
use std::fmt::{self, Display};
use std::ops::Range;

use serde_json::Value;

use super::scan::{Input, Prefix};
use super::vocab::{ErrorKind, Format, Formats, ParseError};

/// A family's reader of one call block, from the token or line that opened it to its end, in
/// steps that can stop for more input and resume where they stopped.
///
/// The scanner makes one when it finds where a block starts (a [`Token`] of the family table,
/// or a line the scanner itself recognizes) and holds it as a `Box<dyn Reader>` until the
/// block is read: one allocation per block, one dynamic call per step.
pub(crate) trait Reader: fmt::Debug + Send + Sync {
    /// Reads on as far as the available input goes: more is needed, the block is not a call
    /// after all, or it is read.
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step;

    /// The name of the call being written, once the block is surely a call attempt: a stream
    /// announces the call with it before the call is whole. Asked only while the block needs
    /// more input.
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        None
    }
}

/// How a token starts its block: the reader for a block whose token begins at the first
/// argument, given the token as written.
pub(crate) type Open = fn(usize, &'static str) -> Box<dyn Reader>;

/// A family of call syntax as the scanner meets it: one row of the family table
/// (`formats/mod.rs`), declared by the family's reader in its own file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Family {
    /// Every token of the family the scanner looks for.
    pub(crate) tokens: &'static [Token],
}

/// One token a family writes, and what finding it does.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token {
    /// The token as written.
    pub(crate) text: &'static str,
    /// How many bytes of `text` lead up to what the scanner searches for; zero for most. MiniMax
    /// M3's section opens with its namespace token and `<tool_call>`: the scanner finds
    /// `<tool_call>` and checks the namespace token before it, as a search pattern beginning
    /// `]<` would slow the search of prose.
    pub(crate) lead: usize,
    /// The formats it counts for: any of them looked for enables it.
    pub(crate) formats: Formats,
    /// Whether it counts only at the start of a word (`functools[`, not `myfunctools[`).
    pub(crate) word: bool,
    pub(crate) does: Does,
}

/// What a family's token does where it counts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Does {
    /// Opens a call block, read by the reader this makes.
    Open(Open),
    /// Only wraps the answer or the family's calls: removed.
    Drop,
    /// Opens the family's own thought; its closing token is looked for as well.
    Think(Thought),
}

impl Token {
    const fn new(text: &'static str, formats: Formats, does: Does) -> Self {
        Self {
            text,
            lead: 0,
            formats,
            word: false,
            does,
        }
    }

    /// A token that opens a block of `format`'s calls, read by the reader `open` makes.
    pub(crate) const fn opens(text: &'static str, format: Format, open: Open) -> Self {
        Self::new(text, Formats::of(format), Does::Open(open))
    }

    /// A token that only wraps the answer or `format`'s calls: removed when `format` is
    /// looked for.
    pub(crate) const fn dropped(text: &'static str, format: Format) -> Self {
        Self::new(text, Formats::of(format), Does::Drop)
    }

    /// The opening token of a family's own thought, which counts whatever the formats.
    pub(crate) const fn thought(thought: Thought) -> Self {
        Self::new(thought.open, Formats::ALL, Does::Think(thought))
    }

    /// This token, counting for `format` as well.
    pub(crate) const fn or(self, format: Format) -> Self {
        Self {
            formats: self.formats.and(format),
            ..self
        }
    }

    /// This token, counting only at the start of a word.
    pub(crate) const fn word(self) -> Self {
        Self { word: true, ..self }
    }

    /// This token, found as what follows its first `len` bytes.
    pub(crate) const fn lead(self, len: usize) -> Self {
        Self { lead: len, ..self }
    }
}

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
    /// Whether the block's text stays in the display text (a malformed call, tags that are
    /// not stripped) rather than being cut out. A call cut off by the end of the output is cut
    /// out: its text is only in its error.
    pub(crate) keep_text: bool,
}

impl Outcome {
    /// A block ending at `end` with these items; kept as text when any item is an error other
    /// than a call cut off.
    pub(crate) fn new(end: usize, items: Vec<Item>) -> Self {
        let keep_text =
            (items.iter()).any(|i| matches!(i, Item::Error(e) if e.kind != ErrorKind::Truncated));
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

    /// A block that is one error; its text is kept unless the call was cut off.
    pub(crate) fn error(
        span: Range<usize>,
        format: Format,
        kind: ErrorKind,
        message: String,
    ) -> Self {
        Self {
            end: span.end,
            items: vec![Item::error(span, format, kind, message)],
            keep_text: kind != ErrorKind::Truncated,
        }
    }
}

/// The message of a call the end of the output cut off, said the same way by every reader:
/// where the output ends (`inside the call of `add` before `</function>``), then that nothing
/// was called.
fn cut_off(place: impl Display) -> String {
    format!("the output ends {place}: the call was cut off; nothing was called")
}

/// How a model's thought is delimited in its output: `<think>…</think>`
/// ([`Thought::THINK`]), or a family's own tokens, which the family declares in its row
/// ([`Token::thought`]) or its reader hands over ([`Item::Thought`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Thought {
    /// The token that opens the thought.
    pub(crate) open: &'static str,
    /// The token that closes it.
    pub(crate) close: &'static str,
}

impl Thought {
    /// `<think>…</think>`.
    pub(crate) const THINK: Thought = Thought {
        open: "<think>",
        close: "</think>",
    };
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
