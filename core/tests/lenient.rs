//! Arguments as real models send them: read leniently by default (an object as a JSON string,
//! a number as a numeric string, `"true"` for a boolean, `null` for an optional argument),
//! refused with the path named in strict mode, for compiled and run-time tools alike. What
//! neither mode accepts (a wrong type, a missing or unknown field at any depth, arguments too
//! large or too deep) is an error naming where it is.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, ToolError, ToolSpec, tool};

/// Where to look. No `deny_unknown_fields`: the registry refuses unknown keys here anyway.
#[derive(Debug, Deserialize, JsonSchema)]
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

/// Plan a route.
#[tool(name = "geo.route")]
fn route(stops: Vec<Area>) -> Value {
    json!(
        stops
            .iter()
            .map(|s| (&s.city, s.radius))
            .collect::<Vec<_>>()
    )
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
            "area.x",
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
            .register(
                spec.clone(),
                ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
            )
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
        matches!(&error, ToolError::InvalidArguments { path, .. } if path == "item"),
        "{error}"
    );
    let extra = r#"{"item": {"sku": "a1", "count": 3, "extra": 1}}"#;
    let error = lenient.call("shop.order", extra, &ctx).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { path, .. } if path == "item"),
        "{error}"
    );

    // Without `additionalProperties`, JSON Schema admits other keys, and so does the registry.
    let open = ToolSpec::builder("shop.open")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "item": { "type": "object", "properties": { "sku": { "type": "string" } } }
            }
        }))
        .build()
        .unwrap();
    lenient
        .register(
            open,
            ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
        )
        .unwrap();
    let sent = r#"{"item": {"sku": "a1", "extra": 1}, "more": true}"#;
    let result = lenient.call("shop.open", sent, &ctx).await.unwrap();
    assert_eq!(result.content["item"]["extra"], 1);
}

/// The path and message of an `invalid_arguments` error, and the error's code otherwise.
async fn refusal(registry: &Registry, tool: &str, args: Value) -> (String, String) {
    let text = args.to_string();
    let ctx = Ctx::new();
    let from_text = registry.call(tool, text.as_str(), &ctx).await.unwrap_err();
    let from_value = registry.call(tool, args, &ctx).await.unwrap_err();
    assert_eq!(from_text, from_value, "{text}");
    match from_text {
        ToolError::InvalidArguments { path, message, .. } => (path, message),
        other => (String::new(), other.code().to_owned()),
    }
}

fn find_args(overrides: Value) -> Value {
    let mut args = json!({
        "area": { "city": "Oslo", "radius": 5 }, "limit": 10, "open_now": true, "ids": [1]
    });
    for (key, value) in overrides.as_object().unwrap() {
        if value.is_null() && key != "pages" {
            args.as_object_mut().unwrap().remove(key);
        } else {
            args[key] = value.clone();
        }
    }
    args
}

#[tokio::test]
async fn each_kind_of_bad_arguments_is_refused_naming_where_in_both_modes() {
    let (lenient, strict) = registries();
    let deep = (0..200).fold(json!(1), |inner, _| json!([inner]));
    let cases = [
        // A wrong type, at the top and one level down.
        (
            find_args(json!({ "limit": "ten" })),
            "limit",
            "invalid type",
        ),
        (
            find_args(json!({ "area": { "city": 5, "radius": 1 } })),
            "area.city",
            "invalid type",
        ),
        // A missing field: the object that lacks it.
        (
            find_args(json!({ "limit": null })),
            "",
            "missing field `limit`",
        ),
        (
            find_args(json!({ "area": { "city": "Oslo" } })),
            "area",
            "missing field `radius`",
        ),
        // An unknown field, at the top, in a nested struct that does not deny them itself,
        // and in an item of an array of them.
        (find_args(json!({ "x": 1 })), "x", "unknown field `x`"),
        (
            find_args(json!({ "area": { "city": "Oslo", "radius": 1, "extra": 1 } })),
            "area.extra",
            "unknown field `extra`; expected one of `city`, `radius`",
        ),
        // Too large and too deep come before anything reads the arguments.
        (
            find_args(json!({ "area": "x".repeat(2 << 20) })),
            "",
            "arguments_too_large",
        ),
        (find_args(json!({ "ids": deep })), "", "arguments_too_deep"),
    ];
    for registry in [&lenient, &strict] {
        for (args, path, message) in &cases {
            let (at, said) = refusal(registry, "geo.find", args.clone()).await;
            assert_eq!(&at, path, "{args}: {said}");
            assert!(said.starts_with(message), "{args}: {said}");
        }
        let stops = json!({ "stops": [
            { "city": "Oslo", "radius": 1 },
            { "city": "Bergen", "radius": 2, "extra": true }
        ] });
        let (at, said) = refusal(registry, "geo.route", stops).await;
        assert_eq!(at, "stops[1].extra", "{said}");
    }
    // An unknown field inside an object sent as a JSON string is found once it is read.
    let sent = find_args(json!({ "area": "{\"city\": \"Oslo\", \"radius\": 1, \"extra\": 1}" }));
    let (at, said) = refusal(&lenient, "geo.find", sent).await;
    assert_eq!(at, "area.extra", "{said}");
}

#[tokio::test]
async fn strict_mode_refuses_each_thing_lenient_mode_reads() {
    let (lenient, strict) = registries();
    let ctx = Ctx::new();
    for (sent, path) in [
        (
            json!({ "area": "{\"city\": \"Oslo\", \"radius\": 5}" }),
            "area",
        ),
        (json!({ "limit": "10" }), "limit"),
        (json!({ "open_now": "true" }), "open_now"),
        (json!({ "ids": "[1]" }), "ids"),
        (json!({ "pages": null }), "pages"),
    ] {
        let args = find_args(sent);
        let read = lenient.call("geo.find", args.clone(), &ctx).await;
        assert!(read.is_ok(), "{args}: {read:?}");
        let (at, said) = refusal(&strict, "geo.find", args.clone()).await;
        assert_eq!(at, path, "{args}: {said}");
    }
}
