#![doc = include_str!("../README.md")]
#![warn(missing_docs)]

mod allowlist;
mod annotations;
mod approval;
mod audit;
mod batch;
mod call;
pub mod catalog;
#[cfg(feature = "cli")]
pub mod cli;
mod clock;
mod ctx;
mod def;
mod error;
mod events;
pub mod format;
mod gate;
mod limits;
pub mod parse;
pub mod pipeline;
mod registry;
mod result;
mod scope;
pub mod spec;
pub mod store;
mod tool;

pub use allowlist::{AllowList, AllowListError, AllowLists};
pub use annotations::Risk;
pub use approval::{ApprovalKey, ApprovalStore, InMemoryApprovals, JsonFileApprovals, PendingCall};
pub use async_trait::async_trait;
pub use audit::{Audit, AuditExtra, AuditRecord, AuditSink, JsonLinesAuditSink, TracingAuditSink};
pub use batch::ToolCall;
pub use call::{MAX_ARGS_BYTES, MAX_ARGS_DEPTH, ToolArgs};
pub use ctx::{Ctx, State};
pub use def::{Annotations, ArgInfo, Cost, Permission, SourceLocation, TagForm, Tier, ToolDef};
pub use error::ToolError;
pub use events::ToolEvent;
pub use gate::{Decision, Gate};
pub use limits::{InMemoryRateLimits, JsonFileRateLimits, Limits, Permit, RateLimitStore, Refusal};
pub use registry::{
    APPROVAL_TTL, BuildError, Clash, DEFAULT_TIMEOUT, DuplicateToolError, GATE_TIMEOUT, MAX_CALLS,
    MAX_CONCURRENCY, Registry, RegistryBuilder, SLOW_TIMEOUT, Selector,
};
pub use result::ToolResult;
pub use scope::{EMBEDDING_FLAG, Scope};
pub use tool::Tool;

/// Declares a tool. See the [crate documentation](crate) for the attribute's keys.
pub use tool_registry_macros::tool;

/// One module per file of a folder of tools, so that adding a tool is adding a file: no `mod`
/// line to write.
///
/// Write it in the module that owns the folder, with the folder's path from the crate's
/// `Cargo.toml`: in `src/tools.rs` for the folder `src/tools/`. Every `name.rs` there becomes
/// `pub mod name;`; a file starting with `_` (`_helpers.rs`) is internal, the private module
/// `_helpers`, for code the tool files share (`super::_helpers::..` from a tool file).
///
/// ```text
/// src/lib.rs        mod tools;  pub use tools::*;
/// src/tools.rs      tool_registry::tool_files!("src/tools");
/// src/tools/kb.rs   #[tool] async fn research(..) { .. }
/// src/tools/_text.rs  helpers the tool files share
/// build.rs          fn main() { println!("cargo:rerun-if-changed=src/tools"); }
/// ```
///
/// The `build.rs` line makes Cargo build the crate again when a file is added to or removed
/// from the folder; without a build script, the next `cargo build` after adding a file would
/// not know the crate changed.
pub use tool_registry_macros::tool_files;

/// Links crates of tools into the program: `tool_registry::link!(my_tools, more_tools);` at the
/// top level of the binary's `main.rs`.
///
/// The linker leaves out a crate that nothing in the binary refers to, and a `#[tool]` in it
/// with it. Naming the crate here (it expands to `use my_tools as _;` for each) keeps its tools
/// in [`Registry::global`].
///
/// ```
/// tool_registry::link!(serde_json);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! link {
    ($($krate:ident),+ $(,)?) => {
        $(
            #[allow(unused_imports)]
            use $krate as _;
        )+
    };
}

/// The README of the repository, compiled as a doc test so that its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct RepositoryReadme;

/// What generated code refers to. Not part of the public API.
#[doc(hidden)]
pub mod __private {
    pub use {futures, linkme, schemars, serde, serde_json};

    pub use crate::call::output::{self, assert_output};
    pub use crate::call::{
        CallEnv, CallFn, CallResult, MaxLen, ToolArgs, blocking, blocking_async, check_max_len,
        parse_args,
    };

    use crate::def::{Annotations, ArgInfo, Cost, Permission, SourceLocation, TagForm, Tier};
    use std::time::Duration;

    /// Every `#[tool]` in the binary.
    #[linkme::distributed_slice]
    pub static TOOLS: [crate::ToolDef];

    /// The fields of a [`crate::ToolDef`], filled in by `#[tool]`.
    pub struct ToolParts {
        pub name: &'static str,
        pub aliases: &'static [&'static str],
        pub description: &'static str,
        pub version: Option<&'static str>,
        pub category: Option<&'static str>,
        pub tags: &'static [&'static str],
        pub tier: Tier,
        pub cost: Cost,
        pub permission: Permission,
        pub annotations: Annotations,
        pub requires_gate: bool,
        pub cooldown: Option<Duration>,
        pub daily_limit: Option<u32>,
        pub timeout: Option<Duration>,
        pub defer_loading: bool,
        pub sequential: bool,
        pub strip_from_display: bool,
        pub tag: Option<TagForm>,
        pub source: SourceLocation,
        pub args: &'static [ArgInfo],
        pub input_schema: fn() -> schemars::Schema,
        pub call: CallFn,
        pub enabled: Option<fn(&crate::Scope) -> bool>,
        pub gate_fail_closed: bool,
        pub max_args_bytes: usize,
        pub blocking: bool,
    }

    /// The input schema of an argument type, without a `title`.
    pub fn schema_for<T: schemars::JsonSchema>() -> schemars::Schema {
        let mut schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
        schema.remove("title");
        schema
    }

    /// Turns a duration in milliseconds into a `Duration` in a const context.
    pub const fn millis(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    pub use crate::call::probe;
}
