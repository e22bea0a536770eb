//! Dispatch cost of `Registry::call` against a hand-written `match` over the same functions,
//! lookup cost against the number of tools, and the parts of a call measured alone.
//!
//! Run with `cargo bench -p tool-registry-core --bench dispatch`; docs/PERFORMANCE.md has the figures.

mod common;

use std::future::Future;
use std::hint::black_box;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::time::{Duration, Instant, SystemTime};

use common::{
    AddArgs, CALLS, block_on, hand_written, hand_written_audited, lookup_names, stamp_audit_copy,
    synthetic_registry,
};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use futures::FutureExt;
use serde_json::Map;
use tool_registry::__private::{output, parse_args};
use tool_registry::Listing;
use tool_registry::{Ctx, Registry, ToolArgs, ToolResult, bench};

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(30)
}

// ---------------------------------------------------------------------------------------------
// The benchmarks.

fn call(c: &mut Criterion) {
    let registry = Registry::global();
    let ctx = Ctx::new().with_user("alice");

    // Both sides must do the same work: same content, and no errors.
    for &(name, text) in CALLS {
        let via_registry = block_on(registry.call(name, text, &ctx)).expect("registry call");
        let by_hand = block_on(hand_written(name, text, &ctx))
            .unwrap_or_else(|error| panic!("hand-written {name}: {error}"));
        assert!(via_registry.success, "{name} failed");
        assert_eq!(via_registry.content, by_hand, "{name} differs");
    }

    let mut group = c.benchmark_group("call");
    for &(name, text) in CALLS {
        group.bench_function(BenchmarkId::new("registry", name), |b| {
            b.iter(|| block_on(registry.call(black_box(name), black_box(text), &ctx)))
        });
        group.bench_function(BenchmarkId::new("hand_written", name), |b| {
            b.iter(|| block_on(hand_written(black_box(name), black_box(text), &ctx)))
        });
        // The arguments as a `Value` the caller holds (an MCP server, a parsed `tool_calls`
        // message): handed over, so made before each call and not timed.
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        group.bench_function(BenchmarkId::new("registry_value", name), |b| {
            b.iter_batched(
                || value.clone(),
                |value| block_on(registry.call(black_box(name), value, &ctx)),
                criterion::BatchSize::SmallInput,
            )
        });
    }
    let (name, text) = CALLS[0];
    group.bench_function(BenchmarkId::new("hand_written_audited", name), |b| {
        b.iter(|| block_on(hand_written_audited(black_box(name), black_box(text), &ctx)))
    });
    // The pipeline's stages skipped: lookup, validation and the handler only.
    group.bench_function(BenchmarkId::new("registry_dispatch_only", name), |b| {
        b.iter(|| {
            block_on(bench::dispatch(
                registry,
                black_box(name),
                black_box(text),
                &ctx,
            ))
        })
    });
    group.finish();

    // Inside a Tokio runtime with timers, as in an application: the tool timeout is armed.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime");
    let mut group = c.benchmark_group("call_tokio");
    for &(name, text) in [CALLS[0], CALLS[2]].iter() {
        group.bench_function(BenchmarkId::new("registry", name), |b| {
            b.iter(|| runtime.block_on(registry.call(black_box(name), black_box(text), &ctx)))
        });
        group.bench_function(BenchmarkId::new("hand_written", name), |b| {
            b.iter(|| runtime.block_on(hand_written(black_box(name), black_box(text), &ctx)))
        });
    }
    group.finish();
}

fn lookup(c: &mut Criterion) {
    let mut group = c.benchmark_group("lookup");
    for count in [10usize, 10_000] {
        let registry = synthetic_registry(count);
        assert_eq!(registry.len(), count);
        let names = lookup_names(count);
        group.bench_function(BenchmarkId::from_parameter(count), |b| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % names.len();
                registry
                    .get(black_box(&names[i]), Listing::every())
                    .expect("present")
            })
        });
        let text = r#"{"a": 40, "b": 2}"#;
        let ctx = Ctx::new();
        group.bench_function(BenchmarkId::new("call", count), |b| {
            let mut i = 0;
            b.iter(|| {
                i = (i + 1) % names.len();
                block_on(registry.call(black_box(&names[i]), black_box(text), &ctx))
            })
        });
    }
    group.finish();
}

/// The parts of `Registry::call("add", ..)`, each measured alone.
fn parts(c: &mut Criterion) {
    let registry = Registry::global();
    let ctx = Ctx::new().with_user("alice");
    let text = r#"{"a": 40, "b": 2}"#;
    let mut group = c.benchmark_group("parts");

    group.bench_function("lookup", |b| {
        b.iter(|| registry.get(black_box("add"), Listing::every()))
    });
    group.bench_function("serde_json_from_str", |b| {
        b.iter(|| serde_json::from_str::<AddArgs>(black_box(text)).expect("valid"))
    });
    group.bench_function("parse_args", |b| {
        b.iter(|| parse_args::<AddArgs>(ToolArgs::Text(black_box(text))).expect("valid"))
    });
    group.bench_function("to_value", |b| {
        b.iter(|| serde_json::to_value(black_box(42i64)).expect("serializable"))
    });
    group.bench_function("tool_result_ok", |b| {
        b.iter(|| output::value(black_box(42i64)).expect("serializable"))
    });
    group.bench_function("box_and_catch_unwind", |b| {
        b.iter(|| {
            let future = std::panic::catch_unwind(|| {
                let n = black_box(42i64);
                let boxed: Pin<Box<dyn Future<Output = i64> + Send>> = Box::pin(async move { n });
                black_box(boxed)
            })
            .expect("no panic");
            block_on(AssertUnwindSafe(future).catch_unwind()).expect("no panic")
        })
    });
    group.bench_function("instant_now_elapsed", |b| {
        b.iter(|| black_box(Instant::now()).elapsed())
    });
    group.bench_function("system_time_now", |b| b.iter(SystemTime::now));
    group.bench_function("rfc3339_millis", |b| {
        b.iter(|| humantime::format_rfc3339_millis(SystemTime::now()).to_string())
    });
    group.bench_function("audit_map_inserts", |b| {
        b.iter(|| {
            let mut audit = Map::new();
            audit.insert("tool".into(), "add".into());
            audit.insert("duration_ms".into(), 0.001.into());
            audit.insert("ts".into(), "2025-01-01T00:00:00.000Z".into());
            audit.insert("outcome".into(), "ok".into());
            audit.insert("user".into(), "alice".into());
            audit
        })
    });
    group.bench_function("stamp_audit", |b| {
        b.iter(|| {
            let started = Instant::now();
            let mut result = ToolResult::ok(42);
            stamp_audit_copy(&mut result, "add", started, &ctx);
            result
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = call, lookup, parts
}
criterion_main!(benches);
