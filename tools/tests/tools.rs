//! The integration tests of the reference tools and the `toolreg` command, one module a file,
//! in one binary: a binary a file linked every front end into each of eleven, 0.5 GB on disk.
//! Run one file's tests with `cargo test -p tool-registry-tools --test tools <file>::`.

mod common;

mod catalog_page;
mod concurrency;
mod formats;
mod guest_tasks;
mod mcp;
mod mcp_python;
mod modules;
mod observe;
mod provider_types;
mod sandbox;
mod toolreg;
