//! The contracts of [tool-registry](https://docs.rs/tool-registry): tool definitions, the
//! registry, the call pipeline and its gates, the providers' formats, the catalog, tasks.
//!
//! Use it through the `tool-registry` crate, which re-exports all of it (`tool_registry::Registry`
//! is this crate's [`Registry`]) beside the front ends built on it: HTTP tool modules, MCP, a
//! fleet on Redis and the command line, each a crate of its own on this crate's public API. A
//! front end of your own needs nothing else: every item they use is public here and documented.
//!
//! The modules, from the bottom layer up (ARCHITECTURE.md draws them); the first file of each
//! folder maps the folder:
//!
//! | module | what |
//! | --- | --- |
//! | `meta/`, `store/`, `media/` | the vocabulary: what a declaration says, a JSON file shared by processes, the blocks a result holds |
//! | `scope/`, `audit/`, `call/` | who asks, what is recorded, a call: context, arguments, result, error, the shim generated code calls |
//! | `spec/`, `def/` | a run-time tool's spec; a compiled definition, and `Tool`, the one handle to either |
//! | `content.rs` | what a tool's author writes for results: the blocks, `IntoToolResult`, their JSON |
//! | `gate/`, `hook/`, `format/`, `catalog/`, `__private.rs` | the stages and gates, hooks, each provider's shape, the documentation, what `#[tool]` expands to |
//! | `discovery/`, `exec/` | deferred tools' meta-tools; the pipeline |
//! | `registry/` | `Registry`, its builder, snapshots |
//! | `task/` | a call run as a task: its record, its store, its runner |
//! | `bench.rs` | the benchmarks' baselines (feature `bench-internals`, not API) |
#![warn(missing_docs)]

pub mod audit;
#[cfg(feature = "bench-internals")]
pub mod bench;
pub mod call;
pub mod catalog;
pub mod content;
pub mod def;
pub mod discovery;
pub mod exec;
pub mod format;
pub mod gate;
pub mod hook;
pub(crate) mod media;
mod meta;
pub mod offer;
#[doc(inline)]
pub use tool_registry_parse as parse;
pub mod registry;
use tool_registry_json::schema;
pub mod scope;
pub mod spec;
pub mod store;
pub mod task;

#[doc(hidden)]
pub mod __private;

// The names a first program takes, here and nowhere else: each is public at the root only,
// and the rest of the crate is public under its module (see "One path per item" in the crate
// documentation).
pub use call::args::ToolArgs;
pub use call::ctx::Ctx;
pub use call::error::ToolError;
pub use call::result::ToolResult;
pub use call::state::State;
pub use call::tool_call::ToolCall;
pub use def::tool::Tool;
pub use meta::Permission;
pub use registry::builder::RegistryBuilder;
pub use registry::index::Registry;
pub use registry::listing::Listing;
pub use scope::who::Scope;
pub use spec::tool_spec::ToolSpec;

/// Declares a prompt: see [`offer`]. Keys: `name` (the function's unless set),
/// `title`, `permission`, `complete(argument = function)`; the doc comment is its
/// description, each argument a `String` (`Option<String>` when it may be left out) with
/// `#[arg(desc = "...")]`, `&Ctx` the caller's context.
pub use tool_registry_macros::prompt;
/// Declares a resource, or a resource template when its URI has `{variables}`: see
/// [`offer`]. Keys: `uri` (required), `name` (the function's unless set),
/// `title`, `mime_type`, `permission`, `complete(variable = function)`; the doc comment is
/// its description, each variable a `String` argument, `&Ctx` the caller's context.
pub use tool_registry_macros::resource;
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
