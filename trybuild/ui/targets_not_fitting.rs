use std::collections::HashMap;

use tool_registry::tool;

/// Set labels on a document.
#[tool(targets(openai_strict))]
fn set_labels(document: String, labels: HashMap<String, String>) -> String {
    format!("{document}: {}", labels.len())
}

/// Store any value.
#[tool(targets(gemini, anthropic_strict))]
fn store(key: String, value: Option<Vec<serde_json::Value>>) -> String {
    format!("{key}: {value:?}")
}

/// Move a point.
#[tool(targets(openai_strict))]
fn shift(point: (i64, i64)) -> i64 {
    point.0 + point.1
}

/// Fits: plain types, options and lists.
#[tool(targets(openai_strict, anthropic_strict, gemini))]
fn fits(name: String, count: Option<u32>, tags: Vec<String>) -> String {
    format!("{name} {count:?} {tags:?}")
}

fn main() {}
