//! Values of any depth: how deep arguments may nest, measured and dropped without recursion.

use super::ToolError;

/// How deep arrays and objects may nest in the arguments of any tool: 127 levels, the most that
/// `serde_json` reads from text (its recursion limit is 128), so text and [`Value`](serde_json::Value) arguments
/// meet the same limit.
pub const MAX_ARGS_DEPTH: usize = tool_registry_json::depth::MAX_DEPTH;

#[cold]
pub(crate) fn too_deep() -> ToolError {
    ToolError::ArgumentsTooDeep {
        tool: String::new(),
        limit: MAX_ARGS_DEPTH,
    }
}

pub(crate) use tool_registry_json::depth::{dispose, nests_deeper};
