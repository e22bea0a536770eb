//! A 1 MiB image through the MCP server costs its base64 once and one copy of that onto the
//! wire, and nothing more of its size: the bytes allocated from the call to the line the server
//! writes on standard output, counted by a global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_registry::Ctx;

/// The system allocator, counting the bytes it hands out (a reallocation counts its new size)
/// while [`COUNTING`] is set.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATED: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn count(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCATED.fetch_add(bytes, Ordering::Relaxed);
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every call is handed to the system allocator as it came.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[tokio::test]
async fn a_1_mib_image_costs_its_base64_and_one_copy_through_the_server() {
    let (registry, _) = tool_registry::bench::picture_registry(1 << 20);
    let ctx = Ctx::new();
    // The call and its answer as the server writes it: the tool's image is shared, not copied,
    // until its base64 is written.
    let serve = |id| {
        let (registry, ctx) = (&registry, &ctx);
        async move {
            let result = registry.call("picture", json!({}), ctx).for_model().await;
            assert!(result.success, "{result:?}");
            tool_registry::mcp::bench::mcp_stdio_answer(registry, "picture", &result, id).unwrap()
        }
    };
    // Once before counting, so that what is made once for the tool is made.
    serve(1).await;

    COUNTING.store(true, Ordering::Relaxed);
    let line = serve(2).await;
    COUNTING.store(false, Ordering::Relaxed);
    let allocated = ALLOCATED.load(Ordering::Relaxed);
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);

    let message: Value = serde_json::from_slice(&line).unwrap();
    let content = &message["result"]["content"];
    assert_eq!(content[1]["type"], "image", "{content:.200}");
    let base64 = content[1]["data"].as_str().unwrap();
    assert_eq!(base64.len(), (1usize << 20).div_ceil(3) * 4);
    let kib = |bytes: usize| bytes as f64 / 1024.0;
    println!(
        "{allocations} allocations, {:.1} KiB: the base64 is {:.1} KiB, the line {:.1} KiB",
        kib(allocated),
        kib(base64.len()),
        kib(line.len())
    );
    // The base64, the line that carries it, and the small parts of the message: 32 KiB at the
    // most beyond the two.
    assert!(
        allocated <= base64.len() + line.len() + (32 << 10),
        "{allocated} bytes allocated for a line of {}",
        line.len()
    );
}
