//! The hostile shapes every schema reader meets, and the walk's own rules.

use serde_json::{Map, Value, json};

use super::*;

/// `depth` definitions, each an `anyOf` of `k` `$ref`s to the next, the last a string; the
/// argument `value` refers to the first. About 1 KB at `k` = 4: `k^depth` paths.
pub(crate) fn chain(depth: usize, k: usize) -> Value {
    let mut defs = Map::new();
    for level in 0..depth {
        let next = json!({ "$ref": format!("#/$defs/D{}", level + 1) });
        defs.insert(format!("D{level}"), json!({ "anyOf": vec![next; k] }));
    }
    defs.insert(format!("D{depth}"), json!({ "type": "string" }));
    json!({
        "type": "object",
        "properties": { "value": { "$ref": "#/$defs/D0" } },
        "$defs": defs,
    })
}

/// One definition whose `anyOf` is a string and `k` `$ref`s to itself.
pub(crate) fn self_referring(k: usize) -> Value {
    let mut options = vec![json!({ "type": "string" })];
    options.extend(std::iter::repeat_n(json!({ "$ref": "#/$defs/S" }), k));
    json!({
        "type": "object",
        "properties": { "value": { "$ref": "#/$defs/S" } },
        "$defs": { "S": { "anyOf": options } },
    })
}

/// `n` definitions, the argument `value` referring to the last.
pub(crate) fn many_definitions(n: usize) -> Value {
    let defs: Map<String, Value> = (0..n)
        .map(|i| (format!("D{i}"), json!({ "type": "integer", "minimum": i })))
        .collect();
    json!({
        "type": "object",
        "properties": { "value": { "$ref": format!("#/$defs/D{}", n - 1) } },
        "$defs": defs,
    })
}

#[test]
fn the_hostile_shapes_measure_within_the_budget_or_are_named() {
    // k^10 applications of the last definition at one place: 2^10 fit, 3^10 do not.
    for k in 1..=2 {
        assert_eq!(measure(&chain(10, k)), Ok(()), "chain k = {k}");
    }
    for k in 3..=10 {
        let stop = measure(&chain(10, k)).unwrap_err();
        assert_eq!(stop.why, Why::Costly, "chain k = {k}");
        assert!(stop.path.starts_with("/$defs/D"), "{stop}");
    }
    // Applying itself to the same value never decides.
    for k in 1..=8 {
        let stop = measure(&self_referring(k)).unwrap_err();
        assert_eq!(stop.why, Why::Loop("#/$defs/S".into()), "self k = {k}");
        assert!(stop.path.starts_with("/$defs/S/anyOf/"), "{stop}");
    }
    let stop = measure(&many_definitions(10_000)).unwrap_err();
    assert_eq!(stop.why, Why::Spent);
    assert!(stop.path.starts_with("/$defs/D"), "{stop}");
    assert!(
        stop.to_string().contains("more than 10000 schemas"),
        "{stop}"
    );
    assert_eq!(measure(&many_definitions(1_000)), Ok(()));
}

#[test]
fn a_recursive_type_passes_unless_its_options_meet_one_member_twice() {
    // A tree: each level of the value one level down the type, left and right apart.
    let tree = json!({
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/Node" } },
        "$defs": { "Node": {
            "type": "object",
            "properties": {
                "left": { "anyOf": [{ "$ref": "#/$defs/Node" }, { "type": "null" }] },
                "right": { "anyOf": [{ "$ref": "#/$defs/Node" }, { "type": "null" }] },
                "kids": { "type": "array", "items": { "$ref": "#/$defs/Node" } }
            }
        } }
    });
    assert_eq!(measure(&tree), Ok(()));
    // Two options that both send the member `a` back to the type: twice the work per level of
    // the value, 2^127 at the deepest.
    let doubling = json!({
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/N" } },
        "$defs": { "N": { "anyOf": [
            { "type": "object", "properties": { "a": { "$ref": "#/$defs/N" } } },
            { "type": "object", "properties": { "a": { "$ref": "#/$defs/N" } }, "required": ["a"] }
        ] } }
    });
    assert_eq!(measure(&doubling).unwrap_err().why, Why::Costly);
    // A map whose values may be the type, and whose named member is too: one member gets both.
    let map = json!({
        "type": "object",
        "properties": { "m": { "$ref": "#/$defs/M" } },
        "$defs": { "M": {
            "type": "object",
            "properties": { "x": { "$ref": "#/$defs/M" } },
            "additionalProperties": { "$ref": "#/$defs/M" }
        } }
    });
    assert_eq!(measure(&map).unwrap_err().why, Why::Costly);
}

#[test]
fn depth_counts_through_refs() {
    // Each definition holds the next inside a property: two levels per definition, and one for
    // each `$ref`.
    let nested = |n: usize| {
        let defs: Map<String, Value> = (0..n)
            .map(|i| {
                let next = json!({ "$ref": format!("#/$defs/N{}", i + 1) });
                (
                    format!("N{i}"),
                    json!({ "type": "object", "properties": { "next": next } }),
                )
            })
            .chain([(format!("N{n}"), json!({ "type": "string" }))])
            .collect();
        json!({ "type": "object", "properties": { "top": { "$ref": "#/$defs/N0" } }, "$defs": defs })
    };
    assert_eq!(measure(&nested(20)), Ok(()));
    let stop = measure(&nested(40)).unwrap_err();
    assert_eq!(stop.why, Why::TooDeep);
    assert!(
        stop.path
            .starts_with("/properties/top/$ref/properties/next/$ref"),
        "{stop}"
    );
    // A long chain of `$ref`s alone is as deep.
    let defs: Map<String, Value> = (0..200)
        .map(|i| {
            (
                format!("R{i}"),
                json!({ "$ref": format!("#/$defs/R{}", i + 1) }),
            )
        })
        .chain([("R200".to_owned(), json!({ "type": "string" }))])
        .collect();
    let refs =
        json!({ "type": "object", "properties": { "a": { "$ref": "#/$defs/R0" } }, "$defs": defs });
    assert_eq!(measure(&refs).unwrap_err().why, Why::TooDeep);
    // A recursive type is not a deep one.
    let tree = json!({
        "type": "object",
        "properties": { "root": { "$ref": "#/$defs/Node" } },
        "$defs": { "Node": { "type": "object", "properties": { "kids": { "type": "array", "items": { "$ref": "#/$defs/Node" } } } } }
    });
    assert_eq!(measure(&tree), Ok(()));
}

#[test]
fn a_shared_definition_too_deep_below_a_second_place_is_found() {
    // `Deep` is 30 levels deep; measured first at the top, then met again 40 levels down.
    let mut deep = json!({ "type": "string" });
    for _ in 0..30 {
        deep = json!({ "type": "array", "items": deep });
    }
    let mut low = json!({ "$ref": "#/$defs/Deep" });
    for _ in 0..40 {
        low = json!({ "type": "array", "items": low });
    }
    let schema = json!({
        "type": "object",
        "properties": { "a": { "$ref": "#/$defs/Deep" }, "b": low },
        "$defs": { "Deep": deep }
    });
    let stop = measure(&schema).unwrap_err();
    assert_eq!(stop.why, Why::TooDeep);
    assert!(stop.path.starts_with("/properties/b/items"), "{stop}");
}

#[test]
fn resolve_follows_chains_and_finds_circles() {
    let schema = json!({
        "$defs": {
            "A": { "$ref": "#/$defs/B" },
            "B": { "type": "string" },
            "C": { "$ref": "#/$defs/C" },
            "a~b/c": { "type": "integer" }
        }
    });
    let mut walk = Walk::new(&schema);
    let a = json!({ "$ref": "#/$defs/A" });
    assert_eq!(walk.resolve(&a), Ok(&json!({ "type": "string" })));
    let c = json!({ "$ref": "#/$defs/C" });
    assert_eq!(walk.resolve(&c), Err(Why::Circle("#/$defs/C".into())));
    let escaped = json!({ "$ref": "#/$defs/a~0b~1c" });
    assert_eq!(walk.resolve(&escaped), Ok(&json!({ "type": "integer" })));
    let nowhere = json!({ "$ref": "#/$defs/Z" });
    assert_eq!(
        walk.resolve(&nowhere),
        Err(Why::Nowhere("#/$defs/Z".into()))
    );
    let remote = json!({ "$ref": "https://example.com/s.json" });
    assert!(matches!(walk.resolve(&remote), Err(Why::Nowhere(_))));
}

#[test]
fn a_walk_spends_its_budget_once() {
    let schema = json!({});
    let mut walk = Walk::with_budget(&schema, 3);
    assert_eq!(walk.spend(2), Ok(()));
    assert_eq!(walk.left, 1);
    assert_eq!(walk.spend(2), Err(Why::Spent));
    assert_eq!(walk.visit(), Err(Why::Spent));
}

thread_local! {
    /// The schemas every walk of this thread has visited (and, for a transform, written).
    pub(crate) static VISITS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// What `f` visited, by every walk it made.
fn visits_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    VISITS.with(|visits| visits.set(0));
    let out = f();
    (out, VISITS.with(std::cell::Cell::get))
}

/// The schemas in a value (objects that are schemas or hold them), counted as a walk writes
/// them.
fn size(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(size).sum::<usize>(),
        Value::Array(items) => items.iter().map(size).sum(),
        _ => 0,
    }
}

/// Every reader of schemas, on `schema`: what each visited, and Gemini's output.
fn read_everything(schema: &Value) -> Vec<(&'static str, usize)> {
    use crate::format::strict::{Dialect, strict_parameters};
    let map = schema.as_object().unwrap();
    let mut spent = Vec::new();
    let (_, n) = visits_of(|| measure(schema));
    spent.push(("measure", n));
    let (gemini, n) = visits_of(|| crate::format::gemini::parameters(map));
    spent.push(("gemini", n));
    if let Ok(out) = &gemini {
        assert!(
            size(out) <= 2 * MAX_SCHEMA_NODES,
            "gemini wrote {}",
            size(out)
        );
    }
    for dialect in [Dialect::OpenAi, Dialect::Anthropic] {
        let (_, n) = visits_of(|| strict_parameters("t", map, dialect));
        spent.push(("strict", n));
    }
    let (_, n) = visits_of(|| crate::call::fields::has_open_objects(schema));
    spent.push(("fields", n));
    let (_, n) = visits_of(|| crate::parse::typing::schema_arg_kinds(schema, "value"));
    spent.push(("typing", n));
    let mut args = json!({ "value": "5", "other": ["1", {"a": "true"}] });
    let (_, n) = visits_of(|| crate::call::lenient::coerce(&mut args, schema));
    spent.push(("lenient", n));
    spent
}

#[test]
fn every_reader_stays_within_the_budget_on_the_hostile_shapes() {
    let shapes = (1..=10)
        .map(|k| chain(10, k))
        .chain((1..=8).map(self_referring))
        .chain([many_definitions(10_000)]);
    for schema in shapes {
        for (reader, visited) in read_everything(&schema) {
            let bound = 2 * match reader {
                "lenient" => crate::call::lenient::MAX_DECODE_VISITS,
                // A failed check runs again to name the place.
                "measure" => 2 * MAX_SCHEMA_NODES,
                _ => MAX_SCHEMA_NODES,
            };
            assert!(visited <= bound, "{reader} visited {visited}");
        }
    }
}

#[test]
fn gemini_inlines_a_shared_definition_once_and_gives_up_past_the_budget() {
    // k = 2: 2^10 copies of the last definition, within the budget; k = 3: 3^10, past it.
    let small = chain(10, 2);
    let (out, visited) =
        visits_of(|| crate::format::gemini::parameters(small.as_object().unwrap()));
    let out = out.unwrap();
    assert!(size(&out) <= MAX_SCHEMA_NODES && visited <= MAX_SCHEMA_NODES);
    assert_eq!(out.pointer("/properties/value/anyOf/0/anyOf/1/anyOf/0/anyOf/0/anyOf/1/anyOf/0/anyOf/0/anyOf/0/anyOf/1/anyOf/0/type"), Some(&json!("string")));
    let large = chain(10, 3);
    let error = crate::format::gemini::parameters(large.as_object().unwrap()).unwrap_err();
    assert!(
        error.construct.contains("more than 10000 schemas"),
        "{error:?}"
    );
    let error =
        crate::format::gemini::parameters(self_referring(4).as_object().unwrap()).unwrap_err();
    assert!(error.construct.contains("recursive"), "{error:?}");
}

/// A random graph of definitions: each an `anyOf` of references to any definition (itself
/// included), of leaf types, and of objects holding more of the same.
fn graph() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(json!({ "type": "string" })),
        Just(json!({ "type": "integer" })),
        Just(json!({ "type": "null" })),
        Just(json!({ "enum": [1, "a"] })),
    ];
    (1usize..12).prop_flat_map(move |n| {
        let reference = (0..n).prop_map(|i| json!({ "$ref": format!("#/$defs/D{i}") }));
        let node = prop_oneof![leaf.clone(), reference.clone()];
        let node = node.prop_recursive(3, 24, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..6)
                    .prop_map(|options| json!({ "anyOf": options })),
                prop::collection::vec(inner.clone(), 1..4).prop_map(|members| {
                    let properties: Map<String, Value> = members
                        .into_iter()
                        .enumerate()
                        .map(|(i, m)| {
                            (
                                if i == 0 {
                                    "value".to_owned()
                                } else {
                                    format!("p{i}")
                                },
                                m,
                            )
                        })
                        .collect();
                    json!({ "type": "object", "properties": properties })
                }),
                inner.prop_map(|items| json!({ "type": "array", "items": items })),
            ]
        });
        (prop::collection::vec(node.clone(), n), node).prop_map(|(defs, value)| {
            let defs: Map<String, Value> = defs
                .into_iter()
                .enumerate()
                .map(|(i, d)| (format!("D{i}"), d))
                .collect();
            json!({
                "type": "object",
                "properties": { "value": value, "other": { "$ref": "#/$defs/D0" } },
                "$defs": defs,
            })
        })
    })
}

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_graphs_of_refs_stay_within_the_budget(schema in graph()) {
        for (reader, visited) in read_everything(&schema) {
            let bound = 2 * match reader {
                "lenient" => crate::call::lenient::MAX_DECODE_VISITS,
                "measure" => 2 * MAX_SCHEMA_NODES,
                _ => MAX_SCHEMA_NODES,
            };
            prop_assert!(visited <= bound, "{} visited {}", reader, visited);
        }
    }
}
