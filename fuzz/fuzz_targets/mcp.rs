//! The `mcp` target: its property is `checks/mcp.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::mcp::check(data));
