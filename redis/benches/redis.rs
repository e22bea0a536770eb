//! A fleet on Redis: a rate-limit check on Redis over loopback against the in-memory store and
//! against a bare `PING` from the same client (the floor of one round trip), and calls of a
//! limited tool from two instances sharing Redis against one instance in memory.
//!
//! Starts its own `redis-server` on a free loopback port (`apt-get install -y redis-server`).
//! Run with `cargo bench -p tool-registry-redis --bench redis`; docs/PERFORMANCE.md has the figures.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;
use tool_registry::ToolSpec;
use tool_registry::gate::{InMemoryRateLimits, Limits, RateLimitStore};
use tool_registry::redis::{Fleet, FleetBuilder};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Permission, Registry, RegistryBuilder, Scope};

/// The benchmark's `redis-server`, killed when dropped.
struct Redis(Child, u16);

impl Redis {
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("redis-server")
            .args([
                "--bind",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--save",
                "",
            ])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (apt-get install -y redis-server)");
        // Killed and waited for by its guard, however the wait below ends.
        let redis = Self(child, port);
        for _ in 0..500 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return redis;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("redis-server did not start");
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30)
}

/// A limit no run reaches, so that every check admits and counts.
const LIMITS: Limits = Limits {
    cooldown: None,
    daily_limit: Some(u32::MAX),
};

/// One instance: a guest tool with a daily limit.
fn instance(builder: RegistryBuilder) -> Arc<Registry> {
    let registry = builder.without_linked().build().unwrap();
    let spec = ToolSpec::builder("limited")
        .description("A tool with a daily limit.")
        .permission(Permission::Guest)
        .daily_limit(u32::MAX)
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ran") }),
        )
        .unwrap();
    Arc::new(registry)
}

fn redis(c: &mut Criterion) {
    let server = Redis::start();
    let url = format!("redis://127.0.0.1:{}/0", server.1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let fleet = Fleet::new(&url).unwrap().prefix("bench");
    let on_redis = fleet.rate_limits();
    let in_memory = InMemoryRateLimits::new();
    runtime.block_on(async {
        fleet.ping().await.unwrap();
        on_redis
            .acquire("u", "t", LIMITS, SystemTime::now())
            .await
            .unwrap();
    });

    let mut group = c.benchmark_group("redis/rate_limit_check");
    group.bench_function("in_memory", |b| {
        b.iter(|| {
            runtime
                .block_on(in_memory.acquire("u", "t", LIMITS, SystemTime::now()))
                .unwrap()
        });
    });
    group.bench_function("ping", |b| {
        b.iter(|| runtime.block_on(fleet.ping()).unwrap());
    });
    group.bench_function("redis", |b| {
        b.iter(|| {
            runtime
                .block_on(on_redis.acquire("u", "t", LIMITS, SystemTime::now()))
                .unwrap()
        });
    });
    group.finish();

    // 100 calls at once, from two instances with a connection each, or from one in memory.
    const CALLS: usize = 100;
    let two = [
        instance(Registry::builder().redis(&Fleet::new(&url).unwrap().prefix("calls"))),
        instance(Registry::builder().redis(&Fleet::new(&url).unwrap().prefix("calls"))),
    ];
    let alone = instance(Registry::builder());
    let ctx = Ctx::for_scope(Scope::user("u"));
    let burst = |instances: Vec<Arc<Registry>>| {
        let ctx = ctx.clone();
        async move {
            let calls = (0..CALLS).map(|i| {
                let registry = instances[i % instances.len()].clone();
                let ctx = ctx.clone();
                async move { registry.call("limited", "{}", &ctx).for_model().await }
            });
            for result in futures::future::join_all(calls).await {
                assert!(result.success, "{result:?}");
            }
        }
    };
    let mut group = c.benchmark_group("redis/limited_calls");
    group.throughput(Throughput::Elements(CALLS as u64));
    group.bench_function("one_instance_in_memory", |b| {
        b.iter(|| runtime.block_on(burst(vec![alone.clone()])));
    });
    group.bench_function("two_instances_on_redis", |b| {
        b.iter(|| runtime.block_on(burst(two.to_vec())));
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = redis
}
criterion_main!(benches);
