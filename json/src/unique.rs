//! JSON objects that write each key once.
//!
//! `serde_json` keeps the last of two values written under one key, so `{"name": "a", "name":
//! "b"}` would silently call `b`. A compiled tool's argument struct refuses a repeated key
//! (serde's derived "duplicate field"); everything else that reads a model's JSON (the parser's
//! call objects and argument objects, native provider responses, a run-time tool's arguments)
//! reads it through [`UniqueValue`] or inserts with [`insert`], which refuse it in the same
//! words. This is the one place that decides what a repeated key is and what is said about it.

use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// What is said about a key written twice: the words serde's derived `Deserialize` uses for a
/// compiled tool's arguments.
#[inline]
pub fn duplicate(key: &str) -> String {
    format!("duplicate field `{key}`")
}

/// Adds `key` to an object being built from what a model wrote, refusing a key already there.
#[inline]
pub fn insert(map: &mut Map<String, Value>, key: String, value: Value) -> Result<(), String> {
    if map.contains_key(&key) {
        return Err(duplicate(&key));
    }
    map.insert(key, value);
    Ok(())
}

/// Reads JSON text into a [`Value`], refusing an object at any depth that writes a key twice.
#[inline]
pub fn from_str(text: &str) -> serde_json::Result<Value> {
    serde_json::from_str::<UniqueValue>(text).map(|UniqueValue(value)| value)
}

/// Whether an error of [`from_str`] is a repeated key rather than broken JSON: the only data
/// error its visitor raises (syntax, the end of input and the nesting limit are the reader's).
#[inline]
pub fn is_duplicate(error: &serde_json::Error) -> bool {
    error.is_data()
}

/// A [`Value`] read with [`from_str`]'s rule: the error is raised as the second key is read,
/// before its value, so a path-finding reader names the key as the place of the error.
pub struct UniqueValue(pub Value);

impl<'de> Deserialize<'de> for UniqueValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(UniqueValue)
    }
}

struct ValueVisitor;

impl<'de> DeserializeSeed<'de> for ValueVisitor {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element_seed(ValueVisitor)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(duplicate(&key)));
            }
            let value = map.next_value_seed(ValueVisitor)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_key_written_twice_is_refused_at_any_depth() {
        for text in [
            r#"{"name": "a", "name": "b"}"#,
            r#"{"name": "a", "arguments": {"q": 1, "q": 2}}"#,
            r#"[{"x": [{"k": null, "k": null}]}]"#,
        ] {
            let error = from_str(text).unwrap_err();
            assert!(is_duplicate(&error), "{text}: {error}");
            assert!(
                error.to_string().starts_with("duplicate field `"),
                "{error}"
            );
        }
        let error = from_str(r#"{"name": "a", "name": "b"}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            "duplicate field `name` at line 1 column 20"
        );
    }

    #[test]
    fn anything_else_reads_as_serde_json_reads_it() {
        for text in [
            r#"{"a": [1, -2, 3.5, 1e300, "s\u00e9", true, false, null, {}], "b": {"a": 1}}"#,
            "18446744073709551615",
            "[]",
            r#""text""#,
        ] {
            let expected: Value = serde_json::from_str(text).unwrap();
            assert_eq!(from_str(text).unwrap(), expected, "{text}");
        }
        // Broken JSON is not a repeated key.
        assert!(!is_duplicate(&from_str(r#"{"a": "#).unwrap_err()));
        assert!(!is_duplicate(&from_str(&"[".repeat(200)).unwrap_err()));
    }

    #[test]
    fn insert_refuses_a_key_already_there() {
        let mut map = Map::new();
        insert(&mut map, "q".into(), json!(1)).unwrap();
        assert_eq!(
            insert(&mut map, "q".into(), json!(2)),
            Err("duplicate field `q`".to_owned())
        );
        assert_eq!(map["q"], json!(1));
    }
}
