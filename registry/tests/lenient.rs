//! Arguments as real models send them: read leniently by default (an object as a JSON string,
//! a number as a numeric string, `"true"` for a boolean, `null` for an optional argument),
//! refused with the path named in strict mode, for compiled and run-time tools alike.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_registry::{Ctx, Registry, ToolError, ToolSpec, tool};

/// Where to look.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Area {
    /// The city.
    city: String,
    /// How far, in km.
    radius: u32,
}

/// Find places.
#[tool(name = "geo.find")]
fn find(
    area: Area,
    limit: u32,
    open_now: bool,
    ratio: Option<f64>,
    #[arg(default = 2)] pages: u32,
    ids: Vec<i64>,
) -> Value {
    json!({
        "city": area.city, "radius": area.radius, "limit": limit, "open_now": open_now,
        "ratio": ratio, "pages": pages, "ids": ids,
    })
}

fn registries() -> (Registry, Registry) {
    let build = |strict| {
        Registry::builder()
            .log_annotations(false)
            .strict_arguments(strict)
            .build()
            .unwrap()
    };
    (build(false), build(true))
}

const AS_MODELS_SEND_IT: &str = r#"{
    "area": "{\"city\": \"Oslo\", \"radius\": \"5\"}",
    "limit": "10",
    "open_now": "true",
    "ratio": null,
    "pages": null,
    "ids": "[1, \"2\"]"
}"#;

#[tokio::test]
async fn a_compiled_tool_reads_what_models_send_unless_strict() {
    let (lenient, strict) = registries();
    let ctx = Ctx::new();
    let expected = json!({
        "city": "Oslo", "radius": 5, "limit": 10, "open_now": true,
        "ratio": null, "pages": 2, "ids": [1, 2],
    });
    let result = lenient
        .call("geo.find", AS_MODELS_SEND_IT, &ctx)
        .await
        .unwrap();
    assert_eq!(result.content, expected);
    // The same as a Value.
    let value: Value = serde_json::from_str(AS_MODELS_SEND_IT).unwrap();
    let result = lenient.call("geo.find", value.clone(), &ctx).await.unwrap();
    assert_eq!(result.content, expected);

    let error = strict
        .call("geo.find", AS_MODELS_SEND_IT, &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { path, .. } if path == "area"),
        "{error}"
    );
    let error = strict.call("geo.find", value, &ctx).await.unwrap_err();
    assert_eq!(error.code(), "invalid_arguments");

    // Clean arguments read the same in both modes.
    let clean =
        r#"{"area": {"city": "Oslo", "radius": 5}, "limit": 10, "open_now": true, "ids": [1, 2]}"#;
    assert_eq!(
        strict.call("geo.find", clean, &ctx).await.unwrap().content,
        expected
    );
    assert_eq!(
        lenient.call("geo.find", clean, &ctx).await.unwrap().content,
        expected
    );
}

#[tokio::test]
async fn what_leniency_cannot_read_is_still_an_error_naming_the_path() {
    let (lenient, _) = registries();
    let ctx = Ctx::new();
    for (args, path) in [
        (
            r#"{"area": {"city": "Oslo", "radius": "far"}, "limit": 1, "open_now": true, "ids": []}"#,
            "area.radius",
        ),
        (
            r#"{"area": {"city": "Oslo", "radius": 1}, "limit": "ten", "open_now": true, "ids": []}"#,
            "limit",
        ),
        (
            r#"{"area": {"city": "Oslo", "radius": 1}, "limit": 1, "open_now": "yes", "ids": []}"#,
            "open_now",
        ),
        (
            r#"{"area": {"city": "Oslo", "radius": 1}, "limit": 1, "open_now": true, "ids": ["x"]}"#,
            "ids[0]",
        ),
        (
            r#"{"area": "{not json", "limit": 1, "open_now": true, "ids": []}"#,
            "area",
        ),
        (
            r#"{"area": {"city": "Oslo", "radius": 1, "x": 1}, "limit": 1, "open_now": true, "ids": []}"#,
            "area",
        ),
    ] {
        let error = lenient.call("geo.find", args, &ctx).await.unwrap_err();
        let ToolError::InvalidArguments { path: at, .. } = &error else {
            panic!("{args}: {error}");
        };
        assert!(at.starts_with(path), "{args}: {at} is not {path}: {error}");
    }
    // A required argument sent as null stays an error.
    let error = lenient
        .call(
            "geo.find",
            r#"{"area": null, "limit": 1, "open_now": true, "ids": []}"#,
            &ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(error.code(), "invalid_arguments");
    // The limits come first in both modes.
    let big = format!(r#"{{"area": "{}"}}"#, "x".repeat(2 << 20));
    assert_eq!(
        lenient
            .call("geo.find", big.as_str(), &ctx)
            .await
            .unwrap_err()
            .code(),
        "arguments_too_large"
    );
}

#[tokio::test]
async fn a_run_time_tool_reads_the_same_way() {
    let (lenient, strict) = registries();
    let spec = ToolSpec::builder("shop.order")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "item": {
                    "type": "object",
                    "properties": { "sku": { "type": "string" }, "count": { "type": "integer" } },
                    "required": ["sku", "count"],
                    "additionalProperties": false
                },
                "gift": { "type": "boolean" },
                "note": { "type": "string" }
            },
            "required": ["item"],
            "additionalProperties": false
        }))
        .build()
        .unwrap();
    for registry in [&lenient, &strict] {
        registry
            .register_with_handler(spec.clone(), |args: Value, _ctx: Ctx| async move {
                Ok::<_, String>(args)
            })
            .unwrap();
    }
    let ctx = Ctx::new();
    let sent = r#"{"item": "{\"sku\": \"a1\", \"count\": \"3\"}", "gift": "false", "note": null}"#;
    let result = lenient.call("shop.order", sent, &ctx).await.unwrap();
    assert_eq!(
        result.content,
        json!({ "item": { "sku": "a1", "count": 3 }, "gift": false })
    );
    let error = strict.call("shop.order", sent, &ctx).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { .. }),
        "{error}"
    );
}
