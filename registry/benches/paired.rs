//! `Registry::call` against the hand-written dispatcher, and lookup in 10,000 tools against 10,
//! measured in alternating rounds so that both sides see the same machine load: the ratio of each
//! round is taken, then the median of those. On a shared or virtual machine this is steadier than
//! comparing two criterion figures taken seconds apart.
//!
//! Run with `cargo bench -p tool-registry --bench paired [FILTER]`; docs/PERFORMANCE.md has the
//! figures.

mod common;

use common::rounds::paired;
use common::{
    CALLS, block_on, hand_written, hand_written_audited, lookup_names, synthetic_registry,
};
use std::hint::black_box;
use tool_registry::{Ctx, Registry, bench};

fn main() {
    // `cargo bench` passes `--bench`; a filter, if given, selects rows by substring.
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let selected = |label: &str| {
        filter
            .as_ref()
            .is_none_or(|filter| label.contains(filter.as_str()))
    };
    let row = |label: &str, (a, b, [p10, ratio, p90]): (f64, f64, [f64; 3])| {
        println!("{label:<40} {a:>10.1} {b:>10.1} {ratio:>7.2}x {p10:>7.2}..{p90:<7.2}");
    };
    let registry = Registry::global();
    let ctx = Ctx::new().with_user("alice");

    println!(
        "{:<40} {:>10} {:>10} {:>8} {:>15}",
        "a / b", "a ns", "b ns", "ratio", "p10..p90"
    );
    for &(name, text) in CALLS {
        let label = format!("call {name}: registry / hand");
        if selected(&label) {
            row(
                &label,
                paired(
                    || block_on(registry.call(black_box(name), black_box(text), &ctx)),
                    || block_on(hand_written(black_box(name), black_box(text), &ctx)),
                ),
            );
        }
    }
    let (name, text) = CALLS[0];
    let label = format!("call {name}: registry / audited");
    if selected(&label) {
        row(
            &label,
            paired(
                || block_on(registry.call(black_box(name), black_box(text), &ctx)),
                || block_on(hand_written_audited(black_box(name), black_box(text), &ctx)),
            ),
        );
    }
    let label = format!("call {name}: registry / dispatch only");
    if selected(&label) {
        row(
            &label,
            paired(
                || block_on(registry.call(black_box(name), black_box(text), &ctx)),
                || {
                    block_on(bench::dispatch(
                        registry,
                        black_box(name),
                        black_box(text),
                        &ctx,
                    ))
                },
            ),
        );
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    for (name, text) in [CALLS[0], CALLS[2]] {
        let label = format!("call {name} in tokio: registry / hand");
        if selected(&label) {
            row(
                &label,
                paired(
                    || runtime.block_on(registry.call(black_box(name), black_box(text), &ctx)),
                    || runtime.block_on(hand_written(black_box(name), black_box(text), &ctx)),
                ),
            );
        }
    }
    let label = "lookup: 10000 / 10 tools";
    if selected(label) {
        let (large, small) = (synthetic_registry(10_000), synthetic_registry(10));
        let (large_names, small_names) = (lookup_names(10_000), lookup_names(10));
        let (mut i, mut j) = (0, 0);
        row(
            label,
            paired(
                || {
                    i = (i + 1) % large_names.len();
                    large.get(black_box(&large_names[i])).expect("present")
                },
                || {
                    j = (j + 1) % small_names.len();
                    small.get(black_box(&small_names[j])).expect("present")
                },
            ),
        );
    }
}
