//! The cost of the gates: a call through the whole pipeline (scope with modules and an
//! allow-list, an evaluation gate configured, in-memory rate-limit store, audit) against two
//! baselines in the same run: the bare dispatch of the same tool (no audit at all) and the
//! core's call (the dispatch plus the audit stamp every result had before the gates: `tool`,
//! `duration_ms`, `ts`). Also a rate-limited tool's admission with two threads calling at once.
//!
//! Then the pipeline and each baseline in alternating rounds, which prints what the gates add
//! per call.
//!
//! Run with `cargo bench -p tool-registry-core --bench gates`; docs/PERFORMANCE.md has the figures.

#[path = "common/rounds.rs"]
mod rounds;

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use rounds::{block_on, paired_difference};
use tool_registry::gate::{Decision, Gate, async_trait};
use tool_registry::scope::{AllowList, AllowLists};
use tool_registry::{Ctx, Registry, Scope, Tool, bench, tool};

/// Add two numbers.
#[tool(name = "math.add", category = "math", read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Add two numbers, with a daily limit no benchmark reaches.
#[tool(name = "math.add_limited", category = "math", daily_limit = 4000000000)]
fn add_limited(a: i64, b: i64) -> i64 {
    a + b
}

struct ApproveAll;

#[async_trait]
impl Gate for ApproveAll {
    async fn check(&self, _tool: &Tool, _ctx: &Ctx) -> Result<Decision, String> {
        Ok(Decision::approve())
    }
}

const ARGS: &str = r#"{"a": 40, "b": 2}"#;

fn registry() -> Registry {
    Registry::builder()
        .gate(ApproveAll)
        .guest_modules(["math"])
        .allow_lists(
            AllowLists::new().with("calc", AllowList::tools(["math.add", "math.add_limited"])),
        )
        .log_annotations(false)
        .build()
        .expect("bench registry")
}

fn ctx() -> Ctx {
    Ctx::for_scope(
        Scope::user("alice")
            .with_modules(["math"])
            .with_allow_list("calc"),
    )
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let ctx = ctx();

    let mut group = c.benchmark_group("gates");
    group
        .measurement_time(Duration::from_secs(4))
        .sample_size(60);
    group.bench_function("bare_dispatch", |b| {
        b.iter(|| {
            runtime
                .block_on(bench::dispatch(
                    &registry,
                    black_box("math.add"),
                    black_box(ARGS),
                    &ctx,
                ))
                .unwrap()
        })
    });
    group.bench_function("core_call", |b| {
        b.iter(|| {
            runtime
                .block_on(bench::dispatch_stamped(
                    &registry,
                    black_box("math.add"),
                    black_box(ARGS),
                    &ctx,
                ))
                .unwrap()
        })
    });
    group.bench_function("pipeline", |b| {
        b.iter(|| {
            runtime
                .block_on(registry.call(black_box("math.add"), black_box(ARGS), &ctx))
                .unwrap()
        })
    });
    group.bench_function("pipeline_rate_limited", |b| {
        b.iter(|| {
            runtime
                .block_on(registry.call(black_box("math.add_limited"), black_box(ARGS), &ctx))
                .unwrap()
        })
    });
    group.finish();

    // Two threads call the rate-limited tool at once, as one user (one counter) and as two.
    let shared = Arc::new(registry);
    let mut group = c.benchmark_group("rate_limit_2_threads");
    group
        .measurement_time(Duration::from_secs(4))
        .sample_size(30);
    for (label, users) in [
        ("same_user", ["alice", "alice"]),
        ("two_users", ["alice", "bob"]),
    ] {
        group.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let per_thread = iters.div_ceil(2);
                let start = Instant::now();
                std::thread::scope(|s| {
                    for user in users {
                        let registry = Arc::clone(&shared);
                        s.spawn(move || {
                            let runtime = tokio::runtime::Builder::new_current_thread()
                                .enable_all()
                                .build()
                                .unwrap();
                            let ctx = Ctx::for_scope(
                                Scope::user(user)
                                    .with_modules(["math"])
                                    .with_allow_list("calc"),
                            );
                            for _ in 0..per_thread {
                                black_box(
                                    runtime
                                        .block_on(registry.call("math.add_limited", ARGS, &ctx))
                                        .unwrap(),
                                );
                            }
                        });
                    }
                });
                // Time per call: two threads run side by side.
                start.elapsed() / 2
            })
        });
    }
    group.finish();
}

/// What the gates add, in alternating rounds of both paths (steadier than two criterion figures
/// taken seconds apart on a shared machine): the median difference per call and its spread.
fn pipeline_minus_bare() {
    let registry = registry();
    let ctx = ctx();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    println!();
    println!(
        "{:<44} {:>9} {:>9} {:>9} {:>17}",
        "pipeline - baseline (alternating rounds)", "pipeline", "baseline", "adds", "p10..p90"
    );
    let row = |label: &str, (full, bare, [p10, adds, p90]): (f64, f64, [f64; 3])| {
        println!("{label:<44} {full:>6.0} ns {bare:>6.0} ns {adds:>6.0} ns {p10:>7.0}..{p90:<7.0}");
    };
    row(
        "in tokio's block_on",
        paired_difference(
            || runtime.block_on(registry.call(black_box("math.add"), black_box(ARGS), &ctx)),
            || {
                runtime.block_on(bench::dispatch(
                    &registry,
                    black_box("math.add"),
                    black_box(ARGS),
                    &ctx,
                ))
            },
        ),
    );
    row(
        "  vs the core's call (dispatch + audit stamp)",
        paired_difference(
            || runtime.block_on(registry.call(black_box("math.add"), black_box(ARGS), &ctx)),
            || {
                runtime.block_on(bench::dispatch_stamped(
                    &registry,
                    black_box("math.add"),
                    black_box(ARGS),
                    &ctx,
                ))
            },
        ),
    );
    // The same, polled directly (inside the runtime's context): without the executor's own
    // ~0.4 µs per call on both sides.
    let _entered = runtime.enter();
    row(
        "polled directly",
        paired_difference(
            || block_on(registry.call(black_box("math.add"), black_box(ARGS), &ctx)),
            || {
                block_on(bench::dispatch(
                    &registry,
                    black_box("math.add"),
                    black_box(ARGS),
                    &ctx,
                ))
            },
        ),
    );
    row(
        "  vs the core's call (dispatch + audit stamp)",
        paired_difference(
            || block_on(registry.call(black_box("math.add"), black_box(ARGS), &ctx)),
            || {
                block_on(bench::dispatch_stamped(
                    &registry,
                    black_box("math.add"),
                    black_box(ARGS),
                    &ctx,
                ))
            },
        ),
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    pipeline_minus_bare();
    Criterion::default().configure_from_args().final_summary();
}
