//! `Registry::call` against the hand-written dispatcher, and lookup in 10,000 tools against 10,
//! measured in alternating rounds so that both sides see the same machine load: the ratio of each
//! round is taken, then the median of those. On a shared or virtual machine this is steadier than
//! comparing two criterion figures taken seconds apart.
//!
//! Run with `cargo bench -p tool-registry-core --bench paired [FILTER]`; docs/PERFORMANCE.md has the
//! figures.

mod common;

use common::rounds::paired;
use common::{
    CALLS, add_run_time_tools, block_on, hand_written, hand_written_audited, lookup_names,
    run_time_names, synthetic_registry,
};
use std::hint::black_box;
use tool_registry::Listing;
use tool_registry::{Ctx, Registry, Scope, bench};

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
        row(
            label,
            lookups((&large, &large_names), (&small, &small_names)),
        );
    }
    run_time_rows(&selected, &row, &ctx);
}

/// Lookups of `a`'s names in `a`'s registry against `b`'s, each cycling through its names.
fn lookups(a: (&Registry, &[String]), b: (&Registry, &[String])) -> (f64, f64, [f64; 3]) {
    let (mut i, mut j) = (0, 0);
    paired(
        || {
            i = (i + 1) % a.1.len();
            a.0.get(black_box(&a.1[i]), Listing::every())
                .expect("present")
        },
        || {
            j = (j + 1) % b.1.len();
            b.0.get(black_box(&b.1[j]), Listing::every())
                .expect("present")
        },
    )
}

/// One row of the table: the two sides' ns and the ratio with its p10 and p90.
type Row<'a> = &'a dyn Fn(&str, (f64, f64, [f64; 3]));

/// Lookup, listing and calls with 1,000 run-time tools registered beside the compiled ones.
fn run_time_rows(selected: &dyn Fn(&str) -> bool, row: Row<'_>, ctx: &Ctx) {
    let wanted = [
        "lookup +1000 run-time: 10000 / 10 tools",
        "lookup +1000 run-time: run-time / linked",
        "listing per tool: 10000 / 10 tools",
        "listing per tool +1000 run-time: 10000 / 10 tools",
        "call add: run-time / linked",
    ];
    if !wanted.iter().any(|label| selected(label)) {
        return;
    }
    let (large, small) = (synthetic_registry(10_000), synthetic_registry(10));
    let scope = Scope::trusted();
    let label = wanted[2];
    if selected(label) {
        // 10,000 tools listed once against 10 tools listed 1,000 times: the same tool count.
        row(
            label,
            paired(
                || large.tools(black_box(&scope)).len(),
                || {
                    (0..1_000)
                        .map(|_| small.tools(black_box(&scope)).len())
                        .sum::<usize>()
                },
            ),
        );
    }
    add_run_time_tools(&large, 1_000);
    add_run_time_tools(&small, 1_000);
    // Half compiled, half run-time names.
    let mixed = |count| {
        let mut names = lookup_names(count);
        names.extend(run_time_names(1_000));
        names
    };
    let (large_names, small_names) = (mixed(10_000), mixed(10));
    let label = wanted[0];
    if selected(label) {
        row(
            label,
            lookups((&large, &large_names), (&small, &small_names)),
        );
    }
    let label = wanted[1];
    if selected(label) {
        let (run_time, linked) = (run_time_names(1_000), lookup_names(10));
        row(label, lookups((&small, &run_time), (&small, &linked)));
    }
    let label = wanted[3];
    if selected(label) {
        // 11,000 tools once against 1,010 tools about 11 times.
        row(
            label,
            paired(
                || large.tools(black_box(&scope)).len(),
                || {
                    (0..11)
                        .map(|_| small.tools(black_box(&scope)).len())
                        .sum::<usize>()
                },
            ),
        );
    }
    let label = wanted[4];
    if selected(label) {
        let text = r#"{"a": 2, "b": 3}"#;
        row(
            label,
            paired(
                || block_on(small.call(black_box("rt_00000"), black_box(text), ctx)),
                || block_on(small.call(black_box("tool_00000"), black_box(text), ctx)),
            ),
        );
    }
}
