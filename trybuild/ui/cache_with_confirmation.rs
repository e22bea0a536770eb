use tool_registry::tool;

/// Read the payroll.
#[tool(read_only, requires_confirmation, cache = "5m")]
async fn payroll(month: String) -> String {
    month
}

fn main() {}
