//! What generated code refers to (`::tool_registry::__private::…`). Not part of the public API.

use std::time::Duration;

pub use {futures, linkme, schemars, serde, serde_json};

pub use crate::call::args::parse_args;
pub use crate::call::shim::output::{self, assert_output};
pub use crate::call::shim::probe::{self, schema_for};
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

/// One argument of a tool whose arguments all have standard types, for [`args_schema`].
pub struct ArgSchema {
    /// The name the model writes.
    pub name: &'static str,
    /// `SchemaGenerator::subschema_for::<T>` of the argument's type.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// `<T as JsonSchema>::_schemars_private_is_option` of the argument's type.
    pub is_option: fn() -> bool,
    /// `#[arg(desc)]`, or empty.
    pub description: &'static str,
    /// `#[arg(max_len)]`.
    pub max_len: Option<u64>,
    /// `#[arg(default)]`, as JSON.
    pub default: Option<fn() -> Option<serde_json::Value>>,
}

/// The input schema of a tool whose arguments all have standard types, built at first use from
/// their [`ArgSchema`]s: the schema `schema_for` gives for the struct with one field per
/// argument that `#[derive(JsonSchema)]` would write, built by one function in this crate
/// instead of a derived impl and a generic root per tool.
pub fn args_schema(args: &[ArgSchema]) -> schemars::Schema {
    use schemars::_private::{
        insert_metadata_property_if_nonempty, insert_object_property, insert_validation_property,
    };
    use serde_json::{Map, Value};

    let mut generator = schemars::SchemaGenerator::default();
    let mut object = Map::new();
    object.insert("type".into(), Value::from("object"));
    object.insert("additionalProperties".into(), Value::Bool(false));
    let mut schema = schemars::Schema::from(object);
    for arg in args {
        let optional = match arg.default {
            Some(_) => generator.contract().is_deserialize(),
            None => generator.contract().is_deserialize() && (arg.is_option)(),
        };
        let mut field = (arg.schema)(&mut generator);
        insert_metadata_property_if_nonempty(&mut field, "description", arg.description);
        if let Some(max) = arg.max_len {
            insert_validation_property(&mut field, "string", "maxLength", max);
            insert_validation_property(&mut field, "array", "maxItems", max);
        }
        if let Some(value) = arg.default.and_then(|default| default()) {
            field.insert("default".into(), value);
        }
        insert_object_property(&mut schema, arg.name, optional, field);
    }
    // What `into_root_schema_for` adds, but the title, which `schema_for` drops. Standard
    // types have no definitions.
    if let Some(meta_schema) = generator.settings().meta_schema.clone() {
        schema.insert("$schema".into(), meta_schema.into());
    }
    debug_assert!(generator.take_definitions(false).is_empty());
    for transform in generator.transforms_mut() {
        transform.transform(&mut schema);
    }
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
