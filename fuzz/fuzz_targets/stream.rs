//! The `stream` target: its property is `checks/stream.rs`'s.
#![no_main]

#[path = "../checks/mod.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::stream::check(data));
