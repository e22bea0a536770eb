//! Two linked crates define `util.echo`: `tool-registry-tests` and the dup fixture. The registry
//! must refuse the set and say where both definitions are.

use std::panic::{AssertUnwindSafe, catch_unwind};

use tool_registry::Registry;
use tool_registry::def::SourceLocation;

// Unreferenced crates are not linked; these two must be.
use tool_registry_dup_fixture as _;
use tool_registry_tests as _;

fn assert_both_sides(first: &SourceLocation, second: &SourceLocation) {
    let mut sides = [
        (first.crate_name, first.file, first.module_path),
        (second.crate_name, second.file, second.module_path),
    ];
    sides.sort();
    assert_eq!(
        sides,
        [
            (
                "tool_registry_dup_fixture",
                "tests/dup/src/lib.rs",
                "tool_registry_dup_fixture"
            ),
            (
                "tool_registry_tests",
                "tests/src/lib.rs",
                "tool_registry_tests"
            ),
        ]
    );
    assert!(first.line > 0 && second.line > 0);
}

#[test]
fn try_global_reports_the_clash_with_both_source_locations() {
    let Err(tool_registry::registry::BuildError::Duplicates(error)) = Registry::try_global() else {
        panic!("util.echo is defined twice");
    };
    assert_eq!(error.clashes.len(), 1, "{error}");
    let clash = &error.clashes[0];
    assert_eq!(clash.name, "util.echo");
    assert_both_sides(&clash.first, &clash.second);

    let message = error.to_string();
    assert!(message.contains("`util.echo`"), "{message}");
    assert!(message.contains(&clash.first.to_string()), "{message}");
    assert!(message.contains(&clash.second.to_string()), "{message}");
    assert!(message.contains("tests/src/lib.rs:"), "{message}");
    assert!(message.contains("tests/dup/src/lib.rs:"), "{message}");

    assert_eq!(
        Registry::builder()
            .build()
            .expect_err("the builder sees the same clash"),
        tool_registry::registry::BuildError::Duplicates(error)
    );
    assert!(
        Registry::builder()
            .without_linked()
            .build()
            .unwrap()
            .is_empty(),
        "leaving out the linked tools leaves no clash"
    );
}

#[test]
fn global_panics_with_the_same_message() {
    let expected = Registry::try_global().unwrap_err().to_string();
    let payload = catch_unwind(AssertUnwindSafe(Registry::global)).expect_err("global() panics");
    let message = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| (*s).to_owned()))
        .expect("a text payload");
    assert_eq!(message, expected);
    assert!(message.contains("tests/dup/src/lib.rs"), "{message}");
}
