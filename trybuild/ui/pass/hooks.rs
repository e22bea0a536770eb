//! The built-ins of hooks, declared: `confirm_if` on model arguments of standard and user
//! types and on an `#[args]` struct, `cache` on `read_only` and `idempotent` tools, and
//! `max_result_bytes`.

use schemars::JsonSchema;
use serde::Deserialize;
use tool_registry::{Ctx, tool};

fn outside_tmp(path: &str) -> bool {
    !path.starts_with("tmp/")
}

/// Delete a file.
#[tool(destructive, confirm_if = outside_tmp)]
async fn delete_file(path: String, _ctx: &Ctx) -> String {
    path
}

#[derive(Deserialize, JsonSchema)]
struct Transfer {
    amount: u64,
    to: String,
}

fn large(transfer: &Transfer) -> bool {
    transfer.amount > 1000 || transfer.to.is_empty()
}

/// Move money.
#[tool(confirm_if = large)]
async fn transfer(#[args] transfer: Transfer) -> u64 {
    transfer.amount
}

#[derive(Deserialize, JsonSchema)]
enum Level {
    Low,
    High,
}

fn high(level: &Level, count: &u32) -> bool {
    matches!(level, Level::High) || *count > 3
}

/// Turn the heating on.
#[tool(confirm_if = high)]
async fn heat(level: Level, count: u32) -> String {
    let _ = matches!(level, Level::Low);
    count.to_string()
}

/// Look a word up.
#[tool(read_only, cache = "5m", max_result_bytes = 4096)]
async fn lookup(word: String) -> String {
    word
}

/// Count the visitors of today.
#[tool(idempotent, cache = "30s", cache_per_user = false)]
async fn visitors() -> u64 {
    3
}

fn main() {}
