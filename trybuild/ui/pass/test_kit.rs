//! The test kit, run by a crate other than the registry on its own tools: a tool that panics
//! on an empty string is found, and reported with the arguments that did it.

use tool_registry::testing::{Outcome, call_every_tool};
use tool_registry::{Registry, tool};

/// The first letter of a word, upper-cased.
#[tool]
fn initial(word: String, #[arg(min = 1, max = 3)] times: Option<u8>) -> String {
    // Slicing the empty string's first byte panics.
    word[..1]
        .to_uppercase()
        .repeat(usize::from(times.unwrap_or(1)))
}

/// Count the words of a text.
#[tool]
fn words(text: String) -> usize {
    text.split_whitespace().count()
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = Registry::builder().build().expect("the registry builds");
    let report = call_every_tool(&registry).await;
    let text = report.to_string();

    let panic = report
        .problems()
        .next()
        .expect("the planted panic is found");
    assert_eq!(panic.tool, "initial", "{text}");
    assert_eq!(panic.arguments["word"], "", "{text}");
    assert!(matches!(panic.outcome, Outcome::Panicked { .. }), "{text}");
    assert!(text.contains(r#"initial {"word":""}"#), "{text}");
    assert!(
        report.problems().all(|call| call.tool == "initial"),
        "{text}"
    );
    assert!(
        report.of("words").all(|call| call.outcome == Outcome::Ok),
        "{text}"
    );

    let healthy = std::panic::catch_unwind(|| report.assert_healthy());
    assert!(healthy.is_err(), "assert_healthy fails on the panic");
}
