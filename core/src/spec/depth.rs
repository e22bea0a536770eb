//! How deep schemas nest: [`MAX_SCHEMA_DEPTH`], the check a run-time spec's schemas must pass,
//! and the cut a compiled tool's MCP definition takes when its schema goes deeper.
//!
//! Depth counts schemas inside schemas through JSON Schema 2020-12's applicator keywords
//! (`properties`, `items`, `anyOf`, `$defs`, ...; <https://json-schema.org/draft/2020-12/json-schema-core#section-10>),
//! in the document as written: a `$ref` is not followed, so a shared part moved into `$defs`
//! counts once, at its own depth. The root is level 1.

use serde_json::Value;

use crate::schema::{child_path, children};

/// The most levels of nested schemas an input or output schema may have: 32. A run-time tool
/// whose schema nests deeper is refused when its spec is built; a compiled tool's MCP
/// definition shows what lies deeper as `true`, with a note in the description (its
/// arguments are still checked in full when it is called).
pub const MAX_SCHEMA_DEPTH: usize = 32;

/// The schemas one level below the deepest allowed, in document order, each as the JSON
/// Pointer of the schema that holds it and its own; empty when `schema` is within the bound.
pub(crate) fn too_deep(schema: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    // An explicit stack: the schema being measured may be arbitrarily deep.
    let mut stack = vec![(schema, 1usize, String::new(), String::new())];
    while let Some((schema, depth, parent, path)) = stack.pop() {
        if !schema.is_object() {
            continue;
        }
        if depth > MAX_SCHEMA_DEPTH {
            found.push((parent, path));
            continue;
        }
        let children: Vec<(&Value, String)> = children(schema)
            .map(|(key, segment, child)| (child, child_path(&path, key, segment)))
            .collect();
        // Reversed, so the stack gives them back in document order.
        for (child, here) in children.into_iter().rev() {
            stack.push((child, depth + 1, path.clone(), here));
        }
    }
    found
}

/// Replaces each schema deeper than [`MAX_SCHEMA_DEPTH`] in `schema` with `true` (any value),
/// and says so in the description of the schema that held it; returns whether anything was
/// cut.
pub(crate) fn cut(schema: &mut Value) -> bool {
    let deep = too_deep(schema);
    let mut parents: Vec<&str> = Vec::new();
    for (parent, child) in &deep {
        if let Some(place) = schema.pointer_mut(child) {
            crate::call::dispose(std::mem::replace(place, Value::Bool(true)));
        }
        if !parents.contains(&parent.as_str()) {
            parents.push(parent);
        }
    }
    let note = format!(
        "(nested more than {MAX_SCHEMA_DEPTH} levels deep: the rest is not shown; the tool checks it when called)"
    );
    for parent in parents {
        if let Some(Value::Object(map)) = schema.pointer_mut(parent) {
            let description = match map.get("description").and_then(Value::as_str) {
                Some(description) => format!("{description} {note}"),
                None => note.clone(),
            };
            map.insert("description".into(), description.into());
        }
    }
    !deep.is_empty()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{MAX_SCHEMA_DEPTH, cut, too_deep};

    /// An object schema whose property `a` nests `levels` schemas deep in all.
    fn nested(levels: usize) -> Value {
        (1..levels).fold(
            json!({ "type": "string" }),
            |inner, _| json!({ "type": "object", "properties": { "a": inner } }),
        )
    }

    #[test]
    fn depth_counts_schemas_through_applicators() {
        assert!(too_deep(&nested(MAX_SCHEMA_DEPTH)).is_empty());
        let deep = too_deep(&nested(MAX_SCHEMA_DEPTH + 1));
        let parent = "/properties/a".repeat(MAX_SCHEMA_DEPTH - 1);
        assert_eq!(
            deep,
            vec![(parent.clone(), format!("{parent}/properties/a"))]
        );
        // Lists, single schemas and escaped names count alike; data does not.
        let data = (0..40).fold(json!(1), |inner, _| json!([inner]));
        let schema = json!({
            "anyOf": [{ "items": { "properties": { "a/b": { "type": "string" } } } }],
            "default": data
        });
        assert!(too_deep(&schema).is_empty());
    }

    #[test]
    fn a_cut_schema_is_within_the_bound_and_says_so() {
        let mut schema = nested(100);
        assert!(cut(&mut schema));
        assert!(too_deep(&schema).is_empty());
        let parent = "/properties/a".repeat(MAX_SCHEMA_DEPTH - 1);
        let description = schema.pointer(&format!("{parent}/description")).unwrap();
        assert!(description.as_str().unwrap().contains("not shown"));
        assert_eq!(
            schema.pointer(&format!("{parent}/properties/a")),
            Some(&json!(true))
        );
        let mut shallow = nested(3);
        assert!(!cut(&mut shallow));
        assert_eq!(shallow, nested(3));
    }
}
