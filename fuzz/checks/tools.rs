//! The tools every fuzz target sees (the program's linked tools, `Registry::global()`): plain
//! tools with typed arguments, tag tools (one with a multi-group pattern, one that stays
//! visible), and tools whose arguments are bounded (`call`).

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
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

/// Count words, within bounds.
#[tool]
pub fn bounded(
    #[arg(min = 1, max = 5)] count: u32,
    #[arg(max_len = 8)] word: String,
    tags: Option<Vec<String>>,
) -> Value {
    json!({"count": count, "word": word, "tags": tags})
}

/// Keep a value of any shape.
#[tool]
pub fn keep(value: Value) -> Value {
    value
}
