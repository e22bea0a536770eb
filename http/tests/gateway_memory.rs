//! A gateway reads a module's manifest with a bound on memory, not only on the tools it keeps:
//! a manifest of 100,000 tools from a real module on loopback costs the gateway its body and
//! the tools it keeps, never a JSON value of the whole manifest. Counted exactly by the
//! allocator of this test binary (it holds this one test, so nothing else allocates meanwhile).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_registry::Listing;
use tool_registry::Registry;
use tool_registry::http::{Gateway, MAX_MODULE_TOOLS, MemoryManifestCache, Module, ModuleMap};

/// The system allocator, counting the bytes it holds and the most it has held.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let now = LIVE.fetch_add(by, Ordering::Relaxed) + by;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Counted as the new block taken before the old one is given back, as a copy does.
        grew(new_size);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The tools of the manifest served.
const TOOLS: usize = 100_000;

/// The most the gateway's reading of the manifest may add to the bytes the process holds. The
/// body (8.6 MB) and the 4,096 tools kept, registered as run-time tools, fit well within it;
/// a JSON value of all 100,000 tools does not.
const BOUND: usize = 64 << 20;

/// The peak resident memory of this process, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    (status.lines())
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "current_thread")]
async fn a_manifest_of_100_000_tools_is_read_with_a_bound_on_memory() {
    use axum::routing::get;

    let tools: Vec<String> = (0..TOOLS)
        .map(|i| {
            format!(
                r#"{{"tool_name": "big.t{i:06}", "description": "Tool {i}.", "input_schema": {{"type": "object"}}}}"#
            )
        })
        .collect();
    let body = axum::body::Bytes::from(format!(
        r#"{{"name": "big", "version": "1.0.0", "tools": [{}]}}"#,
        tools.join(", ")
    ));
    drop(tools);
    assert!(body.len() > 8 << 20, "{} bytes", body.len());
    let app = axum::Router::new().route(
        "/manifest",
        get(move || {
            let body = body.clone();
            async move { ([("content-type", "application/json")], body) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let gateway = Gateway::builder(
        Arc::clone(&registry),
        ModuleMap::new().with("big", Module::new(&addr)),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap();
    let rss_before = peak_rss_kib();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let status = gateway.start().await;
    let grown = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    let rss_after = peak_rss_kib();
    server.abort();

    eprintln!(
        "reading the manifest: peak heap +{} KiB; peak resident {rss_before} KiB before, {rss_after} KiB after",
        grown >> 10
    );
    assert_eq!(status[0].error, None, "{status:?}");
    assert_eq!(status[0].tools, MAX_MODULE_TOOLS, "{status:?}");
    assert_eq!(status[0].left_out, TOOLS - MAX_MODULE_TOOLS, "{status:?}");
    assert_eq!(registry.len(), MAX_MODULE_TOOLS);
    assert!(registry.get("big.t004095", Listing::every()).is_some());
    assert!(registry.get("big.t004096", Listing::every()).is_none());
    assert!(
        grown < BOUND,
        "reading the manifest took {} MiB at its peak",
        grown >> 20
    );
}
