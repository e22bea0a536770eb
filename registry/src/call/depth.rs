//! Values of any depth: how deep arguments may nest, measured and dropped without recursion.

use serde_json::Value;

use super::ToolError;

/// How deep arrays and objects may nest in the arguments of any tool: 127 levels, the most that
/// `serde_json` reads from text (its recursion limit is 128), so text and [`Value`] arguments
/// meet the same limit.
pub const MAX_ARGS_DEPTH: usize = crate::schema::MAX_VALUE_DEPTH;

#[cold]
pub(crate) fn too_deep() -> ToolError {
    ToolError::ArgumentsTooDeep {
        tool: String::new(),
        limit: MAX_ARGS_DEPTH,
    }
}

/// Whether arrays and objects nest more than `limit` levels deep in `value`, found with an
/// explicit stack of at most `limit` levels.
pub(crate) fn nests_deeper(value: &Value, limit: usize) -> bool {
    enum Children<'v> {
        Array(std::slice::Iter<'v, Value>),
        Object(serde_json::map::Values<'v>),
    }
    let mut stack: Vec<Children<'_>> = Vec::new();
    let mut current = value;
    loop {
        let children = match current {
            Value::Array(items) => Some(Children::Array(items.iter())),
            Value::Object(map) => Some(Children::Object(map.values())),
            _ => None,
        };
        if let Some(children) = children {
            if stack.len() == limit {
                return true;
            }
            stack.push(children);
        }
        current = loop {
            let Some(top) = stack.last_mut() else {
                return false;
            };
            let next = match top {
                Children::Array(items) => items.next(),
                Children::Object(values) => values.next(),
            };
            match next {
                Some(next) => break next,
                None => {
                    stack.pop();
                }
            }
        };
    }
}

/// Drops `value` without recursion: each array and object is emptied onto a heap stack before
/// it is dropped, so no drop goes deeper than one level.
pub(crate) fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, value)| value)),
            _ => {}
        }
    }
}
