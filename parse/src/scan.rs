//! Scanning primitives every format shares: the input window, forward-only searches, and the
//! extent of a JSON or Python value.
//!
//! Everything here is resumable: a stream feeds more input and the scan goes on from where it
//! stopped, so no byte is looked at twice and the whole parse stays linear.

use std::ops::{ControlFlow, Range};

use memchr::memmem;

/// The part of the output the parser can see. Positions are absolute byte offsets into the
/// whole output; `text` starts at `base`. `eof` says no more input will come.
#[derive(Clone, Copy)]
pub(crate) struct Input<'a> {
    text: &'a str,
    base: usize,
    eof: bool,
}

/// Whether the input at a position starts with a given string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefix {
    Yes,
    No,
    /// The input ends inside a match: more input will tell.
    Partial,
}

impl<'a> Input<'a> {
    /// A whole output.
    pub(crate) fn whole(text: &'a str) -> Self {
        Self {
            text,
            base: 0,
            eof: true,
        }
    }

    /// The window `text` of a stream, starting at `base`.
    #[inline]
    pub(crate) fn window(text: &'a str, base: usize, eof: bool) -> Self {
        Self { text, base, eof }
    }

    pub(crate) fn eof(&self) -> bool {
        self.eof
    }

    /// The position just past the available input.
    #[inline]
    pub(crate) fn end(&self) -> usize {
        self.base + self.text.len()
    }

    /// The bytes from `at` to the end of the available input.
    #[inline]
    pub(crate) fn bytes_from(&self, at: usize) -> &'a [u8] {
        &self.text.as_bytes()[at - self.base..]
    }

    /// The available bytes before `at`.
    #[inline]
    pub(crate) fn bytes_before(&self, at: usize) -> &'a [u8] {
        &self.text.as_bytes()[..at - self.base]
    }

    /// The byte at `at`, if it is available.
    pub(crate) fn byte(&self, at: usize) -> Option<u8> {
        at.checked_sub(self.base)
            .and_then(|i| self.text.as_bytes().get(i).copied())
    }

    /// The text between two positions.
    #[inline]
    pub(crate) fn str(&self, range: Range<usize>) -> &'a str {
        &self.text[range.start - self.base..range.end - self.base]
    }

    /// Whether the input at `at` starts with `pattern`.
    pub(crate) fn prefix(&self, at: usize, pattern: &[u8]) -> Prefix {
        let available = self.bytes_from(at);
        if available.len() >= pattern.len() {
            if available.starts_with(pattern) {
                Prefix::Yes
            } else {
                Prefix::No
            }
        } else if !self.eof && pattern.starts_with(available) {
            Prefix::Partial
        } else {
            Prefix::No
        }
    }

    /// Whether the output ends at `at`: no more input will come, and `at` is its end.
    pub(crate) fn ends_at(&self, at: usize) -> bool {
        self.eof && at == self.end()
    }

    /// Whether the output ends at `at` or inside `pattern` written there: no more input will
    /// come, and what is left from `at` is a proper prefix of it (nothing, at the end). Where a
    /// reader expects a token, the end of the output cut the call off there.
    pub(crate) fn ends_inside(&self, at: usize, pattern: &[u8]) -> bool {
        let available = self.bytes_from(at);
        self.eof && available.len() < pattern.len() && pattern.starts_with(available)
    }

    /// The first position at or after `at` that is not ASCII whitespace (the end if none).
    pub(crate) fn skip_ws(&self, at: usize) -> usize {
        at + self
            .bytes_from(at)
            .iter()
            .take_while(|b| is_ws(**b))
            .count()
    }
}

/// The calls of a special-token section (DeepSeek, Kimi) whose arguments are JSON after an `arguments` token (Kimi's
/// `<|tool_call_argument_begin|>`, DeepSeek's `<｜tool▁sep｜>`): for each `begin` in `text`, the
/// text up to its `end` (or to the end of `text` when it never comes), its offset in `text`,
/// and whether its `end` came. The `end` is looked for after the JSON value, so that a string
/// holding the end token (a tokenizer writes the token there too) does not end the call.
/// `cut`: the end of the output cut the section, so a value it never closes was cut off.
pub(crate) fn delimited_json<'t>(
    text: &'t str,
    begin: &'static str,
    arguments: &'static str,
    end: &'static str,
    cut: bool,
) -> impl Iterator<Item = (&'t str, usize, bool)> + 't {
    let mut offset = 0;
    std::iter::from_fn(move || {
        let start = offset + text[offset..].find(begin)? + begin.len();
        let first_end = text[start..].find(end).map(|i| start + i);
        let mut search = start;
        if let Some(i) = text[start..first_end.unwrap_or(text.len())].find(arguments) {
            let from = start + i + arguments.len();
            let limit = first_end.unwrap_or(text.len());
            if let Some(j) = text[from..limit].find(['{', '[']) {
                let input = Input::whole(text);
                match Extent::new(from + j).scan(&input) {
                    Some(after) => search = after,
                    // `cut`: the output ended inside the section, and so inside the value.
                    None if cut => {
                        offset = text.len();
                        return Some((&text[start..], start, false));
                    }
                    None => {}
                }
            }
        }
        Some(match text[search..].find(end) {
            Some(len) => {
                offset = search + len + end.len();
                (&text[start..search + len], start, true)
            }
            None => {
                offset = text.len();
                (&text[start..], start, false)
            }
        })
    })
}

/// The most punctuation bytes read as a separator between two values.
const MAX_JUNK: usize = 2;

/// A punctuation byte that may separate two values: not a quote, a bracket or `<` (which
/// begins a token), nor a byte that begins a value.
fn is_junk(b: u8) -> bool {
    b.is_ascii_punctuation()
        && !matches!(
            b,
            b'"' | b'\'' | b'`' | b'(' | b')' | b'[' | b']' | b'{' | b'}' | b'<' | b'>'
        )
}

/// ASCII whitespace, the only whitespace the parser trims or collapses.
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// A forward-only search for one needle. Queries must not go backwards; each byte of the
/// input is searched at most once, however often the search is resumed.
#[derive(Debug, Clone)]
pub(crate) struct Finder {
    needle: &'static [u8],
    found: Option<usize>,
    horizon: usize,
}

impl Finder {
    pub(crate) fn new(needle: &'static str) -> Self {
        Self {
            needle: needle.as_bytes(),
            found: None,
            horizon: 0,
        }
    }

    /// Where a block whose body starts at `body` closes with this needle: the end of the body,
    /// the end of the block, and whether the needle came (at the end of the output a block may
    /// stay open and runs to the end). `None`: more input will tell.
    pub(crate) fn closing(
        &mut self,
        input: &Input<'_>,
        body: usize,
    ) -> Option<(usize, usize, bool)> {
        match self.find(input, body) {
            Some(at) => Some((at, at + self.needle.len(), true)),
            None if input.eof() => Some((input.end(), input.end(), false)),
            None => None,
        }
    }

    /// The first match at or after `from` in the available input.
    pub(crate) fn find(&mut self, input: &Input<'_>, from: usize) -> Option<usize> {
        if let Some(found) = self.found
            && found >= from
        {
            return Some(found);
        }
        let start = from.max(self.horizon).min(input.end());
        match memmem::find(input.bytes_from(start), self.needle) {
            Some(i) => {
                self.found = Some(start + i);
                self.horizon = start + i + 1;
                self.found
            }
            None => {
                self.found = None;
                self.horizon = start.max((input.end() + 1).saturating_sub(self.needle.len()));
                None
            }
        }
    }
}

/// The extent of one bracketed value: `{…}`, `[…]` or `(…)`, with JSON and Python strings
/// (double or single quotes, backslash escapes) skipped. Brackets are counted, not matched by
/// kind: the real parser checks the value afterwards.
#[derive(Debug, Clone)]
pub(crate) struct Extent {
    pos: usize,
    depth: u32,
    quote: u8,
    escape: bool,
}

impl Extent {
    /// A value whose opening bracket is at `start`.
    pub(crate) fn new(start: usize) -> Self {
        Self {
            pos: start,
            depth: 0,
            quote: 0,
            escape: false,
        }
    }

    /// Scans on; the position just past the closing bracket once the value is complete.
    pub(crate) fn scan(&mut self, input: &Input<'_>) -> Option<usize> {
        let bytes = input.bytes_from(self.pos);
        let mut i = 0;
        while i < bytes.len() {
            if self.quote != 0 {
                if self.escape {
                    self.escape = false;
                    i += 1;
                    continue;
                }
                match memchr::memchr2(self.quote, b'\\', &bytes[i..]) {
                    None => {
                        i = bytes.len();
                        break;
                    }
                    Some(k) => {
                        i += k;
                        if bytes[i] == b'\\' {
                            self.escape = true;
                        } else {
                            self.quote = 0;
                        }
                        i += 1;
                    }
                }
                continue;
            }
            match bytes[i] {
                q @ (b'"' | b'\'') => self.quote = q,
                b'{' | b'[' | b'(' => self.depth += 1,
                b'}' | b']' | b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        self.pos += i + 1;
                        return Some(self.pos);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.pos += i;
        None
    }
}

/// How a sequence of values ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeqEnd {
    NeedMore,
    /// The sequence is over: `at` is the first byte after it (past whitespace and
    /// separators); `complete` is false when the input ended inside a value.
    Ended {
        at: usize,
        complete: bool,
    },
}

#[derive(Debug, Clone)]
enum SeqState {
    Before,
    Ident { start: usize },
    Value { start: usize, extent: Extent },
    After,
}

/// A sequence of values: JSON objects and arrays, Python literals, and (with `python`) calls
/// `name(…)`, separated by whitespace, `;` or `,` (when `multi`), or by up to [`MAX_JUNK`]
/// other punctuation bytes ([`is_junk`]) before another value.
#[derive(Debug, Clone)]
pub(crate) struct Values {
    /// The values found so far.
    pub(crate) spans: Vec<Range<usize>>,
    state: SeqState,
    cursor: usize,
    python: bool,
    multi: bool,
}

impl Values {
    /// A sequence starting at `at` (whitespace before the first value is skipped).
    pub(crate) fn new(at: usize, python: bool, multi: bool) -> Self {
        Self {
            spans: Vec::new(),
            state: SeqState::Before,
            cursor: at,
            python,
            multi,
        }
    }

    /// Where the last complete value ends.
    pub(crate) fn last_end(&self) -> Option<usize> {
        self.spans.last().map(|s| s.end)
    }

    /// Where the value being scanned started, when the input ran out inside it.
    pub(crate) fn open_start(&self) -> Option<usize> {
        match &self.state {
            SeqState::Ident { start } | SeqState::Value { start, .. } => Some(*start),
            _ => None,
        }
    }

    /// Whether `b` can start a value.
    pub(crate) fn starts_value(b: u8, python: bool) -> bool {
        matches!(b, b'{' | b'[') || (python && (b.is_ascii_alphabetic() || b == b'_'))
    }

    /// Scans on.
    pub(crate) fn scan(&mut self, input: &Input<'_>) -> SeqEnd {
        loop {
            let flow = match &mut self.state {
                SeqState::Before => self.before(input),
                &mut SeqState::Ident { start } => self.ident(input, start),
                SeqState::Value { start, extent } => match extent.scan(input) {
                    Some(end) => {
                        self.spans.push(*start..end);
                        self.cursor = end;
                        self.state = SeqState::After;
                        ControlFlow::Continue(())
                    }
                    None if input.eof() => ControlFlow::Break(SeqEnd::Ended {
                        at: input.end(),
                        complete: false,
                    }),
                    None => ControlFlow::Break(SeqEnd::NeedMore),
                },
                SeqState::After => self.after(input),
            };
            if let ControlFlow::Break(end) = flow {
                return end;
            }
        }
    }

    /// Before a value: a call's name, a value, or the end of the sequence.
    fn before(&mut self, input: &Input<'_>) -> ControlFlow<SeqEnd> {
        let at = input.skip_ws(self.cursor);
        self.cursor = at;
        let Some(b) = input.byte(at) else {
            return ControlFlow::Break(self.out_of_input(input, at));
        };
        if !Self::starts_value(b, self.python) {
            return ControlFlow::Break(SeqEnd::Ended { at, complete: true });
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            self.state = SeqState::Ident { start: at };
        } else {
            self.state = SeqState::Value {
                start: at,
                extent: Extent::new(at),
            };
        }
        ControlFlow::Continue(())
    }

    /// A word that started at `start`: a call when `(` follows it, else the end of the sequence.
    fn ident(&mut self, input: &Input<'_>, start: usize) -> ControlFlow<SeqEnd> {
        let name_len = input
            .bytes_from(self.cursor)
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
            .count();
        self.cursor += name_len;
        match input.byte(self.cursor) {
            None if !input.eof() => ControlFlow::Break(SeqEnd::NeedMore),
            // A name the output ends in: a call cut off before its `(`.
            None => ControlFlow::Break(SeqEnd::Ended {
                at: input.end(),
                complete: false,
            }),
            Some(b'(') => {
                self.state = SeqState::Value {
                    start,
                    extent: Extent::new(self.cursor),
                };
                ControlFlow::Continue(())
            }
            _ => {
                // Not a call: the sequence ends before this word.
                self.state = SeqState::After;
                self.cursor = start;
                ControlFlow::Break(SeqEnd::Ended {
                    at: start,
                    complete: true,
                })
            }
        }
    }

    /// After a value: a separator and another value, or the end of the sequence.
    fn after(&mut self, input: &Input<'_>) -> ControlFlow<SeqEnd> {
        // One value is all there is: done at its last byte, without waiting to see what follows.
        if !self.multi {
            return ControlFlow::Break(SeqEnd::Ended {
                at: self.cursor,
                complete: true,
            });
        }
        let at = input.skip_ws(self.cursor);
        self.cursor = at;
        let Some(b) = input.byte(at) else {
            return ControlFlow::Break(self.out_of_input(input, at));
        };
        if matches!(b, b';' | b',') {
            // The next value may follow after whitespace; a trailing separator belongs to the
            // sequence.
            self.cursor = at + 1;
            self.state = SeqState::Before;
        } else if matches!(b, b'{' | b'[') {
            self.state = SeqState::Before;
        } else {
            // Other punctuation between two values (`} | {`), as vLLM's Llama 3 parser steps
            // over whatever two characters follow a value: taken when a value follows it.
            let junk = (input.bytes_from(at).iter())
                .take(MAX_JUNK + 1)
                .take_while(|b| is_junk(**b))
                .count();
            if junk == 0 || junk > MAX_JUNK {
                return ControlFlow::Break(SeqEnd::Ended { at, complete: true });
            }
            let next = input.skip_ws(at + junk);
            match input.byte(next) {
                None if !input.eof() => return ControlFlow::Break(SeqEnd::NeedMore),
                Some(b'{' | b'[') => {
                    self.cursor = next;
                    self.state = SeqState::Before;
                }
                _ => return ControlFlow::Break(SeqEnd::Ended { at, complete: true }),
            }
        }
        ControlFlow::Continue(())
    }

    fn out_of_input(&self, input: &Input<'_>, at: usize) -> SeqEnd {
        if input.eof() {
            SeqEnd::Ended { at, complete: true }
        } else {
            SeqEnd::NeedMore
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extent_of(text: &str) -> Option<usize> {
        Extent::new(0).scan(&Input::whole(text))
    }

    #[test]
    fn extent_skips_strings_and_escapes() {
        // The object closes at byte 25; the extent ends after it.
        assert_eq!(extent_of(r#"{"a": "}\"}", "b": ['x]']} tail"#), Some(26));
        assert_eq!(extent_of("[f(a='(', b=\"[\")] x"), Some(17));
        assert_eq!(extent_of("{\"open\": [1, 2"), None);
    }

    #[test]
    fn extent_resumes_across_chunks() {
        let text = r#"{"a": "x\"y", "b": [1, {"c": 2}]}"#;
        for split in 0..text.len() {
            let mut extent = Extent::new(0);
            assert_eq!(extent.scan(&Input::window(&text[..split], 0, false)), None);
            assert_eq!(extent.scan(&Input::window(text, 0, true)), Some(text.len()));
        }
    }

    #[test]
    fn finder_resumes_without_rescanning() {
        let text = "aaa</think>bbb</think>";
        let mut finder = Finder::new("</think>");
        assert_eq!(finder.find(&Input::window(&text[..6], 0, false), 0), None);
        assert_eq!(finder.find(&Input::window(text, 0, true), 0), Some(3));
        assert_eq!(finder.find(&Input::window(text, 0, true), 4), Some(14));
        assert_eq!(finder.find(&Input::window(text, 0, true), 15), None);
    }

    #[test]
    fn values_resume_after_a_separator_at_a_chunk_end() {
        let text = "[a'b'), get_time(); {\"c\": 1}";
        let mut whole = Values::new(0, true, true);
        let expected = whole.scan(&Input::whole(text));
        for split in 0..=text.len() {
            let mut values = Values::new(0, true, true);
            if values.scan(&Input::window(&text[..split], 0, false)) == SeqEnd::NeedMore {
                assert_eq!(
                    values.scan(&Input::whole(text)),
                    expected,
                    "split at {split}"
                );
            }
            assert_eq!(values.spans, whole.spans, "split at {split}");
        }
    }

    #[test]
    fn values_split_on_separators() {
        let text = r#"{"a": 1}; {"b": 2}  [3] tail"#;
        let mut values = Values::new(0, false, true);
        assert_eq!(
            values.scan(&Input::whole(text)),
            SeqEnd::Ended {
                at: 24,
                complete: true
            }
        );
        assert_eq!(values.spans, vec![0..8, 10..18, 20..23]);

        let mut calls = Values::new(0, true, true);
        assert_eq!(
            calls.scan(&Input::whole("get(a=1); put()")),
            SeqEnd::Ended {
                at: 15,
                complete: true
            }
        );
        assert_eq!(calls.spans, vec![0..8, 10..15]);
    }
}
