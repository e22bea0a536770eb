//! Compile-fail cases of `#[tool]` (the compile-pass cases, `ui/pass/`, are test targets of their
//! own: see Cargo.toml). Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test -p tool-registry-trybuild` and review the diff.

#[test]
fn ui() {
    // trybuild builds the cases as a project of its own, in `target/tests/trybuild`, with the
    // default profile: full debug information for every crate, and incremental caches for the
    // workspace's, several gigabytes that no compiler message depends on. Its cargo reads the
    // profile from the environment; this test is the only one of its binary, so nothing else
    // reads the environment while it is set.
    for (name, value) in [("CARGO_PROFILE_DEV_DEBUG", "0"), ("CARGO_INCREMENTAL", "0")] {
        if std::env::var_os(name).is_none() {
            // SAFETY: no other thread of this process reads or writes the environment.
            unsafe { std::env::set_var(name, value) };
        }
    }
    let cases = trybuild::TestCases::new();
    cases.compile_fail("ui/*.rs");
}
