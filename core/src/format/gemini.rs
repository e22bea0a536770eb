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
//! description. A schema it cannot express is an error: a recursive type, or one that inlined
//! would take more than [`MAX_SCHEMA_NODES`] schemas or nest more than [`MAX_WALK_DEPTH`] levels
//! (each definition is transformed once and copied where it is used, so the cost is what is
//! written, bounded by the budget). The definition then carries the schema as
//! `parametersJsonSchema`, which Gemini also takes.

use serde_json::{Map, Value, json};

use crate::schema::{MAX_SCHEMA_NODES, MAX_WALK_DEPTH, Memo, Slot, Walk, Why};

/// Why a schema has no Gemini `parameters` form: where, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inexpressible {
    pub(crate) path: String,
    pub(crate) construct: String,
}

/// The Gemini `parameters` form of an argument schema.
pub(crate) fn parameters(schema: &Map<String, Value>) -> Result<Value, Inexpressible> {
    let root = Value::Object(schema.clone());
    let mut transform = Transform {
        walk: Walk::new(&root),
        inlined: Memo::default(),
    };
    transform.schema(&root, "", 1)
}

struct Transform<'r> {
    /// Counts the schemas written: one per schema transformed, a copy's size per copy.
    walk: Walk<'r>,
    /// Each `$ref` target's transformed form and how many schemas it holds.
    inlined: Memo<(Value, usize)>,
}

impl Inexpressible {
    fn at(path: &str, why: Why) -> Self {
        let construct = match why {
            Why::Spent => {
                format!("inlining its `$ref`s would write more than {MAX_SCHEMA_NODES} schemas")
            }
            other => other.to_string(),
        };
        Self {
            path: path.to_owned(),
            construct,
        }
    }
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

/// What one schema is transformed into while its keywords are read: the output, and what
/// reaches Gemini only as words in the description or as `nullable`.
#[derive(Default)]
struct Written {
    out: Map<String, Value>,
    notes: Vec<String>,
    nullable: bool,
}

impl<'r> Transform<'r> {
    /// The Gemini form of `schema`, found at `path`, `depth` levels down.
    fn schema(
        &mut self,
        schema: &'r Value,
        path: &str,
        depth: usize,
    ) -> Result<Value, Inexpressible> {
        let Value::Object(map) = schema else {
            return Ok(json!({}));
        };
        if depth > MAX_WALK_DEPTH {
            return Err(Inexpressible::at(path, Why::TooDeep));
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let here = format!("{path}/$ref");
            let mut inlined = self.inline(reference, &here, depth)?;
            // The referring schema's own description wins over the definition's.
            if let (Some(description), Value::Object(out)) = (map.get("description"), &mut inlined)
            {
                out.insert("description".into(), description.clone());
            }
            return Ok(inlined);
        }
        self.walk
            .visit()
            .map_err(|why| Inexpressible::at(path, why))?;
        let mut written = Written::default();
        write_type(map.get("type"), &mut written);
        for (key, value) in map {
            let here = format!("{path}/{key}");
            self.keyword(key, value, &here, depth, &mut written)?;
        }
        let Written {
            mut out,
            notes,
            nullable,
        } = written;
        if out.contains_key("enum") && !out.contains_key("type") {
            out.insert("type".into(), "string".into());
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        super::describe::describe(&mut out, &notes);
        Ok(Value::Object(out))
    }

    /// Writes what keyword `key` of a schema says, found at `here`, into `written`.
    fn keyword(
        &mut self,
        key: &str,
        value: &'r Value,
        here: &str,
        depth: usize,
        written: &mut Written,
    ) -> Result<(), Inexpressible> {
        let out = &mut written.out;
        match key {
            "type" | "$schema" | "$defs" | "additionalProperties" => {}
            "properties" => {
                let mut members = Map::new();
                for (name, member) in value.as_object().into_iter().flatten() {
                    members.insert(
                        name.clone(),
                        self.schema(member, &format!("{here}/{name}"), depth + 1)?,
                    );
                }
                out.insert(key.to_owned(), Value::Object(members));
            }
            "items" => {
                out.insert(key.to_owned(), self.schema(value, here, depth + 1)?);
            }
            "anyOf" | "oneOf" => self.any_of(value, here, depth, written)?,
            "const" => match value {
                Value::String(_) => {
                    out.insert("enum".into(), json!([value]));
                }
                other => written.notes.push(format!("always {other}")),
            },
            "enum" => write_enum(value, written),
            "format" => {
                // Gemini knows a few formats; a number's storage format says nothing.
                if matches!(
                    value.as_str(),
                    Some("date-time" | "enum" | "float" | "double" | "int32" | "int64")
                ) {
                    out.insert(key.to_owned(), value.clone());
                }
            }
            k if KEPT.contains(&k) => {
                out.insert(key.to_owned(), value.clone());
            }
            k => {
                if let Some((_, words)) = DESCRIBED.iter().find(|(name, _)| *name == k) {
                    written.notes.push(format!("{words} {value}"));
                }
            }
        }
        Ok(())
    }

    /// `anyOf` or `oneOf` at `here`: `X or null` is `X`, nullable; other options are `anyOf`.
    fn any_of(
        &mut self,
        value: &'r Value,
        here: &str,
        depth: usize,
        written: &mut Written,
    ) -> Result<(), Inexpressible> {
        let options: Vec<&Value> = value.as_array().into_iter().flatten().collect();
        let non_null: Vec<&&Value> = options
            .iter()
            .filter(|o| o.get("type") != Some(&Value::from("null")))
            .collect();
        written.nullable |= non_null.len() < options.len();
        if let [only] = non_null.as_slice() {
            if let Value::Object(inner) = self.schema(only, here, depth + 1)? {
                for (k, v) in inner {
                    written.out.entry(k).or_insert(v);
                }
            }
        } else {
            let options = non_null
                .iter()
                .enumerate()
                .map(|(i, o)| self.schema(o, &format!("{here}/{i}"), depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            written.out.insert("anyOf".into(), options.into());
        }
        Ok(())
    }

    /// The transformed form of the `$ref` target `reference`: worked out once, then copied,
    /// each copy counted against the budget.
    fn inline(
        &mut self,
        reference: &str,
        here: &str,
        depth: usize,
    ) -> Result<Value, Inexpressible> {
        let target = self
            .walk
            .target(reference)
            .ok_or_else(|| Inexpressible::at(here, Why::Nowhere(reference.to_owned())))?;
        match self.inlined.get(target) {
            Some(Slot::Done((inlined, size))) => {
                let (inlined, size) = (inlined.clone(), *size);
                self.walk
                    .spend(size)
                    .map_err(|why| Inexpressible::at(here, why))?;
                Ok(inlined)
            }
            Some(Slot::Open) => Err(Inexpressible::at(here, Why::Circle(reference.to_owned()))),
            None => {
                self.inlined.open(target);
                let before = self.walk.left;
                let inlined = self.schema(target, here, depth + 1)?;
                self.inlined
                    .close(target, (inlined.clone(), before - self.walk.left));
                Ok(inlined)
            }
        }
    }
}

/// `type`: one type as it is; a list with `"null"` is the other type, nullable; a list of
/// several types is an `anyOf` of them.
fn write_type(ty: Option<&Value>, written: &mut Written) {
    match ty {
        Some(Value::String(ty)) => {
            written.out.insert("type".into(), ty.clone().into());
        }
        Some(Value::Array(types)) => {
            let mut others = types.iter().filter(|t| *t != "null");
            written.nullable = types.iter().any(|t| t == "null");
            if let (Some(only), None) = (others.next(), others.next()) {
                written.out.insert("type".into(), only.clone());
            } else {
                let options: Vec<Value> = types
                    .iter()
                    .filter(|t| *t != "null")
                    .map(|t| json!({ "type": t }))
                    .collect();
                written.out.insert("anyOf".into(), options.into());
            }
        }
        _ => {}
    }
}

/// `enum`: Gemini's takes strings only, so other values are named in the description; a
/// `null` among them makes the schema nullable.
fn write_enum(value: &Value, written: &mut Written) {
    let values: Vec<&Value> = value.as_array().into_iter().flatten().collect();
    written.nullable |= values.iter().any(|v| v.is_null());
    let strings: Vec<&Value> = values.iter().copied().filter(|v| v.is_string()).collect();
    if strings.len() == values.iter().filter(|v| !v.is_null()).count() {
        written.out.insert("enum".into(), json!(strings));
    } else {
        let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        written.notes.push(format!("one of {}", shown.join(", ")));
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
