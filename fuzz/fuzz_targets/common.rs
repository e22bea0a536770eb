//! The tools every fuzz target parses against: plain tools with typed arguments, and tag
#![allow(dead_code)] // each target uses only some of it
//! tools (one with a multi-group pattern, one that stays visible).

use schemars::JsonSchema;
use serde::Deserialize;
use tool_registry::parse::{Options, Thinking};
use tool_registry::tool;

/// Get the weather.
#[tool]
pub fn get_weather(city: String, days: Option<u32>, metric: Option<bool>) -> String {
    format!("{city} {days:?} {metric:?}")
}

/// Search.
#[tool]
pub fn search(query: String) -> String {
    query
}

/// The time.
#[tool]
pub fn get_time() -> String {
    String::new()
}

/// Arguments with nested types.
#[derive(Deserialize, JsonSchema)]
pub struct EventArgs {
    /// Title.
    pub title: String,
    /// People.
    pub attendees: Vec<String>,
    /// Extra.
    pub extra: Option<std::collections::BTreeMap<String, f64>>,
}

/// Create an event.
#[tool]
pub fn create_event(#[args] args: EventArgs) -> String {
    format!(
        "{} {} {:?}",
        args.title,
        args.attendees.len(),
        args.extra.map(|e| e.len())
    )
}

/// Research a topic.
#[tool(tag = "RESEARCH")]
pub fn research(query: String) -> String {
    query
}

/// Learn something.
#[tool(
    tag = "LEARNING",
    pattern = r"(factual|communication)\s+(.+)",
    groups(category, content)
)]
pub fn learning(category: String, content: String) -> String {
    category + &content
}

/// Rate.
#[tool(
    tag = "RATE",
    pattern = r"(\d+)\s+(.+)",
    groups(stars, comment),
    strip_from_display = false
)]
pub fn rate(stars: u8, comment: String) -> String {
    format!("{stars}{comment}")
}

#[path = "../../parse/tests/support/fuzz_options.rs"]
mod fuzz_options;
#[allow(unused_imports, reason = "each target uses only some of this file")]
pub use fuzz_options::options;
