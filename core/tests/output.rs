//! What tools give back: output schemas (a compiled tool's returned value's JSON Schema, by
//! default, shown in the catalog and used by MCP's `outputSchema` and `structuredContent`),
//! typed blocks (images, files, links) and the checks every result passes: a run-time tool's
//! value against its declared output schema, every block against the content limits.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::content::{Block, BlockKind, Content, ContentLimits, File, Image, ResourceLink};
use tool_registry::format::Provider;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, Scope, ToolCall, ToolError, ToolResult, ToolSpec, tool};

/// A forecast.
#[derive(Serialize, JsonSchema)]
struct Forecast {
    /// Degrees Celsius.
    celsius: f64,
    /// What the sky looks like.
    sky: String,
}

/// The weather in a city now.
#[tool(name = "weather.now", output_schema)]
async fn now(city: String) -> Result<Forecast, String> {
    Ok(Forecast {
        celsius: if city == "Oslo" { 4.0 } else { 21.0 },
        sky: "clear".into(),
    })
}

/// The weather, its output schema switched off.
#[tool(name = "weather.plain", output_schema = false)]
fn plain() -> Forecast {
    Forecast {
        celsius: 0.0,
        sky: "grey".into(),
    }
}

#[tokio::test]
async fn a_declared_output_schema_reaches_the_catalog_mcp_and_results() {
    let registry = Registry::builder().log_annotations(false).build().unwrap();
    let tool = registry.get("weather.now", Listing::every()).unwrap();
    let schema = tool.output_schema().expect("declared");
    assert_eq!(schema["type"], "object");
    assert_eq!(
        schema["properties"]["celsius"]["description"],
        "Degrees Celsius."
    );
    assert_eq!(schema["required"], json!(["celsius", "sky"]));
    assert!(
        registry
            .get("weather.plain", Listing::every())
            .unwrap()
            .output_schema()
            .is_none()
    );

    let catalog = registry.catalog(Listing::every()).json();
    let docs = catalog["tools"].as_array().unwrap();
    let now = docs.iter().find(|d| d["name"] == "weather.now").unwrap();
    assert_eq!(&now["output_schema"], schema);
    assert!(
        docs.iter()
            .find(|d| d["name"] == "weather.plain")
            .unwrap()
            .get("output_schema")
            .is_none()
    );

    let mcp = registry.provider_tools(Provider::Mcp, &Scope::trusted());
    let listed = mcp.as_array().unwrap();
    let named = |name: &str| listed.iter().find(|t| t["name"] == name).unwrap();
    assert_eq!(&named("weather.now")["outputSchema"], schema);
    assert!(named("weather.plain").get("outputSchema").is_none());

    let call = ToolCall::new("weather.now", json!({ "city": "Oslo" }));
    let result = registry
        .call(&call.name, call.arguments.clone(), &Ctx::new())
        .await
        .unwrap();
    let message = registry
        .result_message(Provider::Mcp, &call, &result)
        .message;
    assert_eq!(
        message["structuredContent"],
        json!({ "celsius": 4.0, "sky": "clear" })
    );
    assert_eq!(message["isError"], false);
}

/// The weather, with its output schema from the return type, by default.
#[tool(name = "weather.default")]
fn by_default() -> Forecast {
    Forecast {
        celsius: 9.0,
        sky: "rain".into(),
    }
}

/// A type without a JSON Schema: no output schema, and no error either.
#[derive(Serialize)]
struct Opaque {
    n: u32,
}

/// A value whose type has no JSON Schema.
#[tool(name = "weather.opaque")]
fn opaque() -> Opaque {
    Opaque { n: 1 }
}

/// The smallest PNG signature and header, enough for the MIME check.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";

/// A radar picture of the sky.
#[tool(name = "weather.radar", read_only)]
fn radar() -> Image {
    Image::png(PNG)
}

/// A forecast with its picture and a link to the station.
#[tool(name = "weather.report", read_only)]
fn report() -> Content<Forecast> {
    Content::value(Forecast {
        celsius: 12.0,
        sky: "fog".into(),
    })
    .text("The radar:")
    .image(Image::png(PNG))
    .link(ResourceLink::new(
        "https://example.com/stations/7",
        "station 7",
    ))
}

/// The station's log file, said to return a file.
#[tool(name = "weather.log", read_only, returns(file))]
fn log() -> Content {
    Content::new().file(File::new("station.log", b"07:00 fog\n".to_vec()))
}

#[tokio::test]
async fn output_schemas_come_from_the_return_type_unless_switched_off() {
    let registry = Registry::builder().log_annotations(false).build().unwrap();
    let schema_of = |name: &str| {
        registry
            .get(name, Listing::every())
            .unwrap()
            .output_schema()
            .cloned()
    };
    let by_default = schema_of("weather.default").expect("a JsonSchema type has one");
    assert_eq!(by_default["required"], json!(["celsius", "sky"]));
    assert_eq!(schema_of("weather.plain"), None, "output_schema = false");
    assert_eq!(
        schema_of("weather.opaque"),
        None,
        "no JsonSchema, no schema"
    );
    assert_eq!(schema_of("weather.radar"), None, "an image has no value");
    assert_eq!(
        schema_of("weather.report"),
        Some(by_default),
        "Content<T>: T's"
    );

    let kinds = |name: &str| {
        registry
            .get(name, Listing::every())
            .unwrap()
            .returns()
            .to_vec()
    };
    assert_eq!(kinds("weather.default"), []);
    assert_eq!(kinds("weather.radar"), [BlockKind::Image]);
    assert_eq!(kinds("weather.report"), BlockKind::ALL);
    assert_eq!(kinds("weather.log"), [BlockKind::File]);

    let markdown = registry.catalog(Listing::every()).markdown();
    assert!(markdown.contains("- **Returns:** an image\n"), "{markdown}");
    assert!(markdown.contains("- **Returns:** a file\n"), "{markdown}");
    let json = registry.catalog(Listing::every()).json();
    let radar = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "weather.radar")
        .unwrap();
    assert_eq!(radar["returns"], json!(["image"]));
}

#[tokio::test]
async fn blocks_come_back_in_order_with_their_bytes() {
    let registry = Registry::builder().log_annotations(false).build().unwrap();
    let ctx = Ctx::new();
    let radar = registry
        .call("weather.radar", json!({}), &ctx)
        .await
        .unwrap();
    assert_eq!(radar.content, json!(null));
    assert_eq!(radar.blocks, [Block::from(Image::png(PNG))]);

    let report = registry
        .call("weather.report", json!({}), &ctx)
        .await
        .unwrap();
    assert_eq!(report.content, json!({"celsius": 12.0, "sky": "fog"}));
    let kinds: Vec<BlockKind> = report.blocks.iter().map(Block::kind).collect();
    assert_eq!(
        kinds,
        [BlockKind::Text, BlockKind::Image, BlockKind::ResourceLink]
    );

    // A result reads back from its JSON with the same blocks (binary as base64).
    let text = serde_json::to_string(&report).unwrap();
    assert!(
        text.contains(r#""type":"image","mimeType":"image/png","data":"iVBORw0KGgo"#),
        "{text}"
    );
    let back: ToolResult = serde_json::from_str(&text).unwrap();
    assert_eq!(back.blocks, report.blocks);
    assert_eq!(back.content, report.content);
}

/// A registry with run-time tools that answer what they are told to, checked against
/// `{"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}}`.
fn runtime_registry(limits: ContentLimits) -> Registry {
    let registry = Registry::builder()
        .without_linked()
        .log_annotations(false)
        .content_limits(limits)
        .build()
        .unwrap();
    let spec = ToolSpec::builder("counter.read")
        .description("Read the counter.")
        .input_schema(json!({"type": "object", "properties": {"answer": {}}}))
        .output_schema(json!({
            "type": "object",
            "required": ["n"],
            "properties": {"n": {"type": "integer"}},
        }))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|args: Value, _| async move {
                Ok::<_, ToolError>(args.get("answer").cloned().unwrap_or(json!({"n": 1})))
            }),
        )
        .unwrap();
    let spec = ToolSpec::builder("media.send")
        .description("Send a block.")
        .input_schema(json!({"type": "object", "properties": {"what": {"type": "string"}}}))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|args: Value, _| async move {
                let block: Block = match args["what"].as_str().unwrap_or_default() {
                    "huge" => {
                        let mut bytes = PNG.to_vec();
                        bytes.resize(100 << 20, 0);
                        Image::png(bytes).into()
                    }
                    "jpeg_label" => Image::jpeg(PNG).into(),
                    "html_as_image" => Image::new("text/html", PNG).into(),
                    "file_link" => ResourceLink::new("file:///etc/passwd", "passwd").into(),
                    "script_link" => ResourceLink::new("javascript:alert(1)", "x").into(),
                    "escape_name" => File::new("../../.bashrc", b"x".to_vec()).into(),
                    _ => Image::png(PNG).into(),
                };
                Ok::<_, ToolError>(block)
            }),
        )
        .unwrap();
    registry
}

#[tokio::test]
async fn a_runtime_tool_that_breaks_its_output_schema_gets_invalid_output() {
    let registry = runtime_registry(ContentLimits::DEFAULT);
    let ctx = Ctx::new();
    let ok = registry
        .call("counter.read", json!({}), &ctx)
        .await
        .unwrap();
    assert_eq!(ok.content, json!({"n": 1}));

    for (answer, path) in [
        (json!({"n": "one"}), "n"),
        (json!({"m": 1}), ""),
        (json!([1, 2]), ""),
    ] {
        let error = registry
            .call("counter.read", json!({"answer": answer}), &ctx)
            .await
            .unwrap_err();
        match &error {
            ToolError::InvalidOutput { tool, path: at, .. } => {
                assert_eq!(tool, "counter.read");
                assert_eq!(at, path, "{answer}");
            }
            other => panic!("{answer}: {other:?}"),
        }
        assert_eq!(error.code(), "invalid_output");
        // What a model reads is the error, never the value.
        let for_model = registry
            .call("counter.read", json!({"answer": answer}), &ctx)
            .for_model()
            .await;
        assert!(!for_model.success);
        assert_eq!(for_model.content["error"]["code"], "invalid_output");
        assert!(
            !for_model.content.to_string().contains("one"),
            "{}",
            for_model.content
        );
    }
}

#[tokio::test]
async fn hostile_blocks_are_refused_and_the_registry_goes_on() {
    let registry = runtime_registry(ContentLimits::DEFAULT);
    let ctx = Ctx::new();
    for (what, says) in [
        ("huge", "more than the limit of 10485760 bytes a block"),
        ("jpeg_label", "not image/jpeg"),
        ("html_as_image", "`image/...` MIME type"),
        ("file_link", "`file:` scheme"),
        ("script_link", "`javascript:` scheme"),
        ("escape_name", "plain name"),
    ] {
        let error = registry
            .call("media.send", json!({"what": what}), &ctx)
            .await
            .unwrap_err();
        match &error {
            ToolError::InvalidOutput { path, message, .. } => {
                assert_eq!(path, "blocks[0]", "{what}");
                assert!(message.contains(says), "{what}: {message}");
            }
            other => panic!("{what}: {other:?}"),
        }
    }
    // The same registry answers the next calls as before.
    let good = registry
        .call("media.send", json!({"what": "png"}), &ctx)
        .await
        .unwrap();
    assert_eq!(good.blocks, [Block::from(Image::png(PNG))]);

    // Limits are the registry's to set.
    let small = runtime_registry(ContentLimits::new(8, 8));
    let error = small
        .call("media.send", json!({"what": "png"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "invalid_output");
    assert!(error.to_string().contains("limit of 8 bytes"), "{error}");
}

/// A registry of one run-time tool with an output schema (`module.answer`), one without
/// (`module.loose`), each answering the failed result its `case` argument names, as a module
/// forwarding what it got would.
fn failing_registry() -> Registry {
    let registry = Registry::builder()
        .without_linked()
        .log_annotations(false)
        .build()
        .unwrap();
    let answer = |args: Value, _| async move {
        let mut failed = ToolResult::failure("it failed");
        match args["case"].as_str().unwrap_or_default() {
            "secret" => failed.content = json!({"n": "many", "secret": "sk-hidden"}),
            "error" => {
                failed.content = json!({"error": {
                    "code": "quota", "message": "over quota", "secret": "sk-hidden",
                }, "also": "sk-hidden"});
            }
            "long_error" => {
                failed.content = json!({"error": {"code": "x", "message": "e".repeat(1 << 20)}});
                failed.message = Some("m".repeat(1 << 20));
            }
            "many_blocks" => failed.blocks = vec![Block::text(""); 1001].into(),
            "file_link" => failed = failed.with_block(ResourceLink::new("file:///etc/shadow", "s")),
            _ => {}
        }
        Ok(failed)
    };
    for (name, schema) in [
        (
            "module.answer",
            Some(json!({"type": "object", "required": ["n"]})),
        ),
        ("module.loose", None),
    ] {
        let mut spec = ToolSpec::builder(name)
            .description("Answers what it is told.")
            .input_schema(json!({"type": "object", "properties": {"case": {"type": "string"}}}));
        if let Some(schema) = schema {
            spec = spec.output_schema(schema);
        }
        registry
            .register(spec.build().unwrap(), ToolHandler::from_results(answer))
            .unwrap();
    }
    registry
}

#[tokio::test]
async fn a_failed_result_is_checked_and_bounded_as_a_successful_one() {
    let registry = failing_registry();
    let ctx = Ctx::new();
    let call = |tool: &'static str, case: &'static str| {
        let registry = &registry;
        let ctx = &ctx;
        async move { registry.call(tool, json!({ "case": case }), ctx).await }
    };

    // A value that is not an error's shape never reaches the model, nor does what it held.
    let error = call("module.answer", "secret").await.unwrap_err();
    assert_eq!(error.code(), "invalid_output", "{error}");
    assert!(!error.to_string().contains("sk-hidden"), "{error}");
    let for_model = registry
        .call("module.answer", json!({"case": "secret"}), &ctx)
        .for_model()
        .await;
    assert!(!for_model.content.to_string().contains("sk-hidden"));

    // An error's shape keeps its code and message, and nothing else.
    let kept = call("module.answer", "error").await.unwrap();
    assert!(!kept.success);
    assert_eq!(
        kept.content,
        json!({"error": {"code": "quota", "message": "over quota"}})
    );
    // Long text is cut to the bound on error text, the result's message too.
    let long = call("module.answer", "long_error").await.unwrap();
    let message = long.content["error"]["message"].as_str().unwrap();
    assert!(
        message.len() <= tool_registry::call::MAX_ERROR_BYTES,
        "{}",
        message.len()
    );
    assert!(message.ends_with(tool_registry::call::CUT_MARK));
    assert!(long.message.unwrap().len() <= tool_registry::call::MAX_ERROR_BYTES);
    // A failure that says nothing more than its message stays as it is.
    let plain = call("module.answer", "plain").await.unwrap();
    assert_eq!(
        (plain.content, plain.message),
        (Value::Null, Some("it failed".to_owned()))
    );

    // Every tool's failed result has its blocks checked, with or without an output schema.
    for tool in ["module.answer", "module.loose"] {
        for (case, path, says) in [
            ("many_blocks", "blocks[1000]", "limit of 1000 blocks"),
            ("file_link", "blocks[0]", "`file:` scheme"),
        ] {
            match call(tool, case).await.unwrap_err() {
                ToolError::InvalidOutput {
                    path: at, message, ..
                } => {
                    assert_eq!(at, path, "{tool} {case}");
                    assert!(message.contains(says), "{tool} {case}: {message}");
                }
                other => panic!("{tool} {case}: {other:?}"),
            }
        }
    }
    // Without an output schema, a failed value is the tool's to shape.
    let loose = call("module.loose", "secret").await.unwrap();
    assert!(!loose.success);
}
