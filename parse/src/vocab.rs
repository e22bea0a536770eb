//! The vocabulary every part of the parser speaks: what a parse finds ([`Parsed`], [`ParsedCall`],
//! [`ParseError`]), the formats ([`Format`], [`Formats`]) and how to parse ([`Options`],
//! [`Thinking`]). A leaf: it depends on no other file of the parser.

use std::fmt;
use std::ops::Range;

use serde::Serialize;
use serde::ser::SerializeStruct;
use serde_json::Value;

/// What a model's output contains: the calls to make, the text to show, the reasoning, and
/// what went wrong.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// The calls of known tools, in the order they were written.
    pub calls: Vec<ParsedCall>,
    /// What remains for the user to read: the text outside calls and reasoning, verbatim and
    /// in order, only line breaks at its very start and end dropped (see the
    /// [crate documentation](crate#content-reasoning-and-errors)).
    pub content: String,
    /// The text of the thoughts (`<think>` blocks and the families' own), verbatim, joined by
    /// blank lines; empty when there were none.
    pub reasoning: String,
    /// Call attempts that could not be read: cut off, malformed, or a tag line that does not
    /// fit its pattern. A malformed attempt's text is kept in `content`; a call cut off by the
    /// end of the output is only here.
    pub errors: Vec<ParseError>,
    /// Well-formed calls of tools the tool set does not know. Never execute these; tell the
    /// model which tools exist instead.
    pub unknown: Vec<ParsedCall>,
    /// What was found past [`Options::max_calls`]: counted, not kept.
    pub left_out: LeftOut,
}

/// How many calls, calls of unknown tools and errors a parse found past
/// [`Options::max_calls`] and did not keep (each list keeps at most that many). Their text is
/// still taken out of (or kept in) the content as it would be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct LeftOut {
    /// Calls of known tools.
    pub calls: usize,
    /// Calls of tools the tool set does not know.
    pub unknown: usize,
    /// Call attempts that could not be read.
    pub errors: usize,
}

impl LeftOut {
    /// Whether nothing was left out.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

impl Parsed {
    /// Whether the output asked for any call, known or not.
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty() || !self.unknown.is_empty()
    }
}

impl Serialize for Parsed {
    /// `{"calls": [{"name", "arguments"}], "content", "reasoning", "errors": [{"code", "format",
    /// "message"}], "unknown": [{"name", "arguments"}]}`, the shape `toolreg parse` prints, with
    /// `"left_out": {"calls", "unknown", "errors"}` when something was.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Parsed", 6)?;
        s.serialize_field("calls", &self.calls)?;
        s.serialize_field("content", &self.content)?;
        s.serialize_field("reasoning", &self.reasoning)?;
        s.serialize_field("errors", &self.errors)?;
        s.serialize_field("unknown", &self.unknown)?;
        if self.left_out.is_empty() {
            s.skip_field("left_out")?;
        } else {
            s.serialize_field("left_out", &self.left_out)?;
        }
        s.end()
    }
}

/// One call found in a model's output.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedCall {
    /// The tool's name as the model wrote it (an alias resolves when the call runs).
    pub name: String,
    /// The arguments: always a JSON object. Values written as text (`<parameter=…>`, tag
    /// groups) are typed by the tool's input schema.
    pub arguments: Value,
    /// The call's id, when the format carries one (native calls, Mistral `[CALL_ID]`, Kimi).
    pub id: Option<String>,
    /// The format the call was written in.
    pub format: Format,
    /// Where the call's text is in the output, in bytes.
    pub span: Range<usize>,
}

impl Serialize for ParsedCall {
    /// `{"name", "arguments"}`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ParsedCall", 2)?;
        s.serialize_field("name", &self.name)?;
        s.serialize_field("arguments", &self.arguments)?;
        s.end()
    }
}

/// A call attempt that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What kind of problem it is.
    pub kind: ErrorKind,
    /// The format the attempt was written in.
    pub format: Format,
    /// What is wrong and what to do about it, phrased so that it can go back to the model.
    pub message: String,
    /// Where the attempt is in the output, in bytes.
    pub span: Range<usize>,
}

impl ParseError {
    /// A stable, snake_case identifier of the kind: `truncated`, `malformed`,
    /// `bad_arguments` or `tag_mismatch`.
    pub fn code(&self) -> &'static str {
        self.kind.code()
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ParseError {}

impl Serialize for ParseError {
    /// `{"code", "format", "message", "span": [start, end]}`.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("ParseError", 4)?;
        s.serialize_field("code", self.code())?;
        s.serialize_field("format", &self.format)?;
        s.serialize_field("message", &self.message)?;
        s.serialize_field("span", &[self.span.start, self.span.end])?;
        s.end()
    }
}

/// The kinds of [`ParseError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The output ends inside the call: the model ran out of tokens or was stopped.
    Truncated,
    /// The call's syntax is broken: bad JSON, a missing name, an unexpected token.
    Malformed,
    /// The call is well-formed but its arguments are not a JSON object.
    Arguments,
    /// A line starts with a tool's tag but does not fit the tag's pattern.
    TagMismatch,
}

impl ErrorKind {
    /// A stable, snake_case identifier.
    pub fn code(self) -> &'static str {
        match self {
            Self::Truncated => "truncated",
            Self::Malformed => "malformed",
            Self::Arguments => "bad_arguments",
            Self::TagMismatch => "tag_mismatch",
        }
    }
}

/// The deepest a value read from model output nests: 127 levels of lists and objects, the
/// arguments' own object counting as the first. It equals the registry's bound on a call's
/// arguments (`tool_registry::call::MAX_ARGS_DEPTH`), which is serde_json's own
/// recursion limit on text (a JSON text of 127 levels is read, one of 128 is refused), so a
/// value written in any syntax reads as deep as the same value written as JSON.
///
/// The readers that read nested values themselves keep to it: a pythonic call or Python literal
/// and a Gemma call nesting deeper are errors, and MiniMax M3's child elements below it are
/// kept as text.
pub const MAX_DEPTH: usize = tool_registry_json::depth::MAX_DEPTH;

/// The families of call syntax the parser reads. See the [module documentation](super) for
/// examples of each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Format {
    /// Response tags: `RESEARCH: query` lines.
    Tag,
    /// `<function=NAME>` with `<parameter=KEY>` blocks or a JSON body.
    Function,
    /// `<tool_call>{json}</tool_call>`.
    Hermes,
    /// `<tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value></tool_call>`.
    Glm,
    /// Bare or fenced JSON calls, `<|tool_call|>[…]`, `functools[…]`.
    Json,
    /// `<|python_tag|>` followed by JSON or pythonic calls.
    PythonTag,
    /// `[TOOL_CALLS]` in its several forms.
    Mistral,
    /// A pythonic list of calls, `[f(a=1), g()]`.
    Pythonic,
    /// DeepSeek's `<｜tool▁calls▁begin｜>` section.
    DeepSeek,
    /// Kimi K2's `<|tool_calls_section_begin|>` section.
    Kimi,
    /// Kimi K3's `<|open|>call tool="NAME" index="1"<|sep|>` elements.
    KimiK3,
    /// gpt-oss's Harmony messages: `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>`.
    Harmony,
    /// MiniMax M2's `<minimax:tool_call><invoke name="…"><parameter name="…">…` section, and
    /// M3's `]<]minimax[>[<tool_call>` section, whose arguments are child elements named by the
    /// key.
    MiniMax,
    /// DeepSeek V3.2 / V4 / V4.1's DSML section, `<｜DSML｜function_calls><｜DSML｜invoke name="…">…`
    /// (`<｜DSML｜ calls><｜DSML｜ invoke name="…">…` in V4.1).
    Dsml,
    /// InternLM2 / 2.5's `<|action_start|><|plugin|>{…}<|action_end|>`.
    InternLm,
    /// Command R7B / Command A's `<|START_ACTION|>[…]<|END_ACTION|>`.
    CommandR,
    /// Hunyuan A13B's `<tool_calls>[…]</tool_calls>`.
    Hunyuan,
    /// Liquid LFM2's `<|tool_call_start|>[f(a=1)]<|tool_call_end|>`.
    Lfm2,
    /// FunctionGemma's `<start_function_call>call:NAME{…}<end_function_call>` and Gemma 4's
    /// `<|tool_call>call:NAME{…}<tool_call|>`.
    Gemma,
    /// GLM-4-0414 / GLM-4-9B-Chat: the whole message is `NAME` on a line, then `{json}`.
    Glm4,
    /// The ReAct text form: an `Action: NAME` line, then `Action Input: {json}`.
    React,
    /// A provider's native tool calls (an OpenAI message or `tool_calls` array).
    // Stays last: `Format::ALL` is sized by it.
    Native,
}

impl Format {
    /// Every format, in the order declared: the length is the last variant's index plus one,
    /// so a variant added before [`Format::Native`] (which stays last) and missing here does
    /// not build.
    pub(crate) const ALL: [Format; Format::Native as usize + 1] = [
        Format::Tag,
        Format::Function,
        Format::Hermes,
        Format::Glm,
        Format::Json,
        Format::PythonTag,
        Format::Mistral,
        Format::Pythonic,
        Format::DeepSeek,
        Format::Kimi,
        Format::KimiK3,
        Format::Harmony,
        Format::MiniMax,
        Format::Dsml,
        Format::InternLm,
        Format::CommandR,
        Format::Hunyuan,
        Format::Lfm2,
        Format::Gemma,
        Format::Glm4,
        Format::React,
        Format::Native,
    ];

    const fn bit(self) -> u32 {
        1 << self as u32
    }
}

/// A set of [`Format`]s to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Formats(u32);

impl Formats {
    /// Every format.
    pub const ALL: Formats = Formats(u32::MAX);
    /// No format: nothing is a call (thinking is still split off).
    pub const NONE: Formats = Formats(0);

    /// Exactly these formats.
    pub fn only(formats: impl IntoIterator<Item = Format>) -> Self {
        Formats(formats.into_iter().fold(0, |bits, f| bits | f.bit()))
    }

    /// This set without `format`.
    #[must_use]
    pub fn without(self, format: Format) -> Self {
        Formats(self.0 & !format.bit())
    }

    /// This set with `format`.
    #[must_use]
    pub fn with(self, format: Format) -> Self {
        Formats(self.0 | format.bit())
    }

    /// Whether the set holds `format`.
    pub fn contains(self, format: Format) -> bool {
        self.0 & format.bit() != 0
    }

    /// The set of `format` alone, in a constant (the family table's).
    pub(crate) const fn of(format: Format) -> Self {
        Formats(format.bit())
    }

    /// This set with `format`, in a constant.
    pub(crate) const fn and(self, format: Format) -> Self {
        Formats(self.0 | format.bit())
    }

    /// Whether the two sets share a format.
    #[inline]
    pub(crate) fn meets(self, other: Formats) -> bool {
        self.0 & other.0 != 0
    }

    /// The formats in the set.
    pub fn iter(self) -> impl Iterator<Item = Format> {
        Format::ALL.into_iter().filter(move |f| self.contains(*f))
    }
}

impl Default for Formats {
    fn default() -> Self {
        Self::ALL
    }
}

/// How the output's reasoning is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Thinking {
    /// `<think>…</think>` blocks; and when a `</think>` comes before any `<think>` (or the close
    /// of Kimi K3's or Mistral's thought before any opening one), the chat template opened the
    /// thought, so everything before it is reasoning. The default.
    ///
    /// A stream cannot know whether text is the end of such a thought until it sees the
    /// `</think>` (or the end), so in this mode [`StreamParser`](super::StreamParser) holds back
    /// text that comes before any `<think>`; streams should say [`Thinking::StartsInside`] or
    /// [`Thinking::ExplicitOnly`] (what [`StreamParser::new`](super::StreamParser::new) assumes).
    #[default]
    Auto,
    /// The prompt ended with `<think>`: the output is reasoning up to the first `</think>`
    /// (all of it when there is none), then `<think>` blocks as usual. DeepSeek-R1 and QwQ
    /// templates do this.
    StartsInside,
    /// Only explicit `<think>…</think>` blocks are reasoning; a `</think>` without its `<think>`
    /// is text.
    ExplicitOnly,
}

/// How to parse: where thinking starts, whether calls inside it count, and which formats to
/// look for.
///
/// ```
/// use tool_registry_parse::{Format, Formats, Options, Thinking};
///
/// let options = Options::new()
///     .thinking(Thinking::StartsInside)
///     .formats(Formats::only([Format::Hermes, Format::Tag]));
/// # let _ = options;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub struct Options {
    /// How reasoning is delimited; [`Thinking::Auto`] by default.
    pub thinking: Thinking,
    /// Whether calls written inside `<think>` blocks are calls too. `false` by default: a model
    /// that considers a call while thinking has not decided to make it.
    pub calls_in_thinking: bool,
    /// The formats to look for; all of them by default.
    pub formats: Formats,
    /// The most calls, calls of unknown tools and errors a parse keeps, each; the rest are
    /// counted in [`Parsed::left_out`]. No bound by default; a program that runs the calls
    /// reads with its registry's `max_calls`, so one output of
    /// 400,000 calls costs no more to keep than the calls that run.
    pub max_calls: Option<usize>,
    /// The markup the generation prompt left open, read before the output: see
    /// [`Options::generation_prompt`].
    opened: Option<&'static str>,
}

impl Options {
    /// The defaults: [`Thinking::Auto`], no calls from thinking, every format.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets how reasoning is delimited.
    #[must_use]
    pub fn thinking(mut self, thinking: Thinking) -> Self {
        self.thinking = thinking;
        self
    }

    /// Sets whether calls inside `<think>` blocks count.
    #[must_use]
    pub fn calls_in_thinking(mut self, yes: bool) -> Self {
        self.calls_in_thinking = yes;
        self
    }

    /// Sets the formats to look for.
    #[must_use]
    pub fn formats(mut self, formats: Formats) -> Self {
        self.formats = formats;
        self
    }

    /// Says how the prompt ended: `prompt` is the tail the chat template appended after the
    /// conversation (its generation prompt, or the whole prompt's last few hundred bytes), from
    /// which the output's starting state is known instead of guessed.
    ///
    /// | the prompt ends with | the output starts |
    /// | --- | --- |
    /// | `<think>` (Qwen3 thinking, DeepSeek R1 / V3.1 / V3.2 / V4, Kimi K2.5+, GLM) | inside a thought, up to `</think>` |
    /// | `<think></think>`, an empty Gemma 4 thought `<\|channel>thought\n<channel\|>` | after the thought: `</think>` in the output is text |
    /// | Kimi K3's `<\|open\|>think<\|sep\|>` | inside K3's thought |
    /// | Kimi K3's `<\|open\|>response<\|sep\|>` | in the response: content |
    /// | `[THINK]` (Magistral, Ministral 3), `<\|START_THINKING\|>` (Command A), `<seed:think>` (Seed-OSS), `<\|channel>thought` (Gemma 4) | inside that family's thought |
    /// | Harmony's `<\|start\|>assistant` (gpt-oss), with or without a channel | inside a message header: the output may begin ` to=functions.NAME<\|channel\|>…` or `<\|channel\|>…` |
    /// | anything else | in text; only thoughts the output opens are reasoning ([`Thinking::ExplicitOnly`]) |
    ///
    /// Trailing whitespace of the prompt is ignored. Without it, [`Options::thinking`] decides,
    /// guessing by default ([`Thinking::Auto`]). Setting it sets [`Options::thinking`].
    ///
    /// ```
    /// use tool_registry_parse::{self as parse, Options};
    ///
    /// // The template opened the thought; the token limit cut it off.
    /// let output = "The user wants the weather in Paris. I should";
    /// let options = Options::new().generation_prompt("<|im_start|>assistant\n<think>\n");
    /// let parsed = parse::text_with(output, &["get_weather"], options);
    /// assert_eq!(parsed.reasoning, output);
    /// assert_eq!(parsed.content, "");
    ///
    /// // gpt-oss, its recipient in the role header the prompt began.
    /// let output = " to=functions.get_weather<|channel|>commentary json<|message|>{\"city\": \"Oslo\"}";
    /// let options = Options::new().generation_prompt("<|start|>assistant");
    /// let parsed = parse::text_with(output, &["get_weather"], options);
    /// assert_eq!(parsed.calls[0].arguments["city"], "Oslo");
    /// ```
    #[must_use]
    pub fn generation_prompt(mut self, prompt: &str) -> Self {
        let tail = prompt.trim_end();
        let (opened, thinking) = OPENED
            .iter()
            .find(|(end, _, _)| tail.ends_with(end))
            .map_or((None, Thinking::ExplicitOnly), |(_, opened, thinking)| {
                (*opened, *thinking)
            });
        self.opened = opened;
        self.thinking = thinking;
        self
    }

    /// The markup the generation prompt left open, which the parse reads before the output.
    pub(crate) fn opened(&self) -> Option<&'static str> {
        self.opened
    }

    /// Keeps at most `limit` calls, calls of unknown tools and errors each (see
    /// [`Options::max_calls`](Options#structfield.max_calls)).
    #[must_use]
    pub fn max_calls(mut self, limit: usize) -> Self {
        self.max_calls = Some(limit);
        self
    }
}

/// How a generation prompt may end, in order of precedence: the end, the markup to read before
/// the output (the tokens that leave it inside a thought or a header), and how thinking starts.
/// [`Options::generation_prompt`]'s table says it in words.
const OPENED: &[(&str, Option<&str>, Thinking)] = &[
    ("<think>", None, Thinking::StartsInside),
    ("</think>", None, Thinking::ExplicitOnly),
    (
        "<|open|>think<|sep|>",
        Some("<|open|>think<|sep|>"),
        Thinking::ExplicitOnly,
    ),
    ("[THINK]", Some("[THINK]"), Thinking::ExplicitOnly),
    (
        "<|START_THINKING|>",
        Some("<|START_THINKING|>"),
        Thinking::ExplicitOnly,
    ),
    ("<seed:think>", Some("<seed:think>"), Thinking::ExplicitOnly),
    (
        "<|channel>thought",
        Some("<|channel>thought"),
        Thinking::ExplicitOnly,
    ),
    (
        "<|start|>assistant",
        Some("<|start|>assistant"),
        Thinking::ExplicitOnly,
    ),
    (
        "<|start|>assistant<|channel|>analysis<|message|>",
        Some("<|start|>assistant<|channel|>analysis<|message|>"),
        Thinking::ExplicitOnly,
    ),
    (
        "<|start|>assistant<|channel|>final<|message|>",
        Some("<|start|>assistant<|channel|>final<|message|>"),
        Thinking::ExplicitOnly,
    ),
    (
        "<|start|>assistant<|channel|>commentary<|message|>",
        Some("<|start|>assistant<|channel|>commentary<|message|>"),
        Thinking::ExplicitOnly,
    ),
];
