//! The cross-crate integration tests, one module a file, in one binary: a binary a file linked
//! every front end into each of fifteen. Five files stay binaries of their own (Cargo.toml says
//! why). Run one file's tests with `cargo test -p tool-registry-tests --test tests <file>::`.

mod conformance;
mod fleet;
mod gates;
mod http_modules;
mod limits;
mod mcp;
mod oauth;
mod registry;
mod server_bounds;
mod tool_files;
