//! `json`: JSON text as a model or another process writes it, through the walks of
//! `tool-registry-json`, and the same text taken as a JSON Schema.
//!
//! - One rule for a repeated key: `unique::from_str` reads what `serde_json` reads, the same
//!   value, unless an object repeats a key, which it refuses.
//! - Sizes and depths: `depth::measure` gives the compact JSON's length (`written_len`, the
//!   length `serde_json` writes) or the bound it found passed, and that bound is passed;
//!   `nests_deeper` agrees with it; `dispose` drops any value without recursion.
//! - Schema walks: `schema::measure`, the typing of a schema and of its properties, visit at
//!   most a fixed number of schemas, whatever `$ref`s the text holds.

use serde_json::Value;
use tool_registry_json::depth::{self, Exceeds};
use tool_registry_json::schema::{self, MAX_SCHEMA_NODES, kinds::Typing};
use tool_registry_json::testing::visits_of;
use tool_registry_json::unique;

/// The most schemas one reading of a schema may visit: each walk's budget, for each of the
/// checks `measure` makes, twice (once more to name where it failed).
const MAX_VISITS: usize = 8 * MAX_SCHEMA_NODES;

pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let plain = serde_json::from_str::<Value>(text);
    let value = match unique::from_str(text) {
        Ok(value) => {
            let plain = plain.expect("what unique reads, serde_json reads");
            assert_eq!(value, plain, "read alike: {text}");
            value
        }
        Err(error) => {
            if let Ok(plain) = plain {
                assert!(
                    unique::is_duplicate(&error),
                    "refused for another reason: {error}: {text}"
                );
                depth::dispose(plain);
            }
            return;
        }
    };

    let max_depth = usize::from(first % 8) * 4;
    let max_bytes = usize::from(first) * 8;
    let len = depth::written_len(&value);
    assert_eq!(
        len,
        serde_json::to_string(&value).expect("a value writes").len()
    );
    let deeper = depth::nests_deeper(&value, max_depth);
    match depth::measure(&value, max_depth, max_bytes) {
        Ok(measured) => {
            assert_eq!(measured, len, "measured: {text}");
            assert!(
                !deeper && len <= max_bytes,
                "within bounds it is not: {text}"
            );
        }
        Err(Exceeds::Depth) => assert!(deeper, "deeper than {max_depth} it is not: {text}"),
        Err(Exceeds::Bytes) => {
            assert!(len > max_bytes, "longer than {max_bytes} it is not: {text}")
        }
    }

    let (_, visits) = visits_of(|| schema::measure(&value));
    assert!(
        visits <= MAX_VISITS,
        "measure visited {visits} schemas: {text}"
    );
    let (_, visits) = visits_of(|| {
        let mut typing = Typing::new(&value);
        let _ = typing.kinds(&value);
        if let Some(properties) = value.get("properties").and_then(Value::as_object) {
            for key in properties.keys().take(16) {
                if let Some(property) = typing.property(&value, key) {
                    let _ = typing.kinds(property);
                }
            }
        }
        let _ = typing.items(&value);
    });
    assert!(
        visits <= MAX_VISITS,
        "typing visited {visits} schemas: {text}"
    );
    depth::dispose(value);
}
