//! The `mcp_http` target: its property is `checks/mcp_http.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::mcp_http::check(data));
