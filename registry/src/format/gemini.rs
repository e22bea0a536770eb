//! Gemini's `parameters`: the OpenAPI 3.0 subset its `Schema` object takes
//! (<https://ai.google.dev/api/caching#Schema>): `type`, `format`, `description`, `nullable`,
//! `enum` (of strings), `properties`, `required`, `items`, `anyOf`, `minItems`/`maxItems`,
//! `minLength`/`maxLength`, `pattern`, `minimum`/`maximum`, `default`, `title`. No `$ref`, no
//! `$defs`, no `const`, no `additionalProperties`, no `oneOf`.
//!
//! The transform inlines `$ref`s from the root's `$defs`, writes `[X, "null"]` and
//! `anyOf: [X, null]` as `X` with `"nullable": true`, a `const` as a one-value `enum` (a string)
//! or in the description (another value), `oneOf` as `anyOf`, and moves the meaning of other
//! keywords that matter (exclusive bounds, `multipleOf`, `uniqueItems`, a number's enum) into the
//! description. A schema it cannot express (a recursive type) is an error; the definition then
//! carries the schema as `parametersJsonSchema`, which Gemini also takes.

use serde_json::{Map, Value, json};

/// Inlined `$ref`s deeper than this are taken as a recursive type.
const MAX_INLINE_DEPTH: usize = 16;

/// Why a schema has no Gemini `parameters` form: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inexpressible {
    pub(crate) path: String,
    pub(crate) construct: String,
}

/// The Gemini `parameters` form of an argument schema.
pub(crate) fn parameters(schema: &Map<String, Value>) -> Result<Value, Inexpressible> {
    let root = Value::Object(schema.clone());
    Walk { root: &root }.schema(&root, "", 0)
}

struct Walk<'r> {
    root: &'r Value,
}

const KEPT: &[&str] = &[
    "description",
    "title",
    "format",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "default",
    "required",
];

const DESCRIBED: &[(&str, &str)] = &[
    ("exclusiveMinimum", "more than"),
    ("exclusiveMaximum", "less than"),
    ("multipleOf", "a multiple of"),
    ("uniqueItems", "unique items:"),
];

impl Walk<'_> {
    fn schema(&self, schema: &Value, path: &str, depth: usize) -> Result<Value, Inexpressible> {
        let Value::Object(map) = schema else {
            return Ok(json!({}));
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            if depth >= MAX_INLINE_DEPTH {
                return Err(Inexpressible {
                    path: format!("{path}/$ref"),
                    construct: format!("`{reference}` refers to itself (a recursive type)"),
                });
            }
            let target = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
                .ok_or_else(|| Inexpressible {
                    path: format!("{path}/$ref"),
                    construct: format!("`{reference}` points nowhere in the schema"),
                })?;
            let mut inlined = self.schema(target, path, depth + 1)?;
            // The referring schema's own description wins over the definition's.
            if let (Some(description), Value::Object(out)) = (map.get("description"), &mut inlined)
            {
                out.insert("description".into(), description.clone());
            }
            return Ok(inlined);
        }
        let mut out = Map::new();
        let mut notes = Vec::new();
        let mut nullable = false;
        match map.get("type") {
            Some(Value::String(ty)) => {
                out.insert("type".into(), ty.clone().into());
            }
            Some(Value::Array(types)) => {
                let mut others = types.iter().filter(|t| *t != "null");
                nullable = types.iter().any(|t| t == "null");
                if let (Some(only), None) = (others.next(), others.next()) {
                    out.insert("type".into(), only.clone());
                } else {
                    let options: Vec<Value> = types
                        .iter()
                        .filter(|t| *t != "null")
                        .map(|t| json!({ "type": t }))
                        .collect();
                    out.insert("anyOf".into(), options.into());
                }
            }
            _ => {}
        }
        for (key, value) in map {
            let here = format!("{path}/{key}");
            match key.as_str() {
                "type" | "$schema" | "$defs" | "additionalProperties" => {}
                "properties" => {
                    let mut members = Map::new();
                    for (name, member) in value.as_object().into_iter().flatten() {
                        members.insert(
                            name.clone(),
                            self.schema(member, &format!("{here}/{name}"), depth)?,
                        );
                    }
                    out.insert(key.clone(), Value::Object(members));
                }
                "items" => {
                    out.insert(key.clone(), self.schema(value, &here, depth)?);
                }
                "anyOf" | "oneOf" => {
                    let options: Vec<&Value> = value.as_array().into_iter().flatten().collect();
                    let non_null: Vec<&&Value> = options
                        .iter()
                        .filter(|o| o.get("type") != Some(&Value::from("null")))
                        .collect();
                    nullable |= non_null.len() < options.len();
                    if let [only] = non_null.as_slice() {
                        // `X or null`: X, nullable.
                        if let Value::Object(inner) = self.schema(only, &here, depth)? {
                            for (k, v) in inner {
                                out.entry(k).or_insert(v);
                            }
                        }
                    } else {
                        let options = non_null
                            .iter()
                            .enumerate()
                            .map(|(i, o)| self.schema(o, &format!("{here}/{i}"), depth))
                            .collect::<Result<Vec<_>, _>>()?;
                        out.insert("anyOf".into(), options.into());
                    }
                }
                "const" => match value {
                    Value::String(_) => {
                        out.insert("enum".into(), json!([value]));
                    }
                    other => notes.push(format!("always {other}")),
                },
                "enum" => {
                    let values: Vec<&Value> = value.as_array().into_iter().flatten().collect();
                    nullable |= values.iter().any(|v| v.is_null());
                    let strings: Vec<&Value> =
                        values.iter().copied().filter(|v| v.is_string()).collect();
                    if strings.len() == values.iter().filter(|v| !v.is_null()).count() {
                        out.insert("enum".into(), json!(strings));
                    } else {
                        let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                        notes.push(format!("one of {}", shown.join(", ")));
                    }
                }
                "format" => {
                    // Gemini knows a few formats; a number's storage format says nothing.
                    if matches!(
                        value.as_str(),
                        Some("date-time" | "enum" | "float" | "double" | "int32" | "int64")
                    ) {
                        out.insert(key.clone(), value.clone());
                    }
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k => {
                    if let Some((_, words)) = DESCRIBED.iter().find(|(name, _)| *name == k) {
                        notes.push(format!("{words} {value}"));
                    }
                }
            }
        }
        if out.contains_key("enum") && !out.contains_key("type") {
            out.insert("type".into(), "string".into());
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        super::describe(&mut out, &notes);
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::parameters;

    #[test]
    fn refs_are_inlined_and_nulls_become_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "unit": { "$ref": "#/$defs/Unit", "description": "The unit" },
                "note": { "type": ["string", "null"] },
                "limit": { "anyOf": [{ "type": "integer", "format": "uint32" }, { "type": "null" }] },
                "mode": { "const": "fast" },
                "step": { "type": "number", "exclusiveMinimum": 0 }
            },
            "required": ["unit"],
            "additionalProperties": false,
            "$defs": { "Unit": { "type": "string", "enum": ["c", "f"] } }
        });
        let out = parameters(schema.as_object().unwrap()).unwrap();
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "unit": { "type": "string", "enum": ["c", "f"], "description": "The unit" },
                    "note": { "type": "string", "nullable": true },
                    "limit": { "type": "integer", "nullable": true },
                    "mode": { "enum": ["fast"], "type": "string" },
                    "step": { "type": "number", "description": "(more than 0)" }
                },
                "required": ["unit"]
            })
        );
    }

    #[test]
    fn a_recursive_type_is_named() {
        let schema = json!({
            "type": "object",
            "properties": { "tree": { "$ref": "#/$defs/Node" } },
            "$defs": { "Node": { "type": "object", "properties": { "child": { "$ref": "#/$defs/Node" } } } }
        });
        let error = parameters(schema.as_object().unwrap()).unwrap_err();
        assert!(error.construct.contains("recursive"), "{error:?}");
    }
}
