//! `#[tool(targets(...))]`: a tool whose arguments do not fit a format it declares stops the
//! registry from being built, with the tool, the place and the construct named. (What the
//! macro can see in the signature is a compile error instead: see the trybuild cases
//! `targets_not_fitting` and `unknown_target`.)

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use tool_registry::Listing;
use tool_registry::format::{Provider, Target};
use tool_registry::registry::BuildError;
use tool_registry::{Registry, Scope, tool};

/// Where a document goes.
#[derive(Deserialize, JsonSchema)]
struct Placement {
    /// The folder.
    folder: String,
    /// Labels by name: a map, which strict mode cannot say.
    labels: BTreeMap<String, String>,
}

/// File a document.
#[tool(name = "docs.file", targets(anthropic_strict))]
fn file(title: String, placement: Placement) -> String {
    format!(
        "{title} in {} ({})",
        placement.folder,
        placement.labels.len()
    )
}

/// A point.
#[derive(Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

/// Measure a distance.
#[tool(
    name = "geo.distance",
    targets(openai_strict, anthropic_strict, gemini)
)]
fn distance(from: Point, to: Option<Point>) -> f64 {
    let to = to.unwrap_or(Point { x: 0.0, y: 0.0 });
    ((from.x - to.x).powi(2) + (from.y - to.y).powi(2)).sqrt()
}

#[test]
fn a_broken_promise_stops_the_build_naming_tool_place_and_construct() {
    let Err(BuildError::Targets(error)) = Registry::builder().build() else {
        panic!("`docs.file` does not fit anthropic_strict");
    };
    assert_eq!(error.tool, "docs.file");
    assert_eq!(error.target, Target::AnthropicStrict);
    assert_eq!(
        error.path,
        "/$defs/Placement/properties/labels/additionalProperties"
    );
    let message = error.to_string();
    assert!(
        message.contains("declares `targets(anthropic_strict)`")
            && message.contains("leave `anthropic_strict` out of `targets`"),
        "{message}"
    );
    // The global registry says the same.
    let Err(global) = Registry::try_global() else {
        panic!("the global registry has the same tools");
    };
    assert_eq!(global, BuildError::Targets(error));
}

#[test]
fn a_kept_promise_builds_and_lists_in_each_format() {
    let distance = Registry::builder()
        .without_linked()
        .tool(file_def("geo.distance"))
        .build()
        .unwrap();
    for target in Target::ALL {
        assert!(
            target
                .check(&distance.get("geo.distance", Listing::every()).unwrap())
                .is_ok(),
            "{target}"
        );
    }
    for provider in [Provider::OpenAi, Provider::Anthropic] {
        assert!(
            distance
                .provider_tools(provider.strict(), &Scope::trusted())
                .is_ok()
        );
    }
    let gemini = distance.provider_tools(Provider::Gemini, &Scope::trusted());
    assert!(
        gemini[0]["functionDeclarations"][0]
            .get("parameters")
            .is_some()
    );
    // The tool that does not fit fails alone too.
    let file = Registry::builder()
        .without_linked()
        .tool(file_def("docs.file"))
        .build();
    assert!(matches!(file, Err(BuildError::Targets(_))));
}

/// The definition of a linked tool of this file.
fn file_def(name: &str) -> &'static tool_registry::def::ToolDef {
    tool_registry::__private::TOOLS
        .iter()
        .find(|def| def.name() == name)
        .unwrap()
}
