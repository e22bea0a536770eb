//! What the result cache saves on the reference knowledge-base search: `research` answered
//! from the cache, against the same call run (a cache that keeps nothing), in alternating
//! rounds of one run. Both registries are the reference binary's (the allow-lists, the
//! `RedactSecrets` hook) over the repository's `kb/` folder, with a rate-limit store that
//! admits every call so that `research`'s daily limit does not end the run.
//!
//! Run with `cargo bench -p tool-registry-tools --bench research`; docs/PERFORMANCE.md has
//! the figures.

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

use tool_registry::gate::{Limits, Permit, RateLimitStore, Refusal, async_trait};
use tool_registry::hook::{CacheKey, ResultCache};
use tool_registry::{Ctx, Registry, Scope, ToolResult};
use tool_registry_tools::Config;

/// A rate-limit store that admits every call.
struct Unlimited;

#[async_trait]
impl RateLimitStore for Unlimited {
    async fn acquire(
        &self,
        user: &str,
        tool: &str,
        _: Limits,
        now: SystemTime,
    ) -> Result<Permit, Refusal> {
        Ok(Permit {
            user: user.into(),
            tool: tool.into(),
            day: 0,
            previous: None,
            at: now,
        })
    }

    async fn release(&self, _: Permit) {}
}

/// A result cache that keeps nothing: every call runs its tool.
struct Forgetful;

#[async_trait]
impl ResultCache for Forgetful {
    async fn get(&self, _: &CacheKey) -> Result<Option<ToolResult>, String> {
        Ok(None)
    }

    async fn put(&self, _: &CacheKey, _: &ToolResult, _: Duration) -> Result<(), String> {
        Ok(())
    }
}

fn registry(kb: &Path, keeps: bool) -> Registry {
    let inbox = tempfile::tempdir().expect("a temporary inbox").keep();
    let config = Config {
        kb_dir: kb.to_owned(),
        inbox_dir: inbox.clone(),
        sandbox_root: inbox.join("sandbox"),
        schedule_file: inbox.join("scheduler.json"),
    };
    let builder = Registry::builder()
        .state(config)
        .allow_lists(tool_registry_tools::allow_lists())
        .hook(tool_registry_tools::RedactSecrets)
        .rate_limit_store(Unlimited)
        .log_annotations(false);
    let builder = if keeps {
        builder
    } else {
        builder.result_cache(Forgetful)
    };
    builder.build().expect("the reference registry builds")
}

/// The mean time of one call in `rounds` alternating rounds of `n` calls each, for `a` and `b`.
fn paired(
    runtime: &tokio::runtime::Runtime,
    rounds: usize,
    n: u32,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Vec<Duration>, Vec<Duration>) {
    let _in = runtime.enter();
    let (mut times_a, mut times_b) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..n {
            a();
        }
        times_a.push(t.elapsed() / n);
        let t = Instant::now();
        for _ in 0..n {
            b();
        }
        times_b.push(t.elapsed() / n);
    }
    (times_a, times_b)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument other than these runs nothing.
    if std::env::args().skip(1).any(|arg| arg == "--list") {
        println!("research: benchmark");
        return;
    }
    let kb = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kb");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let cached = registry(&kb, true);
    let uncached = registry(&kb, false);
    let ctx = Ctx::for_scope(Scope::user("bench"));
    let args = r#"{"query": "tool registry cache", "limit": 5}"#;
    let call = |registry: &Registry| {
        let result = runtime
            .block_on(registry.call(black_box("research"), black_box(args), &ctx))
            .expect("research answers");
        black_box(result);
    };
    // Both answer alike, the cached one from the cache after its first call.
    let ran = runtime
        .block_on(uncached.call("research", args, &ctx))
        .expect("research answers");
    call(&cached);
    let kept = runtime
        .block_on(cached.call("research", args, &ctx))
        .expect("research answers");
    assert_eq!(ran.content, kept.content);
    assert!(
        kept.content
            .as_array()
            .is_some_and(|notes| !notes.is_empty()),
        "the query finds notes in kb/"
    );
    let (runs, hits) = paired(&runtime, 9, 200, || call(&uncached), || call(&cached));
    let (run, hit) = (median(runs), median(hits));
    println!("research, run (uncached):     {run:>10.2?} a call (median of 9 rounds)");
    println!("research, answered from cache: {hit:>10.2?} a call");
    println!(
        "research run / cache hit:      {:>10.1}x",
        run.as_secs_f64() / hit.as_secs_f64()
    );
}
