//! The strict-mode form of an argument schema, for providers that constrain a model's
//! arguments to the schema (`"strict": true`): OpenAI Chat Completions and Responses, and
//! Anthropic, each in its own subset ([`Dialect`]), by one transform.
//!
//! OpenAI's rules for a strict schema (Structured Outputs, "Supported schemas",
//! <https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>): the root is
//! an object, not `anyOf`; every object has `"additionalProperties": false` and lists every
//! property in `required`, an optional one taking `null` among its types; `anyOf`, `$defs` and
//! `$ref` are supported, `allOf`, `not`, `if`/`then`/`else`, `patternProperties` and
//! `dependentRequired` are not.
//!
//! Anthropic's rules, shared by JSON outputs and strict tool use ("JSON Schema limitations",
//! <https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs#json-schema-limitations>):
//! every object has `"additionalProperties": false`, but `required` means what it says (an
//! optional property may be left out, so it is not made nullable: type arrays and `anyOf` also
//! count against a request's limit of 16 union-typed parameters); `enum` of strings, numbers,
//! booleans and nulls only; `const`, `anyOf`, `allOf` without `$ref` inside, local `$ref` into
//! `$defs` or `definitions`, and `default` are supported; string `format`s `date-time`, `time`,
//! `date`, `duration`, `email`, `hostname`, `uri`, `ipv4`, `ipv6` and `uuid`; `minItems` of 0
//! or 1; `pattern`s without backreferences, lookaround or word boundaries. Not supported:
//! recursive schemas, numerical constraints (`minimum`, `maximum`, `multipleOf`, ...), string
//! lengths, other array constraints, external `$ref`s.
//!
//! The transform keeps only the keywords the dialect accepts (for both `type`, `properties`,
//! `required`, `additionalProperties`, `items`, `enum`, `const`, `anyOf`, `$ref`, `$defs`,
//! `definitions`, `description`; for Anthropic also `default`, `allOf` and what it accepts of
//! `format`, `minItems` and `pattern`) and moves the meaning of the others that matter to the
//! model (defaults, bounds, lengths, formats, patterns) into the description. `oneOf` becomes
//! `anyOf`. What it cannot say is a [`StrictError`]. Because an optional argument is sent as
//! `null` under OpenAI's rules, the lenient reading of arguments (see [`crate::call::lenient`])
//! leaves it out again, so the tool's author still sees an optional argument as absent.

use serde_json::{Map, Value};

use crate::schema::{MAX_WALK_DEPTH, Memo, Slot, Stop, Walk, Why, child_path, children};

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

/// Whose strict subset a schema is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// OpenAI Chat Completions and Responses.
    OpenAi,
    /// Anthropic's strict tool use.
    Anthropic,
}

/// The string formats Anthropic's strict mode checks; others go into the description.
const ANTHROPIC_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "uri",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Regex constructs Anthropic's strict mode does not support in a `pattern`.
const ANTHROPIC_REFUSED_REGEX: &[&str] = &["(?=", "(?!", "(?<=", "(?<!", "\\b", "\\B"];

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
    "definitions",
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

/// The strict form, in `dialect`, of the argument schema `parameters` of `tool`.
pub(crate) fn strict_parameters(
    tool: &str,
    parameters: &Map<String, Value>,
    dialect: Dialect,
) -> Result<Value, StrictError> {
    let root = Value::Object(parameters.clone());
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(refused(tool, "", "the arguments are not one object"));
    }
    if dialect == Dialect::Anthropic {
        match recursion(&root) {
            Ok(None) => {}
            Ok(Some(path)) => {
                return Err(refused(
                    tool,
                    &path,
                    "a recursive schema (a `$ref` back to a schema that contains it)",
                ));
            }
            Err(stop) => return Err(refused(tool, &stop.path, stop.why.to_string())),
        }
    }
    Transform {
        tool,
        dialect,
        walk: Walk::new(&root),
    }
    .schema(&root, "")
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

struct Transform<'t> {
    tool: &'t str,
    dialect: Dialect,
    /// The schemas transformed: the document as written, `$ref`s left as they are.
    walk: Walk<'t>,
}

impl Transform<'_> {
    fn refused(&self, path: &str, construct: impl Into<String>) -> StrictError {
        refused(self.tool, path, construct)
    }

    fn schema(&mut self, schema: &Value, path: &str) -> Result<Value, StrictError> {
        let Value::Object(map) = schema else {
            // `true`/`false` schemas: a free value cannot be constrained.
            return Err(self.refused(path, "a schema that admits any value"));
        };
        if let Err(why) = self.walk.visit() {
            return Err(self.refused(path, why.to_string()));
        }
        let anthropic = self.dialect == Dialect::Anthropic;
        let mut out = Map::new();
        let mut notes: Vec<String> = Vec::new();
        for (key, value) in map {
            let here = format!("{path}/{key}");
            match key.as_str() {
                "allOf" if anthropic => {
                    if contains_ref(value) {
                        return Err(self.refused(&here, "`allOf` with a `$ref` inside"));
                    }
                    out.insert(key.clone(), self.options(value, &here)?);
                }
                k if REFUSED.contains(&k) => {
                    return Err(self.refused(&here, format!("`{k}` is not supported")));
                }
                "properties" | "$defs" | "definitions" => {
                    let mut members = Map::new();
                    for (name, member) in value.as_object().into_iter().flatten() {
                        let member_path = format!("{here}/{name}");
                        members.insert(name.clone(), self.schema(member, &member_path)?);
                    }
                    out.insert(key.clone(), Value::Object(members));
                }
                "items" => {
                    out.insert(key.clone(), self.schema(value, &here)?);
                }
                "anyOf" | "oneOf" => {
                    out.insert("anyOf".into(), self.options(value, &here)?);
                }
                "additionalProperties" if value != &Value::Bool(false) => {
                    return Err(self.refused(
                        &here,
                        "an object with free keys (a map): strict mode needs every key named",
                    ));
                }
                "$ref" if anthropic && !value.as_str().is_some_and(|r| r.starts_with('#')) => {
                    return Err(self.refused(&here, "a `$ref` outside the schema"));
                }
                "enum" if anthropic && value.as_array().into_iter().flatten().any(is_complex) => {
                    return Err(self.refused(&here, "an `enum` with an object or array value"));
                }
                k if KEPT.contains(&k) => {
                    out.insert(key.clone(), value.clone());
                }
                k if anthropic && anthropic_keeps(k, value, map) => {
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
            match self.dialect {
                Dialect::OpenAi => require_all(&mut out),
                Dialect::Anthropic => {}
            }
            close_object(&mut out);
        }
        super::describe::describe(&mut out, &notes);
        Ok(Value::Object(out))
    }

    /// The options of an `anyOf`, `oneOf` or `allOf`, each in strict form.
    fn options(&mut self, options: &Value, path: &str) -> Result<Value, StrictError> {
        options
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, option)| self.schema(option, &format!("{path}/{i}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array)
    }
}

/// What Anthropic's strict mode accepts beyond the shared keywords: `default`; a string
/// `format` it checks; `minItems` of 0 or 1; a `pattern` without the regex constructs it
/// refuses.
fn anthropic_keeps(key: &str, value: &Value, map: &Map<String, Value>) -> bool {
    match key {
        "default" => true,
        "format" => value
            .as_str()
            .is_some_and(|f| is_string(map) && ANTHROPIC_FORMATS.contains(&f)),
        "minItems" => value.as_u64().is_some_and(|n| n <= 1),
        "pattern" => value.as_str().is_some_and(|p| {
            !ANTHROPIC_REFUSED_REGEX.iter().any(|c| p.contains(c)) && !has_backreference(p)
        }),
        _ => false,
    }
}

/// A `\1`..`\9` in a regex.
fn has_backreference(pattern: &str) -> bool {
    pattern
        .as_bytes()
        .windows(2)
        .any(|w| w[0] == b'\\' && w[1].is_ascii_digit() && w[1] != b'0')
}

fn is_complex(value: &Value) -> bool {
    value.is_object() || value.is_array()
}

fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map.contains_key("$ref") || map.values().any(contains_ref),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}

/// The place (a JSON Pointer) of a `$ref` that leads back to a schema containing it, if any;
/// each target searched once, within the walk's budget.
fn recursion(root: &Value) -> Result<Option<String>, Stop> {
    struct Search<'r> {
        walk: Walk<'r>,
        /// Targets being searched (`Open`) or searched to their end without a way back.
        targets: Memo<()>,
    }
    impl<'r> Search<'r> {
        fn visit(
            &mut self,
            schema: &'r Value,
            path: &str,
            depth: usize,
        ) -> Result<Option<String>, Stop> {
            if depth > MAX_WALK_DEPTH {
                return Err(Stop::at(path, Why::TooDeep));
            }
            self.walk.visit().map_err(|why| Stop::at(path, why))?;
            if let Some(reference) = schema.get("$ref").and_then(Value::as_str)
                && let Some(target) = self.walk.target(reference)
            {
                let here = format!("{path}/$ref");
                match self.targets.get(target) {
                    Some(Slot::Open) => return Ok(Some(here)),
                    Some(Slot::Done(())) => {}
                    None => {
                        self.targets.open(target);
                        let pointer = reference.trim_start_matches('#');
                        if let Some(found) = self.visit(target, pointer, depth + 1)? {
                            return Ok(Some(found));
                        }
                        self.targets.close(target, ());
                    }
                }
            }
            for (key, segment, child) in children(schema) {
                let found = self.visit(child, &child_path(path, key, segment), depth + 1)?;
                if found.is_some() {
                    return Ok(found);
                }
            }
            Ok(None)
        }
    }
    let mut search = Search {
        walk: Walk::new(root),
        targets: Memo::default(),
    };
    search.targets.open(root);
    search.visit(root, "", 1)
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

/// Every property required, the optional ones admitting `null` (OpenAI's rule).
fn require_all(out: &mut Map<String, Value>) {
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
    }
    out.insert("required".into(), Value::Array(all));
}

/// No keys but the named ones (both dialects' rule).
fn close_object(out: &mut Map<String, Value>) {
    out.entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
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

    use super::{Dialect, strict_parameters};

    fn strict(schema: serde_json::Value) -> Result<serde_json::Value, super::StrictError> {
        strict_parameters("t", schema.as_object().unwrap(), Dialect::OpenAi)
    }

    fn anthropic(schema: serde_json::Value) -> Result<serde_json::Value, super::StrictError> {
        strict_parameters("t", schema.as_object().unwrap(), Dialect::Anthropic)
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

    #[test]
    fn anthropic_keeps_what_it_accepts_and_requires_only_what_is_required() {
        let out = anthropic(json!({
            "type": "object",
            "properties": {
                "query": { "type": "string", "minLength": 1, "pattern": "^[a-z]+$" },
                "limit": { "type": "integer", "default": 5, "minimum": 1, "format": "uint32" },
                "when": { "type": "string", "format": "date-time" },
                "site": { "type": "string", "format": "idn-hostname" },
                "tags": { "type": "array", "items": { "type": "string" }, "minItems": 1, "maxItems": 3 },
                "many": { "type": "array", "items": { "type": "string" }, "minItems": 2 },
                "word": { "type": "string", "pattern": "\\bcat\\b" },
                "kind": { "$ref": "#/$defs/Kind" },
                "mode": { "oneOf": [{ "const": "a" }, { "const": "b" }] },
                "both": { "allOf": [{ "type": "string" }, { "minLength": 2 }] }
            },
            "required": ["query"],
            "$defs": { "Kind": { "type": "string", "enum": ["x", "y"] } }
        }))
        .unwrap();
        assert_eq!(out["required"], json!(["query"]));
        assert_eq!(out["additionalProperties"], false);
        let p = &out["properties"];
        assert_eq!(p["query"]["pattern"], "^[a-z]+$");
        assert_eq!(
            p["query"]["description"],
            "(at least this many characters: 1)"
        );
        assert_eq!(
            p["limit"],
            json!({ "type": "integer", "default": 5, "description": "(at least 1)" })
        );
        assert_eq!(p["when"]["format"], "date-time");
        assert_eq!(p["site"].get("format"), None);
        assert_eq!(p["site"]["description"], "(format \"idn-hostname\")");
        assert_eq!(p["tags"]["minItems"], 1);
        assert_eq!(p["tags"]["description"], "(at most this many items: 3)");
        assert_eq!(p["many"].get("minItems"), None);
        assert_eq!(p["word"].get("pattern"), None);
        assert_eq!(p["kind"], json!({ "$ref": "#/$defs/Kind" }));
        assert_eq!(
            p["mode"],
            json!({ "anyOf": [{ "const": "a" }, { "const": "b" }] })
        );
        assert_eq!(
            p["both"]["allOf"][1]["description"],
            "(at least this many characters: 2)"
        );
    }

    #[test]
    fn what_anthropic_cannot_express_is_named() {
        let recursive = json!({
            "type": "object",
            "properties": { "root": { "$ref": "#/$defs/Node" } },
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": { "children": { "type": "array", "items": { "$ref": "#/$defs/Node" } } }
                }
            }
        });
        let error = anthropic(recursive.clone()).unwrap_err();
        assert_eq!(error.path, "/$defs/Node/properties/children/items/$ref");
        assert!(error.construct.contains("recursive"), "{error}");
        // OpenAI takes recursion.
        assert!(strict(recursive).is_ok());
        for (schema, path) in [
            (
                json!({ "type": "object", "properties": { "a": { "allOf": [{ "$ref": "#/$defs/A" }] } }, "$defs": { "A": { "type": "string" } } }),
                "/properties/a/allOf",
            ),
            (
                json!({ "type": "object", "properties": { "a": { "enum": [[1], 2] } } }),
                "/properties/a/enum",
            ),
            (
                json!({ "type": "object", "properties": { "a": { "$ref": "https://example.com/a.json" } } }),
                "/properties/a/$ref",
            ),
            (
                json!({ "type": "object", "properties": { "a": { "type": "object", "additionalProperties": true } } }),
                "/properties/a/additionalProperties",
            ),
        ] {
            assert_eq!(
                anthropic(schema.clone()).unwrap_err().path,
                path,
                "{schema}"
            );
        }
    }
}
