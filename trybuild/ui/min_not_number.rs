use tool_registry::tool;

/// Look a word up.
#[tool]
async fn lookup(#[arg(min = 1)] word: String) -> String {
    word
}

fn main() {}
