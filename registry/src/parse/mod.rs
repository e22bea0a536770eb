//! Reading tool calls out of what a model wrote.
//!
//! Models do not always use a provider's native tool-call field. The knowledge-base bot asks for
//! response tags (`RESEARCH: rust async` on a line of its own), and local models write their calls
//! into the text in one of a dozen formats. This module finds them all in one pass:
//!
//! | family | what the model writes | who writes it |
//! | --- | --- | --- |
//! | [`Format::Tag`] | `RESEARCH: query` lines, for tools with `#[tool(tag = "RESEARCH")]` | prompts built with [`Registry::prompt_block`](crate::Registry::prompt_block) |
//! | [`Format::Function`] | `<function=NAME><parameter=KEY>VALUE</parameter></function>`, or `<function=NAME>{json}</function>`, optionally in `<tool_call>` | Qwen3-Coder, Functionary, Llama 3.1 custom format |
//! | [`Format::Hermes`] | `<tool_call>{"name": …, "arguments": {…}}</tool_call>` | Hermes, Qwen2.5, Qwen3, Granite 4 |
//! | [`Format::Glm`] | `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>` | GLM-4.5, GLM-4.6, GLM-4.7 |
//! | [`Format::Json`] | a bare `[{"name", "arguments"}]` or `{"name", "parameters"}` as the whole message or in a fenced block; `<\|tool_call\|>[…]`, `functools[…]` | Llama 3.x JSON, xLAM, Qwen2.5-Coder, Granite 3, Phi-4-mini |
//! | [`Format::PythonTag`] | `<\|python_tag\|>{"name": …, "parameters": …}` (several joined by `;`) | Llama 3.1 |
//! | [`Format::Mistral`] | `[TOOL_CALLS] [{…}]`, `[TOOL_CALLS]name[ARGS]{…}`, `[TOOL_CALLS]name{…}` | Mistral 7B v0.3, Mixtral, Mistral Small/Large, Magistral |
//! | [`Format::Pythonic`] | `[get_weather(city="Paris"), get_time()]`, `<\|python_start\|>[…]<\|python_end\|>` | Llama 3.2, Llama 4 |
//! | [`Format::DeepSeek`] | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>…<｜tool▁sep｜>…` | DeepSeek V3, R1, V3.1 |
//! | [`Format::Kimi`] | `<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions.NAME:0…` | Kimi K2 |
//! | [`Format::Native`] | an OpenAI message or `tool_calls` array, read by [`any`] | any provider's API |
//!
//! `<think>…</think>` blocks are split off as [`Parsed::reasoning`], also when the chat template
//! opened the thought and only `</think>` appears. **Calls written inside a thought are not
//! calls**: a model thinking "maybe I should call search" has not called it. Set
//! [`Options::calls_in_thinking`] to read them too.
//!
//! ```
//! use tool_registry::parse;
//!
//! let tools = ["get_weather"];
//! let output = "<think>The user wants the weather.</think>\n\
//!               Let me check.\n\
//!               <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
//! let parsed = parse::text(output, &tools);
//! assert_eq!(parsed.calls[0].name, "get_weather");
//! assert_eq!(parsed.calls[0].arguments["city"], "Paris");
//! assert_eq!(parsed.content, "Let me check.");
//! assert_eq!(parsed.reasoning, "The user wants the weather.");
//! ```
//!
//! # What counts as a call
//!
//! - An explicit wrapper (`<tool_call>`, `<function=…>`, `[TOOL_CALLS]`, `<|python_tag|>`, …)
//!   is a call attempt. If the tool is unknown the call lands in [`Parsed::unknown`] and must
//!   never run; if it is malformed or cut off, a [`ParseError`] says why and the text stays in
//!   [`Parsed::content`].
//! - Bare JSON (or a pythonic list of calls) counts only when it is the *whole* message, or a
//!   fenced ```` ```json ```` block, and names at least one known tool. JSON quoted in prose
//!   is prose.
//! - A marker written inside backticks (`` `<tool_call>` ``) is a mention, not a call; so is
//!   anything inside a fenced code block of another language.
//! - A tag line is a line that starts with `TAG:` for a tool that declares `tag = "TAG"`.
//!
//! # Streaming
//!
//! [`StreamParser`] reads the same formats from a token stream and reports text, reasoning and
//! calls as they complete, holding back only a suffix that could still start a call. Its result
//! is the same as the whole-text parse for every way of splitting the output.
//!
//! # Cost
//!
//! One forward pass: an Aho-Corasick automaton (SIMD Teddy) finds the markers and, when the tools
//! have tags, the `\nTAG:` lines, so text without calls is skipped at several GB/s; every
//! look-ahead is a forward-only search, a block that turns out to be prose is read again at most
//! once, and a broken block ends where its reader stopped, so time is linear in the output, also
//! on adversarial input. Tag patterns are compiled once per set
//! of tools into one regex. docs/PERFORMANCE.md has the figures.

use std::fmt;
use std::ops::Range;

use serde::Serialize;
use serde::ser::SerializeStruct;
use serde_json::Value;

mod block;
mod content;
mod deepseek;
mod event;
mod function_tags;
mod json;
mod json_blocks;
mod kimi;
mod machine;
mod markers;
mod mistral;
mod native;
mod pythonic;
mod scan;
mod sink;
mod stream;
mod tags;
mod tools;
mod typing;

pub use event::StreamEvent;
pub use stream::StreamParser;
pub use tags::TagSet;
pub use tools::{Scoped, ToolList, ToolListError, ToolSet};

/// What a model's output contains: the calls to make, the text to show, the reasoning, and
/// what went wrong.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    /// The calls of known tools, in the order they were written.
    pub calls: Vec<ParsedCall>,
    /// What remains for the user to read: the text with calls, stripped tag lines and thinking
    /// removed, leading and trailing whitespace trimmed, and the blank lines a removed block
    /// leaves behind collapsed to at most one.
    pub content: String,
    /// The text of `<think>` blocks, joined by blank lines; empty when there were none.
    pub reasoning: String,
    /// Call attempts that could not be read: cut off, malformed, or a tag line that does not
    /// fit its pattern. Their text is kept in `content`.
    pub errors: Vec<ParseError>,
    /// Well-formed calls of tools the tool set does not know. Never execute these; tell the
    /// model which tools exist instead.
    pub unknown: Vec<ParsedCall>,
}

impl Parsed {
    /// Whether the output asked for any call, known or not.
    pub fn has_calls(&self) -> bool {
        !self.calls.is_empty() || !self.unknown.is_empty()
    }
}

impl Serialize for Parsed {
    /// `{"calls": [{"name", "arguments"}], "content", "reasoning", "errors": [{"code", "format",
    /// "message"}], "unknown": [{"name", "arguments"}]}`, the shape `toolreg parse` prints.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Parsed", 5)?;
        s.serialize_field("calls", &self.calls)?;
        s.serialize_field("content", &self.content)?;
        s.serialize_field("reasoning", &self.reasoning)?;
        s.serialize_field("errors", &self.errors)?;
        s.serialize_field("unknown", &self.unknown)?;
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

impl From<ParsedCall> for crate::ToolCall {
    /// The call as [`Registry::execute_all`](crate::Registry::execute_all) takes it.
    fn from(call: ParsedCall) -> Self {
        crate::ToolCall {
            id: call.id,
            name: call.name,
            arguments: call.arguments,
        }
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

/// The families of call syntax this module reads. See the [module documentation](self) for
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
    /// A provider's native tool calls (an OpenAI message or `tool_calls` array).
    Native,
}

impl Format {
    const ALL: [Format; 11] = [
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
        Format::Native,
    ];

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// A set of [`Format`]s to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Formats(u16);

impl Formats {
    /// Every format.
    pub const ALL: Formats = Formats(u16::MAX);
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
    /// `<think>…</think>` blocks; and when a `</think>` comes before any `<think>`, the chat
    /// template opened the thought, so everything before it is reasoning. The default.
    ///
    /// A stream cannot know whether text is the end of such a thought until it sees the
    /// `</think>` (or the end), so in this mode [`StreamParser`] holds back text that comes
    /// before any `<think>`; streams should say [`Thinking::StartsInside`] or
    /// [`Thinking::TagsOnly`] (what [`StreamParser::new`] assumes).
    #[default]
    Auto,
    /// The prompt ended with `<think>`: the output is reasoning up to the first `</think>`
    /// (all of it when there is none), then `<think>` blocks as usual. DeepSeek-R1 and QwQ
    /// templates do this.
    StartsInside,
    /// Only explicit `<think>…</think>` blocks are reasoning; a `</think>` without its opening
    /// tag is text.
    TagsOnly,
}

/// How to parse: where thinking starts, whether calls inside it count, and which formats to
/// look for.
///
/// ```
/// use tool_registry::parse::{Format, Formats, Options, Thinking};
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
}

/// Reads the calls, content and reasoning out of a model's text, with the default
/// [`Options`].
///
/// `tools` says which tool names exist and what their arguments' types are: a
/// [`Registry`](crate::Registry), a [`ToolList`] read from an OpenAI-format tool list, or a
/// slice of names.
///
/// ```
/// use tool_registry::parse;
///
/// let parsed = parse::text("[get_weather(city='Paris', days=3)]", &["get_weather"]);
/// assert_eq!(parsed.calls[0].arguments, serde_json::json!({"city": "Paris", "days": 3}));
/// assert_eq!(parsed.content, "");
///
/// // JSON quoted in prose is prose.
/// let prose = r#"Send {"name": "get_weather", "arguments": {}} to call it."#;
/// assert!(parse::text(prose, &["get_weather"]).calls.is_empty());
/// ```
pub fn text<T: ToolSet + ?Sized>(text: &str, tools: &T) -> Parsed {
    text_with(text, tools, Options::default())
}

/// [`text`] with [`Options`].
pub fn text_with<T: ToolSet + ?Sized>(text: &str, tools: &T, options: Options) -> Parsed {
    let tools: &dyn ToolSet = &tools;
    let mut machine = machine::Machine::new(tools, options, false);
    machine.run(&scan::Input::whole(text), tools);
    machine.finish();
    machine.into_parsed()
}

/// Reads only response tags (`TAG: argument` lines) out of a model's text.
///
/// ```
/// # use tool_registry::tool;
/// /// Search the web.
/// #[tool(tag = "SEARCH")]
/// fn web_search(query: String) -> String { query }
///
/// let registry = tool_registry::Registry::global();
/// let parsed = tool_registry::parse::tags("Let me look.\nSEARCH: rust borrow checker\n", registry);
/// assert_eq!(parsed.calls[0].name, "web_search");
/// assert_eq!(parsed.calls[0].arguments["query"], "rust borrow checker");
/// assert_eq!(parsed.content, "Let me look.");
/// ```
pub fn tags<T: ToolSet + ?Sized>(text: &str, tools: &T) -> Parsed {
    text_with(
        text,
        tools,
        Options::default().formats(Formats::only([Format::Tag])),
    )
}

/// Reads calls from whatever a model or provider returned: a native OpenAI message, response
/// or `tool_calls` array (as JSON text), or plain text with tags and text-format calls.
///
/// The content of a native message is parsed as text too, since servers without a tool parser
/// return the calls there.
///
/// ```
/// use tool_registry::parse;
///
/// let native = r#"{"role": "assistant", "content": null, "tool_calls": [
///     {"id": "call_1", "type": "function",
///      "function": {"name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]}"#;
/// let parsed = parse::any(native, &["get_weather"]);
/// assert_eq!(parsed.calls[0].arguments["city"], "Oslo");
/// assert_eq!(parsed.calls[0].id.as_deref(), Some("call_1"));
/// ```
pub fn any<T: ToolSet + ?Sized>(text: &str, tools: &T) -> Parsed {
    any_with(text, tools, Options::default())
}

/// [`any`] with [`Options`].
pub fn any_with<T: ToolSet + ?Sized>(text: &str, tools: &T, options: Options) -> Parsed {
    if options.formats.contains(Format::Native)
        && let Some(parsed) = native::parse(text, &tools, options)
    {
        return parsed;
    }
    text_with(text, tools, options)
}
