//! The reference tools of `tool-registry`: a real application crate.
//!
//! | module | tools |
//! | --- | --- |
//! | [`kb`] | the knowledge-base bot's `research`, `source`, `claim` and `learning` |
//! | [`file_manager`] | `file_manager.create_document`, `.read`, `.list`, `.delete_file` in a [`Sandbox`] |
//! | [`scheduler`] | `scheduler.add_job`, `.list_jobs`, `.remove_job`, kept in a JSON file |
//!
//! [`RedactSecrets`] is the hook the reference binary runs around every call: it replaces
//! API keys and private keys in results before a model reads them.
//!
//! Every tool works offline on the folders of a [`Config`], which the application registers as
//! state:
//!
//! ```no_run
//! use tool_registry::{Listing, Registry};
//! use tool_registry_tools::Config;
//!
//! let registry = Registry::builder()
//!     .state(Config::from_env())
//!     .allow_lists(tool_registry_tools::allow_lists())
//!     .hook(tool_registry_tools::RedactSecrets)
//!     .build()?;
//! assert!(registry.get("file_manager.create_document", Listing::every()).is_some());
//! # Ok::<(), tool_registry::registry::BuildError>(())
//! ```

pub mod config;
mod error;
mod fsutil;
pub mod hooks;
pub mod sandbox;
mod search;
mod tools;

pub use tools::*;

pub use config::Config;
pub use hooks::RedactSecrets;
pub use sandbox::{Resolved, Sandbox, SandboxError};
pub use search::Note;

/// The scoped tool sets of the reference tools: `supervisor` (search and read), `execute`
/// (everything; no scheduling changes in local mode) and `explore` (read-only), from
/// `tools/allow_lists.toml`.
pub fn allow_lists() -> tool_registry::scope::AllowLists {
    match tool_registry::scope::AllowLists::from_toml(include_str!("../allow_lists.toml")) {
        Ok(lists) => lists,
        // The file ships with the crate; its tests read it.
        Err(error) => panic!("tools/allow_lists.toml: {error}"),
    }
}
