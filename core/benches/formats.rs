//! The tool list a request asks for, for a scoped caller, in each provider's format: 1,000
//! tools, the list served again against the list built the first time.
//!
//! Run with `cargo bench -p tool-registry-core --bench formats`; docs/PERFORMANCE.md has the figures.

// The shared benchmark code; this benchmark uses its run-time tools only.
#[allow(dead_code, unused_imports)]
mod common;

use std::hint::black_box;
use std::time::Duration;

use common::add_run_time_tools;
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use tool_registry::ToolSpec;
use tool_registry::discovery::Discovery;
use tool_registry::format::Provider;
use tool_registry::{Listing, Registry, Scope};

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20)
}

/// A registry of 1,000 run-time tools and nothing else, so that nothing is cached before the
/// first request.
fn thousand() -> Registry {
    let registry = Registry::builder()
        .without_linked()
        .log_annotations(false)
        .build()
        .expect("an empty registry");
    add_run_time_tools(&registry, 1_000);
    registry
}

fn lists(c: &mut Criterion) {
    // A caller with a scope: a user, limited to no module in particular.
    let scope = Scope::user("alice");
    let mut group = c.benchmark_group("tools_for/1000");
    for provider in Provider::ALL {
        let registry = thousand();
        assert!(registry.provider_tools(provider, &scope).json().len() > 1_000);
        group.bench_function(BenchmarkId::new("again", provider), |b| {
            b.iter(|| registry.provider_tools(black_box(provider), black_box(&scope)))
        });
        // The application's own list of every tool, unfiltered, kept from the first request.
        let _ = registry.provider_tools(provider, Listing::every());
        group.bench_function(BenchmarkId::new("every", provider), |b| {
            b.iter(|| registry.provider_tools(black_box(provider), Listing::every()))
        });
        group.bench_function(BenchmarkId::new("first", provider), |b| {
            b.iter_batched(
                thousand,
                // The registry is handed back, so that dropping it is not measured.
                |registry| {
                    let list = registry.provider_tools(black_box(provider), black_box(&scope));
                    (registry, list)
                },
                BatchSize::LargeInput,
            )
        });
    }
    group.finish();

    // The same 1,000 tools and 100 deferred ones: the list leaves the deferred tools out and
    // ends with the meta-tools (OpenAI), or flags them for the provider's own search
    // (Anthropic, `Discovery::Native`).
    let mut group = c.benchmark_group("tools_for/1000+100_deferred");
    for (discovery, provider) in [
        (Discovery::MetaTools, Provider::OpenAi),
        (Discovery::Native, Provider::Anthropic),
    ] {
        let registry = Registry::builder()
            .without_linked()
            .log_annotations(false)
            .discovery(discovery)
            .build()
            .expect("an empty registry");
        add_run_time_tools(&registry, 1_000);
        for i in 0..100 {
            let spec = ToolSpec::builder(format!("later.tool_{i}"))
                .description("A tool found through discovery.")
                .defer_loading(true)
                .build()
                .expect("a valid spec");
            registry.register(spec, None).expect("a new name");
        }
        let list = registry.provider_tools(provider, &scope);
        assert!(list.json().contains("search_tools") || list.json().contains("defer_loading"));
        group.bench_function(BenchmarkId::new("again", provider), |b| {
            b.iter(|| registry.provider_tools(black_box(provider), black_box(&scope)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = lists
}
criterion_main!(benches);
