//! Typing values written as text by a schema: the JSON kinds an argument may have, and the
//! value a text becomes for them.

use serde_json::Value;

use super::block::ToolLookup;
pub(crate) use crate::schema::kinds::Kinds;
use crate::schema::kinds::Typing;

/// The kinds of argument `arg` of tool `tool`, from the tool set's schema.
pub(crate) fn arg_kinds(tools: &dyn ToolLookup, tool: &str, arg: &str) -> Kinds {
    match tools.tool_schema(tool) {
        Some(schema) => schema_arg_kinds(&schema, arg),
        None if tools.json_typed() => Kinds::JSON,
        None => Kinds::default(),
    }
}

/// The kinds of property `arg` of an object schema (found in its `anyOf`/`oneOf`/`allOf`
/// options too), by the one schema walk and its budget.
pub(crate) fn schema_arg_kinds(root: &Value, arg: &str) -> Kinds {
    let mut typing = Typing::new(root);
    match typing.property(root, arg) {
        Some(property) => typing.kinds(property),
        None => Kinds::default(),
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
