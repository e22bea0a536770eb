//! MCP definitions keep schemas within [`MAX_SCHEMA_DEPTH`]: a run-time spec nesting deeper
//! is refused when built, and a compiled tool's schema is cut at the bound, saying so, while
//! the tool still reads its whole arguments.

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::format::Provider;
use tool_registry::spec::MAX_SCHEMA_DEPTH;
use tool_registry::{Ctx, Registry, Scope, tool};

/// Lists nested 33 deep: one schema per level, more levels than the bound.
// The depth is the point of the fixture.
#[allow(clippy::type_complexity)]
type Grid = Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<Vec<u8>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>;

/// Count the cells of a grid nested 33 lists deep.
#[tool(name = "grid.count")]
fn count(grid: Grid) -> usize {
    grid.len()
}

/// How many schemas deep `schema` nests through `properties` and `items`.
fn depth(schema: &Value) -> usize {
    let below = [&schema["items"]]
        .into_iter()
        .chain(
            schema["properties"]
                .as_object()
                .into_iter()
                .flat_map(|p| p.values()),
        )
        .filter(|s| s.is_object())
        .map(depth)
        .max()
        .unwrap_or(0);
    1 + below
}

#[tokio::test]
async fn a_compiled_schema_deeper_than_the_bound_is_cut_in_its_mcp_definition() {
    let registry = Registry::builder().log_annotations(false).build().unwrap();
    let full = registry
        .get("grid.count", Listing::every())
        .unwrap()
        .input_schema()
        .as_value()
        .clone();
    assert!(
        depth(&full) > MAX_SCHEMA_DEPTH,
        "the fixture nests deeper than the bound"
    );

    let tools = registry.provider_tools(Provider::Mcp, &Scope::trusted());
    let schema = &tools.as_array().unwrap()[0]["inputSchema"];
    assert_eq!(depth(schema), MAX_SCHEMA_DEPTH);
    jsonschema::draft202012::meta::validate(schema).unwrap();
    let mut innermost = &schema["properties"]["grid"];
    while innermost["items"].is_object() {
        innermost = &innermost["items"];
    }
    assert_eq!(innermost["items"], json!(true));
    assert!(
        innermost["description"]
            .as_str()
            .unwrap()
            .contains("not shown"),
        "{innermost}"
    );

    // The tool still reads, and checks, its arguments in full.
    let grid = (0..32).fold(json!([1, 2]), |inner, _| json!([inner]));
    let result = registry
        .call("grid.count", json!({ "grid": grid }), &Ctx::new())
        .await
        .unwrap();
    assert_eq!(result.content, json!(1));
    let bad = (0..32).fold(json!(["x"]), |inner, _| json!([inner]));
    let error = registry
        .call("grid.count", json!({ "grid": bad }), &Ctx::new())
        .await
        .unwrap_err();
    assert_eq!(error.code(), "invalid_arguments");
}

#[test]
fn a_run_time_spec_deeper_than_the_bound_is_refused() {
    let deep = (0..100).fold(
        json!({ "type": "string" }),
        |inner, _| json!({ "type": "object", "properties": { "a": inner } }),
    );
    let error = ToolSpec::builder("deep.spec")
        .input_schema(deep)
        .build()
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("the input schema nests schemas more than 32 levels deep"),
        "{error}"
    );
}
