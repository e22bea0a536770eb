//! The markers the scanner looks for, and the automaton that finds them in one pass: the
//! tokens of the family table ([`FAMILIES`]: what opens a call block, a token that only wraps
//! the answer, a family's thought), the scanner's own (`<think>`, fences, JSON at a line
//! start), `\nTAG:` lines, and the end-of-turn tokens `end_tokens.rs` lists. It stands above
//! the readers: it reads their rows, and no reader imports it.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::FxHashMap;

use super::block::{Does, Thought, Token};
use super::formats::FAMILIES;
use super::formats::end_tokens::END_TOKENS;
use super::formats::react::ACTION;
use super::scan::Input;

/// What a marker the automaton finds opens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    /// `<think>`.
    Think,
    /// `</think>`.
    ThinkEnd,
    /// The closing token of a family's own thought (`<|END_THINKING|>`, `<channel|>`).
    ThoughtEnd,
    /// A token of the family table: what it does is in its row.
    Token(TokenId),
    Fence,
    /// `{` or `[` at the start of a line (the marker is the `\n` before it): JSON or a call
    /// list on lines of its own.
    LineValue,
    /// `<|eot_id|>`, `<|im_end|>`, … at the end of raw output.
    EndToken,
}

/// Where a token is in the family table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TokenId {
    family: u8,
    token: u8,
}

// `TokenId` holds a row's place in bytes.
const _: () = {
    assert!(FAMILIES.len() <= 256);
    let mut family = 0;
    while family < FAMILIES.len() {
        assert!(FAMILIES[family].tokens.len() <= 256);
        family += 1;
    }
};

impl TokenId {
    /// The token's row.
    #[inline]
    pub(crate) fn token(self) -> &'static Token {
        &FAMILIES[usize::from(self.family)].tokens[usize::from(self.token)]
    }
}

/// Every token of the family table, with where it is.
fn family_tokens() -> impl Iterator<Item = (TokenId, &'static Token)> {
    FAMILIES.iter().enumerate().flat_map(|(family, row)| {
        row.tokens.iter().enumerate().map(move |(token, t)| {
            let id = TokenId {
                family: family as u8,
                token: token as u8,
            };
            (id, t)
        })
    })
}

/// Every marker the automaton searches for but the end-of-turn tokens and line starts: the
/// scanner's own and the family table's (a family's thought by its opening and its closing
/// token), in the order the automaton prefers them.
static MARKERS: LazyLock<Vec<(&'static str, Marker)>> = LazyLock::new(|| {
    let mut markers = vec![
        (Thought::THINK.open, Marker::Think),
        (Thought::THINK.close, Marker::ThinkEnd),
    ];
    for (id, token) in family_tokens().filter(|(_, token)| token.lead == 0) {
        markers.push((token.text, Marker::Token(id)));
        if let Does::Think(thought) = token.does {
            markers.push((thought.close, Marker::ThoughtEnd));
        }
    }
    markers.push(("```", Marker::Fence));
    markers
});

/// The tokens found by what follows their lead ([`Token::lead`]).
static LEAD: LazyLock<Vec<(TokenId, &'static Token)>> = LazyLock::new(|| {
    family_tokens()
        .filter(|(_, token)| token.lead > 0)
        .collect()
});

/// The token written with a lead that a hit of `token` at `at` is the end of, with where it
/// begins: MiniMax M3's section for a `<tool_call>` after its namespace token. `from` is the
/// earliest place it may begin (text not yet handed on); `enabled` says which tokens count.
pub(crate) fn with_lead(
    input: &Input<'_>,
    token: &Token,
    at: usize,
    from: usize,
    enabled: impl Fn(&Token) -> bool,
) -> Option<(TokenId, usize)> {
    LEAD.iter().find_map(|&(id, led)| {
        let start = at.checked_sub(led.lead)?;
        (start >= from
            && led.text[led.lead..] == *token.text
            && enabled(led)
            && input.bytes_from(start).starts_with(led.text.as_bytes()))
        .then_some((id, start))
    })
}

/// `{` or `[` at the start of a line and the byte after it: how JSON begins (`{"`, `[{`, a
/// line break or a space). Three bytes, like every pattern of the automaton.
const LINE_VALUES: &[&str] = &["\n{\"", "\n{\n", "\n[{", "\n[\n"];

/// The end-of-turn tokens the automaton looks for: the ones that matter before the end of the
/// output (Harmony ends each message with `<|end|>`, which also closes its analysis channel).
/// The others matter only at the end of the output, where they are looked for there
/// ([`trailing_end_tokens`](super::formats::end_tokens::trailing_end_tokens)): fewer patterns keep the automaton on its fastest search.
const SCANNED_END_TOKENS: &[&str] = &["<|end|>"];

/// Every marker and end-of-turn token, for the held-back suffix of a stream.
pub(crate) static ALL_MARKERS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    MARKERS
        .iter()
        .map(|(marker, _)| *marker)
        .chain(LEAD.iter().map(|(_, token)| token.text))
        .chain(END_TOKENS.iter().copied())
        .chain(LINE_VALUES.iter().copied())
        .collect()
});

/// Whether a byte can begin a marker: the first bytes of [`ALL_MARKERS`].
pub(crate) fn may_begin_marker(b: u8) -> bool {
    static FIRST: LazyLock<[bool; 256]> = LazyLock::new(|| {
        let mut first = [false; 256];
        for marker in ALL_MARKERS.iter() {
            first[usize::from(marker.as_bytes()[0])] = true;
        }
        first
    });
    FIRST[usize::from(b)]
}

/// Whether `text` is a proper prefix of one of [`ALL_MARKERS`] (`<tool_c`): text a stream must
/// hold back until more comes. One hash lookup.
pub(crate) fn is_marker_prefix(text: &[u8]) -> bool {
    static PREFIXES: LazyLock<rustc_hash::FxHashSet<&'static [u8]>> = LazyLock::new(|| {
        (ALL_MARKERS.iter())
            .flat_map(|m| (1..m.len()).map(move |len| &m.as_bytes()[..len]))
            .collect()
    });
    PREFIXES.contains(text)
}

pub(crate) const MAX_MARKER: usize = 32;

/// What a match of the scanning automaton found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hit {
    Marker(Marker),
    /// `TAG:`: a tag line starts here if a line starts here.
    Tag,
    /// `\nAction:`: a ReAct action line starts after the newline.
    React,
    /// `)]` at the end of a line: a pythonic call list may end here.
    ListEnd,
}

/// One automaton for every marker, `\nAction:` (ReAct) and, when the tools have tags, every
/// `\nTAG:`, so that text without calls is skipped at SIMD speed instead of stopping at every
/// `<` or `[`.
///
/// The automaton searches for the distinct first three bytes of the patterns, not the patterns
/// themselves: families share their openings (`<|`, `<｜`, `<tool`), and the SIMD search the
/// automaton uses (Teddy) takes at most 64 patterns and looks at three bytes of each anyway. A
/// hit is then checked against the patterns that begin so, in table order.
pub(crate) struct Scanner {
    automaton: AhoCorasick,
    /// For each pattern of the automaton, the index of its prefix in `candidates`
    /// ([`teddy_layout`]).
    layout: Vec<usize>,
    /// For each pattern of the automaton, the full patterns that begin with it, in table order.
    candidates: Vec<Vec<(Box<[u8]>, Hit)>>,
    /// The automaton's patterns by their opening, for the small windows of a stream, where a
    /// plain check beats the automaton's setup.
    openings: FxHashMap<[u8; PREFIX], usize>,
    /// The bytes a pattern begins with.
    first: [bool; 256],
    /// The bytes a pattern or a marker (end tokens and line starts included) begins with, and
    /// their first two bytes, one bit per pair: what a stream's plain chunk must not hold.
    plain: PlainBytes,
}

/// The first byte and the first two bytes of every pattern and marker, for
/// [`Scanner::plain`].
struct PlainBytes {
    first: [bool; 256],
    pairs: Box<[u64; 1024]>,
}

impl PlainBytes {
    fn new<'a>(patterns: impl Iterator<Item = &'a [u8]>) -> Self {
        let mut first = [false; 256];
        let mut pairs = Box::new([0u64; 1024]);
        for pattern in patterns {
            first[usize::from(pattern[0])] = true;
            if let [a, b, ..] = *pattern {
                let pair = usize::from(a) << 8 | usize::from(b);
                pairs[pair / 64] |= 1 << (pair % 64);
            }
        }
        Self { first, pairs }
    }

    #[inline]
    fn opens(&self, a: u8, b: u8) -> bool {
        let pair = usize::from(a) << 8 | usize::from(b);
        self.pairs[pair / 64] & (1 << (pair % 64)) != 0
    }
}

/// The order the automaton is given the prefixes in, as indices into them (some twice).
///
/// Its SIMD prefilter (aho-corasick's Teddy: 8 buckets, each a mask of the low and of the high
/// nybbles of its patterns' bytes at each position) puts the i-th pattern in bucket `7 - i % 8`
/// unless one with the same low nybbles is in a bucket already, and a bucket then matches any
/// byte whose nybbles its masks hold: `[/` beside `<t` also matches `[t` and `</`, and two
/// capitals from different tags can make a bucket match most lowercase letters. So each prefix
/// goes to the bucket it loosens least for prose (by a rough frequency of its bytes), each
/// bucket's prefixes at the ids that give it, and a shorter bucket's later rounds repeat its
/// first prefix, which joins it again.
fn teddy_layout(prefixes: &[&[u8]]) -> Vec<usize> {
    const BUCKETS: usize = 8;
    /// How often a byte stands in prose and code answers, roughly.
    fn weight(b: u8) -> f64 {
        match b {
            b'a'..=b'z' => 0.027,
            b' ' => 0.15,
            b'A'..=b'Z' => 0.0012,
            b'0'..=b'9' => 0.001,
            b'\n' | b'.' | b',' => 0.01,
            b'!'..=b'/' | b':'..=b'@' | b'['..=b'`' | b'{'..=b'~' => 0.001,
            _ => 0.0001,
        }
    }
    /// The nybble masks of one bucket: low and high, per position.
    #[derive(Clone, Copy, Default)]
    struct Masks([[u16; 2]; PREFIX]);
    impl Masks {
        fn with(mut self, prefix: &[u8]) -> Self {
            for (k, b) in prefix.iter().enumerate().take(PREFIX) {
                self.0[k][0] |= 1 << (b & 15);
                self.0[k][1] |= 1 << (b >> 4);
            }
            self
        }
        /// How likely a pair of prose bytes passes the masks.
        fn cost(&self) -> f64 {
            self.0
                .iter()
                .map(|[low, high]| {
                    (0..=255u8)
                        .filter(|b| low & (1 << (b & 15)) != 0 && high & (1 << (b >> 4)) != 0)
                        .map(weight)
                        .sum::<f64>()
                })
                .product()
        }
    }
    let low = |p: &[u8]| -> Vec<u8> { p.iter().map(|b| b & 15).collect() };
    let mut bins: Vec<(Masks, Vec<usize>)> = vec![(Masks::default(), Vec::new()); BUCKETS];
    for (i, prefix) in prefixes.iter().enumerate() {
        // A prefix whose low nybbles a bucket holds goes there, whatever its id.
        let forced = bins
            .iter()
            .position(|(_, members)| members.iter().any(|&m| low(prefixes[m]) == low(prefix)));
        let bin = forced.unwrap_or_else(|| {
            (0..BUCKETS)
                .min_by(|&a, &b| {
                    let grow = |k: usize| {
                        let (masks, members) = &bins[k];
                        let before = if members.is_empty() {
                            0.0
                        } else {
                            masks.cost()
                        };
                        masks.with(prefix).cost() - before
                    };
                    grow(a).total_cmp(&grow(b))
                })
                .unwrap_or(0)
        });
        bins[bin].0 = bins[bin].0.with(prefix);
        bins[bin].1.push(i);
    }
    let rounds = bins.iter().map(|(_, m)| m.len()).max().unwrap_or(0);
    let mut layout = Vec::with_capacity(rounds * BUCKETS);
    for round in 0..rounds {
        for slot in 0..BUCKETS {
            let members = &bins[BUCKETS - 1 - slot].1;
            // An empty bucket's slot repeats the first prefix, which is in its own already.
            let first = bins
                .iter()
                .find_map(|(_, m)| m.first())
                .copied()
                .unwrap_or(0);
            layout.push(
                members
                    .get(round)
                    .or(members.first())
                    .copied()
                    .unwrap_or(first),
            );
        }
    }
    layout
}

/// Windows up to this size are searched by hand.
const SMALL_WINDOW: usize = 64;

/// How many bytes of each pattern the automaton searches for: two, so that families sharing
/// an opening (`<|`, `<｜`, `<t`) are one pattern each, and the search keeps to few patterns
/// (measured: faster on prose than three bytes of more patterns).
const PREFIX: usize = 2;

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field(
                "patterns",
                &self.candidates.iter().map(Vec::len).sum::<usize>(),
            )
            .field("searched", &self.candidates.len())
            .finish_non_exhaustive()
    }
}

impl Scanner {
    /// The automaton for the markers and these tags.
    pub(crate) fn new(tags: &[String]) -> Self {
        let mut patterns: Vec<(Box<[u8]>, Hit)> = Vec::new();
        let mut add = |pattern: &[u8], hit: Hit| patterns.push((pattern.into(), hit));
        for (pattern, marker) in MARKERS.iter() {
            add(pattern.as_bytes(), Hit::Marker(*marker));
        }
        for token in SCANNED_END_TOKENS {
            add(token.as_bytes(), Hit::Marker(Marker::EndToken));
        }
        for start in LINE_VALUES {
            add(start.as_bytes(), Hit::Marker(Marker::LineValue));
        }
        add(format!("\n{ACTION}").as_bytes(), Hit::React);
        add(b")]\n", Hit::ListEnd);
        for tag in tags {
            // Without the line break: the opening is then two capitals (`RE` of `RESEARCH:`),
            // rare in prose; the scanner checks that the line starts there.
            add(format!("{tag}:").as_bytes(), Hit::Tag);
        }
        let mut openings = FxHashMap::default();
        let mut prefixes: Vec<&[u8]> = Vec::new();
        let mut candidates: Vec<Vec<(Box<[u8]>, Hit)>> = Vec::new();
        let mut first = [false; 256];
        for (pattern, hit) in &patterns {
            first[usize::from(pattern[0])] = true;
            let prefix = &pattern[..pattern.len().min(PREFIX)];
            match prefixes.iter().position(|p| *p == prefix) {
                Some(i) => candidates[i].push((pattern.clone(), *hit)),
                None => {
                    if let Ok(opening) = <[u8; PREFIX]>::try_from(prefix) {
                        openings.insert(opening, prefixes.len());
                    }
                    prefixes.push(prefix);
                    candidates.push(vec![(pattern.clone(), *hit)]);
                }
            }
        }
        let plain = PlainBytes::new(
            (patterns.iter().map(|(p, _)| &p[..])).chain(ALL_MARKERS.iter().map(|m| m.as_bytes())),
        );
        let layout = teddy_layout(&prefixes);
        // A few dozen short literals: far below every limit of the automaton builder.
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(layout.iter().map(|&i| prefixes[i]))
            .expect("the marker patterns build an automaton");
        Scanner {
            automaton,
            layout,
            candidates,
            openings,
            first,
            plain,
        }
    }

    /// The first match (leftmost, then first in table order) in `haystack`: its start and
    /// what it is. Without one, `Err` with the first offset where a pattern may begin and be cut
    /// off by the end of `haystack` (its length when there is none): the search of the next
    /// input resumes there, so a stream looks at each byte once.
    fn find(&self, haystack: &[u8]) -> Result<(usize, Hit), usize> {
        if haystack.len() <= SMALL_WINDOW {
            let mut partial = haystack.len();
            for at in 0..haystack.len() {
                let rest = &haystack[at..];
                if !self.first[usize::from(rest[0])] {
                    continue;
                }
                let Ok(opening) = <[u8; PREFIX]>::try_from(&rest[..rest.len().min(PREFIX)]) else {
                    // One byte left, which begins a pattern.
                    partial = partial.min(at);
                    continue;
                };
                if !self.plain.opens(opening[0], opening[1]) {
                    continue;
                }
                let Some(&group) = self.openings.get(&opening) else {
                    continue;
                };
                for (pattern, hit) in &self.candidates[group] {
                    if rest.starts_with(pattern) {
                        return Ok((at, *hit));
                    }
                    if pattern.starts_with(rest) {
                        partial = partial.min(at);
                    }
                }
            }
            return Err(partial);
        }
        let mut from = 0;
        loop {
            let Some(found) = self
                .automaton
                .find(aho_corasick::Input::new(haystack).span(from..haystack.len()))
            else {
                // The automaton looks for two bytes: a pattern may begin in the last one.
                let last = haystack.len() - 1;
                let partial = if self.first[usize::from(haystack[last])] {
                    last
                } else {
                    haystack.len()
                };
                return Err(partial.max(from));
            };
            let at = found.start();
            let rest = &haystack[at..];
            let mut partial = false;
            for (pattern, hit) in &self.candidates[self.layout[found.pattern().as_usize()]] {
                if rest.starts_with(pattern) {
                    return Ok((at, *hit));
                }
                partial |= pattern.starts_with(rest);
            }
            if partial {
                // Decided when more input comes: the search of the next input resumes here.
                return Err(at);
            }
            from = at + 1;
        }
    }

    /// Whether no pattern and no marker (end tokens and line starts included) can begin in
    /// `chunk`, that is, nothing in it must be held back: each byte that begins one is
    /// followed, in the chunk, by a byte that no pattern or marker has after it.
    #[inline]
    pub(crate) fn plain(&self, chunk: &[u8]) -> bool {
        let plain = &self.plain;
        // Without branches: which bytes begin something is data, and mispredicted. Most
        // chunks of text hold none of them.
        if !chunk
            .iter()
            .fold(false, |any, b| any | plain.first[usize::from(*b)])
        {
            return true;
        }
        let Some(&last) = chunk.last() else {
            return true;
        };
        // A pair that opens something begins with a byte that does.
        let mut held = plain.first[usize::from(last)];
        for pair in chunk.windows(2) {
            held |= plain.opens(pair[0], pair[1]);
        }
        !held
    }

    /// The automaton without tags, shared by every parse of tools that have none.
    #[inline]
    pub(crate) fn base() -> &'static Scanner {
        static BASE: OnceLock<Scanner> = OnceLock::new();
        BASE.get_or_init(|| Scanner::new(&[]))
    }
}

/// The next hit at or after a position, searched forward only.
#[derive(Debug, Default)]
pub(crate) struct HitCache {
    found: Option<(usize, Hit)>,
    horizon: usize,
}

impl HitCache {
    pub(crate) fn find(
        &mut self,
        scanner: &Scanner,
        input: &Input<'_>,
        from: usize,
    ) -> Option<(usize, Hit)> {
        if let Some((at, hit)) = self.found
            && at >= from
        {
            return Some((at, hit));
        }
        let start = from.max(self.horizon).min(input.end());
        match scanner.find(input.bytes_from(start)) {
            Ok((offset, hit)) => {
                let at = start + offset;
                self.found = Some((at, hit));
                self.horizon = at + 1;
            }
            Err(partial) => {
                self.found = None;
                // A pattern may start there and end past the input.
                self.horizon = start + partial;
            }
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_held_back_suffix_sees_every_marker() {
        for marker in ALL_MARKERS.iter() {
            assert!(
                may_begin_marker(marker.as_bytes()[0]),
                "{marker} begins with a byte the suffix check skips"
            );
            assert!(
                marker.len() <= MAX_MARKER,
                "{marker} is longer than the suffix check looks back"
            );
        }
    }

    /// A search without a match says where the next one must resume: at the first pattern the
    /// end cuts off, in small windows and in the automaton's.
    #[test]
    fn a_search_resumes_where_a_pattern_may_still_begin() {
        let scanner = Scanner::new(&[]);
        let (tool_call, _) = family_tokens()
            .find(|(_, token)| token.text == "<tool_call>")
            .unwrap();
        let prose = "The river rises in the hills north of the town. ".repeat(3);
        for filler in ["ab ", prose.as_str()] {
            let len = filler.len();
            assert_eq!(scanner.find(filler.as_bytes()), Err(len), "{filler:?}");
            for cut in ["<", "<tool_c", "<seed:tool_", "[TOOL_CA"] {
                let text = format!("{filler}{cut}");
                assert_eq!(scanner.find(text.as_bytes()), Err(len), "{text:?}");
            }
            // Bytes that begin a pattern but cannot go on as one are passed over.
            let text = format!("{filler}<b> `x` a < b");
            assert_eq!(scanner.find(text.as_bytes()), Err(text.len()), "{text:?}");
            let text = format!("{filler}<tool_call>{{");
            assert_eq!(
                scanner.find(text.as_bytes()),
                Ok((len, Hit::Marker(Marker::Token(tool_call)))),
                "{text:?}"
            );
        }
    }

    /// The automaton's patterns: no one is the start of another, so a hit is the one pattern
    /// that matches there, whatever the order of the family table's rows.
    #[test]
    fn no_pattern_is_the_start_of_another() {
        let mut patterns: Vec<&str> = MARKERS.iter().map(|(pattern, _)| *pattern).collect();
        patterns.extend(SCANNED_END_TOKENS.iter().chain(LINE_VALUES));
        let action = format!("\n{ACTION}");
        patterns.extend([action.as_str(), ")]\n"]);
        for (i, a) in patterns.iter().enumerate() {
            for (j, b) in patterns.iter().enumerate() {
                assert!(i == j || !b.starts_with(a), "{a:?} begins {b:?}");
            }
        }
    }

    /// A token with a lead ends with another family's token, which the automaton finds.
    #[test]
    fn a_token_with_a_lead_ends_with_a_searched_token() {
        for (_, token) in LEAD.iter() {
            let rest = &token.text[token.lead..];
            assert!(
                MARKERS.iter().any(|(pattern, _)| *pattern == rest),
                "{:?} is found by {rest:?}, which no row searches for",
                token.text
            );
        }
    }
}
