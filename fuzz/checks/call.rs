//! `call`: a tool's arguments as they come from outside, through `Registry::call` and every
//! stage before the tool, as JSON text and as a `Value`. The first byte picks the tool (one of
//! this program's, a run-time tool whose schema bounds its arguments, or a name no tool has);
//! the rest is the arguments' text.
//!
//! - Never a panic: what does not fit is a typed error, never `panicked`.
//! - The same answer either way: text the registry reads as JSON (its one rule for a repeated
//!   key, `tool_registry_json::unique`) gives, as a `Value`, the same content or the same
//!   error code.
//! - The bounds hold: what a tool is handed keeps to its schema (`#[arg(min, max, max_len)]`,
//!   a run-time schema's `maximum`, `maxItems`, `maxLength`, `additionalProperties`) and nests
//!   no deeper than `MAX_ARGS_DEPTH`.

use std::sync::OnceLock;

use serde_json::{Value, json};
use tool_registry::call::{MAX_ARGS_BYTES, MAX_ARGS_DEPTH};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, ToolError, ToolResult, ToolSpec};
use tool_registry_json::depth::nests_deeper;

/// The tools a first byte picks from.
const NAMES: &[&str] = &[
    "get_weather",
    "search",
    "get_time",
    "create_event",
    "bounded",
    "keep",
    "checked",
    "no_such.tool",
];

/// The program's tools and `checked`, a run-time tool that hands its arguments back.
fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let registry = Registry::builder().build().expect("the fuzz tools build");
        let spec = ToolSpec::builder("checked")
            .description("Hand the arguments back.")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer", "minimum": 0, "maximum": 10},
                    "items": {"type": "array", "maxItems": 3, "items": {"type": "string", "maxLength": 5}},
                    "any": {}
                },
                "required": ["n"],
                "additionalProperties": false
            }))
            .build()
            .expect("the run-time spec builds");
        let handler = ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) });
        registry.register(spec, handler).expect("the run-time tool registers");
        registry
    })
}

pub fn check(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let name = NAMES[usize::from(pick) % NAMES.len()];
    let registry = registry();
    let ctx = Ctx::trusted();
    let by_text = super::block_on(registry.call(name, text, &ctx));
    kept_to_bounds(name, text, &by_text);
    // Text is measured as given, a `Value` as its compact JSON: below the bound, both pass it.
    if text.len() < MAX_ARGS_BYTES
        && let Ok(value) = tool_registry_json::unique::from_str(text)
    {
        let by_value = super::block_on(registry.call(name, value, &ctx));
        kept_to_bounds(name, text, &by_value);
        assert_eq!(
            outcome(&by_text),
            outcome(&by_value),
            "`{name}` answered its arguments as text and as a value differently: {text}"
        );
    }
}

/// What a call answered, without its audit: the content, or the error's code.
fn outcome(answer: &Result<ToolResult, ToolError>) -> Result<(bool, Value), String> {
    match answer {
        Ok(result) => Ok((result.success, result.content.clone())),
        Err(error) => Err(error.code().to_owned()),
    }
}

/// What a tool was handed keeps to its schema; nothing panicked.
fn kept_to_bounds(name: &str, text: &str, answer: &Result<ToolResult, ToolError>) {
    let result = match answer {
        Err(error) => {
            assert_ne!(
                error.code(),
                "panicked",
                "`{name}` panicked on {text}: {error}"
            );
            return;
        }
        Ok(result) => result,
    };
    let content = &result.content;
    assert!(
        !nests_deeper(content, MAX_ARGS_DEPTH + 1),
        "`{name}` was handed arguments deeper than the bound: {text}"
    );
    match name {
        "bounded" => {
            let count = content["count"].as_u64().expect("a count");
            assert!((1..=5).contains(&count), "count {count} passed: {text}");
            let word = content["word"].as_str().expect("a word");
            assert!(word.chars().count() <= 8, "word {word:?} passed: {text}");
        }
        "checked" => {
            let object = content.as_object().expect("an object");
            assert!(
                object
                    .keys()
                    .all(|key| ["n", "items", "any"].contains(&key.as_str())),
                "a property the schema does not allow passed: {text}"
            );
            // JSON Schema's `integer` is a number without a fraction: `1e0` and `1.0` are one.
            let n = object["n"].as_f64().expect("n, a number");
            assert!(
                n.fract() == 0.0 && (0.0..=10.0).contains(&n),
                "n {n} passed: {text}"
            );
            if let Some(items) = object.get("items") {
                let items = items.as_array().expect("items, an array");
                assert!(items.len() <= 3, "{} items passed: {text}", items.len());
                for item in items {
                    let item = item.as_str().expect("a string item");
                    assert!(item.chars().count() <= 5, "item {item:?} passed: {text}");
                }
            }
        }
        "no_such.tool" => panic!("a tool no program has ran: {text}"),
        _ => {}
    }
}
