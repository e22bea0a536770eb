use tool_registry::tool;

fn outside_tmp(path: &str, _force: &bool) -> Option<bool> {
    Some(!path.starts_with("tmp/"))
}

/// Delete a file.
#[tool(destructive, confirm_if = outside_tmp)]
async fn delete_file(path: String, force: bool) -> String {
    format!("{path} {force}")
}

fn main() {}
