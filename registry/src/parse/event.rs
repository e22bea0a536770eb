//! What a stream parser reports: a leaf the scanner writes and the stream hands out.

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
