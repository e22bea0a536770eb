//! The hostile shapes every schema reader meets, and the walk's own rules.

use serde_json::{Map, Value, json};

use super::*;
use crate::testing::{chain, many_definitions, self_referring};

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
