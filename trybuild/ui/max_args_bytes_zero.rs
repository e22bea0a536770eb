use tool_registry::tool;

/// Echo a text.
#[tool(max_args_bytes = 0)]
fn echo(text: String) -> String {
    text
}

fn main() {}
