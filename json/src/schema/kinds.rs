//! What a schema says of a value's JSON type, asked by the readers that turn text into values
//! (lenient decoding, the parser's typing): the [`Kinds`] a schema admits, and the schema of a
//! property or of an array's items, looking through `$ref`s and `anyOf`/`oneOf`/`allOf`.

use serde_json::Value;

use super::{MAX_WALK_DEPTH, Memo, Slot, Walk, Why};

/// The JSON types a value may have, from its schema. Empty means "not known".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Kinds(u8);

impl Kinds {
    pub const STRING: Kinds = Kinds(1);
    pub const INTEGER: Kinds = Kinds(2);
    pub const NUMBER: Kinds = Kinds(4);
    pub const BOOLEAN: Kinds = Kinds(8);
    pub const NULL: Kinds = Kinds(16);
    pub const OBJECT: Kinds = Kinds(32);
    pub const ARRAY: Kinds = Kinds(64);
    /// No schema: the value is what its text spells as JSON (or as a Python literal), else the
    /// text.
    pub const JSON: Kinds = Kinds(128);

    #[inline]
    pub fn has(self, other: Kinds) -> bool {
        self.0 & other.0 != 0
    }
    #[inline]
    pub fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }
    #[inline]
    pub fn is_unknown(self) -> bool {
        self.0 == 0
    }

    /// The kind a `type` names (with the names Python-minded tool lists use).
    fn named(name: &str) -> Kinds {
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

    /// The kind of a value (of an `enum` or `const`).
    fn of(value: &Value) -> Kinds {
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
}

/// The options of a schema that a value may meet instead of (or beside) it.
const OPTIONS: &[&str] = &["anyOf", "oneOf", "allOf"];

/// The schemas of `schema`'s [`OPTIONS`], in order.
fn options(schema: &Value) -> impl Iterator<Item = &Value> {
    OPTIONS
        .iter()
        .filter_map(|key| keyword(schema, key)?.as_array())
        .flatten()
}

/// Up to this many keys, a schema object's keywords are found by comparing its keys: that costs
/// less than hashing each keyword for the map's lookup, which the typing of every value a parser
/// reads pays several times. A larger object (never a schema a tool declares) is hashed into, so
/// that no walk pays for its size at every visit.
const SCANNED_KEYS: usize = 8;

/// The value of keyword `name` in `schema`.
fn keyword<'r>(schema: &'r Value, name: &str) -> Option<&'r Value> {
    let Value::Object(map) = schema else {
        return None;
    };
    if map.len() > SCANNED_KEYS {
        return map.get(name);
    }
    map.iter()
        .find_map(|(key, value)| (key == name).then_some(value))
}

/// The keywords [`Typing::kinds`] reads in a schema, found in one pass over its keys (see
/// [`SCANNED_KEYS`]).
#[derive(Default)]
struct KindWords<'r> {
    reference: Option<&'r Value>,
    types: Option<&'r Value>,
    properties: bool,
    /// The [`OPTIONS`], in their order.
    options: [Option<&'r Value>; 3],
    values: Option<&'r Value>,
    constant: Option<&'r Value>,
}

impl<'r> KindWords<'r> {
    fn of(schema: &'r Value) -> Self {
        let mut words = Self::default();
        let Value::Object(map) = schema else {
            return words;
        };
        if map.len() > SCANNED_KEYS {
            return Self {
                reference: map.get("$ref"),
                types: map.get("type"),
                properties: map.contains_key("properties"),
                options: [0, 1, 2].map(|i| map.get(OPTIONS[i])),
                values: map.get("enum"),
                constant: map.get("const"),
            };
        }
        for (key, value) in map {
            match key.as_str() {
                "$ref" => words.reference = Some(value),
                "type" => words.types = Some(value),
                "properties" => words.properties = true,
                "anyOf" => words.options[0] = Some(value),
                "oneOf" => words.options[1] = Some(value),
                "allOf" => words.options[2] = Some(value),
                "enum" => words.values = Some(value),
                "const" => words.constant = Some(value),
                _ => {}
            }
        }
        words
    }
}

/// Questions about the types of values, over one schema and one budget. What a `$ref` target
/// admits is worked out once; a query that spends the budget answers with what it found so far
/// and [`Typing::spent`] says so.
pub struct Typing<'r> {
    walk: Walk<'r>,
    kinds: Memo<Kinds>,
    spent: bool,
}

impl<'r> Typing<'r> {
    /// Questions about `root` and the schemas inside it.
    #[inline]
    pub fn new(root: &'r Value) -> Self {
        Self {
            walk: Walk::new(root),
            kinds: Memo::default(),
            spent: false,
        }
    }

    /// Questions about `root` that visit at most `budget` schemas in all.
    #[inline]
    pub fn with_budget(root: &'r Value, budget: usize) -> Self {
        Self {
            walk: Walk::with_budget(root, budget),
            ..Self::new(root)
        }
    }

    /// Whether a query stopped early (the budget spent, or deeper than [`MAX_WALK_DEPTH`]).
    #[inline]
    pub fn spent(&self) -> bool {
        self.spent
    }

    /// The kinds `schema` admits: its `type`s, the kinds of its `anyOf`/`oneOf`/`allOf`
    /// options, `object` where it has `properties`; when none of these says, the kinds of its
    /// `enum` or `const` values.
    ///
    /// An answer that took more than a few visits is kept for the rest of the walk, so asking
    /// again about the same schema (for each item of a long array) costs one lookup.
    #[inline]
    pub fn kinds(&mut self, schema: &'r Value) -> Kinds {
        if !self.kinds.is_empty()
            && let Some(Slot::Done(kinds)) = self.kinds.get(schema)
        {
            return *kinds;
        }
        let before = self.walk.left;
        let kinds = self.kinds_at(schema, 0);
        if before - self.walk.left > 8 && !self.spent {
            self.kinds.close(schema, kinds);
        }
        kinds
    }

    fn kinds_at(&mut self, schema: &'r Value, depth: usize) -> Kinds {
        if !self.enter(depth) {
            return Kinds::default();
        }
        let words = KindWords::of(schema);
        if let Some(reference) = words.reference.and_then(Value::as_str) {
            let Some(target) = self.walk.target(reference) else {
                return Kinds::default();
            };
            return match self.kinds.get(target) {
                Some(Slot::Done(kinds)) => *kinds,
                // A type that contains itself adds nothing it does not already admit.
                Some(Slot::Open) => Kinds::default(),
                None => {
                    self.kinds.open(target);
                    let kinds = self.kinds_at(target, depth + 1);
                    self.kinds.close(target, kinds);
                    kinds
                }
            };
        }
        let mut kinds = Kinds::default();
        match words.types {
            Some(Value::String(t)) => kinds = Kinds::named(t),
            Some(Value::Array(types)) => {
                for t in types.iter().filter_map(Value::as_str) {
                    kinds = kinds.union(Kinds::named(t));
                }
            }
            _ => {}
        }
        if words.properties {
            kinds = kinds.union(Kinds::OBJECT);
        }
        let options = words.options.into_iter().flatten();
        for option in options.filter_map(Value::as_array).flatten() {
            kinds = kinds.union(self.kinds_at(option, depth + 1));
        }
        if kinds.is_unknown() {
            let values = words
                .values
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .or_else(|| words.constant.map(std::slice::from_ref))
                .unwrap_or(&[]);
            for value in values {
                kinds = kinds.union(Kinds::of(value));
            }
        }
        kinds
    }

    /// The schema of property `key` of an object schema, looking into its `anyOf`/`oneOf`/
    /// `allOf` options (the first that names it).
    #[inline]
    pub fn property(&mut self, schema: &'r Value, key: &str) -> Option<&'r Value> {
        self.find(schema, &|s| keyword(s, "properties")?.get(key))
    }

    /// The schema of an array schema's items (one schema, not a list of them), looking into its
    /// options.
    #[inline]
    pub fn items(&mut self, schema: &'r Value) -> Option<&'r Value> {
        self.find(schema, &|s| {
            keyword(s, "items").filter(|items| items.is_object())
        })
    }

    /// The first answer of `here` in `schema` or, through `$ref`s, in its options (each
    /// `$ref` target looked into once: a target that had no answer has none the second time).
    fn find(
        &mut self,
        schema: &'r Value,
        here: &dyn Fn(&'r Value) -> Option<&'r Value>,
    ) -> Option<&'r Value> {
        let mut seen = Memo::<()>::default();
        self.find_at(schema, here, &mut seen, 0)
    }

    fn find_at(
        &mut self,
        schema: &'r Value,
        here: &dyn Fn(&'r Value) -> Option<&'r Value>,
        seen: &mut Memo<()>,
        depth: usize,
    ) -> Option<&'r Value> {
        if !self.enter(depth) {
            return None;
        }
        if let Some(reference) = keyword(schema, "$ref").and_then(Value::as_str) {
            let target = self.walk.target(reference)?;
            if seen.get(target).is_some() {
                return None;
            }
            seen.open(target);
            return self.find_at(target, here, seen, depth + 1);
        }
        if let Some(found) = here(schema) {
            return Some(found);
        }
        for option in options(schema) {
            if let Some(found) = self.find_at(option, here, seen, depth + 1) {
                return Some(found);
            }
        }
        None
    }

    /// Counts one schema visited at `depth`; `false` (and the query marked spent) past the
    /// budget or the depth bound.
    fn enter(&mut self, depth: usize) -> bool {
        if depth > MAX_WALK_DEPTH || self.walk.visit().is_err() {
            self.spent = true;
            return false;
        }
        true
    }

    /// `schema` with its `$ref`s followed (itself when one leads nowhere or in a circle).
    #[inline]
    pub fn resolve(&mut self, schema: &'r Value) -> &'r Value {
        match self.walk.resolve(schema) {
            Ok(resolved) => resolved,
            Err(why) => {
                self.spent |= why == Why::Spent;
                schema
            }
        }
    }
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
                "obj": {"properties": {"a": {}}},
                "free": {}
            },
            "$defs": {"Cat": {"enum": ["a", "b"]}}
        });
        let mut typing = Typing::new(&schema);
        let mut of = |arg: &str| {
            let property = typing.property(&schema, arg);
            property.map(|p| typing.kinds(p)).unwrap_or_default()
        };
        assert_eq!(of("n"), Kinds::INTEGER);
        assert_eq!(of("maybe"), Kinds::NUMBER.union(Kinds::NULL));
        assert_eq!(of("cat"), Kinds::STRING);
        assert_eq!(of("any"), Kinds::BOOLEAN.union(Kinds::STRING));
        assert_eq!(of("obj"), Kinds::OBJECT);
        assert!(of("free").is_unknown());
        assert!(of("missing").is_unknown());
        assert!(!typing.spent());
    }

    #[test]
    fn properties_are_found_in_options_and_through_refs() {
        let schema = json!({
            "anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
            "$defs": {
                "A": {"properties": {"a": {"type": "integer"}}},
                "B": {"allOf": [{"$ref": "#/$defs/A"}, {"properties": {"b": {"type": "string"}, "items": {"type": "array", "items": {"type": "boolean"}}}}]}
            }
        });
        let mut typing = Typing::new(&schema);
        assert_eq!(
            typing.property(&schema, "a"),
            Some(&json!({"type": "integer"}))
        );
        assert_eq!(
            typing.property(&schema, "b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(typing.property(&schema, "c"), None);
        let list = typing.property(&schema, "items").unwrap();
        assert_eq!(typing.items(list), Some(&json!({"type": "boolean"})));
    }

    /// Ten definitions, each an `anyOf` of `k` `$ref`s to the next: `k^10` paths, one answer
    /// per target.
    #[test]
    fn a_chain_of_shared_definitions_is_read_once_per_definition() {
        for k in [2, 4, 10] {
            let schema = crate::testing::chain(10, k);
            let mut typing = Typing::new(&schema);
            let property = typing.property(&schema, "value").unwrap();
            assert_eq!(typing.kinds(property), Kinds::STRING);
            assert_eq!(typing.property(&schema, "missing"), None);
            assert!(!typing.spent(), "k = {k}");
        }
    }

    #[test]
    fn a_definition_that_refers_to_itself_ends() {
        for k in 1..=8 {
            let schema = crate::testing::self_referring(k);
            let mut typing = Typing::new(&schema);
            let property = typing.property(&schema, "value").unwrap();
            assert_eq!(typing.kinds(property), Kinds::STRING, "k = {k}");
            assert_eq!(typing.property(property, "missing"), None);
            assert!(!typing.spent());
        }
    }

    #[test]
    fn a_query_past_the_budget_stops_and_says_so() {
        let schema = json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]});
        let mut typing = Typing::with_budget(&schema, 2);
        let kinds = typing.kinds(&schema);
        assert!(typing.spent());
        assert_eq!(kinds, Kinds::STRING);
    }
}
