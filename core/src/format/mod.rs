//! What a model is shown of the tools: tool lists in the shapes model providers expect (each
//! format builds a tool's entry once and caches it), and the tag prompt block.
//!
//! | file | what |
//! | --- | --- |
//! | `provider.rs` | the providers, the names each accepts, and the wire names written for them |
//! | `gemini.rs` | Gemini's `parameters`: the OpenAPI subset of an argument schema |
//! | `definitions.rs` | one tool's definition in each provider's shape |
//! | `tokens.rs` | what a tool list costs in prompt tokens, per provider (feature `tokens`) |
//! | `import.rs` | the reverse: a definition in any provider's shape read into a [`ToolSpec`](crate::ToolSpec) ([`Imported`]) |
//! | `lists.rs` | a request's tool list, built once per set of tools and kept (`Registry::provider_tools` picks the tools) |
//! | `mode.rs` | the forms of a list: a [`Provider`]'s plain one, or [`Strict`] ([`ListFormat`]) |
//! | `describe.rs` | what strict mode and Gemini cannot say as keywords, said in the description |
//! | `strict.rs` | the strict-mode form of an argument schema, in OpenAI's or Anthropic's subset |
//! | `targets.rs` | [`Target`]: the formats a tool promises to fit, checked when a registry is built |
//! | `parts.rs` | how each provider carries a result's blocks: its rules, and the parts they write |
//! | `results.rs` | a call's result as the message each provider expects back, built from those parts |
//! | `mcp.rs` | what only MCP has: structured output (wrapped when not an object) and its content blocks, a file as an embedded resource; written by the server, read back by a mounted MCP module |
//! | `prompt.rs` | the prompt block that teaches the response tags |
//! | `schema_budget.rs` | tests: the readers of schemas here stay within the schema walk's budget on hostile shapes |

mod definitions;
mod describe;
pub(crate) mod gemini;
mod import;
mod lists;
pub mod mcp;
mod mode;
mod parts;
mod prompt;
mod provider;
mod results;
#[cfg(test)]
mod schema_budget;
pub(crate) mod strict;
mod targets;
#[cfg(feature = "tokens")]
pub mod tokens;

pub use definitions::openai_function;
pub(crate) use definitions::parameters;
pub use import::Imported;
pub use lists::ProviderTools;
pub(crate) use lists::{Extra, ListCache, list};
pub use mode::{ListFormat, Strict};
pub(crate) use prompt::prompt_block;
pub(crate) use provider::wire_aliases;
pub use provider::{Provider, UnknownProvider};
pub use results::{McpParts, ResultMessage};
pub use strict::StrictError;
pub(crate) use targets::check_all as check_targets;
pub use targets::{Target, TargetError};
