use tool_registry::tool;

/// Count to a number.
#[tool]
fn count(#[arg(max_len = 3)] upto: u32) -> u32 {
    upto
}

fn main() {}
