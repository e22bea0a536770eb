//! One reader per family of call syntax. Each reads one block the scanner found, in steps that
//! can stop for more input and resume, and speaks only the shared vocabulary (`vocab.rs`,
//! `block.rs`, `scan.rs`); none knows the scanner or another family's reader, except that the
//! JSON family's value reading (`json.rs`) and the Python literal reader (`pythonic.rs`) serve
//! the readers that meet JSON or Python values inside their blocks.
//!
//! | file | reads |
//! | --- | --- |
//! | `tags.rs` | response-tag lines, `TAG: argument` |
//! | `markup.rs` | XML-like markup: `<tool_call>` elements (Hermes JSON, GLM `<arg_key>`) and `<function=…>` elements with `<parameter=…>` |
//! | `parameters.rs` | `<parameter=KEY>VALUE</parameter>` elements, where each value ends |
//! | `json.rs` | JSON values as calls (`{"name", "arguments"}` and its variants) |
//! | `json_blocks.rs` | a wrapper followed by JSON values (`<|python_tag|>`, `<|tool_call|>`, `functools`), a bare whole-message value, fenced blocks |
//! | `mistral.rs` | `[TOOL_CALLS]` in its forms |
//! | `pythonic.rs` | `[f(a=1), g()]` and Python literals |
//! | `deepseek.rs` | DeepSeek's special-token section |
//! | `kimi.rs` | Kimi K2's special-token section |
//! | `invoke.rs` | `<invoke name="…">` sections: MiniMax M2, DeepSeek V3.2 / V4 DSML |
//! | `sections.rs` | a token, a value of calls, an end token: InternLM, Command R, Hunyuan, LFM2 |
//! | `gemma.rs` | FunctionGemma's and Gemma 4's `call:NAME{…}` between their tokens |
//! | `glm.rs` | GLM-4.5 and later: `NAME<arg_key>…</arg_key><arg_value>…</arg_value>` inside a `<tool_call>` element |
//! | `glm4.rs` | GLM-4-0414's whole-message `NAME\n{json}` |
//! | `react.rs` | ReAct's `Action:` / `Action Input:` lines |
//! | `harmony.rs` | gpt-oss's Harmony message headers: calls, the analysis channel |
//! | `end_tokens.rs` | end-of-turn tokens at the end of the output |
//! | `native.rs` | a provider's native tool calls (an OpenAI message, `tool_calls` array, Responses output, Anthropic blocks) |

pub(crate) mod deepseek;
pub(crate) mod end_tokens;
pub(crate) mod gemma;
pub(crate) mod glm;
pub(crate) mod glm4;
pub(crate) mod harmony;
pub(crate) mod invoke;
pub(crate) mod json;
pub(crate) mod json_blocks;
pub(crate) mod kimi;
pub(crate) mod markup;
pub(crate) mod mistral;
pub(crate) mod native;
pub(crate) mod parameters;
pub(crate) mod pythonic;
pub(crate) mod react;
pub(crate) mod sections;
pub(crate) mod tags;
