//! Return types spelled through aliases: the error type is then inferred.

use std::fmt;

use tool_registry::{Listing, Registry, ToolResult, tool};

#[derive(Debug)]
struct AppError;

impl fmt::Display for AppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("app error")
    }
}

type Result<T> = std::result::Result<T, AppError>;

/// Parse a number.
#[tool]
fn parse(text: String) -> Result<i64> {
    text.trim().parse().map_err(|_| AppError)
}

/// Answer with a full result.
#[tool]
async fn answer() -> Result<ToolResult> {
    Ok(ToolResult::ok("42"))
}

mod nested {
    use tool_registry::tool;

    /// A tool in a private module, with a visibility.
    #[tool(name = "nested.ping")]
    pub(crate) fn ping() -> &'static str {
        "pong"
    }
}

fn main() {
    let registry = Registry::global();
    for name in ["parse", "answer", "nested.ping"] {
        assert!(
            registry.get(name, Listing::every()).is_some(),
            "missing tool {name}"
        );
    }
    assert_eq!(nested::ping(), "pong");
}
