//! What a model is shown of the tools: tool lists in the shapes model providers expect (each
//! format builds a tool's entry once and caches it), and the tag prompt block.
//!
//! | file | what |
//! | --- | --- |
//! | `provider.rs` | the providers, the names each accepts, and the wire names written for them |
//! | `gemini.rs` | Gemini's `parameters`: the OpenAPI subset of an argument schema |
//! | `definitions.rs` | one tool's definition in each provider's shape |
//! | `lists.rs` | a request's tool list for a scope: `Registry::tools_for` |
//! | `strict.rs` | the strict-mode form of an argument schema, in OpenAI's or Anthropic's subset |
//! | `targets.rs` | [`Target`]: the formats a tool promises to fit, checked when a registry is built |
//! | `results.rs` | a call's result as the message each provider expects back |
//! | `prompt.rs` | the prompt block that teaches the response tags |

mod definitions;
pub(crate) mod gemini;
mod lists;
mod prompt;
mod provider;
mod results;
pub(crate) mod strict;
mod targets;

pub(crate) use definitions::parameters;
pub use lists::ProviderTools;
pub(crate) use lists::{Extra, ListCache, list};
pub(crate) use prompt::prompt_block;
pub(crate) use provider::wire_aliases;
pub use provider::{Provider, UnknownProvider};
pub(crate) use results::result_message;
pub use strict::StrictError;
pub(crate) use targets::check_all as check_targets;
pub use targets::{Target, TargetError};

/// The OpenAI Chat Completions `{"type": "function", "function": {...}}` object of one tool.
pub fn openai_function(tool: &crate::def::Tool) -> serde_json::Value {
    definitions::definition(tool, Provider::OpenAi)
}

/// Adds what a target cannot say as keywords to a schema's description, in brackets after the
/// description it has: `What to look for (at most 1000 characters)`. What the transforms of
/// strict mode and Gemini share.
fn describe(schema: &mut serde_json::Map<String, serde_json::Value>, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let notes = notes.join("; ");
    let description = match schema
        .get("description")
        .and_then(serde_json::Value::as_str)
    {
        Some(description) => format!("{description} ({notes})"),
        None => format!("({notes})"),
    };
    schema.insert("description".into(), description.into());
}
