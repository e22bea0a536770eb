//! Calls and listings while another thread registers, replaces, switches and removes tools in
//! a loop: no reader waits, none sees half a change, a call in flight finishes with the tool it
//! started with, and a removed tool answers `unknown_tool`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::registry::Selector;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, ToolError, tool};

/// Answer with the same text.
#[tool(name = "util.ping")]
fn ping(text: String) -> String {
    text
}

/// Version `v` of the churning tool: even versions take `{"n": integer}`, odd ones
/// `{"s": string}`. Each handler checks that it got the arguments its own schema admits, so a
/// call validated against one version and run by another shows as `torn`.
fn version(registry: &Registry, v: u64) {
    let (key, ty) = if v.is_multiple_of(2) {
        ("n", "integer")
    } else {
        ("s", "string")
    };
    let spec = ToolSpec::builder("churn")
        .version(format!("{v}.0.0"))
        .input_schema(json!({
            "type": "object",
            "properties": { key: { "type": ty } },
            "required": [key],
            "additionalProperties": false,
        }))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(move |args: Value, _ctx: Ctx| async move {
                if args.get(key).is_none() {
                    return Err(format!("torn: version {v} got {args}"));
                }
                tokio::task::yield_now().await;
                Ok(v)
            }),
        )
        .unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

#[test]
fn calls_and_listings_never_see_a_torn_state_while_tools_churn() {
    let registry = Arc::new(Registry::builder().log_annotations(false).build().unwrap());
    version(&registry, 0);
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..3)
        .map(|reader| {
            let (registry, done) = (Arc::clone(&registry), Arc::clone(&done));
            std::thread::spawn(move || read_while_churning(reader, &registry, &done))
        })
        .collect();

    for v in 1..=1_500_u64 {
        version(&registry, v);
        match v % 5 {
            0 => {
                registry.disable(Selector::name("churn"));
                registry.enable(Selector::name("churn"));
            }
            1 => {
                registry.remove("churn").unwrap();
            }
            _ => {}
        }
        // Short-lived neighbours, so the listing changes size and order.
        let neighbour = format!("churn.n{}", v % 7);
        registry
            .register(ToolSpec::builder(&neighbour).build().unwrap(), None)
            .unwrap();
        if v.is_multiple_of(2) {
            registry.remove(&neighbour).unwrap();
        }
    }
    done.store(true, Ordering::Release);
    let mut totals: BTreeMap<String, usize> = BTreeMap::new();
    for reader in readers {
        for (outcome, count) in reader.join().expect("a reader panicked") {
            *totals.entry(outcome).or_default() += count;
        }
    }
    // The readers saw the tool answer, be refused by a schema, and be gone.
    for outcome in ["ok", "invalid_arguments", "unknown_tool"] {
        assert!(totals.get(outcome).is_some_and(|&n| n > 0), "{totals:?}");
    }
    assert_eq!(
        totals.keys().map(String::as_str).collect::<Vec<_>>(),
        ["invalid_arguments", "ok", "unknown_tool"],
        "no other outcome: {totals:?}"
    );
}

/// Calls `churn` and reads listings until `done`; returns how often each outcome came.
fn read_while_churning(
    reader: usize,
    registry: &Registry,
    done: &AtomicBool,
) -> BTreeMap<String, usize> {
    let runtime = runtime();
    let ctx = Ctx::new();
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut round = reader;
    while !done.load(Ordering::Acquire) {
        round += 1;
        let (args, even) = if round.is_multiple_of(2) {
            (json!({ "n": 1 }), true)
        } else {
            (json!({ "s": "x" }), false)
        };
        let outcome = runtime.block_on(registry.call("churn", args, &ctx));
        let code = match outcome {
            Ok(result) => {
                let v = result.content.as_u64().expect("a version");
                assert_eq!(
                    v % 2 == 0,
                    even,
                    "version {v} ran arguments of the other shape"
                );
                assert_eq!(result.audit.tool.as_deref(), Some("churn"));
                "ok".to_owned()
            }
            Err(ToolError::Handler { message, .. }) => panic!("{message}"),
            Err(error) => error.code().to_owned(),
        };
        *outcomes.entry(code).or_default() += 1;

        // A listing is one consistent state: sorted, unique, every name found as itself.
        let listed = registry.registrations();
        let names: Vec<&str> = listed.iter().map(|r| r.tool.name()).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "{names:?}");
        assert!(names.contains(&"util.ping"));
        for registration in &listed {
            let tool = &registration.tool;
            if let Some(found) = registry.get(tool.name(), Listing::every()) {
                assert_eq!(found.name(), tool.name());
            }
            if tool.name() == "churn" {
                // A handle's spec, schema and version belong together.
                let v: u64 = tool
                    .version()
                    .unwrap()
                    .strip_suffix(".0.0")
                    .unwrap()
                    .parse()
                    .unwrap();
                let key = if v.is_multiple_of(2) { "n" } else { "s" };
                assert!(
                    tool.input_schema().as_value()["properties"]
                        .get(key)
                        .is_some()
                );
                assert_eq!(tool.spec().version(), tool.version());
            }
        }
    }
    outcomes
}

/// Registers `slow`, whose handler waits until `release` opens, and reports that it started.
fn slow_tool(registry: &Registry, version: &str, started: Arc<Barrier>, release: Arc<Barrier>) {
    let spec = ToolSpec::builder("slow").version(version).build().unwrap();
    let answer = version.to_owned();
    registry
        .register(
            spec,
            ToolHandler::new(move |_args: Value, _ctx: Ctx| {
                let (started, release, answer) =
                    (Arc::clone(&started), Arc::clone(&release), answer.clone());
                async move {
                    started.wait();
                    tokio::task::spawn_blocking(move || release.wait())
                        .await
                        .unwrap();
                    Ok::<_, String>(answer)
                }
            }),
        )
        .unwrap();
}

#[test]
fn a_call_in_flight_finishes_with_the_tool_it_started_with() {
    let registry = Arc::new(
        Registry::builder()
            .without_linked()
            .log_annotations(false)
            .build()
            .unwrap(),
    );
    let (started, release) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    slow_tool(
        &registry,
        "1.0.0",
        Arc::clone(&started),
        Arc::clone(&release),
    );
    let call = {
        let registry = Arc::clone(&registry);
        std::thread::spawn(move || runtime().block_on(registry.call("slow", "{}", &Ctx::new())))
    };
    started.wait();
    // Replaced, then removed, while its handler runs.
    let (started2, release2) = (Arc::new(Barrier::new(2)), Arc::new(Barrier::new(2)));
    slow_tool(&registry, "2.0.0", started2, release2);
    assert_eq!(
        registry.get("slow", Listing::every()).unwrap().version(),
        Some("2.0.0")
    );
    registry.remove("slow").unwrap().expect("it was registered");
    assert!(registry.get("slow", Listing::every()).is_none());
    release.wait();
    let result = call.join().unwrap().expect("the call completes");
    assert_eq!(result.content, "1.0.0", "with the version it started with");
    assert_eq!(result.audit.tool.as_deref(), Some("slow"));

    let after = runtime()
        .block_on(registry.call("slow", "{}", &Ctx::new()))
        .unwrap_err();
    assert_eq!(after.code(), "unknown_tool");
}

#[test]
fn readers_do_not_wait_for_a_writer() {
    let registry = Arc::new(Registry::builder().log_annotations(false).build().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    // A writer that publishes as fast as it can.
    let writer = {
        let (registry, stop) = (Arc::clone(&registry), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut v = 0_u64;
            while !stop.load(Ordering::Acquire) {
                v += 1;
                version(&registry, v);
            }
            v
        })
    };
    let runtime = runtime();
    let ctx = Ctx::new();
    let started = std::time::Instant::now();
    while started.elapsed() < Duration::from_millis(300) {
        let result = runtime
            .block_on(registry.call("util.ping", r#"{"text": "hi"}"#, &ctx))
            .unwrap();
        assert_eq!(result.content, "hi");
        calls.fetch_add(1, Ordering::Relaxed);
    }
    stop.store(true, Ordering::Release);
    let published = writer.join().unwrap();
    assert!(published > 10, "the writer published {published} times");
    assert!(
        calls.load(Ordering::Relaxed) > 100,
        "the reader made progress"
    );
}
