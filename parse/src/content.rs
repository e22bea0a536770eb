//! The text left for display (or for reasoning), built from the pieces between removed blocks.
//!
//! Rules, the same however the text arrives: the pieces are joined as written, in order, with
//! nothing inserted or removed between them (`"before <call> after"` gives `"before  after"`);
//! whitespace at the very start and end of the whole text is dropped when it holds a line
//! break, as it is the separator a chat template writes between its tokens and the text (the
//! newline before `<tool_call>`, the blank line after `</think>`), and kept when it is spaces
//! alone (`"I'll check. <call>"` keeps its space). The one joint that is made, not kept, is
//! between two thoughts of a reasoning text: a blank line.

use super::scan::is_ws;

/// Whether whitespace holds a line break.
fn is_break(ws: &str) -> bool {
    ws.contains(['\n', '\r'])
}

/// The most whitespace waiting before a stream's piece that [`Assembler::push_span`] hands out
/// with it.
const SPAN_WHITESPACE: usize = 32;

/// Builds display text incrementally; [`Assembler::take_range`] hands out what was added since
/// the last call, so a stream can emit exactly what the whole text will hold.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    out: String,
    emitted: usize,
    started: bool,
    /// Whitespace after the last visible text: kept if more visible text follows, dropped at
    /// the end.
    pending: String,
    /// Set when a thought ended since the last visible text: the joint is a blank line.
    paragraph: bool,
    /// A line form was cut out just before: the line break that ends it goes with it.
    eat: Eat,
}

/// The line break a cut-out line form takes with it, still to come.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Eat {
    #[default]
    Nothing,
    /// `\n`, `\r\n` or `\r`.
    LineBreak,
    /// The `\n` of a `\r\n` whose `\r` was the end of a piece.
    NewlineAfterCr,
}

impl Assembler {
    /// Appends text as written.
    pub(crate) fn push(&mut self, mut text: &str) {
        if self.eat != Eat::Nothing {
            text = self.eat_line_break(text);
        }
        let bytes = text.as_bytes();
        // A stream's usual piece.
        if self.joins_whole(bytes) {
            self.out.push_str(text);
            return;
        }
        let Some(first) = bytes.iter().position(|b| !is_ws(*b)) else {
            self.pending.push_str(text);
            return;
        };
        if !self.started {
            // Whitespace before the text with a line break in it is a template's separator;
            // spaces alone are the model's.
            if !is_break(&self.pending) && !is_break(&text[..first]) {
                self.out.push_str(&self.pending);
                self.out.push_str(&text[..first]);
            }
        } else {
            if self.paragraph {
                self.out.push_str(
                    if self.pending.contains("\r\n") || text[..first].contains("\r\n") {
                        "\r\n\r\n"
                    } else {
                        "\n\n"
                    },
                );
            } else {
                self.out.push_str(&self.pending);
                self.out.push_str(&text[..first]);
            }
        }
        self.paragraph = false;
        self.pending.clear();
        self.started = true;
        let last = bytes.iter().rposition(|b| !is_ws(*b)).unwrap_or(first);
        self.out.push_str(&text[first..=last]);
        self.pending.push_str(&text[last + 1..]);
    }

    /// `text` without the line break a cut-out line form takes with it.
    fn eat_line_break<'t>(&mut self, text: &'t str) -> &'t str {
        let rest = match (self.eat, text.as_bytes()) {
            (_, []) => return text,
            (Eat::LineBreak, [b'\r']) => {
                self.eat = Eat::NewlineAfterCr;
                return "";
            }
            (Eat::LineBreak, [b'\r', b'\n', ..]) => &text[2..],
            (Eat::LineBreak, [b'\n' | b'\r', ..]) | (Eat::NewlineAfterCr, [b'\n', ..]) => {
                &text[1..]
            }
            _ => text,
        };
        self.eat = Eat::Nothing;
        rest
    }

    /// Takes a line form just cut out as a whole line: the indentation before it and the line
    /// break after it go with it.
    pub(crate) fn take_line(&mut self) {
        let kept = self.pending.trim_end_matches([' ', '\t']).len();
        self.pending.truncate(kept);
        self.eat = Eat::LineBreak;
    }

    /// Whether `text`, pushed now, adds itself to the text as it is: there is visible text
    /// before it, no joint to make, no whitespace waiting, and it ends with a visible byte
    /// (whitespace it starts with is kept as written).
    #[inline]
    fn joins_whole(&self, text: &[u8]) -> bool {
        self.started
            && !self.paragraph
            && self.eat == Eat::Nothing
            && self.pending.is_empty()
            && text.last().is_some_and(|b| !is_ws(*b))
    }

    /// A stream's next piece of text, `text`, pushed when what it adds can be handed out as
    /// one stretch of the input: there is visible text before it, no joint to make, nothing
    /// added before it waits to be handed out, and the whitespace waiting (if any, and at most
    /// [`SPAN_WHITESPACE`] bytes) ends `before`, the input just before `text`. Returns how much
    /// of the input before `text` (the whitespace that waited) and of `text` (up to its last
    /// visible byte) the piece adds: `Some((0, 0))` when it is all whitespace, which waits in
    /// turn. `None`, with nothing pushed, otherwise. `keep` says whether the text is kept for
    /// the result.
    #[inline]
    pub(crate) fn push_span(
        &mut self,
        before: &[u8],
        text: &str,
        keep: bool,
    ) -> Option<(usize, usize)> {
        if !self.started
            || self.paragraph
            || self.eat != Eat::Nothing
            || self.emitted != self.out.len()
        {
            return None;
        }
        let held = self.pending.len();
        // Checked byte by byte, so only for a little whitespace: a long run goes through
        // `push`, which never looks at it again.
        if held > SPAN_WHITESPACE || (held > 0 && !before.ends_with(self.pending.as_bytes())) {
            return None;
        }
        let bytes = text.as_bytes();
        let Some(last) = bytes.iter().rposition(|b| !is_ws(*b)) else {
            self.pending.push_str(text);
            return Some((0, 0));
        };
        if keep {
            self.out.push_str(&self.pending);
            self.out.push_str(&text[..=last]);
            self.emitted = self.out.len();
        }
        self.pending.clear();
        if last + 1 < text.len() {
            self.pending.push_str(&text[last + 1..]);
        }
        Some((held, last + 1))
    }

    /// Marks a removed block here. `paragraph` makes the joint a blank line (between two
    /// thoughts); any other removed block leaves the text around it as it is.
    pub(crate) fn cut(&mut self, paragraph: bool) {
        self.paragraph |= paragraph && self.started;
    }

    /// Ends the text: the whitespace after its last visible text is kept unless it holds a line
    /// break (the separator before a template's token), as at its start.
    pub(crate) fn end(&mut self) {
        if self.started && !self.paragraph && !is_break(&self.pending) {
            self.out.push_str(&self.pending);
        }
        self.pending.clear();
    }

    /// Whether any visible text was added.
    pub(crate) fn started(&self) -> bool {
        self.started
    }

    /// The text added since the last call, as a range of [`slice`](Self::slice).
    #[inline]
    pub(crate) fn take_range(&mut self) -> Option<std::ops::Range<usize>> {
        if self.emitted == self.out.len() {
            return None;
        }
        let range = self.emitted..self.out.len();
        self.emitted = self.out.len();
        Some(range)
    }

    /// Text handed out by [`take_range`](Self::take_range).
    #[inline]
    pub(crate) fn slice(&self, range: std::ops::Range<usize>) -> &str {
        &self.out[range]
    }

    /// Drops the text handed out so far, keeping the buffer: for a stream that keeps no copy.
    #[inline]
    pub(crate) fn forget(&mut self) {
        self.out.clear();
        self.emitted = 0;
    }

    /// The whole text.
    pub(crate) fn into_string(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(parts: &[Option<&str>]) -> String {
        let mut a = Assembler::default();
        for part in parts {
            match part {
                Some(text) => a.push(text),
                None => a.cut(false),
            }
        }
        a.end();
        a.into_string()
    }

    #[test]
    fn removed_blocks_leave_the_text_around_them_as_written() {
        assert_eq!(
            build(&[Some("  Hi.\n\n"), None, Some("\n\nBye.  ")]),
            "  Hi.\n\n\n\nBye.  "
        );
        assert_eq!(build(&[Some("\n Hi. \n")]), "Hi.");
        assert_eq!(build(&[Some("Hi.\n"), None, Some("\nBye.")]), "Hi.\n\nBye.");
        assert_eq!(
            build(&[Some("Some text before "), None, Some(" after")]),
            "Some text before  after"
        );
        assert_eq!(build(&[Some("a"), None, Some("b")]), "ab");
        assert_eq!(
            build(&[Some("a\n"), None, Some("\n\n"), None, Some("\nb")]),
            "a\n\n\n\nb"
        );
        assert_eq!(build(&[None, Some("\n\nonly\n"), None]), "only");
        assert_eq!(build(&[Some("keep  \n\n\n  inner")]), "keep  \n\n\n  inner");
    }

    #[test]
    fn thoughts_are_joined_by_a_blank_line() {
        let mut a = Assembler::default();
        a.push("\nfirst\n");
        a.cut(true);
        a.push("  second");
        a.cut(true);
        assert_eq!(a.into_string(), "first\n\nsecond");
    }

    #[test]
    fn pieces_and_deltas_do_not_depend_on_splitting() {
        let whole = build(&[Some("one two\n\nthree "), None, Some(" four")]);
        let mut a = Assembler::default();
        let mut streamed = String::new();
        for piece in ["one ", "two\n", "\nthree", " "] {
            a.push(piece);
            if let Some(range) = a.take_range() {
                streamed.push_str(a.slice(range));
            }
        }
        a.cut(false);
        a.push(" four");
        if let Some(range) = a.take_range() {
            streamed.push_str(a.slice(range));
        }
        assert_eq!(streamed, whole);
    }
}
