//! What a registry offers besides tools, for MCP clients: resources (data a client reads by
//! URI), resource templates (a family of resources under a URI template), prompts (messages
//! a person picks and fills in), and completion of their arguments.
//!
//! They are declared the way tools are, with an attribute on a function in the application
//! crate, collected in the same static registry, and registrable at run time
//! ([`Registry::register_resource`](crate::Registry::register_resource),
//! [`Registry::register_prompt`](crate::Registry::register_prompt)):
//!
//! ```
//! use tool_registry::offer::PromptMessage;
//! use tool_registry::{prompt, resource};
//!
//! /// The message of the day.
//! #[resource(uri = "notes://motd", mime_type = "text/plain")]
//! async fn motd() -> String {
//!     "Deploys are frozen until Monday.".into()
//! }
//!
//! /// One note, by its id.
//! #[resource(uri = "notes://note/{id}", mime_type = "text/markdown", complete(id = note_ids))]
//! async fn note(id: String) -> Result<String, std::io::Error> {
//!     Ok(format!("# Note {id}"))
//! }
//!
//! fn note_ids(typed: &str) -> Vec<String> {
//!     ["1", "2", "10"].into_iter().filter(|id| id.starts_with(typed)).map(Into::into).collect()
//! }
//!
//! /// Ask for a review of some code.
//! #[prompt(complete(language = languages))]
//! async fn review(
//!     #[arg(desc = "The code to review.")] code: String,
//!     #[arg(desc = "The language it is written in.")] language: Option<String>,
//! ) -> Vec<PromptMessage> {
//!     let language = language.unwrap_or_else(|| "an unnamed language".into());
//!     vec![PromptMessage::user(format!("Review this code, written in {language}:\n{code}"))]
//! }
//!
//! fn languages(typed: &str) -> Vec<String> {
//!     ["python", "rust"].into_iter().filter(|l| l.starts_with(typed)).map(Into::into).collect()
//! }
//! ```
//!
//! Each is seen under the same rules as a tool: its permission level (`permission = "admin"`)
//! and the module rule on the part of its name before the first `.`; what a caller may not
//! see does not exist for it (the same error, with the same text, as what does not exist).
//! A read and a prompt run with the registry's timeout and panic isolation, their contents
//! are checked against its content limits, and each is audited (`resource:URI`,
//! `prompt:NAME`). A template variable is percent-decoded and refused when it holds a `/`, a
//! `\`, a control character, or is `.` or `..` ([`check_variable`]).
//!
//! | file | what |
//! | --- | --- |
//! | `error.rs` | [`OfferError`] |
//! | `template.rs` | [`UriTemplate`]: a template's literal parts and variables, matching a URI, [`check_variable`] |
//! | `complete.rs` | [`Completer`], [`CompletionRequest`], [`Completion`] |
//! | `about.rs` | what a resource and a prompt both are (name, title, description, permission, completers) and their builder methods and getters, written once |
//! | `resource.rs` | [`ResourceSpec`], [`ReadRequest`], [`IntoContents`] |
//! | `prompt.rs` | [`PromptSpec`], [`PromptArgument`], [`PromptMessage`], [`GetRequest`], [`IntoMessages`] |
//! | `set.rs` | the resources, templates and prompts of a registry, sorted; the linked ones |

mod about;
mod complete;
mod error;
mod prompt;
mod resource;
pub(crate) mod set;
mod template;

pub use complete::{
    Completer, Completion, CompletionRequest, CompletionTarget, MAX_COMPLETIONS, completer,
    from_values,
};
pub use error::OfferError;
pub use prompt::{
    GetFuture, GetRequest, IntoMessages, PromptArgument, PromptMessage, PromptSpec, Role,
};
pub use resource::{IntoContents, ReadFuture, ReadRequest, ResourceSpec};
pub use template::{MAX_URI_BYTES, UriTemplate, check_variable};
