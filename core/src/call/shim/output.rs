//! Turns what a tool function returns into a [`ToolResult`].

use std::any::Any;
use std::fmt::Display;

use crate::call::IntoToolResult;
use crate::call::{ToolError, ToolResult};

#[doc(hidden)]
pub fn assert_output<T: IntoToolResult>() {}

#[inline]
pub fn value<T: IntoToolResult>(value: T) -> Result<ToolResult, ToolError> {
    value.into_tool_result()
}

pub fn tool_result(result: ToolResult) -> Result<ToolResult, ToolError> {
    Ok(result)
}

pub fn result<T: IntoToolResult, E: Display + 'static>(
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
