use tool_registry::tool;

/// Look a word up.
#[tool(read_only, cache_per_user = false)]
async fn lookup(word: String) -> String {
    word
}

fn main() {}
