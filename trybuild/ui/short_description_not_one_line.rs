use tool_registry::tool;

/// Search the notes.
#[tool(short_description = "")]
async fn search(query: String) -> String {
    query
}

/// Look a word up.
#[tool(short_description = "Look a word up.\nIn every dictionary.")]
async fn define(word: String) -> String {
    word
}

fn main() {}
