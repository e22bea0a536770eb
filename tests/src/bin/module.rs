//! This crate's tools on the command line, `toolreg`-style: `module serve --http ADDR` makes
//! them an HTTP tool module.

use tool_registry_tests as _;

fn main() {
    tool_registry::cli::main()
}
