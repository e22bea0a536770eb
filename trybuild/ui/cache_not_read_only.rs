use tool_registry::tool;

/// Send an email.
#[tool(cache = "5m")]
async fn send_email(to: String) -> String {
    to
}

fn main() {}
