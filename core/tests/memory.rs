//! Tools registered and removed for the life of a process cost nothing once removed: the bytes
//! the process holds stay flat over 100,000 register/remove cycles. Counted exactly by the
//! allocator of this test binary (it holds this one test, so nothing else allocates meanwhile).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::format::Provider;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, tool};

/// The system allocator, counting the bytes it holds.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Answer with the same text.
#[tool(name = "util.ping")]
fn ping(text: String) -> String {
    text
}

fn cycle(registry: &Registry, i: usize) {
    // A name of its own each time, so nothing can be reused by name.
    let name = format!("tool{i}");
    let spec = ToolSpec::builder(&name)
        .version("1.0.0")
        .description("A tool that comes and goes.")
        .tags(["temporary"])
        .input_schema(json!({
            "type": "object",
            "properties": { "x": { "type": "integer", "minimum": 0 } },
            "required": ["x"],
        }))
        .build()
        .unwrap();
    let registration = registry
        .register(
            spec,
            ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
        )
        .unwrap();
    // Used the way an application uses a tool: looked up, listed, formatted, called.
    assert!(registry.get(&name, Listing::every()).is_some());
    let _ = registry.provider_tools(Provider::OpenAi, tool_registry::Listing::every());
    let _ = registration.tool.input_schema();
    if i.is_multiple_of(100) {
        let ctx = Ctx::new();
        let result = block_on(registry.call(&name, r#"{"x": 1}"#, &ctx)).unwrap();
        assert_eq!(result.content, json!({ "x": 1 }));
    }
    registry.remove(&name).unwrap().expect("registered");
}

/// Polls a future that never waits (the handler above does not).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => panic!("the call waited"),
    }
}

#[test]
fn memory_stays_flat_over_100_000_register_remove_cycles() {
    let registry = Registry::builder().log_annotations(false).build().unwrap();
    let mut changes = registry.subscribe();
    // Warm up: caches, the interned linked tools, the broadcast buffer filling to capacity.
    for i in 0..5_000 {
        cycle(&registry, i);
    }
    while changes.try_recv().is_ok() {}
    let before = LIVE.load(Ordering::Relaxed);
    for i in 5_000..105_000 {
        cycle(&registry, i);
        if i.is_multiple_of(1_000) {
            // A subscriber that keeps up.
            while changes.try_recv().is_ok() {}
        }
    }
    while changes.try_recv().is_ok() {}
    let after = LIVE.load(Ordering::Relaxed);
    let grown = after - before;
    // One byte per cycle would be 100 KB; a leaked registration is hundreds of bytes.
    assert!(
        grown < 64 * 1024,
        "the process holds {grown} more bytes after 100,000 cycles ({before} -> {after})"
    );
    assert_eq!(registry.len(), 1, "only the compiled tool is left");
}
