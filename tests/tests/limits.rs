//! The limits on the reference tools: argument size, string length, the blocking pool, and the
//! stamps on the errors the command line prints.

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::{Ctx, Registry, RegistryBuilder, Scope, ToolError};
use tool_registry_tools::Config;

fn builder(dir: &tempfile::TempDir) -> RegistryBuilder {
    Registry::builder().state(Config::under(dir.path()))
}

#[tokio::test]
async fn a_2_mb_query_to_research_gets_the_size_error() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let ctx = Ctx::for_scope(Scope::guest());
    // Distinct words, as a model that repeats itself would not send: 2.2 MB of them.
    let query: String = (0..300_000).map(|i| format!("w{i} ")).collect();
    assert!(query.len() > 2_000_000);
    let args = json!({ "query": query }).to_string();
    let error = registry.call("research", &args, &ctx).await.unwrap_err();
    assert_eq!(
        error,
        ToolError::ArgumentsTooLarge {
            tool: "research".into(),
            limit: tool_registry::call::MAX_ARGS_BYTES
        }
    );
    assert!(error.to_string().contains("split the work"), "{error}");
}

#[tokio::test]
async fn research_bounds_its_query_and_runs_on_the_blocking_pool() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("kb")).unwrap();
    std::fs::write(
        dir.path().join("kb/cache.md"),
        "# Cache\nwrite-through cache",
    )
    .unwrap();
    let registry = builder(&dir).build().unwrap();
    let def = registry.get("research", Listing::every()).unwrap();
    assert!(def.blocking());
    let schema = serde_json::to_value(
        registry
            .get("research", Listing::every())
            .map(|tool| tool.input_schema().clone())
            .unwrap(),
    )
    .unwrap();
    assert_eq!(schema["properties"]["query"]["maxLength"], json!(1000));

    let ctx = Ctx::for_scope(Scope::user("alice"));
    let long = json!({ "query": "cache ".repeat(200) });
    let error = registry.call("research", long, &ctx).await.unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { path, .. } if path == "query"),
        "{error:?}"
    );
    let found = registry
        .call("research", json!({ "query": "cache" }), &ctx)
        .await
        .unwrap();
    assert_eq!(found.content[0]["path"], json!("cache.md"));
}

#[test]
fn the_command_line_prints_errors_with_the_registrys_stamps() {
    let dir = tempfile::tempdir().unwrap();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = tool_registry::cli::run(
        ["toolreg", "call", "research", r#"{"query": 1}"#],
        builder(&dir),
        &mut out,
        &mut err,
    );
    assert_eq!(code, tool_registry::cli::EXIT_TOOL_ERROR);
    let printed: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(printed["success"], json!(false));
    let audit = &printed["audit"];
    assert_eq!(audit["tool"], json!("research"));
    assert_eq!(audit["outcome"], json!("invalid_arguments"));
    assert!(audit["duration_ms"].is_number(), "{printed}");
    assert!(audit["ts"].is_string(), "{printed}");
}
