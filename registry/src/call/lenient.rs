//! Lenient argument decoding: what real models send that a strict reader refuses, read as they
//! meant it, guided by the tool's input schema.
//!
//! Each rule applies only where the schema says what is expected and the value is not already
//! that:
//!
//! - an object or array sent as a JSON string (`"{\"a\": 1}"`) is parsed, once;
//! - an integer or number sent as a numeric string (`"5"`, `"2.5"`) becomes the number;
//! - `"true"` or `"false"` where a boolean is expected becomes the boolean;
//! - `null` for an argument that is not required and does not admit `null` is left out, so the
//!   argument takes its default.
//!
//! Nested objects and array items follow the same rules through their own schemas (`$ref`s to
//! the root's `$defs` included). Nothing else changes: a value of the wrong kind stays wrong,
//! and the error that follows names its path. Strict mode
//! ([`RegistryBuilder::strict_arguments`](crate::RegistryBuilder::strict_arguments)) skips all
//! of this.
//!
//! Leniency never extends to unknown fields. In both modes a compiled tool refuses a key its
//! schema does not name, at any depth: at the top level its argument struct denies them, and in
//! a nested struct of the user's that does not (`#[serde(deny_unknown_fields)]` absent, so no
//! `additionalProperties` in its schema) the registry refuses them itself (see
//! [`crate::call::fields`]), naming the path (`area.extra`, `stops[1].extra`) and the fields
//! expected. A run-time tool ([`ToolSpec`](crate::ToolSpec)) is validated as JSON Schema says:
//! where its schema has no `additionalProperties`, other keys are allowed; write
//! `"additionalProperties": false` to refuse them.

use serde_json::{Map, Value};

use super::args::MAX_ARGS_DEPTH;

/// Rewrites `value` (the arguments) by the rules above; returns whether anything changed.
pub(crate) fn coerce(value: &mut Value, root: &Value) -> bool {
    let mut walk = Walk {
        root,
        changed: false,
    };
    walk.value(value, root, 0);
    walk.changed
}

struct Walk<'s> {
    root: &'s Value,
    changed: bool,
}

/// What a schema admits, as far as these rules ask.
#[derive(Default, Clone, Copy)]
struct Expected {
    object: bool,
    array: bool,
    string: bool,
    integer: bool,
    number: bool,
    boolean: bool,
    null: bool,
}

impl<'s> Walk<'s> {
    /// The schema `schema` points at, following one `$ref` into the root's definitions.
    fn resolve(&self, schema: &'s Value) -> &'s Value {
        match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
                .unwrap_or(schema),
            None => schema,
        }
    }

    fn expected(&self, schema: &'s Value, depth: usize) -> Expected {
        let schema = self.resolve(schema);
        let mut expected = Expected::default();
        let mut add = |ty: &str| match ty {
            "object" => expected.object = true,
            "array" => expected.array = true,
            "string" => expected.string = true,
            "integer" => expected.integer = true,
            "number" => expected.number = true,
            "boolean" => expected.boolean = true,
            "null" => expected.null = true,
            _ => {}
        };
        match schema.get("type") {
            Some(Value::String(ty)) => add(ty),
            Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).for_each(add),
            _ => {}
        }
        if schema.get("properties").is_some() {
            expected.object = true;
        }
        if depth < 8 {
            for key in ["anyOf", "oneOf"] {
                for option in schema
                    .get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let more = self.expected(option, depth + 1);
                    expected = expected.or(more);
                }
            }
        }
        expected
    }

    /// The schema of `value`'s property `key` (or of its items, for an array), among the
    /// options of an `anyOf`/`oneOf` too.
    fn member(&self, schema: &'s Value, key: Option<&str>, depth: usize) -> Option<&'s Value> {
        let schema = self.resolve(schema);
        let direct = match key {
            Some(key) => schema.get("properties").and_then(|p| p.get(key)),
            None => schema.get("items").filter(|items| items.is_object()),
        };
        if direct.is_some() || depth >= 8 {
            return direct;
        }
        ["anyOf", "oneOf"].iter().find_map(|k| {
            schema
                .get(*k)?
                .as_array()?
                .iter()
                .find_map(|option| self.member(option, key, depth + 1))
        })
    }

    fn value(&mut self, value: &mut Value, schema: &'s Value, depth: usize) {
        if depth > MAX_ARGS_DEPTH {
            return;
        }
        let expected = self.expected(schema, 0);
        if let Value::String(text) = value
            && let Some(read) = read_string(text, expected)
        {
            *value = read;
            self.changed = true;
        }
        match value {
            Value::Object(map) => self.object(map, schema, depth),
            Value::Array(items) => {
                if let Some(items_schema) = self.member(schema, None, 0) {
                    for item in items {
                        self.value(item, items_schema, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, map: &mut Map<String, Value>, schema: &'s Value, depth: usize) {
        let resolved = self.resolve(schema);
        let required: Vec<&str> = resolved
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut absent = Vec::new();
        for (key, member) in map.iter_mut() {
            let Some(member_schema) = self.member(schema, Some(key), 0) else {
                continue;
            };
            if member.is_null()
                && !required.contains(&key.as_str())
                && !self.expected(member_schema, 0).null
            {
                absent.push(key.clone());
                continue;
            }
            self.value(member, member_schema, depth + 1);
        }
        for key in absent {
            map.remove(&key);
            self.changed = true;
        }
    }
}

impl Expected {
    fn or(self, other: Self) -> Self {
        Self {
            object: self.object || other.object,
            array: self.array || other.array,
            string: self.string || other.string,
            integer: self.integer || other.integer,
            number: self.number || other.number,
            boolean: self.boolean || other.boolean,
            null: self.null || other.null,
        }
    }
}

/// What a string means where the schema expects something else; `None` to leave it.
fn read_string(text: &str, expected: Expected) -> Option<Value> {
    if expected.string {
        return None;
    }
    let trimmed = text.trim();
    if (expected.object && trimmed.starts_with('{')) || (expected.array && trimmed.starts_with('['))
    {
        // Depth is bounded by serde_json's own recursion limit.
        return serde_json::from_str::<Value>(trimmed)
            .ok()
            .filter(|v| v.is_object() || v.is_array());
    }
    if expected.integer {
        if let Ok(n) = trimmed.parse::<i64>() {
            return Some(n.into());
        }
        if let Ok(n) = trimmed.parse::<u64>() {
            return Some(n.into());
        }
    }
    if expected.number
        && let Some(n) = trimmed
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
    {
        return Some(Value::Number(n));
    }
    if expected.boolean {
        match trimmed {
            "true" => return Some(Value::Bool(true)),
            "false" => return Some(Value::Bool(false)),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::coerce;

    fn coerced(mut value: serde_json::Value, schema: &serde_json::Value) -> serde_json::Value {
        coerce(&mut value, schema);
        value
    }

    #[test]
    fn what_models_send_is_read_as_meant() {
        let schema = json!({
            "type": "object",
            "properties": {
                "limit": { "type": "integer" },
                "ratio": { "type": "number" },
                "exact": { "type": "boolean" },
                "filter": { "$ref": "#/$defs/Filter" },
                "tags": { "type": "array", "items": { "type": "integer" } },
                "note": { "type": ["string", "null"] },
                "name": { "type": "string" },
                "maybe": { "anyOf": [{ "type": "integer" }, { "type": "null" }] }
            },
            "required": ["name"],
            "$defs": {
                "Filter": {
                    "type": "object",
                    "properties": { "min": { "type": "integer" } }
                }
            }
        });
        let sent = json!({
            "limit": "5", "ratio": "2.5", "exact": "true",
            "filter": "{\"min\": \"3\"}", "tags": "[1, \"2\"]",
            "note": null, "name": "7", "maybe": "4"
        });
        assert_eq!(
            coerced(sent, &schema),
            json!({
                "limit": 5, "ratio": 2.5, "exact": true,
                "filter": { "min": 3 }, "tags": [1, 2],
                "note": null, "name": "7", "maybe": 4
            })
        );
        // An optional argument sent as null is left out; a required one is not.
        let schema = json!({
            "type": "object",
            "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
            "required": ["b"]
        });
        assert_eq!(
            coerced(json!({ "a": null, "b": null }), &schema),
            json!({ "b": null })
        );
        // What cannot be read stays as it came.
        assert_eq!(
            coerced(json!({ "a": "five", "b": "{" }), &schema),
            json!({ "a": "five", "b": "{" })
        );
    }
}
