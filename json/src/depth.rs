//! Values of any depth: how deep a value may nest, measured and dropped without recursion.

use serde_json::Value;

/// How deep arrays and objects may nest in any value read from a model or a caller: 127 levels,
/// the most that `serde_json` reads from text (its recursion limit is 128), so that text and
/// [`Value`]s meet the same bound. The registry's argument depth, the parser's and the schema
/// walks' bound on the values a schema is applied to are this one constant.
pub const MAX_DEPTH: usize = 127;

/// Whether arrays and objects nest more than `limit` levels deep in `value`, found with an
/// explicit stack of at most `limit` levels.
#[inline]
pub fn nests_deeper(value: &Value, limit: usize) -> bool {
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
#[inline]
pub fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, value)| value)),
            _ => {}
        }
    }
}
