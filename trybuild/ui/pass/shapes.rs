//! The shapes of function the macro accepts: sync and async, `#[args]` structs, `State<T>`,
//! `&Ctx`, `Result<ToolResult, E>`, enum arguments and docs from `include_str!`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_registry::{Ctx, Listing, Registry, State, ToolError, ToolResult, tool};

#[derive(Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Factual,
    Communication,
}

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many results.
    limit: Option<u32>,
}

struct Db {
    offset: i64,
}

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Search with a struct of arguments.
#[tool(read_only)]
async fn search(#[args] args: SearchArgs) -> Vec<String> {
    vec![args.query; args.limit.unwrap_or(1) as usize]
}

/// Offset a number by the configured amount.
#[tool(name = "db.offset")]
fn offset(value: i64, db: State<Db>) -> i64 {
    value + db.offset
}

/// Greet the user the call is made for.
#[tool]
async fn greet(ctx: &Ctx) -> String {
    format!("hello {}", ctx.user().unwrap_or("stranger"))
}

/// Classify a note.
#[tool(destructive, requires_confirmation)]
async fn classify(kind: Kind, note: Option<String>) -> Result<ToolResult, ToolError> {
    let _ = (kind, note);
    Ok(ToolResult::ok("done"))
}

/// Fail with a plain error.
#[tool]
fn fail() -> Result<(), std::fmt::Error> {
    Err(std::fmt::Error)
}

/// Return nothing.
#[tool]
async fn nothing() {}

#[doc = include_str!("doc.md")]
#[tool(
    tag = "DEFINE",
    timeout = "2m",
    daily_limit = 10,
    aliases(lookup, dict)
)]
async fn define(word: String) -> Option<String> {
    Some(word)
}

/// Return an opaque type.
#[tool]
fn opaque(n: u32) -> impl Serialize {
    vec![n; 2]
}

/// Renamed argument.
#[tool(
    description = "Overrides the doc comment.",
    short_description = "Renamed."
)]
fn renamed(#[arg(rename = "q", desc = "The query")] query: String) -> String {
    query
}

fn main() {
    let registry = Registry::builder().state(Db { offset: 1 }).build().unwrap();
    for name in [
        "add",
        "search",
        "db.offset",
        "greet",
        "classify",
        "fail",
        "nothing",
        "define",
        "renamed",
        "opaque",
    ] {
        assert!(
            registry.get(name, Listing::every()).is_some(),
            "missing tool {name}"
        );
    }
    assert!(Registry::global().get("define", Listing::every()).is_some());
    let define = registry.get("define", Listing::every()).unwrap();
    assert!(
        define
            .description()
            .starts_with("Look up a word in the dictionary.")
    );
    let renamed = registry.get("renamed", Listing::every()).unwrap();
    assert_eq!(renamed.description(), "Overrides the doc comment.");
    assert_eq!(renamed.short_description(), "Renamed.");

    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    runtime.block_on(async {
        let ctx = Ctx::new().with_user("alice");
        let result = registry
            .call("db.offset", r#"{"value": 2}"#, &ctx)
            .await
            .unwrap();
        assert_eq!(result.content, serde_json::json!(3));
        let result = registry.call("greet", "", &ctx).await.unwrap();
        assert_eq!(result.content, serde_json::json!("hello alice"));
    });
}
