//! The `spec` target: its property is `checks/spec.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::spec::check(data));
