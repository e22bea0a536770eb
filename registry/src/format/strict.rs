//! The strict-mode form of an argument schema, for providers that constrain a model's
//! arguments to the schema (`"strict": true`): OpenAI Chat Completions and Responses, and
//! Anthropic.
//!
//! OpenAI's rules for a strict schema (Structured Outputs, "Supported schemas",
//! <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>): the root is
//! an object, not `anyOf`; every object has `"additionalProperties": false` and lists every
//! property in `required`, an optional one taking `null` among its types; `anyOf`, `$defs` and
//! `$ref` are supported, `allOf`, `not`, `if`/`then`/`else`, `patternProperties` and
//! `dependentRequired` are not. Anthropic's strict tool use takes the same subset
//! (<https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs>).
//!
//! The transform keeps only the keywords every strict mode accepts (`type`, `properties`,
//! `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`, `$ref`, `$defs`,
//! `description`) and moves the meaning of the others that matter to the model (defaults,
//! bounds, lengths, formats, patterns) into the description. `oneOf` becomes `anyOf`. Because
//! an optional argument is now sent as `null`, the lenient reading of arguments (see
//! [`crate::call::lenient`]) leaves it out again, so the tool's author still sees an optional
//! argument as absent.

use serde_json::{Map, Value};

/// A schema that strict mode cannot express.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool `{tool}` cannot be listed in strict mode: at `{path}`, {construct}; list it without strict mode or change its arguments"
)]
pub struct StrictError {
    /// The tool.
    pub tool: String,
    /// Where in the schema (a JSON Pointer).
    pub path: String,
    /// What strict mode cannot express there.
    pub construct: String,
}

/// The keywords kept as they are.
const KEPT: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "description",
];

/// Keywords whose meaning goes into the description, with how to say it.
const DESCRIBED: &[(&str, &str)] = &[
    ("default", "default"),
    ("minimum", "at least"),
    ("maximum", "at most"),
    ("exclusiveMinimum", "more than"),
    ("exclusiveMaximum", "less than"),
    ("multipleOf", "a multiple of"),
    ("minLength", "at least this many characters:"),
    ("maxLength", "at most this many characters:"),
    ("pattern", "matching"),
    ("format", "format"),
    ("minItems", "at least this many items:"),
    ("maxItems", "at most this many items:"),
    ("uniqueItems", "unique items:"),
];

/// Keywords that change what is valid and that strict mode refuses.
const REFUSED: &[&str] = &[
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "unevaluatedProperties",
    "propertyNames",
    "prefixItems",
];

/// The strict form of the argument schema `parameters` of `tool`.
pub(crate) fn strict_parameters(
    tool: &str,
    parameters: &Map<String, Value>,
) -> Result<Value, StrictError> {
    let root = Value::Object(parameters.clone());
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(refused(tool, "", "the arguments are not one object"));
    }
    transform(tool, &root, "")
}

fn refused(tool: &str, path: &str, construct: impl Into<String>) -> StrictError {
    StrictError {
        tool: tool.to_owned(),
        path: if path.is_empty() {
            "/".into()
        } else {
            path.into()
        },
        construct: construct.into(),
    }
}

fn transform(tool: &str, schema: &Value, path: &str) -> Result<Value, StrictError> {
    let Value::Object(map) = schema else {
        // `true`/`false` schemas: a free value cannot be constrained.
        return Err(refused(tool, path, "a schema that admits any value"));
    };
    let mut out = Map::new();
    let mut notes: Vec<String> = Vec::new();
    for (key, value) in map {
        let here = format!("{path}/{key}");
        match key.as_str() {
            k if REFUSED.contains(&k) => {
                return Err(refused(tool, &here, format!("`{k}` is not supported")));
            }
            "properties" | "$defs" => {
                let mut members = Map::new();
                for (name, member) in value.as_object().into_iter().flatten() {
                    let member_path = format!("{here}/{name}");
                    members.insert(name.clone(), transform(tool, member, &member_path)?);
                }
                out.insert(key.clone(), Value::Object(members));
            }
            "items" => {
                out.insert(key.clone(), transform(tool, value, &here)?);
            }
            "anyOf" | "oneOf" => {
                let options = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, option)| transform(tool, option, &format!("{here}/{i}")))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert("anyOf".into(), Value::Array(options));
            }
            "additionalProperties" if value != &Value::Bool(false) => {
                return Err(refused(
                    tool,
                    &here,
                    "an object with free keys (a map): strict mode needs every key named",
                ));
            }
            k if KEPT.contains(&k) => {
                out.insert(key.clone(), value.clone());
            }
            // A number's storage format (`uint32`, `double`) says nothing a model can use.
            "format" if !value.as_str().is_some_and(|_| is_string(map)) => {}
            k => {
                if let Some((_, words)) = DESCRIBED.iter().find(|(name, _)| *name == k) {
                    notes.push(format!("{words} {value}"));
                }
            }
        }
    }
    if is_object(map) {
        close_object(&mut out);
    }
    super::describe(&mut out, &notes);
    Ok(Value::Object(out))
}

fn is_string(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::String(ty)) => ty == "string",
        Some(Value::Array(types)) => types.iter().any(|t| t == "string"),
        _ => false,
    }
}

fn is_object(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties")
}

/// Every property required, the optional ones admitting `null`; no other keys.
fn close_object(out: &mut Map<String, Value>) {
    let required: Vec<String> = out
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut all = Vec::new();
    if let Some(Value::Object(properties)) = out.get_mut("properties") {
        for (name, member) in properties.iter_mut() {
            all.push(Value::String(name.clone()));
            if !required.contains(name) {
                admit_null(member);
            }
        }
    } else {
        out.insert("properties".into(), Value::Object(Map::new()));
    }
    out.insert("required".into(), Value::Array(all));
    out.insert("additionalProperties".into(), Value::Bool(false));
}

/// `member` also admits `null`.
fn admit_null(member: &mut Value) {
    let Value::Object(map) = member else { return };
    match map.get_mut("type") {
        Some(Value::String(ty)) if ty != "null" => {
            let ty = std::mem::take(ty);
            map.insert("type".into(), serde_json::json!([ty, "null"]));
        }
        Some(Value::Array(types)) => {
            if !types.iter().any(|t| t == "null") {
                types.push("null".into());
            }
        }
        Some(_) => {}
        None => {
            if let Some(Value::Array(options)) = map.get_mut("anyOf") {
                if !options
                    .iter()
                    .any(|o| o.get("type") == Some(&Value::from("null")))
                {
                    options.push(serde_json::json!({ "type": "null" }));
                }
            } else if map.contains_key("$ref") {
                let reference = map.remove("$ref").unwrap_or(Value::Null);
                map.insert(
                    "anyOf".into(),
                    serde_json::json!([{ "$ref": reference }, { "type": "null" }]),
                );
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::strict_parameters;

    fn strict(schema: serde_json::Value) -> Result<serde_json::Value, super::StrictError> {
        strict_parameters("t", schema.as_object().unwrap())
    }

    #[test]
    fn optional_arguments_become_required_and_nullable() {
        let out = strict(json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "minLength": 1 },
                "limit": { "type": "integer", "default": 5, "minimum": 1 },
                "kind": { "$ref": "#/$defs/Kind" },
                "mode": { "oneOf": [{ "const": "a" }, { "const": "b" }] }
            },
            "required": ["query"],
            "$defs": { "Kind": { "type": "string", "enum": ["x", "y"] } }
        }))
        .unwrap();
        assert_eq!(out["required"], json!(["query", "limit", "kind", "mode"]));
        assert_eq!(out["additionalProperties"], false);
        assert_eq!(
            out["properties"]["limit"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(
            out["properties"]["limit"]["description"],
            "(default 5; at least 1)"
        );
        assert!(out["properties"]["limit"].get("default").is_none());
        assert_eq!(
            out["properties"]["kind"],
            json!({ "anyOf": [{ "$ref": "#/$defs/Kind" }, { "type": "null" }] })
        );
        assert_eq!(
            out["properties"]["mode"]["anyOf"][2],
            json!({ "type": "null" })
        );
        assert_eq!(out["properties"]["query"]["type"], "string");
    }

    #[test]
    fn what_strict_mode_cannot_express_is_named() {
        let error = strict(json!({
            "type": "object",
            "properties": { "labels": { "type": "object", "additionalProperties": { "type": "string" } } }
        }))
        .unwrap_err();
        assert_eq!(error.path, "/properties/labels/additionalProperties");
        assert!(error.to_string().contains("tool `t`"), "{error}");
        let error =
            strict(json!({ "type": "object", "properties": { "a": { "not": {} } } })).unwrap_err();
        assert_eq!(error.path, "/properties/a/not");
        assert!(strict(json!({ "anyOf": [] })).is_err());
    }
}
