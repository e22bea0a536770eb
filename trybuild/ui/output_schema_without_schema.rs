use tool_registry::{tool, ToolResult};

/// Answer with a result built by hand.
#[tool(output_schema)]
fn answer() -> ToolResult {
    ToolResult::ok("done")
}

/// Answer with nothing.
#[tool(output_schema)]
fn nothing() {}

fn main() {}
