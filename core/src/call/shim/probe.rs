//! The checks on the types of a tool's arguments. Each is a method call that rustc resolves
//! by trying receivers from the most to the least referenced (autoref specialization): the
//! first impl whose bounds the type meets is chosen, and only the chosen method's own bound can
//! fail. So a type that misses a derive gets one error, on the type, naming what to derive,
//! instead of one error per unmet bound with lists of the types that do implement them.

use std::marker::PhantomData;

use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;

use crate::call::IntoToolResult;
use crate::call::{ToolArgs, ToolError};
use crate::media::BlockKind;

/// The type under test.
pub struct Probe<T>(PhantomData<T>);

impl<T> Probe<T> {
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T> Default for Probe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// `T` has no `Deserialize` and no `JsonSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it derives neither `Deserialize` nor `JsonSchema`",
    label = "the model cannot send this type",
    note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to `{Self}` (for `Vec<T>`, `Option<T>` and the like: to `T`), or take it as `&Ctx` or `State<T>` if it is not meant for the model"
)]
pub trait ToolArg {}

/// `T` has `JsonSchema` but no `Deserialize`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it does not implement `serde::Deserialize`",
    label = "the model cannot send this type",
    note = "add `#[derive(serde::Deserialize)]` to `{Self}` (for `Vec<T>`, `Option<T>` and the like: to `T`), or take it as `&Ctx` or `State<T>` if it is not meant for the model"
)]
pub trait ToolArgDeserialize {}

/// `T` has `Deserialize` but no `JsonSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool argument: it does not implement `schemars::JsonSchema`",
    label = "the model cannot be shown this type",
    note = "add `#[derive(schemars::JsonSchema)]` to `{Self}` (for `Vec<T>`, `Option<T>` and the like: to `T`), or take it as `&Ctx` or `State<T>` if it is not meant for the model"
)]
pub trait ToolArgJsonSchema {}

// Called as `(&&&&Probe::<T>::new()).__tool_registry_check::<T>()`.

pub trait Both {
    fn __tool_registry_check<U>(&self) {}
}
impl<T: DeserializeOwned + JsonSchema> Both for &&&Probe<T> {}

pub trait DeserializeOnly {
    fn __tool_registry_check<U: ToolArgJsonSchema>(&self) {}
}
impl<T: DeserializeOwned> DeserializeOnly for &&Probe<T> {}

pub trait JsonSchemaOnly {
    fn __tool_registry_check<U: ToolArgDeserialize>(&self) {}
}
impl<T: JsonSchema> JsonSchemaOnly for &Probe<T> {}

pub trait Neither {
    fn __tool_registry_check<U: ToolArg>(&self) {}
}
impl<T> Neither for Probe<T> {}

// Called as `(&&Probe::<Args>::new()).__tool_registry_parse(raw)` and
// `.__tool_registry_schema()`, for the whole argument type. When that type falls short,
// the checks above have already reported it on the argument's own type; the fallback only
// keeps these calls from reporting it a second time, and never runs.

pub trait Typed<T> {
    fn __tool_registry_parse(&self, args: ToolArgs<'_>) -> Result<T, ToolError>;
    fn __tool_registry_schema(&self) -> Schema;
}
impl<T: DeserializeOwned + JsonSchema> Typed<T> for &Probe<T> {
    #[inline]
    fn __tool_registry_parse(&self, args: ToolArgs<'_>) -> Result<T, ToolError> {
        crate::call::args::parse_args::<T>(args)
    }
    fn __tool_registry_schema(&self) -> Schema {
        schema_for::<T>()
    }
}

pub trait Untyped<T> {
    fn __tool_registry_parse(&self, args: ToolArgs<'_>) -> Result<T, ToolError>;
    fn __tool_registry_schema(&self) -> Schema;
}
impl<T> Untyped<T> for Probe<T> {
    fn __tool_registry_parse(&self, _: ToolArgs<'_>) -> Result<T, ToolError> {
        Err(ToolError::Misconfigured {
            tool: String::new(),
            message: "the argument types were not checked".to_owned(),
        })
    }
    fn __tool_registry_schema(&self) -> Schema {
        Schema::default()
    }
}

/// The input schema of an argument type, without a `title`.
pub fn schema_for<T: schemars::JsonSchema>() -> schemars::Schema {
    let mut schema = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
    schema.remove("title");
    schema
}

// Called as `(&&Probe::<T>::new()).__tool_registry_output_schema()` and
// `.__tool_registry_returns()`, for a tool's returned type `T`: the JSON Schema of its value and
// the kinds of blocks it gives. A type that is no `IntoToolResult` has been reported once, by
// `assert_output`; a value without a JSON Schema has none, and that is no error.

pub trait OutputTyped {
    fn __tool_registry_output_schema(&self) -> Option<Schema>;
}
impl<T> OutputTyped for &Probe<T>
where
    T: IntoToolResult,
    T::Value: JsonSchema,
{
    fn __tool_registry_output_schema(&self) -> Option<Schema> {
        let schema = schema_for::<T::Value>();
        // `()` (always `null`) and `serde_json::Value` (anything) say nothing.
        let says_nothing = schema.as_bool() == Some(true)
            || schema.get("type").and_then(serde_json::Value::as_str) == Some("null")
            || schema
                .as_object()
                .is_some_and(|o| o.keys().all(|k| k == "$schema"));
        (!says_nothing).then_some(schema)
    }
}

pub trait OutputUntyped {
    fn __tool_registry_output_schema(&self) -> Option<Schema>;
}
impl<T> OutputUntyped for Probe<T> {
    fn __tool_registry_output_schema(&self) -> Option<Schema> {
        None
    }
}

pub trait ReturnsKnown {
    fn __tool_registry_returns(&self) -> &'static [BlockKind];
}
impl<T: IntoToolResult> ReturnsKnown for &Probe<T> {
    fn __tool_registry_returns(&self) -> &'static [BlockKind] {
        T::KINDS
    }
}

pub trait ReturnsUnknown {
    fn __tool_registry_returns(&self) -> &'static [BlockKind];
}
impl<T> ReturnsUnknown for Probe<T> {
    fn __tool_registry_returns(&self) -> &'static [BlockKind] {
        &[]
    }
}
