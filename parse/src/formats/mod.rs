//! One reader per family of call syntax. Each reads one block the scanner found, in steps that
//! can stop for more input and resume, and speaks only the shared vocabulary below it
//! (`parse/vocab.rs`, `parse/block.rs`, `parse/scan.rs`, `parse/typing.rs`); none knows the scanner, the marker table or
//! the tool sets, which all stand above this folder. A reader imports another only to share
//! its values or hand over a block: the value readers `json.rs` and `pythonic.rs` (a leaf),
//! `parameters.rs` for `function.rs`, `end_tokens.rs` for the readers that look for an
//! end-of-turn token, and `hermes.rs`, whose `<tool_call>` element holds `function.rs`'s and
//! `glm.rs`'s calls too. No circle runs between these files.
//!
//! Every block reader implements the one trait [`Reader`](crate::block::Reader) (its
//! step over the input, and the call's name while a stream reads it), and a family whose blocks
//! a token opens declares a [`Family`] in its file: its tokens, the formats each counts for and
//! the reader each opens, the tokens that only wrap its answer or calls, its own thought.
//! [`FAMILIES`] below lists them; the scanner builds its automaton from that table and opens
//! what it finds through it, so a new family is **one new file and one row**: the file declares
//! the reader and its `FAMILY`, and this file gets `mod` for it and its row in [`FAMILIES`] (and
//! a line in the table of files below). What the scanner finds by where text stands rather than
//! by a token (a tag line, an `Action:` line, a whole-message or fenced value, GLM-4's name
//! line) is opened in `machine/text.rs`.
//!
//! | file | reads |
//! | --- | --- |
//! | `tags.rs` | response-tag lines, `TAG: argument`, by the tag patterns it compiles (`TagRules`) |
//! | `hermes.rs` | the `<tool_call>` element: Hermes JSON inside it, or the hand-over to `function.rs` or `glm.rs` |
//! | `function.rs` | `<function=NAME>` elements (Qwen3-Coder, Functionary, Llama 3.1), `<function name="…">` |
//! | `parameters.rs` | `<parameter=KEY>VALUE</parameter>` elements, where each value ends |
//! | `glm.rs` | GLM-4.5 and later ([`Format::Glm`](crate::Format::Glm)): `NAME<arg_key>…</arg_key><arg_value>…</arg_value>` inside a `<tool_call>` element |
//! | `glm4.rs` | GLM-4-0414 ([`Format::Glm4`](crate::Format::Glm4)): the whole-message `NAME\n{json}` |
//! | `json.rs` | JSON values as calls (`{"name", "arguments"}` and its variants) |
//! | `json_blocks.rs` | a wrapper followed by JSON values (`<|python_tag|>`, `<|tool_call|>`, `functools`), a bare whole-message value, fenced blocks |
//! | `mistral.rs` | `[TOOL_CALLS]` in its forms |
//! | `pythonic.rs` | `[f(a=1), g()]` and Python literals |
//! | `deepseek.rs` | DeepSeek's special-token section |
//! | `kimi.rs` | Kimi K2's special-token section |
//! | `kimi_k3.rs` | Kimi K3's tagged elements: its thought, the `call` elements and their typed arguments |
//! | `invoke.rs` | `<invoke name="…">` sections: MiniMax M2 and M3, DeepSeek V3.2 / V4 / V4.1 DSML |
//! | `elements.rs` | arguments as child elements named by the key (MiniMax M3), for `invoke.rs` |
//! | `sections.rs` | a token, a value of calls, an end token: InternLM, Command R, Hunyuan, LFM2 |
//! | `gemma.rs` | FunctionGemma's and Gemma 4's `call:NAME{…}` between their tokens |
//! | `react.rs` | ReAct's `Action:` / `Action Input:` lines |
//! | `harmony.rs` | gpt-oss's Harmony message headers: calls, the analysis channel |
//! | `end_tokens.rs` | the end-of-turn tokens, removed at the end of the output |
//! | `native.rs` | a provider's native tool calls (an OpenAI message, `tool_calls` array, Responses output, Anthropic blocks); the message text is handed back to the whole-text parse |

use crate::block::Family;

pub(crate) mod deepseek;
pub(crate) mod elements;
pub(crate) mod end_tokens;
pub(crate) mod function;
pub(crate) mod gemma;
pub(crate) mod glm;
pub(crate) mod glm4;
pub(crate) mod harmony;
pub(crate) mod hermes;
pub(crate) mod invoke;
pub(crate) mod json;
pub(crate) mod json_blocks;
pub(crate) mod kimi;
pub(crate) mod kimi_k3;
pub(crate) mod mistral;
pub(crate) mod native;
pub(crate) mod parameters;
pub(crate) mod pythonic;
pub(crate) mod react;
pub(crate) mod sections;
pub(crate) mod tags;

/// The family table: one row per family whose blocks a token opens. No token is the start of
/// another (a test checks it), so the order of the rows changes nothing.
pub(crate) const FAMILIES: &[Family] = &[
    harmony::FAMILY,
    hermes::FAMILY,
    function::FAMILY,
    json_blocks::FAMILY,
    kimi::FAMILY,
    kimi_k3::FAMILY,
    deepseek::FAMILY,
    invoke::FAMILY,
    gemma::FAMILY,
    sections::FAMILY,
    mistral::FAMILY,
];
