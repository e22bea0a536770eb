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

use super::MAX_ARGS_DEPTH;
use crate::schema::MAX_SCHEMA_NODES;
use crate::schema::kinds::{Kinds, Typing};

/// The most schemas one decoding visits in all: a hundred times what one schema may hold, so a
/// long array of values of a large schema is read in full, and a hostile pairing of the two
/// stops in milliseconds.
pub(crate) const MAX_DECODE_VISITS: usize = 100 * MAX_SCHEMA_NODES;

/// Decoding gave up: reading the arguments by the schema took more than [`MAX_DECODE_VISITS`].
#[derive(Debug)]
pub(crate) struct TooCostly;

/// Rewrites `value` (the arguments) by the rules above; returns whether anything changed.
pub(crate) fn coerce(value: &mut Value, root: &Value) -> Result<bool, TooCostly> {
    let mut walk = Walk {
        typing: Typing::with_budget(root, MAX_DECODE_VISITS),
        changed: false,
    };
    walk.value(value, root, 0);
    if walk.typing.spent() {
        return Err(TooCostly);
    }
    Ok(walk.changed)
}

impl TooCostly {
    /// The error a call answers with.
    pub(crate) fn error(self) -> super::ToolError {
        super::ToolError::InvalidArguments {
            tool: String::new(),
            path: String::new(),
            message: format!(
                "reading these arguments by the tool's schema took more than {MAX_DECODE_VISITS} \
                 schema visits; send fewer or smaller values, as the schema says"
            ),
        }
    }
}

struct Walk<'s> {
    typing: Typing<'s>,
    changed: bool,
}

impl<'s> Walk<'s> {
    fn value(&mut self, value: &mut Value, schema: &'s Value, depth: usize) {
        if depth > MAX_ARGS_DEPTH || self.typing.spent() {
            return;
        }
        let expected = self.typing.kinds(schema);
        if let Value::String(text) = value
            && let Some(read) = read_string(text, expected)
        {
            *value = read;
            self.changed = true;
        }
        match value {
            Value::Object(map) => self.object(map, schema, depth),
            Value::Array(items) => {
                if let Some(items_schema) = self.typing.items(schema) {
                    for item in items {
                        self.value(item, items_schema, depth + 1);
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, map: &mut Map<String, Value>, schema: &'s Value, depth: usize) {
        let resolved = self.typing.resolve(schema);
        let required: Vec<&str> = resolved
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut absent = Vec::new();
        for (key, member) in map.iter_mut() {
            let Some(member_schema) = self.typing.property(schema, key) else {
                continue;
            };
            if member.is_null()
                && !required.contains(&key.as_str())
                && !self.typing.kinds(member_schema).has(Kinds::NULL)
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

/// What a string means where the schema expects something else; `None` to leave it.
fn read_string(text: &str, expected: Kinds) -> Option<Value> {
    if expected.has(Kinds::STRING) {
        return None;
    }
    let trimmed = text.trim();
    if (expected.has(Kinds::OBJECT) && trimmed.starts_with('{'))
        || (expected.has(Kinds::ARRAY) && trimmed.starts_with('['))
    {
        // Depth is bounded by serde_json's own recursion limit.
        return serde_json::from_str::<Value>(trimmed)
            .ok()
            .filter(|v| v.is_object() || v.is_array());
    }
    if expected.has(Kinds::INTEGER) {
        if let Ok(n) = trimmed.parse::<i64>() {
            return Some(n.into());
        }
        if let Ok(n) = trimmed.parse::<u64>() {
            return Some(n.into());
        }
    }
    if expected.has(Kinds::NUMBER)
        && let Some(n) = trimmed
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
    {
        return Some(Value::Number(n));
    }
    if expected.has(Kinds::BOOLEAN) {
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
        coerce(&mut value, schema).unwrap();
        value
    }

    /// Each key looked up in 5,000 options: 5,000 keys are 25 million visits, past the budget;
    /// the decoding stops there and says so instead of going on.
    #[test]
    fn decoding_past_its_budget_stops_with_an_error() {
        let options: Vec<serde_json::Value> = (0..5_000)
            .map(|i| json!({ "properties": { format!("p{i}"): { "type": "integer" } } }))
            .collect();
        let schema = json!({ "type": "object", "anyOf": options });
        let few: serde_json::Map<String, serde_json::Value> =
            (0..10).map(|i| (format!("k{i}"), json!("1"))).collect();
        assert!(coerce(&mut serde_json::Value::Object(few), &schema).is_ok());
        let many: serde_json::Map<String, serde_json::Value> =
            (0..5_000).map(|i| (format!("k{i}"), json!("1"))).collect();
        let error = coerce(&mut serde_json::Value::Object(many), &schema)
            .unwrap_err()
            .error();
        assert_eq!(error.code(), "invalid_arguments");
        assert!(error.to_string().contains("schema visits"), "{error}");
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
