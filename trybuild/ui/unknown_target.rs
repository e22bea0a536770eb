use tool_registry::tool;

/// Search the web.
#[tool(targets(openai, gemini))]
fn search(query: String) -> String {
    query
}

fn main() {}
