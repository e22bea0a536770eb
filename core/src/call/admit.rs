//! Arguments measured before anything reads them (the tool's size limit and
//! [`MAX_ARGS_DEPTH`]), and deep values dropped without recursion.

use serde_json::Value;

use tool_registry_json::depth::{Exceeds, measure};

use super::depth::{dispose, nests_deeper, too_deep};
use super::{MAX_ARGS_DEPTH, ToolArgs, ToolError};

/// The checks made on arguments before anything reads them: the tool's size limit and
/// [`MAX_ARGS_DEPTH`]. Text is only measured here (its depth is found while parsing, by
/// `serde_json`); a [`Value`] is measured in one walk of at most that depth, and one that is too
/// deep is taken apart without recursion, since its own `Drop` would recurse once per level.
#[inline]
pub(crate) fn admit_args(args: &mut ToolArgs<'_>, max_bytes: usize) -> Result<(), ToolError> {
    match args {
        ToolArgs::Text(text) if text.len() > max_bytes => Err(too_large(max_bytes)),
        ToolArgs::Text(_) => Ok(()),
        ToolArgs::Value(value) => admit_value(value, max_bytes),
    }
}

/// [`admit_args`] for a [`Value`], measured in one walk that bounds its depth and its size as
/// compact JSON; one that is too deep is taken apart and left `null`.
#[inline(never)]
fn admit_value(value: &mut Value, max_bytes: usize) -> Result<(), ToolError> {
    let too_deep_value = match measure(value, MAX_ARGS_DEPTH, max_bytes) {
        Ok(_) => return Ok(()),
        Err(Exceeds::Depth) => true,
        // The walk stopped at the size: a value too deep as well gets the depth error, as text
        // does, whatever its size.
        Err(Exceeds::Bytes) => nests_deeper(value, MAX_ARGS_DEPTH),
    };
    if too_deep_value {
        dispose(std::mem::take(value));
        return Err(too_deep());
    }
    Err(too_large(max_bytes))
}

#[cold]
fn too_large(limit: usize) -> ToolError {
    ToolError::ArgumentsTooLarge {
        tool: String::new(),
        limit,
    }
}

/// Drops arguments that may be arbitrarily deep (see [`dispose`]).
pub(crate) fn dispose_args(args: ToolArgs<'_>) {
    if let ToolArgs::Value(value) = args {
        dispose(value);
    }
}
