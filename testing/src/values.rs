//! Arguments drawn from a tool's input schema: the edge cases (fields at their low and high
//! bounds, empty strings, optional fields absent and present) and values drawn at random by
//! proptest strategies built from the schema, each kept only when the schema accepts it.

use proptest::prelude::*;
use proptest::strategy::{BoxedStrategy, Just, Union, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use serde_json::{Map, Number, Value, json};

/// How deep the generator follows a schema (nested objects, arrays, `$ref`s) before it writes
/// the simplest value the schema allows, so that a recursive schema ends.
const MAX_DEPTH: usize = 8;

/// The most items a drawn array holds where the schema sets no smaller `maxItems`.
const MAX_ITEMS: usize = 3;

/// The longest string the high edge writes where the schema sets no `maxLength`.
const LONG_TEXT: usize = 200;

/// The most items or characters a schema's `minItems` or `minLength` may ask for: a schema
/// that asks for more gets no value (a hostile `minItems` of a billion is not written).
const MAX_MIN: usize = 65_536;

/// The bound a drawn number keeps to where the schema sets none.
const OPEN_BOUND: i64 = 1_000_000;

/// Text for the long strings: quotes, markup, a line break, characters of several scripts and
/// widths, so that a tool that slices by bytes or escapes by hand meets them.
const TEXT: &str = "Ünïcødé \"quoted\" <b>&amp;</b> 'single' \\ back\nline ✓ 日本語 🦀 ";

/// One set of arguments to call a tool with, and how it was made.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// How the arguments were made: `required fields at their low edges`, `every field at its
    /// high edge`, `drawn #3`...
    pub label: String,
    /// The arguments, valid for the tool's input schema.
    pub arguments: Value,
}

/// Which edge of a schema's range a value takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edge {
    /// The least the schema allows: empty strings and arrays, minimums, `false`, the first of
    /// an `enum`.
    Low,
    /// The most it allows: long strings (its `maxLength`), maximums, `true`, the last of an
    /// `enum`.
    High,
}

/// The cases of one input schema: the edges (required fields only, at their low edges; every
/// field at its low edge; every field at its high edge), then `drawn` values from its
/// strategies seeded by `seed`. Each is kept only when `schema` accepts it, and only once.
pub(crate) fn cases(schema: &Value, drawn: usize, seed: u64) -> (Vec<Case>, usize) {
    let validator = jsonschema::validator_for(schema).ok();
    let accepts = |value: &Value| validator.as_ref().is_none_or(|v| v.is_valid(value));
    let walk = Walk { root: schema };
    let mut cases: Vec<Case> = Vec::new();
    let mut dropped = 0;
    let mut keep = |label: String, value: Option<Value>| match value {
        Some(arguments) if accepts(&arguments) => {
            if !cases.iter().any(|case| case.arguments == arguments) {
                cases.push(Case { label, arguments });
            }
        }
        _ => dropped += 1,
    };
    keep(
        "required fields at their low edges".into(),
        walk.edge(schema, Edge::Low, false, 0),
    );
    keep(
        "every field at its low edge".into(),
        walk.edge(schema, Edge::Low, true, 0),
    );
    keep(
        "every field at its high edge".into(),
        walk.edge(schema, Edge::High, true, 0),
    );
    if drawn > 0 {
        let strategy = walk.strategy(schema, 0);
        let mut bytes = [0u8; 32];
        bytes[..8].copy_from_slice(&seed.to_le_bytes());
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &bytes);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        for i in 1..=drawn {
            let value = strategy
                .new_tree(&mut runner)
                .ok()
                .map(|tree| tree.current());
            keep(format!("drawn #{i}"), value);
        }
    }
    (cases, dropped)
}

/// A walk over one schema, whose `$ref`s point into `root`.
struct Walk<'s> {
    root: &'s Value,
}

impl Walk<'_> {
    /// `schema` with its `$ref` (`#/$defs/X`, `#/definitions/X`, any JSON pointer into the
    /// root) followed, as often as it takes.
    fn resolve<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        for _ in 0..MAX_DEPTH {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                break;
            };
            let Some(target) = reference
                .strip_prefix('#')
                .and_then(|pointer| self.root.pointer(pointer))
            else {
                break;
            };
            schema = target;
        }
        schema
    }

    /// The value at `edge` of `schema`; `every` writes the optional fields of objects too.
    /// `None` when the walk finds nothing the schema could accept (`false`, `not`).
    fn edge(&self, schema: &Value, edge: Edge, every: bool, depth: usize) -> Option<Value> {
        // A schema that requires itself (`child` of a tree, required) has no finite value.
        if depth > 2 * MAX_DEPTH {
            return None;
        }
        let schema = self.resolve(schema);
        let object = match schema {
            Value::Bool(true) => return Some(Value::Null),
            Value::Object(object) => object,
            _ => return None,
        };
        if let Some(value) = object.get("const") {
            return Some(value.clone());
        }
        if let Some(Value::Array(values)) = object.get("enum") {
            let pick = if edge == Edge::Low {
                values.first()
            } else {
                values.last()
            };
            return pick.cloned();
        }
        if let Some(value) = object.get("default").filter(|_| depth > MAX_DEPTH) {
            return Some(value.clone());
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = object.get(key) {
                let mut branches: Vec<&Value> = branches
                    .iter()
                    .filter(|b| !is_null(self.resolve(b)))
                    .collect();
                if branches.is_empty() {
                    return Some(Value::Null);
                }
                if edge == Edge::High {
                    branches.reverse();
                }
                return branches
                    .into_iter()
                    .find_map(|branch| self.edge(branch, edge, every, depth + 1));
            }
        }
        if let Some(Value::Array(parts)) = object.get("allOf") {
            let merged = merge(parts.iter().map(|part| self.resolve(part)), object);
            return self.edge_of(&merged, edge, every, depth);
        }
        self.edge_of(schema, edge, every, depth)
    }

    /// [`edge`](Self::edge) of a schema without `$ref`, `enum` or combinators left to read.
    fn edge_of(&self, schema: &Value, edge: Edge, every: bool, depth: usize) -> Option<Value> {
        let kind = kind(schema);
        Some(match kind {
            "null" => Value::Null,
            "boolean" => Value::Bool(edge == Edge::High),
            "integer" => {
                let (low, high) = integer_range(schema);
                Value::from(if edge == Edge::Low { low } else { high })
            }
            "number" => {
                let (low, high) = number_range(schema);
                let value = if edge == Edge::Low { low } else { high };
                Value::Number(Number::from_f64(value)?)
            }
            "string" => Value::String(edge_string(schema, edge)),
            "array" => {
                let (min, max) = item_range(schema);
                let count = if edge == Edge::Low || depth >= MAX_DEPTH {
                    min
                } else if schema.get("uniqueItems") == Some(&Value::Bool(true)) {
                    min.max(1).min(max)
                } else {
                    max
                };
                let prefix = schema.get("prefixItems").and_then(Value::as_array);
                let items = schema.get("items");
                let mut values = Vec::with_capacity(count);
                for i in 0..count {
                    let item = prefix
                        .and_then(|prefix| prefix.get(i))
                        .or(items)
                        .unwrap_or(&Value::Bool(true));
                    values.push(self.edge(item, edge, every, depth + 1)?);
                }
                Value::Array(values)
            }
            _ => {
                let mut out = Map::new();
                let required = required(schema);
                if let Some(Value::Object(properties)) = schema.get("properties") {
                    for (name, property) in properties {
                        let needed = required.contains(&name.as_str());
                        if needed || (every && depth < MAX_DEPTH) {
                            out.insert(name.clone(), self.edge(property, edge, every, depth + 1)?);
                        }
                    }
                }
                let extra = schema.get("additionalProperties").filter(|s| s.is_object());
                if let Some(extra) = extra.filter(|_| edge == Edge::High && every && out.is_empty())
                    && let Some(value) = self.edge(extra, edge, every, depth + 1)
                {
                    out.insert("key".into(), value);
                }
                Value::Object(out)
            }
        })
    }

    /// A strategy that draws values of `schema` (mostly valid ones; the caller checks).
    fn strategy(&self, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
        let schema = self.resolve(schema);
        let object = match schema {
            Value::Bool(true) => return any_scalar(),
            Value::Object(object) => object,
            _ => return Just(Value::Null).boxed(),
        };
        if let Some(value) = object.get("const") {
            return Just(value.clone()).boxed();
        }
        if let Some(Value::Array(values)) = object.get("enum")
            && !values.is_empty()
        {
            return proptest::sample::select(values.clone()).boxed();
        }
        if depth >= MAX_DEPTH {
            let simplest = self.edge(schema, Edge::Low, false, MAX_DEPTH + 1);
            return Just(simplest.unwrap_or(Value::Null)).boxed();
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = object.get(key)
                && !branches.is_empty()
            {
                return Union::new(branches.iter().map(|b| self.strategy(b, depth + 1))).boxed();
            }
        }
        if let Some(Value::Array(parts)) = object.get("allOf") {
            let merged = merge(parts.iter().map(|part| self.resolve(part)), object);
            return self.strategy_of(&merged, depth);
        }
        self.strategy_of(schema, depth)
    }

    /// [`strategy`](Self::strategy) of a schema without `$ref`, `enum` or combinators.
    fn strategy_of(&self, schema: &Value, depth: usize) -> BoxedStrategy<Value> {
        if let Some(Value::Array(kinds)) = schema.get("type") {
            let branches = kinds.iter().filter_map(Value::as_str).map(|kind| {
                let mut one = schema.clone();
                one["type"] = Value::from(kind);
                self.strategy_of(&one, depth)
            });
            return Union::new(branches.collect::<Vec<_>>()).boxed();
        }
        match kind(schema) {
            "null" => Just(Value::Null).boxed(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "integer" => {
                let (low, high) = integer_range(schema);
                (low..=high).prop_map(Value::from).boxed()
            }
            "number" => {
                let (low, high) = number_range(schema);
                (low..=high)
                    .prop_map(|n| Number::from_f64(n).map_or(Value::Null, Value::Number))
                    .boxed()
            }
            "string" => string_strategy(schema),
            "array" => {
                let (min, max) = item_range(schema);
                let item = schema.get("items").cloned().unwrap_or(Value::Bool(true));
                let item = self.strategy(&item, depth + 1);
                proptest::collection::vec(item, min..=max)
                    .prop_map(Value::Array)
                    .boxed()
            }
            _ => {
                let required = required(schema);
                let mut fields: Vec<BoxedStrategy<Option<(String, Value)>>> = Vec::new();
                if let Some(Value::Object(properties)) = schema.get("properties") {
                    for (name, property) in properties {
                        let value = self.strategy(property, depth + 1);
                        let name = name.clone();
                        let field = if required.contains(&name.as_str()) {
                            value.prop_map(move |v| Some((name.clone(), v))).boxed()
                        } else {
                            proptest::option::of(value)
                                .prop_map(move |v| v.map(|v| (name.clone(), v)))
                                .boxed()
                        };
                        fields.push(field);
                    }
                }
                fields
                    .prop_map(|fields| Value::Object(fields.into_iter().flatten().collect()))
                    .boxed()
            }
        }
    }
}

/// Whether `schema` admits only `null`.
fn is_null(schema: &Value) -> bool {
    schema.get("type") == Some(&Value::from("null"))
}

/// The parts of an `allOf` and the schema around it, as one schema: their keys together
/// (`properties` and `required` joined, other keys the last part's).
fn merge<'a>(parts: impl Iterator<Item = &'a Value>, around: &Map<String, Value>) -> Value {
    let mut merged = Map::new();
    let mut properties = Map::new();
    let mut required: Vec<Value> = Vec::new();
    let outer = around.iter().filter(|(key, _)| key.as_str() != "allOf");
    let parts = parts.filter_map(Value::as_object);
    for (key, value) in parts.flat_map(|part| part.iter()).chain(outer) {
        match (key.as_str(), value) {
            ("properties", Value::Object(more)) => {
                properties.extend(more.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            ("required", Value::Array(more)) => required.extend(more.iter().cloned()),
            _ => {
                merged.insert(key.clone(), value.clone());
            }
        }
    }
    if !properties.is_empty() {
        merged.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        merged.insert("required".into(), Value::Array(required));
    }
    Value::Object(merged)
}

/// The type a schema's values take: its `type` (the first that is not `null`, of a list), or
/// what its keys imply.
fn kind(schema: &Value) -> &str {
    match schema.get("type") {
        Some(Value::String(kind)) => kind,
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("null"),
        _ if schema.get("properties").is_some() => "object",
        _ if schema.get("items").is_some() => "array",
        _ if schema.get("minLength").is_some() || schema.get("pattern").is_some() => "string",
        _ => "object",
    }
}

/// The names of the required fields of an object schema.
fn required(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// The least and most an integer schema allows: its bounds (exclusive ones moved in by one,
/// a `multipleOf` rounded in), else its `format`'s, else [`OPEN_BOUND`].
fn integer_range(schema: &Value) -> (i64, i64) {
    let (format_low, format_high) = match schema.get("format").and_then(Value::as_str) {
        Some("uint8") => (0, i64::from(u8::MAX)),
        Some("int8") => (i64::from(i8::MIN), i64::from(i8::MAX)),
        Some("uint16") => (0, i64::from(u16::MAX)),
        Some("int16") => (i64::from(i16::MIN), i64::from(i16::MAX)),
        Some(format) if format.starts_with("uint") => (0, OPEN_BOUND),
        _ => (-OPEN_BOUND, OPEN_BOUND),
    };
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let mut low = match (bound("minimum"), bound("exclusiveMinimum")) {
        (_, Some(x)) => x.floor() as i64 + 1,
        (Some(x), None) => x.ceil() as i64,
        (None, None) => format_low,
    };
    let mut high = match (bound("maximum"), bound("exclusiveMaximum")) {
        (_, Some(x)) => x.ceil() as i64 - 1,
        (Some(x), None) => x.floor() as i64,
        (None, None) => format_high.max(low.saturating_add(OPEN_BOUND.min(1000))),
    };
    if let Some(step) = schema
        .get("multipleOf")
        .and_then(Value::as_i64)
        .filter(|s| *s > 0)
    {
        low = low.div_euclid(step) * step + if low.rem_euclid(step) == 0 { 0 } else { step };
        high = high.div_euclid(step) * step;
    }
    if high < low { (low, low) } else { (low, high) }
}

/// The least and most a number schema allows, as [`integer_range`] says for integers.
fn number_range(schema: &Value) -> (f64, f64) {
    let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
    let open = OPEN_BOUND as f64;
    let low = bound("minimum")
        .or(bound("exclusiveMinimum").map(|x| x + 1e-6))
        .unwrap_or(-open);
    let high = bound("maximum")
        .or(bound("exclusiveMaximum").map(|x| x - 1e-6))
        .unwrap_or(open);
    if high < low { (low, low) } else { (low, high) }
}

/// The fewest and most items a drawn array holds.
fn item_range(schema: &Value) -> (usize, usize) {
    let min = count(schema, "minItems").unwrap_or(0).min(MAX_MIN);
    let max = count(schema, "maxItems")
        .unwrap_or(MAX_ITEMS)
        .min(min.max(MAX_ITEMS));
    (min, max.max(min))
}

/// The fewest and most characters of a string schema.
fn length_range(schema: &Value) -> (usize, usize) {
    let min = count(schema, "minLength").unwrap_or(0).min(MAX_MIN);
    let max = count(schema, "maxLength").unwrap_or(LONG_TEXT.max(min));
    (min, max.max(min))
}

/// A count a schema sets (`minItems`, `maxLength`...).
fn count(schema: &Value, key: &str) -> Option<usize> {
    schema
        .get(key)
        .and_then(Value::as_u64)
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// A string at `edge` of `schema`: a `format`'s edge value, a `pattern`'s shortest or a drawn
/// match, else `minLength` characters (empty when allowed) or `maxLength` of [`TEXT`].
fn edge_string(schema: &Value, edge: Edge) -> String {
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && let Some(value) = format_value(format, edge)
    {
        return value.to_owned();
    }
    if let Some(strategy) = pattern_strategy(schema) {
        let seed = [u8::from(edge == Edge::High); 32];
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed);
        let mut runner = TestRunner::new_with_rng(Config::default(), rng);
        if let Ok(tree) = strategy.new_tree(&mut runner) {
            return tree.current();
        }
    }
    let (min, max) = length_range(schema);
    let count = if edge == Edge::Low {
        min
    } else {
        max.min(LONG_TEXT.max(min))
    };
    if edge == Edge::Low {
        return "a".repeat(count);
    }
    TEXT.chars().cycle().take(count).collect()
}

/// A value of a well-known string `format` at `edge`.
fn format_value(format: &str, edge: Edge) -> Option<&'static str> {
    let (low, high) = match format {
        "date-time" => ("1970-01-01T00:00:00Z", "2099-12-31T23:59:59.999+14:00"),
        "date" => ("1970-01-01", "2099-12-31"),
        "time" => ("00:00:00Z", "23:59:59.999+14:00"),
        "duration" => ("P0D", "P1Y2M3DT4H5M6S"),
        "email" => ("a@b.co", "first.last+tag@sub.example.org"),
        "hostname" => ("a", "sub.example.org"),
        "ipv4" => ("0.0.0.0", "255.255.255.255"),
        "ipv6" => ("::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        "uri" | "iri" => ("a:", "https://example.org/a/b?c=d#e"),
        "uri-reference" | "iri-reference" => ("", "../a/b?c=d#e"),
        "uuid" => (
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
        ),
        _ => return None,
    };
    Some(if edge == Edge::Low { low } else { high })
}

/// A drawn string of `schema`: a `pattern`'s match, a `format`'s edge values, or text of the
/// schema's lengths.
fn string_strategy(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && let (Some(low), Some(high)) = (
            format_value(format, Edge::Low),
            format_value(format, Edge::High),
        )
    {
        return proptest::sample::select(vec![json!(low), json!(high)]).boxed();
    }
    if let Some(strategy) = pattern_strategy(schema) {
        return strategy.prop_map(Value::String).boxed();
    }
    let (min, max) = length_range(schema);
    let max = max.min(min.max(40));
    proptest::collection::vec(any::<char>(), min..=max)
        .prop_map(|chars| Value::String(chars.into_iter().collect()))
        .boxed()
}

/// The strings that match a schema's `pattern`, when proptest's generator reads it: the
/// pattern's own anchors taken off (a generated match is the whole string anyway).
fn pattern_strategy(schema: &Value) -> Option<proptest::string::RegexGeneratorStrategy<String>> {
    let pattern = schema.get("pattern").and_then(Value::as_str)?;
    let pattern = pattern.strip_prefix('^').unwrap_or(pattern);
    let pattern = match pattern.strip_suffix('$') {
        Some(inner) if !inner.ends_with('\\') => inner,
        _ => pattern,
    };
    proptest::string::string_regex(pattern).ok()
}

/// Any scalar, for a schema that allows anything.
fn any_scalar() -> BoxedStrategy<Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-OPEN_BOUND..OPEN_BOUND).prop_map(Value::from),
        ".{0,20}".prop_map(Value::String),
    ]
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(schema: &Value) -> Vec<Value> {
        cases(schema, 0, 0)
            .0
            .into_iter()
            .map(|case| case.arguments)
            .collect()
    }

    #[test]
    fn edges_are_the_bounds_the_empty_string_and_the_absent_field() {
        let schema = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "limit": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 50},
                "note": {"type": ["string", "null"], "maxLength": 5},
                "kind": {"enum": ["a", "b", "c"]}
            },
            "required": ["text", "limit"]
        });
        let found = edges(&schema);
        assert_eq!(found[0], json!({"text": "", "limit": 1}));
        assert_eq!(
            found[1],
            json!({"text": "", "limit": 1, "note": "", "kind": "a"})
        );
        assert_eq!(found[2]["limit"], 50);
        assert_eq!(found[2]["kind"], "c");
        assert_eq!(found[2]["note"].as_str().unwrap().chars().count(), 5);
        assert_eq!(
            found[2]["text"].as_str().unwrap().chars().count(),
            LONG_TEXT
        );
    }

    #[test]
    fn drawn_values_are_valid_and_the_same_for_the_same_seed() {
        let schema = json!({
            "type": "object",
            "$defs": {"Job": {"type": "object", "properties": {
                "name": {"type": "string", "pattern": "^[a-z]{2,5}$"},
                "every": {"type": "integer", "exclusiveMinimum": 0, "maximum": 9}
            }, "required": ["name", "every"]}},
            "properties": {
                "jobs": {"type": "array", "items": {"$ref": "#/$defs/Job"}, "minItems": 1},
                "when": {"type": "string", "format": "date-time"},
                "either": {"anyOf": [{"type": "boolean"}, {"type": "number", "minimum": 0.5}]}
            },
            "required": ["jobs"]
        });
        let validator = jsonschema::validator_for(&schema).unwrap();
        let (first, _) = cases(&schema, 20, 7);
        assert!(first.len() > 10, "{first:#?}");
        for case in &first {
            assert!(validator.is_valid(&case.arguments), "{case:?}");
        }
        assert_eq!(cases(&schema, 20, 7).0, first);
        assert_ne!(cases(&schema, 20, 8).0, first);
    }

    #[test]
    fn hostile_bounds_and_a_reference_loop_end() {
        let schema = json!({
            "type": "object",
            "$defs": {"Loop": {"$ref": "#/$defs/Loop"}, "Tree": {"type": "object",
                "properties": {"child": {"$ref": "#/$defs/Tree"}}, "required": ["child"]}},
            "properties": {
                "many": {"type": "array", "minItems": 1_000_000_000u64, "items": {"type": "integer"}},
                "long": {"type": "string", "minLength": 1_000_000_000u64},
                "loop": {"$ref": "#/$defs/Loop"},
                "tree": {"$ref": "#/$defs/Tree"}
            }
        });
        let (found, _) = cases(&schema, 5, 3);
        // Nothing past the bounds was written, and the walk ended.
        for case in &found {
            assert!(
                case.arguments.to_string().len() < 4 * MAX_MIN * 8,
                "{}",
                case.label
            );
        }
    }

    #[test]
    fn a_schema_nothing_satisfies_gives_no_case() {
        let (found, dropped) = cases(
            &json!({"type": "object", "properties": {"x": false}, "required": ["x"]}),
            3,
            1,
        );
        assert!(found.is_empty());
        assert_eq!(dropped, 6);
    }
}
