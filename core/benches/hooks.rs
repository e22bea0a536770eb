//! What hooks cost: a call with no hook, with one hook that does nothing, and a cached result
//! against the call it saves, each pair in alternating rounds of one run.
//!
//! - `add`, no hooks, against `add` with one no-op hook (`before` and `after` both asked);
//! - `search_cached` answering from the cache, against `search` (the `dispatch` bench's
//!   in-memory search over twelve notes, uncached), and against `search_files`, a search of
//!   the notes in the repository's `kb/` folder read from disk, as the reference `research`
//!   does.
//!
//! Run with `cargo bench -p tool-registry-core --bench hooks`; docs/PERFORMANCE.md has the figures.

// The tools `add` and `search` (uncached) are the `dispatch` bench's.
#[allow(dead_code, unused_imports)]
mod common;

use std::hint::black_box;

use common::rounds::{block_on, paired, paired_difference};
use common::{Note, find_notes};
use tool_registry::bench::NoopHook;
use tool_registry::{Ctx, Registry, tool};

/// Searches the notes for a term; results kept five minutes.
#[tool(read_only, cache = "5m")]
async fn search_cached(query: String, #[arg(default = 5)] limit: u32) -> Vec<Note> {
    find_notes(&query, limit)
}

/// Searches the notes of the repository's `kb/` folder, read from disk.
#[tool(read_only)]
async fn search_files(query: String) -> Vec<(String, usize)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../kb");
    let mut hits = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        let score = text.to_lowercase().matches(&query).count();
        if score > 0 {
            hits.push((entry.file_name().to_string_lossy().into_owned(), score));
        }
    }
    hits.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    hits
}

const ADD: &str = r#"{"a": 40, "b": 2}"#;
const QUERY: &str = r#"{"query": "rust"}"#;

fn row(label: &str, unit: &str, (a, b, [p10, mid, p90]): (f64, f64, [f64; 3])) {
    println!("{label:<52} {a:>9.0} ns {b:>9.0} ns {mid:>8.2}{unit} {p10:>7.2}..{p90:<7.2}");
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();
    let plain = Registry::builder().log_annotations(false).build().unwrap();
    let hooked = Registry::builder()
        .log_annotations(false)
        .hook(NoopHook)
        .build()
        .unwrap();
    let ctx = Ctx::new().with_user("alice");

    // Both sides do the same work.
    let a = block_on(plain.call("add", ADD, &ctx)).unwrap();
    let b = block_on(hooked.call("add", ADD, &ctx)).unwrap();
    assert_eq!(a.content, b.content);
    let searched = block_on(plain.call("search", QUERY, &ctx)).unwrap();
    block_on(plain.call("search_cached", QUERY, &ctx)).unwrap();
    let cached = runtime
        .block_on(plain.call("search_cached", QUERY, &ctx))
        .unwrap();
    assert_eq!(searched.content, cached.content);
    let files = runtime
        .block_on(plain.call("search_files", QUERY, &ctx))
        .unwrap();
    assert!(
        files
            .content
            .as_array()
            .is_some_and(|hits| !hits.is_empty())
    );

    // `HOOKS_PROFILE=1`: only the hooked call, in a loop, for a profiler.
    // (`HOOKS_PROFILE=plain`: the call without hooks; `hit`: a cache hit.)
    // `HOOKS_CALLS` sets how many calls (1,000,000 hits, 5,000,000 others by default).
    if let Some(which) = std::env::var_os("HOOKS_PROFILE") {
        let calls = |default: usize| {
            std::env::var("HOOKS_CALLS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(default)
        };
        if which == "hit" {
            for _ in 0..calls(1_000_000) {
                let call = plain.call(black_box("search_cached"), black_box(QUERY), &ctx);
                black_box(runtime.block_on(call).unwrap());
            }
            return;
        }
        let registry = if which == "plain" { &plain } else { &hooked };
        for _ in 0..calls(5_000_000) {
            black_box(block_on(registry.call(black_box("add"), black_box(ADD), &ctx)).unwrap());
        }
        return;
    }
    println!();
    println!(
        "{:<52} {:>12} {:>12} {:>9} {:>16}",
        "pair (alternating rounds)", "first", "second", "median", "p10..p90"
    );
    row(
        "add: one no-op hook - no hooks",
        " ns",
        paired_difference(
            || block_on(hooked.call(black_box("add"), black_box(ADD), &ctx)),
            || block_on(plain.call(black_box("add"), black_box(ADD), &ctx)),
        ),
    );
    row(
        "search (uncached) / search_cached hit",
        "x",
        paired(
            || runtime.block_on(plain.call(black_box("search"), black_box(QUERY), &ctx)),
            || runtime.block_on(plain.call(black_box("search_cached"), black_box(QUERY), &ctx)),
        ),
    );
    row(
        "search_files (kb/ from disk) / search_cached hit",
        "x",
        paired(
            || runtime.block_on(plain.call(black_box("search_files"), black_box(QUERY), &ctx)),
            || runtime.block_on(plain.call(black_box("search_cached"), black_box(QUERY), &ctx)),
        ),
    );
}
