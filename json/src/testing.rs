//! What the crates above need to test their readers of schemas against the walk's budget: the
//! count of schemas visited, the hostile shapes, and random graphs of `$ref`s. Behind the
//! `testing` feature (and this crate's own tests); not for applications.

use std::cell::Cell;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

thread_local! {
    /// The schemas every walk of this thread has visited (and, for a transform, written).
    static VISITS: Cell<usize> = const { Cell::new(0) };
}

/// Counts `n` schemas visited by a walk of this thread.
pub(crate) fn count(n: usize) {
    VISITS.with(|visits| visits.set(visits.get() + n));
}

/// What `f` visited, by every walk it made on this thread.
pub fn visits_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    VISITS.with(|visits| visits.set(0));
    let out = f();
    (out, VISITS.with(Cell::get))
}

/// The schemas in a value (objects that are schemas or hold them), counted as a walk writes
/// them.
pub fn size(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(size).sum::<usize>(),
        Value::Array(items) => items.iter().map(size).sum(),
        _ => 0,
    }
}

/// `depth` definitions, each an `anyOf` of `k` `$ref`s to the next, the last a string; the
/// argument `value` refers to the first. About 1 KB at `k` = 4: `k^depth` paths.
pub fn chain(depth: usize, k: usize) -> Value {
    let mut defs = Map::new();
    for level in 0..depth {
        let next = json!({ "$ref": format!("#/$defs/D{}", level + 1) });
        defs.insert(format!("D{level}"), json!({ "anyOf": vec![next; k] }));
    }
    defs.insert(format!("D{depth}"), json!({ "type": "string" }));
    json!({
        "type": "object",
        "properties": { "value": { "$ref": "#/$defs/D0" } },
        "$defs": defs,
    })
}

/// One definition whose `anyOf` is a string and `k` `$ref`s to itself.
pub fn self_referring(k: usize) -> Value {
    let mut options = vec![json!({ "type": "string" })];
    options.extend(std::iter::repeat_n(json!({ "$ref": "#/$defs/S" }), k));
    json!({
        "type": "object",
        "properties": { "value": { "$ref": "#/$defs/S" } },
        "$defs": { "S": { "anyOf": options } },
    })
}

/// `n` definitions, the argument `value` referring to the last.
pub fn many_definitions(n: usize) -> Value {
    let defs: Map<String, Value> = (0..n)
        .map(|i| (format!("D{i}"), json!({ "type": "integer", "minimum": i })))
        .collect();
    json!({
        "type": "object",
        "properties": { "value": { "$ref": format!("#/$defs/D{}", n - 1) } },
        "$defs": defs,
    })
}

/// A random graph of definitions: each an `anyOf` of references to any definition (itself
/// included), of leaf types, and of objects holding more of the same.
pub fn graph() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({ "type": "string" })),
        Just(json!({ "type": "integer" })),
        Just(json!({ "type": "null" })),
        Just(json!({ "enum": [1, "a"] })),
    ];
    (1usize..12).prop_flat_map(move |n| {
        let reference = (0..n).prop_map(|i| json!({ "$ref": format!("#/$defs/D{i}") }));
        let node = prop_oneof![leaf.clone(), reference.clone()];
        let node = node.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..6)
                    .prop_map(|options| json!({ "anyOf": options })),
                prop::collection::vec(inner.clone(), 1..4).prop_map(|members| {
                    let properties: Map<String, Value> = members
                        .into_iter()
                        .enumerate()
                        .map(|(i, m)| {
                            (
                                if i == 0 {
                                    "value".to_owned()
                                } else {
                                    format!("p{i}")
                                },
                                m,
                            )
                        })
                        .collect();
                    json!({ "type": "object", "properties": properties })
                }),
                inner.prop_map(|items| json!({ "type": "array", "items": items })),
            ]
        });
        (prop::collection::vec(node.clone(), n), node).prop_map(|(defs, value)| {
            let defs: Map<String, Value> = defs
                .into_iter()
                .enumerate()
                .map(|(i, d)| (format!("D{i}"), d))
                .collect();
            json!({
                "type": "object",
                "properties": { "value": value, "other": { "$ref": "#/$defs/D0" } },
                "$defs": defs,
            })
        })
    })
}
