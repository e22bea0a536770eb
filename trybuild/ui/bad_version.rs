use tool_registry::tool;

/// Search the notes.
#[tool(version = "1.2")]
async fn search(query: String) -> String {
    query
}

fn main() {}
