//! What generated code refers to (`::tool_registry::__private::…`). Not part of the public API.

use std::time::Duration;

pub use {futures, linkme, schemars, serde, serde_json};

pub use crate::call::MAX_ARGS_BYTES;
pub use crate::call::args::ToolArgs;
pub use crate::call::args::parse_args;
pub use crate::call::error::ToolError;
pub use crate::call::into_result::IntoToolResult;
pub use crate::call::shim::output::{self, assert_output};
pub use crate::call::shim::probe::{self, schema_for};
pub use crate::call::shim::{
    Bounded, CallEnv, CallFn, CallResult, ConfirmIfFunction, MaxLen, Signature, blocking,
    blocking_async, check_max_len, check_range,
};
pub use crate::def::tool_def::ToolParts;
pub use crate::def::{
    Annotations, ArgInfo, CachePolicy, Cost, SourceLocation, TaskSupport, Tier, ToolDef,
};
pub use crate::media::BlockKind;
pub use crate::meta::Permission;
pub use crate::offer::set::{PROMPTS, RESOURCES};
pub use crate::parse::TagForm;
pub use crate::scope::who::Scope;

/// Every `#[tool]` in the binary.
#[linkme::distributed_slice]
pub static TOOLS: [ToolDef];

/// One argument of a tool whose arguments all have standard types, for [`args_schema`].
pub struct ArgSchema {
    /// The name the model writes.
    pub name: &'static str,
    /// `SchemaGenerator::subschema_for::<T>` of the argument's type.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
    /// Whether the argument's type is an `Option`, which the model may leave out.
    pub is_option: bool,
    /// `#[arg(desc)]`, or empty.
    pub description: &'static str,
    /// `#[arg(max_len)]`.
    pub max_len: Option<u64>,
    /// `#[arg(min)]`, as JSON.
    pub minimum: Option<fn() -> serde_json::Value>,
    /// `#[arg(max)]`, as JSON.
    pub maximum: Option<fn() -> serde_json::Value>,
    /// `#[arg(default)]`, as JSON.
    pub default: Option<fn() -> Option<serde_json::Value>>,
}

/// The input schema of a tool whose arguments all have standard types, built at first use from
/// their [`ArgSchema`]s: the schema `schema_for` gives for the struct with one field per
/// argument that `#[derive(JsonSchema)]` would write, built by one function in this crate
/// instead of a derived impl and a generic root per tool.
pub fn args_schema(args: &[ArgSchema]) -> schemars::Schema {
    use serde_json::{Map, Value};

    let mut generator = schemars::SchemaGenerator::default();
    let mut object = Map::new();
    object.insert("type".into(), Value::from("object"));
    object.insert("additionalProperties".into(), Value::Bool(false));
    let mut schema = schemars::Schema::from(object);
    for arg in args {
        let optional =
            generator.contract().is_deserialize() && (arg.default.is_some() || arg.is_option);
        let mut field = (arg.schema)(&mut generator);
        if !arg.description.is_empty() {
            field.insert("description".into(), arg.description.into());
        }
        if let Some(max) = arg.max_len {
            insert_for_type(&mut field, "string", "maxLength", max);
            insert_for_type(&mut field, "array", "maxItems", max);
        }
        for (key, bound) in [("minimum", arg.minimum), ("maximum", arg.maximum)] {
            if let Some(bound) = bound {
                field.insert(key.into(), bound());
            }
        }
        if let Some(value) = arg.default.and_then(|default| default()) {
            field.insert("default".into(), value);
        }
        insert_property(&mut schema, arg.name, optional, field);
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

/// Sets `key` on `schema` when its `type` is `ty` or a list holding `ty`, as
/// `#[schemars(length(max = ..))]` does: a bound on strings means nothing to a number.
fn insert_for_type(schema: &mut schemars::Schema, ty: &str, key: &str, value: u64) {
    let has_type = match schema.get("type") {
        Some(serde_json::Value::String(t)) => t == ty,
        Some(serde_json::Value::Array(types)) => types.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    };
    if has_type {
        schema.insert(key.into(), value.into());
    }
}

/// Adds `field` to the `properties` of the object `schema`, and to its `required` unless
/// `optional`, each created on first use, in the order `#[derive(JsonSchema)]` writes them.
fn insert_property(
    schema: &mut schemars::Schema,
    name: &str,
    optional: bool,
    field: schemars::Schema,
) {
    use serde_json::{Map, Value};

    let object = schema.ensure_object();
    if let Some(properties) = object
        .entry("properties")
        .or_insert(Value::Object(Map::new()))
        .as_object_mut()
    {
        properties.insert(name.into(), field.into());
    }
    if !optional
        && let Some(required) = object
            .entry("required")
            .or_insert(Value::Array(Vec::new()))
            .as_array_mut()
    {
        required.push(name.into());
    }
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
