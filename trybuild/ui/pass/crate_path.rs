//! `#[tool(crate = path)]` reaches the runtime through another path, as a crate that renames or
//! re-exports `tool_registry` would.

mod reexport {
    pub use ::tool_registry as registry;
}

use reexport::registry::{Listing, Registry, tool};

/// Add two numbers.
#[tool(crate = crate::reexport::registry, name = "math.add")]
fn add(a: i64, #[arg(default = 1)] b: i64) -> i64 {
    a + b
}

/// Subtract two numbers.
#[tool(crate = "crate::reexport::registry")]
fn sub(a: i64, b: i64) -> i64 {
    a - b
}

fn main() {
    assert!(
        Registry::global()
            .get("math.add", Listing::every())
            .is_some()
    );
    assert!(Registry::global().get("sub", Listing::every()).is_some());
}
