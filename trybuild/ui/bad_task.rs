use tool_registry::tool;

/// Build the yearly report.
#[tool(task = "sometimes")]
async fn build_report(year: u32) -> String {
    year.to_string()
}

fn main() {}
