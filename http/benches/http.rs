//! HTTP tool modules over loopback: a remote call through a gateway against a local call of the
//! same tool and against a bare axum echo round trip of the same body, and a manifest refresh
//! of 100 tools.
//!
//! Run with `cargo bench -p tool-registry-http --bench http`; docs/PERFORMANCE.md has the figures.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

mod echo;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_registry::http::{Gateway, MemoryManifestCache, Module, ModuleMap, Server};
use tool_registry::{Ctx, Registry};

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30)
}

const ARGS: &str = r#"{"text": "the quick brown fox jumps over the lazy dog"}"#;

/// A registry of `count` echo tools: `echo`, `echo_1`, `echo_2`, ...
fn echo_registry(count: usize) -> Arc<Registry> {
    echo::echo_registry((0..count).map(|i| match i {
        0 => "echo".to_owned(),
        _ => format!("echo_{i}"),
    }))
}

/// Starts `router` on a free loopback port on the server runtime; its address.
fn start(server_rt: &tokio::runtime::Runtime, router: axum::Router) -> String {
    server_rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
        addr
    })
}

fn remote_call(c: &mut Criterion) {
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let module = echo_registry(1);
    let module_addr = start(&server_rt, Server::new(module.clone()).name("m").router());
    let echo = axum::Router::new().route(
        "/echo",
        axum::routing::post(|body: axum::body::Bytes| async move { body }),
    );
    let echo_addr = format!("{}/echo", start(&server_rt, echo));

    let gateway_registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let gateway = Gateway::builder(
        gateway_registry.clone(),
        ModuleMap::new().with("m", Module::new(&module_addr)),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap();
    client_rt.block_on(gateway.start());
    let ctx = Ctx::new();
    let client = reqwest::Client::new();
    // Every side does the whole work: the same answer.
    let remote = client_rt
        .block_on(gateway_registry.call("m.echo", ARGS, &ctx))
        .unwrap();
    let local = client_rt.block_on(module.call("echo", ARGS, &ctx)).unwrap();
    assert_eq!(remote.content, local.content);

    let mut group = c.benchmark_group("http");
    group.bench_function("local_call", |b| {
        b.iter(|| {
            client_rt
                .block_on(module.call("echo", black_box(ARGS), &ctx))
                .unwrap()
        })
    });
    group.bench_function("axum_echo_round_trip", |b| {
        b.iter(|| {
            client_rt.block_on(async {
                let response = client
                    .post(&echo_addr)
                    .body(black_box(ARGS))
                    .send()
                    .await
                    .unwrap();
                response.bytes().await.unwrap()
            })
        })
    });
    group.bench_function("remote_call", |b| {
        b.iter(|| {
            client_rt
                .block_on(gateway_registry.call("m.echo", black_box(ARGS), &ctx))
                .unwrap()
        })
    });
    group.finish();
}

fn manifest_refresh(c: &mut Criterion) {
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let client_rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let module_addr = start(
        &server_rt,
        Server::new(echo_registry(100)).name("m").router(),
    );
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let gateway = Gateway::builder(
        registry.clone(),
        ModuleMap::new().with("m", Module::new(&module_addr)),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap();
    let status = client_rt.block_on(gateway.start());
    assert_eq!(status[0].tools, 100);
    let mut group = c.benchmark_group("http");
    // The manifest comes back unchanged: fetched and compared, nothing registered again.
    group.bench_function("manifest_refresh_100_tools", |b| {
        b.iter(|| client_rt.block_on(gateway.refresh()))
    });
    // A gateway that meets the module for the first time: each spec read and checked, each
    // tool registered.
    let map = ModuleMap::new().with("m", Module::new(&module_addr));
    group.bench_function("manifest_first_load_100_tools", |b| {
        b.iter(|| {
            let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
            let gateway = Gateway::builder(registry, map.clone())
                .cache(MemoryManifestCache::new())
                .build()
                .unwrap();
            client_rt.block_on(gateway.start())
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = remote_call, manifest_refresh
}
criterion_main!(benches);
