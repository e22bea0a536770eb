//! Builds the crate again when a file is added to or removed from `src/tools/`, so that
//! `tool_registry::tool_files!` sees it.

fn main() {
    println!("cargo:rerun-if-changed=src/tools");
}
