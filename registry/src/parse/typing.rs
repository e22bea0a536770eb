//! Typing values written as text by a schema: the JSON kinds an argument may have, and the
//! value a text becomes for them.

use serde_json::Value;

/// The JSON types an argument may have, from its schema. Empty means "not known".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Kinds(u8);

impl Kinds {
    pub(crate) const STRING: Kinds = Kinds(1);
    pub(crate) const INTEGER: Kinds = Kinds(2);
    pub(crate) const NUMBER: Kinds = Kinds(4);
    pub(crate) const BOOLEAN: Kinds = Kinds(8);
    pub(crate) const NULL: Kinds = Kinds(16);
    pub(crate) const OBJECT: Kinds = Kinds(32);
    pub(crate) const ARRAY: Kinds = Kinds(64);
    /// No schema: the value is what its text spells as JSON (or as a Python literal), else the
    /// text.
    pub(crate) const JSON: Kinds = Kinds(128);

    pub(crate) fn has(self, other: Kinds) -> bool {
        self.0 & other.0 != 0
    }
    fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }
    pub(crate) fn is_unknown(self) -> bool {
        self.0 == 0
    }
}

/// The kinds of property `arg` of an object schema.
pub(crate) fn schema_arg_kinds(root: &Value, arg: &str) -> Kinds {
    let object = resolve(root, root, 0);
    let property = object
        .and_then(|o| o.get("properties"))
        .and_then(|p| p.get(arg))
        .or_else(|| {
            // `allOf` / `anyOf` of objects: look in each branch.
            ["allOf", "anyOf", "oneOf"].iter().find_map(|key| {
                object?
                    .get(*key)?
                    .as_array()?
                    .iter()
                    .find_map(|branch| resolve(branch, root, 0)?.get("properties")?.get(arg))
            })
        });
    match property {
        Some(p) => kinds_of(p, root, 0),
        None => Kinds::default(),
    }
}

fn resolve<'a>(node: &'a Value, root: &'a Value, depth: u32) -> Option<&'a Value> {
    if depth > 16 {
        return None;
    }
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let path = reference.strip_prefix("#/")?;
            let mut target = root;
            for part in path.split('/') {
                target = target.get(part.replace("~1", "/").replace("~0", "~"))?;
            }
            resolve(target, root, depth + 1)
        }
        None => Some(node),
    }
}

fn kinds_of(node: &Value, root: &Value, depth: u32) -> Kinds {
    let Some(node) = resolve(node, root, depth) else {
        return Kinds::default();
    };
    if depth > 16 {
        return Kinds::default();
    }
    let mut kinds = Kinds::default();
    match node.get("type") {
        Some(Value::String(t)) => kinds = kinds.union(kind_named(t)),
        Some(Value::Array(types)) => {
            for t in types.iter().filter_map(Value::as_str) {
                kinds = kinds.union(kind_named(t));
            }
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            for branch in branches {
                kinds = kinds.union(kinds_of(branch, root, depth + 1));
            }
        }
    }
    if kinds.is_unknown() {
        let values = node
            .get("enum")
            .and_then(Value::as_array)
            .map(|v| v.as_slice())
            .or_else(|| node.get("const").map(std::slice::from_ref))
            .unwrap_or(&[]);
        for value in values {
            kinds = kinds.union(kind_of_value(value));
        }
    }
    kinds
}

fn kind_named(name: &str) -> Kinds {
    match name {
        "string" | "str" | "text" => Kinds::STRING,
        "integer" | "int" => Kinds::INTEGER,
        "number" | "float" | "double" => Kinds::NUMBER,
        "boolean" | "bool" => Kinds::BOOLEAN,
        "null" => Kinds::NULL,
        "object" | "dict" => Kinds::OBJECT,
        "array" | "list" | "tuple" => Kinds::ARRAY,
        _ => Kinds::default(),
    }
}

fn kind_of_value(value: &Value) -> Kinds {
    match value {
        Value::Null => Kinds::NULL,
        Value::Bool(_) => Kinds::BOOLEAN,
        Value::Number(n) if n.is_f64() => Kinds::NUMBER,
        Value::Number(_) => Kinds::INTEGER,
        Value::String(_) => Kinds::STRING,
        Value::Array(_) => Kinds::ARRAY,
        Value::Object(_) => Kinds::OBJECT,
    }
}

/// Turns a value written as text into JSON of the argument's kinds.
///
/// Strings keep the text verbatim except for one surrounding newline on each side (the
/// `<parameter=k>\nvalue\n</parameter>` layout); other kinds are read from the trimmed text.
/// Text that fits none of the kinds stays a string, so that validation reports it against the
/// schema.
pub(crate) fn typed_value(raw: &str, kinds: Kinds) -> Value {
    let verbatim = || Value::String(trim_one_newline(raw).to_owned());
    if kinds.is_unknown() {
        return verbatim();
    }
    let t = raw.trim();
    if kinds == Kinds::JSON {
        return crate::call::unique::from_str(t)
            .ok()
            .or_else(|| {
                let python =
                    t.starts_with(['{', '[', '(']) || matches!(t, "True" | "False" | "None");
                python
                    .then(|| super::formats::pythonic::literal(t).ok())
                    .flatten()
            })
            .unwrap_or_else(verbatim);
    }
    if kinds.has(Kinds::NULL) && (t == "null" || t == "None") {
        return Value::Null;
    }
    if kinds.has(Kinds::INTEGER)
        && let Some(n) = integer(t)
    {
        return n;
    }
    if kinds.has(Kinds::NUMBER)
        && let Some(n) = number(t)
    {
        return n;
    }
    if kinds.has(Kinds::BOOLEAN) {
        if t.eq_ignore_ascii_case("true") {
            return Value::Bool(true);
        }
        if t.eq_ignore_ascii_case("false") {
            return Value::Bool(false);
        }
    }
    if kinds.has(Kinds::OBJECT) || kinds.has(Kinds::ARRAY) {
        let parsed = crate::call::unique::from_str(t)
            .ok()
            .or_else(|| super::formats::pythonic::literal(t).ok());
        // A JSON string holding the JSON (encoded twice) is read once more.
        let parsed = match parsed {
            Some(Value::String(inner)) => crate::call::unique::from_str(inner.trim()).ok(),
            other => other,
        };
        match parsed {
            Some(v @ Value::Object(_)) if kinds.has(Kinds::OBJECT) => return v,
            Some(v @ Value::Array(_)) if kinds.has(Kinds::ARRAY) => return v,
            _ => {}
        }
    }
    verbatim()
}

fn integer(t: &str) -> Option<Value> {
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = t.parse::<u64>() {
        return Some(Value::from(u));
    }
    // `3.0` for an integer: the model wrote a whole number as a float.
    let f = t.parse::<f64>().ok()?;
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
}

fn number(t: &str) -> Option<Value> {
    if let Ok(n) = serde_json::from_str::<serde_json::Number>(t) {
        return Some(Value::Number(n));
    }
    let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// `raw` without one leading and one trailing newline (`\n` or `\r\n`).
pub(crate) fn trim_one_newline(raw: &str) -> &str {
    let s = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kinds_follow_refs_unions_and_enums() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "maybe": {"type": ["number", "null"]},
                "cat": {"$ref": "#/$defs/Cat"},
                "any": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
                "free": {}
            },
            "$defs": {"Cat": {"enum": ["a", "b"]}}
        });
        assert_eq!(schema_arg_kinds(&schema, "n"), Kinds::INTEGER);
        assert!(schema_arg_kinds(&schema, "maybe").has(Kinds::NULL));
        assert_eq!(schema_arg_kinds(&schema, "cat"), Kinds::STRING);
        assert!(schema_arg_kinds(&schema, "any").has(Kinds::BOOLEAN));
        assert!(schema_arg_kinds(&schema, "free").is_unknown());
        assert!(schema_arg_kinds(&schema, "missing").is_unknown());
    }

    #[test]
    fn values_are_typed_by_kind() {
        assert_eq!(typed_value("\n42\n", Kinds::INTEGER), json!(42));
        assert_eq!(typed_value("3.0", Kinds::INTEGER), json!(3));
        assert_eq!(typed_value("2.5", Kinds::NUMBER), json!(2.5));
        assert_eq!(typed_value(" True ", Kinds::BOOLEAN), json!(true));
        assert_eq!(
            typed_value("null", Kinds::STRING.union(Kinds::NULL)),
            json!(null)
        );
        assert_eq!(typed_value("null", Kinds::STRING), json!("null"));
        assert_eq!(
            typed_value("{'a': [1, None]}", Kinds::OBJECT),
            json!({"a": [1, null]})
        );
        assert_eq!(
            typed_value("\n\nline\n\n", Kinds::STRING),
            json!("\nline\n")
        );
        assert_eq!(typed_value("five", Kinds::INTEGER), json!("five"));
        assert_eq!(typed_value("\n7\n", Kinds::default()), json!("7"));
        // No schema at all: JSON, or a Python literal, or the text.
        assert_eq!(typed_value("\n7\n", Kinds::JSON), json!(7));
        assert_eq!(
            typed_value(" {\"a\": [true]} ", Kinds::JSON),
            json!({"a": [true]})
        );
        assert_eq!(typed_value("{'a': None}", Kinds::JSON), json!({"a": null}));
        assert_eq!(typed_value("True", Kinds::JSON), json!(true));
        assert_eq!(typed_value("\nParis\n", Kinds::JSON), json!("Paris"));
        assert_eq!(typed_value("[not json", Kinds::JSON), json!("[not json"));
    }
}
