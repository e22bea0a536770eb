//! Turns what a tool function returns into a [`ToolResult`].

use std::any::Any;
use std::fmt::Display;

use serde::Serialize;

use crate::call::{ToolError, ToolResult};

/// A value a `#[tool]` function may return.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]` function",
    label = "this return type does not implement `serde::Serialize`",
    note = "return a type that derives `serde::Serialize`, a `String`, `()`, `Result<T, E>` with `E: Display`, or `ToolResult`"
)]
pub trait ToolOutput {}
impl<T: Serialize + ?Sized> ToolOutput for T {}

#[doc(hidden)]
pub fn assert_output<T: ToolOutput + ?Sized>() {}

pub fn value<T: Serialize>(value: T) -> Result<ToolResult, ToolError> {
    serde_json::to_value(value)
        .map(ToolResult::ok)
        .map_err(|e| ToolError::handler("", format!("the tool's output is not JSON: {e}")))
}

pub fn tool_result(result: ToolResult) -> Result<ToolResult, ToolError> {
    Ok(result)
}

pub fn result<T: Serialize, E: Display + 'static>(
    result: Result<T, E>,
) -> Result<ToolResult, ToolError> {
    match result {
        Ok(output) => value(output),
        Err(error) => Err(error_of(error)),
    }
}

pub fn result_tool_result<E: Display + 'static>(
    result: Result<ToolResult, E>,
) -> Result<ToolResult, ToolError> {
    result.map_err(error_of)
}

/// A `ToolError` returned by the tool is kept as it is; anything else is a handler error.
fn error_of<E: Display + 'static>(error: E) -> ToolError {
    let mut slot = Some(error);
    let any: &mut dyn Any = &mut slot;
    if let Some(tool_error) = any
        .downcast_mut::<Option<ToolError>>()
        .and_then(Option::take)
    {
        return tool_error;
    }
    ToolError::handler("", slot.map(|e| e.to_string()).unwrap_or_default())
}
