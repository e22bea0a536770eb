//! Output schemas: a compiled tool that declares `#[tool(output_schema)]` carries its return
//! type's JSON Schema, shown in the catalog and used by MCP (`outputSchema`,
//! `structuredContent`) and Gemini.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use tool_registry::Listing;
use tool_registry::format::Provider;
use tool_registry::{Ctx, Registry, Scope, ToolCall, tool};

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

/// The weather without a declared output schema.
#[tool(name = "weather.plain")]
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
    assert_eq!(listed[0]["name"], "weather.now");
    assert_eq!(&listed[0]["outputSchema"], schema);
    assert!(listed[1].get("outputSchema").is_none());

    let call = ToolCall::new("weather.now", json!({ "city": "Oslo" }));
    let result = registry
        .call(&call.name, call.arguments.clone(), &Ctx::new())
        .await
        .unwrap();
    let message = registry.result_message(Provider::Mcp, &call, &result);
    assert_eq!(
        message["structuredContent"],
        json!({ "celsius": 4.0, "sky": "clear" })
    );
    assert_eq!(message["isError"], false);
}
