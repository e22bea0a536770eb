//! Two compiled tools whose names differ but meet on the wire (`a.b` is written `a__b` for
//! providers that refuse `.`): the registry refuses to build, naming both declarations.

use tool_registry::{Registry, tool};

/// Look nearby.
#[tool(name = "geo.near")]
fn near() -> &'static str {
    "dotted"
}

/// Look nearby, spelled the other way.
#[tool(name = "geo__near")]
fn near_underscored() -> &'static str {
    "underscored"
}

#[test]
fn names_that_meet_on_the_wire_are_reported_when_the_registry_is_built() {
    let Err(tool_registry::registry::BuildError::Duplicates(error)) = Registry::try_global() else {
        panic!("the wire names clash");
    };
    assert_eq!(error.clashes.len(), 1, "{error}");
    let clash = &error.clashes[0];
    assert_eq!(clash.name, "geo__near");
    assert!(clash.wire_name);
    assert_eq!(clash.first.file, "core/tests/wire_clash.rs");
    let message = error.to_string();
    assert!(
        message.contains("tool names meet on the wire: `geo__near`")
            && message.matches("core/tests/wire_clash.rs:").count() == 2,
        "{message}"
    );
    // Without the linked tools, either one alone is fine.
    assert!(Registry::builder().without_linked().build().is_ok());
}
