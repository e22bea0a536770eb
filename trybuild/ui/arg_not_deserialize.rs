use schemars::JsonSchema;
use tool_registry::tool;

#[derive(JsonSchema)]
struct Query {
    text: String,
}

/// Search the notes.
#[tool]
async fn search(query: Query) -> String {
    query.text
}

fn main() {}
