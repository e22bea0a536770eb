use tool_registry::tool;

/// Delete a file.
#[tool(destructive, confirm_if = "outside_tmp")]
async fn delete_file(path: String) -> String {
    path
}

fn main() {}
