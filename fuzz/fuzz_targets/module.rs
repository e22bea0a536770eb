//! The `module` target: its property is `checks/module.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::module::check(data));
