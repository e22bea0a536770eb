//! What generated code refers to (`::tool_registry::__private::…`). Not part of the public API.

use std::time::Duration;

pub use {futures, linkme, schemars, serde, serde_json};

pub use crate::call::args::parse_args;
pub use crate::call::shim::output::{self, assert_output};
pub use crate::call::shim::probe;
pub use crate::call::shim::{
    CallEnv, CallFn, CallResult, MaxLen, blocking, blocking_async, check_max_len,
};
pub use crate::call::{MAX_ARGS_BYTES, ToolArgs};
pub use crate::def::tool_def::ToolParts;
pub use crate::def::{
    Annotations, ArgInfo, Cost, Permission, SourceLocation, TagForm, Tier, ToolDef,
};
pub use crate::scope::Scope;

/// Every `#[tool]` in the binary.
#[linkme::distributed_slice]
pub static TOOLS: [ToolDef];

/// The input schema of an argument type, without a `title`.
pub fn schema_for<T: schemars::JsonSchema>() -> schemars::Schema {
    let mut schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    schema.remove("title");
    schema
}

/// A return type whose JSON Schema is a tool's output schema (`#[tool(output_schema)]`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no JSON Schema, so it cannot be the output schema of a `#[tool(output_schema)]` function",
    label = "this return type does not derive `schemars::JsonSchema`",
    note = "derive `schemars::JsonSchema` on it, or leave `output_schema` out"
)]
pub trait OutputSchema {
    /// The schema.
    fn output_schema() -> schemars::Schema;
}

impl<T: schemars::JsonSchema> OutputSchema for T {
    fn output_schema() -> schemars::Schema {
        schema_for::<T>()
    }
}

/// Turns a duration in milliseconds into a `Duration` in a const context.
pub const fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}
