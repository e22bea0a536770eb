//! Unknown fields in nested objects, refused as at the top level.
//!
//! A compiled tool's argument struct refuses unknown fields (`deny_unknown_fields`), but a
//! struct of the user's own that does not say so accepts them silently, so a model's typo
//! (`"radius_km"` for `"radius"`) one level down is lost without a word. This check refuses
//! them too, with one non-generic walk guided by the tool's input schema:
//!
//! - an object whose schema has `properties` and no `additionalProperties` key at all (what
//!   schemars writes for a struct without `deny_unknown_fields`; it writes `false` for one
//!   with it, and a schema for a map) takes only the keys in `properties`;
//! - the walk follows `$ref` into the root's `$defs`, `properties`, `items`, a map's
//!   `additionalProperties` schema, and an `anyOf`/`oneOf` whose only other option is
//!   `{"type": "null"}` (an `Option`); it does not enter other `anyOf`/`oneOf`/`allOf`
//!   options, nor objects that also have `patternProperties` or a combinator beside their
//!   `properties`: which option the value meant would be a guess.
//!
//! The walk reads JSON text or a [`Value`] through the same `serde` visitor, without building
//! anything, and only for tools whose schema has such an object ([`has_open_objects`], cached
//! on the tool's entry): other tools pay nothing. Malformed or too deep arguments are left to
//! the tool's own reading, which reports them.
//!
//! Run-time tools ([`ToolSpec`](crate::spec::ToolSpec)) keep JSON Schema's meaning, where an
//! absent `additionalProperties` admits any other key: their schema is the contract as written.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::args::invalid;
use super::{MAX_ARGS_DEPTH, ToolArgs, ToolError};
use crate::schema::{self, Memo};

/// The most `Option` wrappers unwrapped from one place in the schema (each may be reached
/// through a chain of `$ref`s, which the schema walk bounds).
const MAX_UNWRAPS: usize = 16;

/// What the walk needs to know of one schema, its `$ref`s and `Option` wrapper followed.
#[derive(Default)]
struct Shape<'s> {
    properties: Option<&'s Map<String, Value>>,
    /// Keys outside `properties` are refused.
    closed: bool,
    /// The schema of the keys outside `properties` (a map's values).
    additional: Option<&'s Value>,
    items: Option<&'s Value>,
}

fn shape<'s>(root: &'s Value, schema: &'s Value) -> Shape<'s> {
    let Some(schema) = resolve(root, schema) else {
        return Shape::default();
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let guessing = ["anyOf", "oneOf", "allOf", "patternProperties"]
        .iter()
        .any(|key| schema.get(*key).is_some());
    let additional = schema.get("additionalProperties");
    Shape {
        properties,
        closed: properties.is_some() && additional.is_none() && !guessing,
        additional: additional.filter(|a| a.is_object()),
        items: schema.get("items").filter(|items| items.is_object()),
    }
}

/// The schema `schema` stands for: `$ref`s into the root followed, and the one option of an
/// `anyOf`/`oneOf` whose other option is `{"type": "null"}`. `None` for a reference that
/// leads nowhere or in a circle.
fn resolve<'s>(root: &'s Value, mut schema: &'s Value) -> Option<&'s Value> {
    let mut walk = schema::Walk::new(root);
    for _ in 0..MAX_UNWRAPS {
        schema = walk.resolve(schema).ok()?;
        match nullable_option(schema) {
            Some(option) => schema = option,
            None => return Some(schema),
        }
    }
    None
}

/// `T` of `{"anyOf": [T, {"type": "null"}]}` (or `oneOf`, in either order), with nothing else
/// beside it but a description, title or default.
fn nullable_option(schema: &Value) -> Option<&Value> {
    let map = schema.as_object()?;
    let options = match (map.get("anyOf"), map.get("oneOf")) {
        (Some(options), None) | (None, Some(options)) => options.as_array()?,
        _ => return None,
    };
    let beside = ["anyOf", "oneOf", "description", "title", "default"];
    if options.len() != 2 || map.keys().any(|key| !beside.contains(&key.as_str())) {
        return None;
    }
    let is_null = |option: &Value| option.get("type").and_then(Value::as_str) == Some("null");
    match (is_null(&options[0]), is_null(&options[1])) {
        (true, false) => Some(&options[1]),
        (false, true) => Some(&options[0]),
        _ => None,
    }
}

/// Whether anything the arguments can hold under `root` (the input schema) is an object that
/// the check refuses unknown keys of: the one question asked per tool, once.
pub(crate) fn has_open_objects(root: &Value) -> bool {
    let mut walk = schema::Walk::new(root);
    let mut seen = Memo::<()>::default();
    let mut stack = vec![root];
    while let Some(schema) = stack.pop() {
        let Some(resolved) = resolve(root, schema) else {
            continue;
        };
        if seen.get(resolved).is_some() {
            continue;
        }
        if walk.visit().is_err() {
            // Larger than a walk reads: checked on every call instead.
            return true;
        }
        seen.close(resolved, ());
        let shape = shape(root, resolved);
        if shape.closed {
            return true;
        }
        stack.extend(shape.properties.into_iter().flat_map(Map::values));
        stack.extend(shape.additional);
        stack.extend(shape.items);
    }
    false
}

/// Refuses an unknown key in an object the schema `root` closes (see the module's rules),
/// naming its path (`area.extra`, `items[1].extra`) and the keys the object takes.
pub(crate) fn check(args: &ToolArgs<'_>, root: &Value) -> Result<(), ToolError> {
    let mut found = None;
    let walk = Walk {
        root,
        schema: root,
        depth: 0,
        found: &mut found,
    };
    // Any other error (malformed text, too deep) is the tool's own reading's to report.
    let _ = match args {
        ToolArgs::Text(text) => {
            let mut de = serde_json::Deserializer::from_str(text);
            walk.deserialize(&mut de)
        }
        ToolArgs::Value(value) => walk.deserialize(value),
    };
    match found {
        Some(Found { mut path, message }) => {
            path.reverse();
            let mut joined = String::new();
            for segment in path {
                if !segment.starts_with('[') && !joined.is_empty() {
                    joined.push('.');
                }
                joined.push_str(&segment);
            }
            Err(invalid(joined, message))
        }
        None => Ok(()),
    }
}

/// An unknown key: its path, innermost segment first (each object and array on the way out
/// adds its own), and what to say.
struct Found {
    path: Vec<String>,
    message: String,
}

/// The visitor of one value and the schema it is read against.
struct Walk<'s, 'f> {
    root: &'s Value,
    schema: &'s Value,
    depth: usize,
    found: &'f mut Option<Found>,
}

impl Walk<'_, '_> {
    /// The walk of a member, or `None` to skip it unread.
    fn member<'s, 'g>(
        root: &'s Value,
        schema: Option<&'s Value>,
        depth: usize,
        found: &'g mut Option<Found>,
    ) -> Option<Walk<'s, 'g>> {
        if depth >= MAX_ARGS_DEPTH {
            return None;
        }
        Some(Walk {
            root,
            schema: schema?,
            depth: depth + 1,
            found,
        })
    }
}

/// Adds `segment` to the path of what was found inside, on the way out.
fn outward<E>(found: &mut Option<Found>, segment: impl FnOnce() -> String, error: E) -> E {
    if let Some(found) = found {
        found.path.push(segment());
    }
    error
}

impl<'de> DeserializeSeed<'de> for Walk<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Walk {
            root,
            schema,
            depth,
            found,
        } = self;
        let items = shape(root, schema).items;
        let mut index = 0usize;
        loop {
            let more = match Self::member(root, items, depth, found) {
                Some(walk) => seq.next_element_seed(walk),
                None => seq.next_element::<IgnoredAny>().map(|item| item.map(drop)),
            };
            match more {
                Ok(Some(())) => index += 1,
                Ok(None) => return Ok(()),
                Err(error) => return Err(outward(found, || format!("[{index}]"), error)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Walk {
            root,
            schema,
            depth,
            found,
        } = self;
        let shape = shape(root, schema);
        while let Some(key) = map.next_key_seed(KeySeed)? {
            let member = shape.properties.and_then(|p| p.get(key.as_ref()));
            if member.is_none() && shape.closed {
                let expected = shape.properties.map(expected).unwrap_or_default();
                *found = Some(Found {
                    path: vec![key.clone().into_owned()],
                    message: format!("unknown field `{key}`; {expected}"),
                });
                return Err(de::Error::custom("unknown field"));
            }
            let schema = member.or(shape.additional);
            let read = match Self::member(root, schema, depth, found) {
                Some(walk) => map.next_value_seed(walk),
                None => map.next_value::<IgnoredAny>().map(drop),
            };
            if let Err(error) = read {
                return Err(outward(found, || key.into_owned(), error));
            }
        }
        Ok(())
    }
}

/// What an object takes, for the message: "expected one of `city`, `radius`".
fn expected(properties: &Map<String, Value>) -> String {
    let names: Vec<String> = properties.keys().map(|k| format!("`{k}`")).collect();
    match names.as_slice() {
        [] => "this object takes no fields".to_owned(),
        [one] => format!("expected {one}"),
        _ => format!("expected one of {}", names.join(", ")),
    }
}

/// An object key, borrowed from the text when it has no escapes.
struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(key))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key.to_owned()))
    }

    fn visit_string<E>(self, key: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(key))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{check, has_open_objects};
    use crate::call::{ToolArgs, ToolError};

    fn schema() -> Value {
        json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "area": { "$ref": "#/$defs/Area" },
                "maybe": { "anyOf": [{ "$ref": "#/$defs/Area" }, { "type": "null" }] },
                "items": { "type": "array", "items": { "$ref": "#/$defs/Area" } },
                "labels": { "type": "object", "additionalProperties": { "$ref": "#/$defs/Area" } },
                "either": { "anyOf": [{ "$ref": "#/$defs/Area" }, { "type": "integer" }] },
                "closed": { "type": "object", "properties": {}, "additionalProperties": false }
            },
            "$defs": {
                "Area": {
                    "type": "object",
                    "properties": { "city": { "type": "string" }, "radius": { "type": "integer" } }
                }
            }
        })
    }

    /// The path and message of the refusal, for text and for the same arguments as a value.
    fn refused(args: Value) -> Option<(String, String)> {
        let schema = schema();
        let text = args.to_string();
        let from_text = check(&ToolArgs::Text(&text), &schema);
        let from_value = check(&ToolArgs::Value(args), &schema);
        assert_eq!(from_text, from_value);
        match from_text {
            Ok(()) => None,
            Err(ToolError::InvalidArguments { path, message, .. }) => Some((path, message)),
            Err(other) => panic!("{other}"),
        }
    }

    #[test]
    fn unknown_keys_of_open_objects_are_refused_where_they_are() {
        let (path, message) =
            refused(json!({ "area": { "city": "Oslo", "radius": 1, "extra": 1 } })).unwrap();
        assert_eq!(path, "area.extra");
        assert_eq!(
            message,
            "unknown field `extra`; expected one of `city`, `radius`"
        );
        for (args, at) in [
            (json!({ "maybe": { "x": 1 } }), "maybe.x"),
            (
                json!({ "items": [{ "city": "a" }, { "city": "b", "extra": [1] }] }),
                "items[1].extra",
            ),
            (
                json!({ "labels": { "home": { "zip": 1 } } }),
                "labels.home.zip",
            ),
        ] {
            assert_eq!(
                refused(args.clone()).map(|r| r.0).as_deref(),
                Some(at),
                "{args}"
            );
        }
    }

    #[test]
    fn what_is_not_an_open_object_is_left_alone() {
        for args in [
            // Known keys, a map's own keys, a closed object (serde refuses there itself).
            json!({ "area": { "city": "Oslo" }, "labels": { "any": { "city": "x" } } }),
            json!({ "closed": { "x": 1 } }),
            // An option of a real choice is not guessed at.
            json!({ "either": { "x": 1 } }),
            // Values of the wrong kind are the tool's reading's to report.
            json!({ "area": "{\"x\": 1}", "items": { "x": 1 }, "maybe": null }),
            // Unknown keys at a closed root are serde's to refuse, with their own message.
            json!({ "other": { "x": 1 } }),
        ] {
            assert_eq!(refused(args.clone()), None, "{args}");
        }
        // Malformed text is not this check's to report.
        assert_eq!(check(&ToolArgs::Text("{\"area\": {"), &schema()), Ok(()));
    }

    #[test]
    fn only_schemas_with_open_objects_need_the_check() {
        assert!(has_open_objects(&schema()));
        let closed = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "a": { "type": "array", "items": { "$ref": "#/$defs/A" } },
                "m": { "type": "object", "additionalProperties": { "type": "integer" } },
                "e": { "oneOf": [{ "type": "object", "properties": {} }, { "const": 1 }] }
            },
            "$defs": {
                "A": {
                    "type": "object",
                    "properties": { "next": { "$ref": "#/$defs/A" } },
                    "additionalProperties": false
                }
            }
        });
        assert!(!has_open_objects(&closed));
        // A reference in a circle ends the walk rather than the stack.
        let circle = json!({ "$ref": "#/$defs/A", "$defs": { "A": { "$ref": "#/$defs/A" } } });
        assert!(!has_open_objects(&circle));
    }
}
