//! The text left for display (or for reasoning), built from the pieces between removed blocks.
//!
//! Rules, the same however the text arrives: leading and trailing whitespace is dropped; where a
//! block was removed, the whitespace around it becomes one joint: a blank line if either side
//! had one, a line break if either side had one, a space if either side had spaces, nothing
//! otherwise. Whitespace elsewhere is kept as written.

use super::scan::is_ws;

/// Counts of the whitespace on one side of a removed block.
#[derive(Debug, Clone, Copy, Default)]
struct Gap {
    newlines: u8,
    spaces: bool,
    crlf: bool,
}

impl Gap {
    fn of(ws: &str) -> Gap {
        let newlines = ws.bytes().filter(|b| *b == b'\n').count().min(2) as u8;
        Gap {
            newlines,
            spaces: !ws.is_empty(),
            crlf: ws.contains("\r\n"),
        }
    }
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
    pending: String,
    /// Set when a block was removed since the last visible text: the gap before it, and
    /// whether the joint must be a paragraph break.
    cut: Option<(Gap, bool)>,
}

impl Assembler {
    /// Appends text as written.
    pub(crate) fn push(&mut self, text: &str) {
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
        self.pending.push_str(&text[..first]);
        if self.started {
            match self.cut.take() {
                Some((before, paragraph)) => {
                    let after = Gap::of(&self.pending);
                    let newlines = if paragraph {
                        2
                    } else {
                        before.newlines.max(after.newlines)
                    };
                    let crlf = before.crlf || after.crlf;
                    self.out.push_str(match (newlines, crlf) {
                        (0, _) if before.spaces || after.spaces => " ",
                        (0, _) => "",
                        (1, false) => "\n",
                        (1, true) => "\r\n",
                        (_, false) => "\n\n",
                        (_, true) => "\r\n\r\n",
                    });
                }
                None => self.out.push_str(&self.pending),
            }
        }
        self.cut = None;
        self.pending.clear();
        self.started = true;
        let last = bytes.iter().rposition(|b| !is_ws(*b)).unwrap_or(first);
        self.out.push_str(&text[first..=last]);
        self.pending.push_str(&text[last + 1..]);
    }

    /// Whether `text`, pushed now, adds itself to the text as it is: there is visible text
    /// before it, no joint to make, no whitespace waiting, and it ends with a visible byte
    /// (whitespace it starts with is kept as written).
    #[inline]
    fn joins_whole(&self, text: &[u8]) -> bool {
        self.started
            && self.cut.is_none()
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
        if !self.started || self.cut.is_some() || self.emitted != self.out.len() {
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

    /// Marks a removed block here. `paragraph` forces a blank line at the joint (between two
    /// thoughts).
    pub(crate) fn cut(&mut self, paragraph: bool) {
        let gap = Gap::of(&self.pending);
        self.cut = Some(match self.cut {
            Some((before, p)) => (before, p || paragraph),
            None => (gap, paragraph),
        });
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

    /// The whole text so far (trailing whitespace is never part of it).
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
        a.into_string()
    }

    #[test]
    fn removed_blocks_leave_one_joint() {
        assert_eq!(
            build(&[Some("  Hi.\n\n"), None, Some("\n\nBye.  ")]),
            "Hi.\n\nBye."
        );
        assert_eq!(build(&[Some("Hi.\n"), None, Some("\nBye.")]), "Hi.\nBye.");
        assert_eq!(
            build(&[Some("Checking "), None, Some(" now")]),
            "Checking now"
        );
        assert_eq!(build(&[Some("a"), None, Some("b")]), "ab");
        assert_eq!(
            build(&[Some("a\n"), None, Some("\n\n\n"), None, Some("\nb")]),
            "a\nb"
        );
        assert_eq!(build(&[None, Some("\n\nonly\n"), None]), "only");
        assert_eq!(build(&[Some("keep  \n\n\n  inner")]), "keep  \n\n\n  inner");
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
