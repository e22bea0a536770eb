use tool_registry::tool;

struct Query {
    text: String,
}

/// Search the notes.
#[tool]
async fn search(query: Query) -> String {
    query.text
}

fn main() {}
