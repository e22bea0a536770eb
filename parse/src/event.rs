//! What a stream parser reports, which the scanner writes and the stream hands out; it imports
//! only `vocab.rs`.

use super::vocab::{ParseError, ParsedCall};

/// What a [`StreamParser`](super::StreamParser) reports as the output streams in.
///
/// Concatenating the `Text` deltas gives exactly [`Parsed::content`](super::Parsed::content) of the whole output, and
/// the `Reasoning` deltas give [`Parsed::reasoning`](super::Parsed::reasoning). Every `Call` and `Unknown` is preceded by
/// a `CallStarted` of its name; for most formats that comes as soon as the name is written.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// More text to show the user.
    Text(String),
    /// More reasoning (text inside `<think>`).
    Reasoning(String),
    /// A call of this tool is being written.
    CallStarted {
        /// The tool's name as written.
        name: String,
    },
    /// More of the raw text of the call being written (from its opening marker on), for
    /// showing progress; the arguments arrive parsed in [`StreamEvent::Call`].
    CallArgsDelta(String),
    /// A complete call of a known tool: run it.
    Call(ParsedCall),
    /// A complete call of a tool the tool set does not know: never run it.
    Unknown(ParsedCall),
    /// A call attempt that could not be read; its text follows as `Text`.
    Error(ParseError),
}

/// What [`StreamParser::push_with`](super::StreamParser::push_with) hands out: text and
/// reasoning borrowed from the parser (no allocation for them), every other event as it is.
///
/// The `Text` deltas concatenate to [`Parsed::content`](super::Parsed::content) and the
/// `Reasoning` deltas to [`Parsed::reasoning`](super::Parsed::reasoning), exactly as the
/// [`StreamEvent::Text`] and [`StreamEvent::Reasoning`] events of
/// [`push`](super::StreamParser::push) do.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamDelta<'a> {
    /// More text to show the user.
    Text(&'a str),
    /// More reasoning (text inside `<think>`).
    Reasoning(&'a str),
    /// More of the raw text of the call being written, as
    /// [`StreamEvent::CallArgsDelta`] has it.
    CallArgs(&'a str),
    /// Any other event: a call started, a call, an unknown call, an error (never
    /// [`StreamEvent::Text`], [`StreamEvent::Reasoning`] or [`StreamEvent::CallArgsDelta`]).
    Event(StreamEvent),
}

impl StreamDelta<'_> {
    /// The delta as an owned [`StreamEvent`].
    pub fn into_event(self) -> StreamEvent {
        match self {
            StreamDelta::Text(text) => StreamEvent::Text(text.to_owned()),
            StreamDelta::Reasoning(text) => StreamEvent::Reasoning(text.to_owned()),
            StreamDelta::CallArgs(text) => StreamEvent::CallArgsDelta(text.to_owned()),
            StreamDelta::Event(event) => event,
        }
    }
}
