//! The registry over MCP: a `tools/call` round trip through rmcp's client and our server over
//! an in-process pipe against a direct call of the same tool, and `tools/list` of 1,000 tools
//! for one caller against the registry's own MCP list.
//!
//! Run with `cargo bench -p tool-registry --bench mcp`; docs/PERFORMANCE.md has the figures.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

mod echo;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use tool_registry::format::Provider;
use tool_registry::mcp::McpServer;
use tool_registry::{Ctx, Registry, Scope};

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30)
}

/// 1,000 echo tools, `echo_0000` to `echo_0999`.
fn registry() -> Arc<Registry> {
    echo::echo_registry((0..1000).map(|i| format!("echo_{i:04}")))
}

fn mcp(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let registry = registry();
    let client = runtime.block_on(async {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        let server = McpServer::new(registry.clone(), Scope::trusted());
        tokio::spawn(async move {
            let running = server.serve(tokio::io::split(server_end)).await.unwrap();
            let _ = running.waiting().await;
        });
        ().serve(tokio::io::split(client_end)).await.unwrap()
    });
    let arguments = json!({"text": "the quick brown fox"})
        .as_object()
        .unwrap()
        .clone();
    let ctx = Ctx::new();
    // The same answer both ways, and the whole list.
    let over_mcp =
        runtime
            .block_on(client.call_tool(
                CallToolRequestParams::new("echo_0500").with_arguments(arguments.clone()),
            ))
            .unwrap();
    assert_eq!(over_mcp.is_error, Some(false));
    assert_eq!(
        runtime.block_on(client.list_all_tools()).unwrap().len(),
        1000
    );

    let mut group = c.benchmark_group("mcp");
    group.bench_function("direct_call", |b| {
        b.iter(|| {
            runtime.block_on(registry.call_for_model(
                "echo_0500",
                black_box(Value::Object(arguments.clone())),
                &ctx,
            ))
        })
    });
    group.bench_function("tools_call_round_trip", |b| {
        b.iter(|| {
            runtime
                .block_on(
                    client.call_tool(
                        CallToolRequestParams::new("echo_0500")
                            .with_arguments(black_box(arguments.clone())),
                    ),
                )
                .unwrap()
        })
    });
    group.bench_function("direct_mcp_list_1000", |b| {
        b.iter(|| registry.tools_for(Provider::Mcp, black_box(&Scope::trusted())))
    });
    group.bench_function("tools_list_1000", |b| {
        b.iter(|| runtime.block_on(client.list_all_tools()).unwrap())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = mcp
}
criterion_main!(benches);
