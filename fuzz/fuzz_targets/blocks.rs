//! The `blocks` target: its property is `checks/blocks.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::blocks::check(data));
