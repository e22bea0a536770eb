//! The `gateway` target: its property is `checks/gateway.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::gateway::check(data));
