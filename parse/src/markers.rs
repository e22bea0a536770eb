//! The one marker table: every token that opens a call block, thinking or a fence, and the
//! automaton that finds them (and `\nTAG:` lines, and the end-of-turn tokens `end_tokens.rs`
//! lists) in one pass. It stands above the readers: its rows name their kinds ([`Dialect`],
//! [`Section`], [`ACTION`]), and no reader imports it.

use std::sync::{LazyLock, OnceLock};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};
use rustc_hash::FxHashMap;

use super::block::Thought;
use super::formats::end_tokens::END_TOKENS;
use super::formats::gemma::Dialect;
use super::formats::react::ACTION;
use super::formats::sections::Section;
use super::scan::Input;
use super::vocab::Format;

/// The markers that open something, by first byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Marker {
    /// A thought's opening token.
    Think(Thought),
    /// `</think>`.
    ThinkEnd,
    /// The closing token of another kind of thought (`<|END_THINKING|>`, `<channel|>`).
    ThoughtEnd,
    /// `<|start|>` or `<|channel|>`: a Harmony message header.
    Harmony,
    ToolCall,
    Function,
    PythonTag,
    PythonStart,
    Granite,
    Kimi,
    KimiSingular,
    /// `<｜tool▁calls▁begin｜>` or a plain spelling of it (`<｜tool_calls_begin｜>`); `ascii`:
    /// spelled with `|`; `len`: the token's length.
    DeepSeekCalls {
        ascii: bool,
        len: u8,
    },
    /// `<｜tool▁call▁begin｜>`.
    DeepSeekCall {
        ascii: bool,
    },
    /// `<minimax:tool_call>`.
    MiniMax,
    /// `]<]minimax[>[<tool_call>`: MiniMax M3's section, every tag after the namespace token.
    /// Not in the automaton: found as `<tool_call>` with [`MINIMAX_NS`] before it.
    MiniMaxM3,
    /// A DSML section, by its index in the reader's spellings.
    Dsml(u8),
    /// `<start_function_call>` or `<|tool_call>`.
    Gemma(Dialect),
    /// A token followed by a value of calls and its end token.
    Section(Section),
    /// A token that only wraps the answer or a family's calls (`<|START_RESPONSE|>`, Hunyuan's
    /// `<answer>`, Seed-OSS's `<seed:tool_call>`): removed
    /// when `format` is looked for.
    Drop {
        len: u8,
        format: Format,
    },
    Mistral,
    Functools,
    Fence,
    /// `<tools>`, `<function_call>`: wrappers some fine-tunes write around JSON calls.
    Tools,
    FunctionCall,
    /// `<function name="…">`.
    FunctionAttr,
    /// `{` or `[` at the start of a line (the marker is the `\n` before it): JSON or a call
    /// list on lines of its own.
    LineValue,
    /// `<|eot_id|>`, `<|im_end|>`, … at the end of raw output.
    EndToken,
}

/// Every marker but the end-of-turn tokens, in the order the automaton prefers them.
const MARKERS: &[(&str, Marker)] = &[
    ("<think>", Marker::Think(Thought::Think)),
    ("</think>", Marker::ThinkEnd),
    ("<|START_THINKING|>", Marker::Think(Thought::CommandR)),
    ("<|END_THINKING|>", Marker::ThoughtEnd),
    ("<|channel>thought", Marker::Think(Thought::Gemma)),
    ("<channel|>", Marker::ThoughtEnd),
    ("<seed:think>", Marker::Think(Thought::Seed)),
    ("</seed:think>", Marker::ThoughtEnd),
    ("<|start|>", Marker::Harmony),
    ("<|channel|>", Marker::Harmony),
    ("<tool_call>", Marker::ToolCall),
    ("<function=", Marker::Function),
    ("<|python_tag|>", Marker::PythonTag),
    ("<|python_start|>", Marker::PythonStart),
    ("<|tool_call|>", Marker::Granite),
    ("<|tool_calls_section_begin|>", Marker::Kimi),
    ("<|tool_call_section_begin|>", Marker::KimiSingular),
    deepseek_calls("<｜tool▁calls▁begin｜>", false),
    // The plain spellings llama.cpp's DeepSeek parser accepts for the section's first token.
    deepseek_calls("<｜tool_calls_begin｜>", false),
    deepseek_calls("<｜tool calls begin｜>", false),
    deepseek_calls("<｜tool\\_calls\\_begin｜>", false),
    deepseek_calls("<｜tool▁calls｜>", false),
    (
        "<｜tool▁call▁begin｜>",
        Marker::DeepSeekCall { ascii: false },
    ),
    deepseek_calls("<|tool▁calls▁begin|>", true),
    ("<|tool▁call▁begin|>", Marker::DeepSeekCall { ascii: true }),
    ("<minimax:tool_call>", Marker::MiniMax),
    (
        "<start_function_call>",
        Marker::Gemma(Dialect::FunctionGemma),
    ),
    ("<|tool_call>", Marker::Gemma(Dialect::Gemma4)),
    (
        "<|action_start|><|plugin|>",
        Marker::Section(Section::InternLm),
    ),
    ("<|START_ACTION|>", Marker::Section(Section::CommandR)),
    ("<tool_calls>", Marker::Section(Section::Hunyuan)),
    ("<|tool_call_start|>", Marker::Section(Section::Lfm2)),
    (
        "<|START_RESPONSE|>",
        drop("<|START_RESPONSE|>", Format::CommandR),
    ),
    (
        "<|END_RESPONSE|>",
        drop("<|END_RESPONSE|>", Format::CommandR),
    ),
    // Seed-OSS wraps its `<function=…>` elements in these.
    (
        "<seed:tool_call>",
        drop("<seed:tool_call>", Format::Function),
    ),
    (
        "</seed:tool_call>",
        drop("</seed:tool_call>", Format::Function),
    ),
    ("<answer>", drop("<answer>", Format::Hunyuan)),
    ("</answer>", drop("</answer>", Format::Hunyuan)),
    ("<｜DSML｜function_calls>", Marker::Dsml(0)),
    ("<｜DSML｜tool_calls>", Marker::Dsml(1)),
    ("<|DSML|function_calls>", Marker::Dsml(2)),
    ("<|DSML|tool_calls>", Marker::Dsml(3)),
    ("[TOOL_CALLS]", Marker::Mistral),
    ("functools[", Marker::Functools),
    ("```", Marker::Fence),
    ("<tools>", Marker::Tools),
    ("<function_call>", Marker::FunctionCall),
    ("<function name=", Marker::FunctionAttr),
];

const fn deepseek_calls(token: &'static str, ascii: bool) -> (&'static str, Marker) {
    let len = token.len() as u8;
    (token, Marker::DeepSeekCalls { ascii, len })
}

const fn drop(token: &str, format: Format) -> Marker {
    Marker::Drop {
        len: token.len() as u8,
        format,
    }
}

/// `{` or `[` at the start of a line and the byte after it: how JSON begins (`{"`, `[{`, a
/// line break or a space). Three bytes, like every pattern of the automaton.
const LINE_VALUES: &[&str] = &["\n{\"", "\n{\n", "\n[{", "\n[\n"];

/// The end-of-turn tokens the automaton looks for: the ones that matter before the end of the
/// output (Harmony ends each message with `<|end|>`, which also closes its analysis channel).
/// The others matter only at the end of the output, where they are looked for there
/// ([`trailing_end_tokens`](super::formats::end_tokens::trailing_end_tokens)): fewer patterns keep the automaton on its fastest search.
const SCANNED_END_TOKENS: &[&str] = &["<|end|>"];

/// MiniMax M3's namespace token, written before each of its tags.
pub(crate) const MINIMAX_NS: &str = "]<]minimax[>[";

/// Markers the automaton does not search for, found by what comes before another marker: a
/// pattern beginning `]<` made the automaton's search of prose a quarter slower (markdown's
/// `](` shares its fingerprint), so M3's section is found as `<tool_call>` with its namespace
/// token before it (`Machine::namespaced` in `machine/enter.rs`).
const LOOKBEHIND: &[&str] = &["]<]minimax[>[<tool_call>"];

/// Every marker and end-of-turn token, for the held-back suffix of a stream.
pub(crate) static ALL_MARKERS: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    MARKERS
        .iter()
        .map(|(marker, _)| *marker)
        .chain(LOOKBEHIND.iter().copied())
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
        for (pattern, marker) in MARKERS {
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
        // A few dozen short literals: far below every limit of the automaton builder.
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(&prefixes)
            .expect("the marker patterns build an automaton");
        Scanner {
            automaton,
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
            for (pattern, hit) in &self.candidates[found.pattern().as_usize()] {
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
                Ok((len, Hit::Marker(Marker::ToolCall))),
                "{text:?}"
            );
        }
    }
}
