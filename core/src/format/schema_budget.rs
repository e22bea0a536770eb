//! The readers of schemas here (the provider transforms, the unknown-field check, lenient
//! decoding) on the hostile shapes and random graphs of `$ref`s: each stays within the schema
//! walk's budget. The walk's own rules are tested in `tool-registry-json`, the parser's typing in
//! `tool-registry-parse`.

use serde_json::{Value, json};
use tool_registry_json::schema::{MAX_SCHEMA_NODES, measure};
use tool_registry_json::testing::{
    chain, graph, many_definitions, self_referring, size, visits_of,
};

/// Every reader of schemas, on `schema`: what each visited, and Gemini's output.
fn read_everything(schema: &Value) -> Vec<(&'static str, usize)> {
    use super::strict::{Dialect, strict_parameters};
    let map = schema.as_object().unwrap();
    let mut spent = Vec::new();
    let (_, n) = visits_of(|| measure(schema));
    spent.push(("measure", n));
    let (gemini, n) = visits_of(|| super::gemini::parameters(map));
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
    let (out, visited) = visits_of(|| super::gemini::parameters(small.as_object().unwrap()));
    let out = out.unwrap();
    assert!(size(&out) <= MAX_SCHEMA_NODES && visited <= MAX_SCHEMA_NODES);
    assert_eq!(out.pointer("/properties/value/anyOf/0/anyOf/1/anyOf/0/anyOf/0/anyOf/1/anyOf/0/anyOf/0/anyOf/0/anyOf/1/anyOf/0/type"), Some(&json!("string")));
    let large = chain(10, 3);
    let error = super::gemini::parameters(large.as_object().unwrap()).unwrap_err();
    assert!(
        error.construct.contains("more than 10000 schemas"),
        "{error:?}"
    );
    let error = super::gemini::parameters(self_referring(4).as_object().unwrap()).unwrap_err();
    assert!(error.construct.contains("recursive"), "{error:?}");
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
