//! The `call` target: its property is `checks/call.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::call::check(data));
