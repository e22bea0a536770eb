use tool_registry::prompt;

/// Ask for a review.
#[prompt(complete(lang = languages))]
async fn review(code: String, lines: u32) -> String {
    format!("{code} {lines}")
}

fn languages(_typed: &str) -> Vec<String> {
    Vec::new()
}

fn main() {}
