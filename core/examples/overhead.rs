//! Rough split of the pipeline's cost over the bare dispatch (development aid). `MODE=bare`,
//! `core` (dispatch + the core's audit stamp), `pipeline`, `tokio-bare` or `tokio-pipeline` runs
//! `CALLS` calls of one path, for `valgrind --tool=callgrind` or `perf`. With `HOOK=1` the
//! registry has one hook that does nothing, asked before and after every call.
use std::hint::black_box;
use std::time::Instant;
use tool_registry::{Ctx, Registry, Scope, bench, tool};

/// Add two numbers.
#[tool(name = "math.add", category = "math", read_only, idempotent)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

fn main() {
    let builder = Registry::builder().log_annotations(false);
    let builder = match std::env::var_os("HOOK") {
        Some(_) => builder.hook(bench::NoopHook),
        None => builder,
    };
    let registry = builder.build().unwrap();
    let ctx = Ctx::for_scope(Scope::user("alice").with_modules(["math"]));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let args = r#"{"a": 40, "b": 2}"#;
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    if std::env::var_os("SIZES").is_some() {
        println!(
            "call future: {} bytes",
            std::mem::size_of_val(&registry.call("math.add", args, &ctx))
        );
        println!(
            "dispatch future: {} bytes",
            std::mem::size_of_val(&bench::dispatch(&registry, "math.add", args, &ctx))
        );
        println!(
            "ToolResult: {} bytes, ToolError: {} bytes",
            std::mem::size_of::<tool_registry::ToolResult>(),
            std::mem::size_of::<tool_registry::ToolError>()
        );
        println!(
            "Audit: {} bytes, Value: {} bytes, Result: {} bytes",
            std::mem::size_of::<tool_registry::audit::Audit>(),
            std::mem::size_of::<serde_json::Value>(),
            std::mem::size_of::<Result<tool_registry::ToolResult, tool_registry::ToolError>>()
        );
        return;
    }
    if let Ok(mode) = std::env::var("MODE") {
        // One path only, for instruction counts (`valgrind --tool=callgrind`).
        let calls: usize = std::env::var("CALLS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(100_000);
        for _ in 0..calls {
            match mode.as_str() {
                "tokio-bare" => black_box(
                    rt.block_on(bench::dispatch(
                        &registry,
                        "math.add",
                        black_box(args),
                        &ctx,
                    ))
                    .unwrap(),
                ),
                "tokio-pipeline" => black_box(
                    rt.block_on(registry.call("math.add", black_box(args), &ctx))
                        .unwrap(),
                ),
                "core" => black_box(
                    block_on(bench::dispatch_stamped(
                        &registry,
                        "math.add",
                        black_box(args),
                        &ctx,
                    ))
                    .unwrap(),
                ),
                "bare" => black_box(
                    block_on(bench::dispatch(
                        &registry,
                        "math.add",
                        black_box(args),
                        &ctx,
                    ))
                    .unwrap(),
                ),
                _ => black_box(block_on(registry.call("math.add", black_box(args), &ctx)).unwrap()),
            };
        }
        return;
    }
    // Alternate batches of both paths and keep the fastest batch of each: the least disturbed
    // by other work on the machine.
    let (mut bare, mut full) = (f64::MAX, f64::MAX);
    for _ in 0..rounds * 10 {
        let n = 100_000;
        let t = Instant::now();
        for _ in 0..n {
            black_box(
                block_on(bench::dispatch(
                    &registry,
                    "math.add",
                    black_box(args),
                    &ctx,
                ))
                .unwrap(),
            );
        }
        bare = bare.min(t.elapsed().as_nanos() as f64 / n as f64);
        let t = Instant::now();
        for _ in 0..n {
            black_box(block_on(registry.call("math.add", black_box(args), &ctx)).unwrap());
        }
        full = full.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    println!(
        "fastest batch: bare {bare:.0} ns, pipeline {full:.0} ns, the pipeline adds {:.0} ns",
        full - bare
    );
}
