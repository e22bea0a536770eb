//! Reading tool calls out of what a model wrote.
//!
//! Models do not always use a provider's native tool-call field. The knowledge-base bot asks for
//! response tags (`RESEARCH: rust async` on a line of its own), and local models write their calls
//! into the text in one of a dozen formats. This crate finds them all in one pass:
//!
//! | family | what the model writes | who writes it |
//! | --- | --- | --- |
//! | [`Format::Tag`] | `RESEARCH: query` lines, for tools with `#[tool(tag = "RESEARCH")]` | prompts built with the registry's `Registry::prompt_block` |
//! | [`Format::Function`] | `<function=NAME><parameter=KEY>VALUE</parameter></function>`, or `<function=NAME>{json}</function>`, optionally in `<tool_call>` or `<seed:tool_call>` | Qwen3-Coder, Seed-OSS, Functionary, Llama 3.1 custom format |
//! | [`Format::Hermes`] | `<tool_call>{"name": …, "arguments": {…}}</tool_call>` | Hermes, Qwen2.5, Qwen3, Granite 4 |
//! | [`Format::Glm`] | `<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call>` | GLM-4.5, GLM-4.6, GLM-4.7 |
//! | [`Format::Json`] | a bare `[{"name", "arguments"}]` or `{"name", "parameters"}` standing alone (the whole message, lines of their own, a fenced block); `<\|tool_call\|>[…]`, `functools[…]`, `<tools>`, `<function_call>` | Llama 3.x JSON, xLAM, Qwen2.5-Coder, Granite 3, Phi-4-mini |
//! | [`Format::PythonTag`] | `<\|python_tag\|>{"name": …, "parameters": …}` (several joined by `;`) | Llama 3.1 |
//! | [`Format::Mistral`] | `[TOOL_CALLS] [{…}]`, `[TOOL_CALLS]name[ARGS]{…}`, `[TOOL_CALLS]name{…}`, whitespace around the name | Mistral 7B v0.3, Mixtral, Mistral Small/Large, Magistral |
//! | [`Format::Pythonic`] | `[get_weather(city="Paris"), get_time()]`, `<\|python_start\|>[…]<\|python_end\|>` | Llama 3.2, Llama 4 |
//! | [`Format::DeepSeek`] | `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>…<｜tool▁sep｜>…`, also spelled with ASCII `\|`, the section's token in llama.cpp's plain spellings (`<｜tool_calls_begin｜>`), the first call's begin token missing | DeepSeek V3, R1, V3.1 |
//! | [`Format::Dsml`] | `<｜DSML｜function_calls><｜DSML｜invoke name="NAME"><｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>…` (`tool_calls` in V4; in V4.1 a space before each tag name, `<｜DSML｜ calls><｜DSML｜ invoke name="NAME">`), fullwidth and ASCII bars mixed; V4's self-closing `<｜DSML｜invoke name="NAME"/>`; the plain tags a server gives when it drops the marker (`<function_calls><invoke name="NAME">`, V4's `<tool_calls>`), read when an `<invoke` tag begins the section | DeepSeek V3.2, V4, V4.1 |
//! | [`Format::Kimi`] | `<\|tool_calls_section_begin\|><\|tool_call_begin\|>functions.NAME:0…` | Kimi K2 |
//! | [`Format::KimiK3`] | `<\|open\|>call tool="NAME" index="1"<\|sep\|><\|open\|>argument key="KEY" type="string"<\|sep\|>VALUE<\|close\|>argument<\|sep\|><\|close\|>call<\|sep\|>` in a `tools` element; `think` is reasoning, `response` content | Kimi K3 |
//! | [`Format::Harmony`] | `<\|channel\|>commentary to=functions.NAME <\|constrain\|>json<\|message\|>{…}<\|call\|>`; the `analysis` channel is reasoning | gpt-oss |
//! | [`Format::MiniMax`] | `<minimax:tool_call><invoke name="NAME"><parameter name="KEY">VALUE</parameter></invoke></minimax:tool_call>`; M3's `]<]minimax[>[<tool_call>` with `]<]minimax[>[` before every tag and the arguments as child elements, `<KEY>VALUE</KEY>` (`<item>` for a list's items) | MiniMax M2, M3 |
//! | [`Format::InternLm`] | `<\|action_start\|><\|plugin\|>{"name": …, "parameters": {…}}<\|action_end\|>` | InternLM2, InternLM2.5 |
//! | [`Format::CommandR`] | `<\|START_ACTION\|>[{"tool_call_id": "0", "tool_name": …, "parameters": {…}}]<\|END_ACTION\|>` | Command R7B, Command A |
//! | [`Format::Hunyuan`] | `<tool_calls>[{"name": …, "arguments": {…}}]</tool_calls>` | Hunyuan A13B |
//! | [`Format::Lfm2`] | `<\|tool_call_start\|>[get_weather(city="Paris")]<\|tool_call_end\|>` | Liquid LFM2 |
//! | [`Format::Gemma`] | `<start_function_call>call:NAME{key:<escape>text<escape>,n:1}<end_function_call>`, `<\|tool_call>call:NAME{key:<\|"\|>text<\|"\|>}<tool_call\|>` | FunctionGemma, Gemma 4 |
//! | [`Format::Glm4`] | `NAME` on the first line, then `{json}`, as the whole message, for a known tool | GLM-4-0414, GLM-4-9B-Chat |
//! | [`Format::React`] | an `Action: NAME` line, then `Action Input: {json}`, for a known tool; `Thought:` lines stay in the content | ReAct prompts (LangChain) |
//! | [`Format::Native`] | an OpenAI message or `tool_calls` array, read by [`any`] | any provider's API |
//!
//! `<think>…</think>` blocks are split off as [`Parsed::reasoning`], also when the chat template
//! opened the thought and only `</think>` appears; so are the families' own thoughts:
//! `<|START_THINKING|>…<|END_THINKING|>` (Command R7B, Command A),
//! `<|channel>thought…<channel|>` (Gemma 4), `<seed:think>…</seed:think>` (Seed-OSS),
//! `[THINK]…[/THINK]` (Magistral, Ministral 3), Kimi K3's `<|open|>think<|sep|>…` element and
//! gpt-oss's `analysis` channel. Tokens that only
//! wrap the answer (`<|START_RESPONSE|>…<|END_RESPONSE|>`, Hunyuan's `<answer>…</answer>`) are
//! removed. **Calls written inside a thought are not calls**: a model thinking "maybe I should
//! call search" has not called it. Set [`Options::calls_in_thinking`] to read them too. One
//! exception: a `<think>` thought the output never closes ends at its first `<tool_call>`, and
//! what follows is read as the answer, since Qwen 3.5 and GLM go from their thought to a call
//! without writing `</think>` (a stream holds the text after the tag until it knows).
//!
//! ```
//! use tool_registry_parse as parse;
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
//! - Bare JSON (or a pythonic list of calls) counts when it stands alone: the *whole* message,
//!   lines of its own among prose (it starts a line, and nothing but whitespace follows it on
//!   its last line), or a fenced ```` ```json ```` block; and it names at least one known tool
//!   (any name, without a tool list: [`AnyTool`]). JSON quoted in a sentence is prose. A stray
//!   `]` after it is dropped, and an array the output ends inside gives its complete calls.
//! - **A call the output ends inside is never a call**, in every family, in the whole text and
//!   in a stream alike: what was written of it lands in [`Parsed::errors`] as a `truncated`
//!   [`ParseError`] ("the call was cut off; nothing was called"), and only there. A
//!   call is whole once its arguments are: its JSON, pythonic or Gemma value closed, its
//!   parameter elements closed by the element or token that ends the call (`</function>`,
//!   `</invoke>`, GLM's `</tool_call>`, DeepSeek's `<｜tool▁call▁end｜>`, Kimi's
//!   `<|tool_call_end|>`). The wrapper's closing token after that (`</tool_call>` after JSON,
//!   `<|call|>`, LFM2's `<|tool_call_end|>`, `<end_function_call>`, a section's end) may be
//!   missing or cut, as servers cut stop tokens. A wrapper the output ends right after, or inside the token that
//!   should follow it, is cut off too. A tag line has no closing: it is complete where the
//!   output ends.
//! - Wrappers some fine-tunes write, `<tools>…</tools>`, `<function_call>…</function_call>` and
//!   `<function name="…">{…}</function>`, count when what they wrap is calls.
//! - A marker written inside backticks (`` `<tool_call>` ``) is a mention, not a call; so is
//!   anything inside a fenced code block of another language.
//! - A tag line is a line that starts with `TAG:` for a tool that declares `tag = "TAG"`.
//! - Syntax that prose writes too counts only for a tool of the set: GLM-4's `NAME` line and
//!   JSON as the whole message, and ReAct's `Action: NAME` line followed by `Action Input:`. A
//!   set that accepts every name makes any such call a call.
//!
//! # Content, reasoning and errors
//!
//! One policy, the same in every family, in a whole text and in a stream:
//!
//! - **Content is the text outside calls and reasoning, verbatim, in order.** Nothing is
//!   inserted and nothing removed between the pieces: `"Some text before <call> after"` gives
//!   `"Some text before  after"`, both spaces kept, and line breaks, tabs and `\r\n` stay as
//!   written. At the very start and end of the content, whitespace that holds a line break
//!   goes: it is the separator a chat template writes between its tokens and the text (the
//!   newline before `<tool_call>`, the blank line after `</think>`); spaces alone stay
//!   (`"I'll check. <call>"` keeps `"I'll check. "`). A form written as lines of its own (a tag
//!   line, an `Action:` line, a bare call standing alone, a fenced block) takes its indentation
//!   and one line break with it.
//! - **Reasoning** is the text of the thoughts, verbatim, the same rule at its ends; two
//!   thoughts are joined by a blank line, the one joint the parse makes.
//! - **No family marker appears in content, reasoning, a tool name or an argument**, unless it
//!   was written inside a complete value: a JSON string holding `</tool_call>`, a GLM value
//!   holding `</arg_value>`, a Gemma string holding `<tool_call|>`, a Kimi K2 string holding
//!   `<|tool_call_end|>` stay in their values and end nothing, as the call ends only after
//!   its value does. Tokens that only wrap an answer or a message are removed; a token the end
//!   of the output cuts (`<|open|>too`) is markup, not text.
//! - **A call cut off by the end of the output keeps the complete calls before it**, and its
//!   own text goes only into its `truncated` error, never into the content.
//! - **A malformed call's text stays in the content** (the caller can show it), with its error.
//!
//! # Where the output starts
//!
//! A chat template often appends more than the role header: `<think>` (the output starts
//! inside a thought), `<think></think>` or an empty Gemma 4 thought (the thought is closed),
//! Kimi K3's `<|open|>think<|sep|>`, Harmony's `<|start|>assistant` (the output may begin with
//! ` to=functions.NAME`). Give that tail to [`Options::generation_prompt`] and every family
//! starts in the state it leaves: reasoning cut off by the token limit stays reasoning, an
//! output that begins mid-header is read. Without it the parse detects the start: a closing
//! token of `<think>`, Kimi K3's or Mistral's thought before any opening one means the template
//! opened the thought ([`Thinking::Auto`]).
//!
//! # Types
//!
//! One rule, in `typing.rs`, that every reader uses. With a schema the declared type decides:
//! a declared string keeps the text as written (`count=5`, `True`, `None` in a pythonic or
//! Gemma call stay text); a declared number, integer or boolean is read from a quoted value
//! when it parses as one (`'25'`, `<|"|>158348<|"|>`, a JSON `"12"`); an object or array is
//! read from JSON, from JSON encoded twice, or from a Python literal. A value that fits none of
//! the declared types stays as written, for validation to report. Without a schema each
//! syntax's own typing stands: with [`AnyTool`] a value written as text is the JSON it spells
//! (or the Python literal), else the text; a quoted value is a string; JSON is as written.
//!
//! In the `<parameter=…>`-style families ([`Format::Function`], [`Format::Glm`],
//! [`Format::MiniMax`], [`Format::Dsml`]) a schema also decides where a value ends: a
//! parameter whose name the tool does not declare, written inside a value, belongs to that
//! value (vLLM's Qwen3-Coder rule), while a declared one still to come starts the next
//! parameter. Without one, the markup alone decides, as each family's reader describes.
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
//! of tools into one regex. A value read from the text nests at most [`MAX_DEPTH`] levels, the
//! registry's own bound on arguments. docs/PERFORMANCE.md has the figures.
//!
//! # Adding a family
//!
//! One new file in `formats/` and one row in its table. The file holds the family's reader, a
//! type that implements the one reader trait (`block::Reader`: its step over the input, and
//! the call's name while a stream reads it), and its row, a `FAMILY` constant: the tokens that
//! open its blocks, each with the [`Format`]s it counts for and the reader it opens, and any
//! tokens that only wrap its answer or calls and its own thought. The map of `formats/` declares
//! the file and lists `FAMILY` in `FAMILIES`; the marker automaton, the stream's held-back
//! suffix and the scanner's dispatch are built from that table. A family users can switch on
//! and off also needs its [`Format`] variant, in `vocab.rs` with its entry in `Format::ALL` (a
//! missing entry does not build), and a row in the table above. A family found by where its
//! text stands rather than by a token (a line start, the whole message) is opened by the
//! scanner itself, in `machine/text.rs`.
//!
//! # Files
//!
//! Bottom to top: a file imports only files listed before it (re-exports aside), so no circle
//! runs between them; the one exception, `typing.rs` reading Python literals and the
//! written forms of values with `formats/pythonic.rs`, goes to a leaf.
//!
//! | file | what |
//! | --- | --- |
//! | `vocab.rs` | a leaf: the results and settings ([`Parsed`], [`ParsedCall`], [`ParseError`], [`Format`], [`Formats`], [`Options`], [`Thinking`], [`LeftOut`], [`MAX_DEPTH`]) |
//! | `scan.rs` | a leaf: the input window, forward-only searches, where a value ends |
//! | `block.rs` | what the readers and the machine say to each other: the one reader trait (`Reader`), a family's row of the family table (`Family`, its `Token`s), a reader's step, a block's outcome, its calls and errors, the thoughts, what a reader asks of the tools, and `close_with`, the optional closing token after a whole call; imports only the leaves `vocab.rs` and `scan.rs` |
//! | `event.rs` | [`StreamEvent`], and [`StreamDelta`], the borrowed form `push_with` hands out |
//! | `content.rs` | display text and its joints |
//! | `typing.rs` | the one rule for types: a value as written (text, quoted, JSON), typed by the kinds its argument's schema declares |
//! | `formats/` | one reader per family, each importing only the files above and declaring its row; its own map lists the files and holds the family table (`FAMILIES`) |
//! | `markers.rs` | the markers: the family table's tokens and the scanner's own, and the automaton that finds them |
//! | `tag_set.rs` | [`TagSet`]: a tool set's tag patterns with the automaton that finds their lines |
//! | `tools.rs` | [`ToolSet`] and the sets ([`AnyTool`], [`ToolList`]; the registry's `Registry` and `Scoped` implement it in the registry's crate), which answer the readers' questions |
//! | `sink.rs` | where a parse's results go |
//! | `machine/` | the one-pass scanner whole text and streams share (listed in the folder's own map) |
//! | `stream.rs` | [`StreamParser`] |
//! | `lib.rs` | the entry points: [`text`], [`text_with`], [`tags`], [`any`], [`any_with`] |

mod block;
mod content;
mod event;
mod formats;
mod machine;
mod markers;
mod scan;
mod sink;
mod stream;
mod tag_set;
mod tools;
pub(crate) mod typing;
mod vocab;

pub use event::{StreamDelta, StreamEvent};
pub use formats::tags::{TagForm, TagTool};
pub use stream::StreamParser;
pub use tag_set::TagSet;
pub use tools::{AnyTool, ToolList, ToolListError, ToolSet};
pub use vocab::{
    ErrorKind, Format, Formats, LeftOut, MAX_DEPTH, Options, ParseError, Parsed, ParsedCall,
    Thinking,
};

/// Reads the calls, content and reasoning out of a model's text, with the default
/// [`Options`].
///
/// `tools` says which tool names exist and what their arguments' types are: a
/// registry (`tool_registry::Registry`), a [`ToolList`] read from an OpenAI-format tool list, or a
/// slice of names.
///
/// ```
/// use tool_registry_parse as parse;
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
    machine::parse_text(text, tools, options)
}

/// Reads only response tags (`TAG: argument` lines) out of a model's text.
///
/// The tags come from the tool set: a registry's tools declared with `#[tool(tag = "...")]`, or
/// a [`ToolList`] given a [`TagSet`]:
///
/// ```
/// use tool_registry_parse::{self as parse, TagForm, TagSet, TagTool, ToolList};
///
/// const SEARCH: TagForm =
///     TagForm { prefix: "SEARCH", pattern: "(.+)", groups: &["query"], example: "SEARCH: [query]" };
/// let tools = ToolList::default().with_tags(TagSet::new([TagTool::new("web_search", &SEARCH)]).unwrap());
/// let parsed = parse::tags("Let me look.\nSEARCH: rust borrow checker\n", &tools);
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
/// use tool_registry_parse as parse;
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
        && let Some(parsed) = formats::native::parse(text, &tools, options, |content| {
            text_with(content, tools, options)
        })
    {
        return parsed;
    }
    text_with(text, tools, options)
}

/// The crate's README, a tutorial, compiled as a doc test so that its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct Readme;
