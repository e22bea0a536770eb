//! Hostile arguments and slow handlers: size and depth limits on every path that takes
//! arguments, timeouts counted from the call's start, blocking handlers, and the stamps on
//! error results.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::audit::{AuditRecord, AuditSink};
use tool_registry::call::MAX_ARGS_DEPTH;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, Scope, ToolArgs, ToolCall, ToolError, ToolResult, tool};

/// Repeat a short text.
#[tool(name = "hostile.echo", max_args_bytes = 64)]
fn echo(text: String) -> String {
    text
}

/// Hand back any JSON value.
#[tool(name = "hostile.mirror")]
fn mirror(value: Value) -> Value {
    value
}

/// Wipe a target; a person approves each call.
#[tool(name = "hostile.wipe", requires_confirmation)]
fn wipe(target: Value) -> String {
    format!("wiped {target}")
}

/// The arguments of `hostile.find`.
#[derive(Deserialize, JsonSchema)]
struct FindArgs {
    /// What to look for.
    query: String,
    /// How many results.
    limit: Option<u32>,
    /// Narrow the search.
    filters: Option<Vec<String>>,
}

/// Find things.
#[tool(name = "hostile.find")]
fn find(#[args] args: FindArgs) -> String {
    format!("{} {:?} {:?}", args.query, args.limit, args.filters)
}

/// Shout a word.
#[tool(name = "hostile.shout")]
fn shout(
    #[arg(desc = "One word", max_len = 5)] word: String,
    #[arg(rename = "n", max_len = 3)] note: Option<String>,
) -> String {
    format!("{}{}", word.to_uppercase(), note.unwrap_or_default())
}

/// Set while `hostile.spin` runs; cleared to let it finish.
static SPINNING: AtomicBool = AtomicBool::new(false);
static RELEASE: AtomicBool = AtomicBool::new(false);

/// Compute until released, never yielding.
#[tool(name = "hostile.spin", blocking, timeout = "50ms")]
fn spin() -> String {
    SPINNING.store(true, Ordering::SeqCst);
    while !RELEASE.load(Ordering::SeqCst) {
        std::hint::spin_loop();
    }
    SPINNING.store(false, Ordering::SeqCst);
    "released".to_owned()
}

/// Set when `hostile.dedupe` returns; it gives up once released.
static DEDUPED: AtomicBool = AtomicBool::new(false);
static DEDUPE_RELEASE: AtomicBool = AtomicBool::new(false);

/// Count the distinct words of a text the slow way (quadratic); takes up to 4 MiB.
#[tool(
    name = "hostile.dedupe",
    blocking,
    timeout = "100ms",
    max_args_bytes = 4194304
)]
fn dedupe(text: String) -> usize {
    let mut seen: Vec<&str> = Vec::new();
    for word in text.split_whitespace() {
        if DEDUPE_RELEASE.load(Ordering::Relaxed) {
            break;
        }
        if !seen.contains(&word) {
            seen.push(word);
        }
    }
    DEDUPED.store(true, Ordering::SeqCst);
    seen.len()
}

/// Compute past the deadline, then wait once.
#[tool(name = "hostile.compute_then_wait", timeout = "50ms")]
async fn compute_then_wait() -> String {
    busy(Duration::from_millis(200));
    tokio::task::yield_now().await;
    "done".to_owned()
}

/// Compute past the deadline and finish without waiting.
#[tool(name = "hostile.compute_only", timeout = "50ms")]
async fn compute_only() -> String {
    busy(Duration::from_millis(200));
    "done".to_owned()
}

/// Blocking, written as an `async fn` that uses the context.
#[tool(name = "hostile.blocking_async", blocking)]
async fn blocking_async(ctx: &Ctx) -> String {
    tokio::task::yield_now().await;
    ctx.user().unwrap_or("nobody").to_owned()
}

/// Panic on the blocking pool.
#[tool(name = "hostile.blocking_panic", blocking)]
fn blocking_panic() -> String {
    panic!("boom on the blocking pool")
}

fn busy(how_long: Duration) {
    let start = Instant::now();
    while start.elapsed() < how_long {
        std::hint::spin_loop();
    }
}

/// Collects audit records.
#[derive(Clone, Default)]
struct Records(Arc<Mutex<Vec<AuditRecord<'static>>>>);

impl AuditSink for Records {
    fn record(&self, record: &AuditRecord<'_>) {
        self.0.lock().unwrap().push(record.clone().into_owned());
    }
}

fn registry() -> &'static Registry {
    Registry::global()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// `[[[...null...]]]` with `depth` arrays, built without recursion.
fn nested(depth: usize, leaf: Value) -> Value {
    let mut value = leaf;
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// `value` with each [`DEEP`] marker replaced by a chain of `depth` arrays, without recursion.
fn graft(mut value: Value, depth: usize) -> Value {
    let mut stack = vec![&mut value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) if text == DEEP => *value = nested(depth, Value::Null),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    value
}

/// The deepest nesting of arrays and objects, without recursion.
fn depth_of(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(map) => Box::new(map.values()),
            _ => continue,
        };
        deepest = deepest.max(depth + 1);
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    deepest
}

// --- time ---

#[tokio::test]
async fn a_busy_blocking_tool_answers_timed_out_at_its_deadline() {
    let outcome = registry().call("hostile.spin", "{}", &Ctx::new()).await;
    // The answer came while the handler was still computing: the deadline did not wait for it.
    let still_running = SPINNING.load(Ordering::SeqCst);
    RELEASE.store(true, Ordering::SeqCst);
    match outcome {
        Err(ToolError::TimedOut { tool, after }) => {
            assert_eq!(tool, "hostile.spin");
            assert_eq!(after, Duration::from_millis(50));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(still_running, "the timeout came only after the work ended");
    assert!(
        registry()
            .get("hostile.spin", Listing::every())
            .unwrap()
            .blocking()
    );
}

#[tokio::test]
async fn a_2_mb_argument_to_slow_blocking_work_answers_timed_out_at_the_deadline() {
    let text: String = (0..300_000).map(|i| format!("w{i} ")).collect();
    assert!(text.len() > 2_000_000);
    let args = json_object("text", Value::String(text));
    let outcome = registry().call("hostile.dedupe", args, &Ctx::new()).await;
    // Parsing 2 MB may use up the deadline before the handler starts; either way the handler
    // had not returned when the caller got its answer.
    let returned = DEDUPED.load(Ordering::SeqCst);
    DEDUPE_RELEASE.store(true, Ordering::SeqCst);
    match outcome {
        Err(ToolError::TimedOut { tool, after }) => {
            assert_eq!(tool, "hostile.dedupe");
            assert_eq!(after, Duration::from_millis(100));
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(!returned, "the timeout came only after the work ended");
}

#[tokio::test]
async fn work_before_the_first_wait_counts_against_the_timeout() {
    let outcome = registry()
        .call("hostile.compute_then_wait", "{}", &Ctx::new())
        .await;
    assert!(
        matches!(outcome, Err(ToolError::TimedOut { .. })),
        "{outcome:?}"
    );
}

/// Reading the arguments (the lenient rules, the schema's validator) counts against the tool's
/// timeout: a call whose reading spent the whole limit answers `timed_out`, and its handler
/// never starts. A limit of a nanosecond is spent by any reading.
#[tokio::test]
async fn reading_the_arguments_counts_against_the_timeout() {
    let registry = Registry::builder().without_linked().build().unwrap();
    let started = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&started);
    let spec = tool_registry::ToolSpec::builder("hostile.read_slowly")
        .timeout(Duration::from_nanos(1))
        .input_schema(json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": { "type": "integer" } } }
        }))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(move |_args: Value, _ctx: Ctx| {
                let flag = Arc::clone(&flag);
                async move {
                    flag.store(true, Ordering::SeqCst);
                    Ok::<_, String>(json!("ran"))
                }
            }),
        )
        .unwrap();
    let items: Vec<Value> = (0..2_000).map(|i| json!(i.to_string())).collect();
    for args in [
        ToolArgs::Value(json!({ "items": items })),
        ToolArgs::Text(r#"{"items": [1, 2]}"#),
    ] {
        let error = registry
            .call("hostile.read_slowly", args, &Ctx::new())
            .await
            .unwrap_err();
        assert_eq!(error.code(), "timed_out", "{error}");
    }
    assert!(!started.load(Ordering::SeqCst), "the handler started");
}

#[tokio::test]
async fn a_handler_that_never_waits_keeps_its_result() {
    // Nothing can interrupt it; what it returns stands (documented in the pipeline module).
    let result = registry()
        .call("hostile.compute_only", "{}", &Ctx::new())
        .await
        .unwrap();
    assert_eq!(result.content, json!("done"));
    assert!(result.audit.duration_ms.unwrap() > 50.0);
}

#[tokio::test]
async fn a_blocking_async_tool_runs_with_its_context_and_a_panic_is_caught() {
    let ctx = Ctx::for_scope(Scope::user("alice"));
    let result = registry()
        .call("hostile.blocking_async", "{}", &ctx)
        .await
        .unwrap();
    assert_eq!(result.content, json!("alice"));

    let outcome = registry()
        .call("hostile.blocking_panic", "{}", &Ctx::new())
        .await;
    match outcome {
        Err(ToolError::Panicked { tool, message }) => {
            assert_eq!(tool, "hostile.blocking_panic");
            assert_eq!(message, "boom on the blocking pool");
        }
        other => panic!("expected a caught panic, got {other:?}"),
    }
}

#[test]
fn a_blocking_tool_runs_in_place_without_a_runtime() {
    let result =
        futures_lite_block_on(registry().call("hostile.blocking_async", "{}", &Ctx::new()));
    assert_eq!(result.unwrap().content, json!("nobody"));
}

/// Polls a future to completion on this thread, with no Tokio runtime.
fn futures_lite_block_on<F: std::future::Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

// --- size ---

#[tokio::test]
async fn argument_text_over_the_tools_limit_is_refused_before_parsing() {
    let def = registry().get("hostile.echo", Listing::every()).unwrap();
    assert_eq!(def.max_args_bytes(), 64);
    assert_eq!(
        registry()
            .get("hostile.mirror", Listing::every())
            .unwrap()
            .max_args_bytes(),
        tool_registry::call::MAX_ARGS_BYTES
    );
    let ctx = Ctx::new();
    // `{"text":"…"}` is 11 bytes around the text.
    let fits = format!(r#"{{"text":"{}"}}"#, "a".repeat(53));
    assert_eq!(fits.len(), 64);
    assert!(registry().call("hostile.echo", &fits, &ctx).await.is_ok());
    let over = format!(r#"{{"text":"{}"}}"#, "a".repeat(54));
    let error = registry()
        .call("hostile.echo", &over, &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::ArgumentsTooLarge {
            tool: "hostile.echo".into(),
            limit: 64
        }
    );
    assert_eq!(error.code(), "arguments_too_large");
    assert!(error.to_string().contains("limit of 64 bytes"), "{error}");
    // Checked before parsing: broken JSON over the limit gets the size error too.
    let broken = format!("{{{}", "x".repeat(100));
    assert_eq!(
        registry()
            .call("hostile.echo", &broken, &ctx)
            .await
            .unwrap_err()
            .code(),
        "arguments_too_large"
    );
}

#[tokio::test]
async fn a_value_is_measured_as_the_json_it_serializes_to() {
    let ctx = Ctx::new();
    let fits = json!({ "text": "a".repeat(53) });
    assert!(registry().call("hostile.echo", fits, &ctx).await.is_ok());
    let over = json!({ "text": "a".repeat(54) });
    assert_eq!(
        registry()
            .call("hostile.echo", over, &ctx)
            .await
            .unwrap_err()
            .code(),
        "arguments_too_large"
    );
    // Escapes count as they are written: 26 quotes are 52 bytes of JSON.
    let escaped = json!({ "text": "\"".repeat(27) });
    assert_eq!(
        registry()
            .call("hostile.echo", escaped, &ctx)
            .await
            .unwrap_err()
            .code(),
        "arguments_too_large"
    );
}

#[tokio::test]
async fn max_len_is_in_the_schema_and_enforced_with_the_argument_path() {
    let schema = registry()
        .get("hostile.shout", Listing::every())
        .map(|tool| tool.input_schema().clone())
        .unwrap();
    let schema = serde_json::to_value(schema).unwrap();
    assert_eq!(schema["properties"]["word"]["maxLength"], json!(5));
    assert_eq!(schema["properties"]["n"]["maxLength"], json!(3));

    let ctx = Ctx::new();
    // Characters, not bytes: five characters, six bytes.
    let ok = registry()
        .call("hostile.shout", r#"{"word": "héllo", "n": "abc"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(ok.content, json!("HÉLLOabc"));
    let error = registry()
        .call("hostile.shout", r#"{"word": "hello!"}"#, &ctx)
        .await
        .unwrap_err();
    match &error {
        ToolError::InvalidArguments {
            tool,
            path,
            message,
        } => {
            assert_eq!((tool.as_str(), path.as_str()), ("hostile.shout", "word"));
            assert!(message.contains("6 characters"), "{message}");
            assert!(message.contains("limit of 5"), "{message}");
        }
        other => panic!("expected invalid arguments, got {other:?}"),
    }
    let error = registry()
        .call("hostile.shout", json!({"word": "hi", "n": "abcd"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ToolError::InvalidArguments { path, .. } if path == "n"),
        "{error:?}"
    );
}

// --- depth ---

#[tokio::test]
async fn a_value_100_000_levels_deep_gets_a_typed_error_on_every_path() {
    let ctx = Ctx::new();
    let deep = || json_object("target", nested(100_000, Value::Null));
    let too_deep = ToolError::ArgumentsTooDeep {
        tool: "hostile.wipe".into(),
        limit: MAX_ARGS_DEPTH,
    };
    // Confirmation: the arguments would be canonicalized for the approval.
    assert_eq!(
        registry()
            .call("hostile.wipe", deep(), &ctx)
            .await
            .unwrap_err(),
        too_deep
    );
    // The direct path, an `#[args]` struct, the whole value deep, an unknown tool.
    for tool in ["hostile.mirror", "hostile.find"] {
        let outcome = registry().call(tool, deep(), &ctx).await;
        assert_eq!(outcome.unwrap_err().code(), "arguments_too_deep", "{tool}");
    }
    let outcome = registry()
        .call("hostile.mirror", nested(100_000, json!(1)), &ctx)
        .await;
    assert_eq!(outcome.unwrap_err().code(), "arguments_too_deep");
    let outcome = registry().call("hostile.nothing", deep(), &ctx).await;
    assert_eq!(outcome.unwrap_err().code(), "unknown_tool");
    // A batch, and a call dropped before it was polled.
    let results = registry()
        .execute([ToolCall::new("hostile.wipe", deep())], &ctx)
        .await;
    assert_eq!(
        results[0].audit.outcome.as_deref(),
        Some("arguments_too_deep")
    );
    drop(registry().call("hostile.mirror", deep(), &ctx));
    let approved = registry()
        .call("hostile.wipe", ToolArgs::Value(deep()), &ctx)
        .approved("nope")
        .await;
    assert_eq!(approved.unwrap_err().code(), "approval_refused");
    // A call over the batch's limit is not run, and its arguments are dropped without recursion.
    let capped = Registry::builder().max_calls(0).build().unwrap();
    let results = capped
        .execute([ToolCall::new("hostile.wipe", deep())], &ctx)
        .await;
    assert_eq!(results[0].audit.outcome.as_deref(), Some("too_many_calls"));
}

fn json_object(key: &str, value: Value) -> Value {
    let mut map = serde_json::Map::new();
    map.insert(key.to_owned(), value);
    Value::Object(map)
}

#[tokio::test]
async fn text_and_values_meet_the_same_depth_limit() {
    let ctx = Ctx::new();
    // The object itself is the first level.
    for (depth, accepted) in [(MAX_ARGS_DEPTH, true), (MAX_ARGS_DEPTH + 1, false)] {
        let inner = depth - 1;
        let text = format!(
            r#"{{"value": {}0{}}}"#,
            "[".repeat(inner),
            "]".repeat(inner)
        );
        let value = json_object("value", nested(inner, json!(0)));
        assert_eq!(depth_of(&value), depth);
        for args in [ToolArgs::Text(&text), ToolArgs::Value(value)] {
            let outcome = registry().call("hostile.mirror", args, &ctx).await;
            if accepted {
                assert!(outcome.is_ok(), "depth {depth}: {outcome:?}");
            } else {
                assert_eq!(
                    outcome.unwrap_err(),
                    ToolError::ArgumentsTooDeep {
                        tool: "hostile.mirror".into(),
                        limit: MAX_ARGS_DEPTH
                    },
                    "depth {depth}"
                );
            }
        }
    }
}

// --- stamps ---

#[tokio::test]
async fn error_results_carry_the_same_stamps_as_successes() {
    let records = Records::default();
    let registry = Registry::builder()
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let ctx = Ctx::for_scope(Scope::user("alice"));
    let cases = [
        (
            "hostile.shout",
            r#"{"word": "toolong"}"#,
            "invalid_arguments",
        ),
        ("hostile.echo", r#"{"text": 1}"#, "invalid_arguments"),
        ("hostile.compute_then_wait", "{}", "timed_out"),
        ("hostile.nothing", "{}", "unknown_tool"),
    ];
    for (tool, args, code) in cases {
        let result: ToolResult = registry.call(tool, args, &ctx).for_model().await;
        assert!(!result.success);
        assert_eq!(result.content["error"]["code"], json!(code));
        let audit = &result.audit;
        assert_eq!(audit.tool.as_deref(), Some(tool));
        assert_eq!(audit.outcome.as_deref(), Some(code));
        assert_eq!(audit.user.as_deref(), Some("alice"));
        assert!(audit.ts.is_some() && audit.duration_ms.is_some(), "{tool}");
        assert_eq!(audit.risk.is_some(), tool != "hostile.nothing");
        // The result and the audit record are stamped from the same clock reading.
        let record = records.0.lock().unwrap().pop().unwrap();
        assert_eq!(Some(record.ts), audit.ts);
        assert_eq!(Some(record.duration_ms), audit.duration_ms);
    }
    let ok = registry
        .call("hostile.shout", r#"{"word": "hi"}"#, &ctx)
        .for_model()
        .await;
    assert!(ok.success);
    assert_eq!(ok.audit.outcome.as_deref(), Some("ok"));

    // A denied call answers with the same stamps, from the audit record's clock reading.
    let held = registry
        .call("hostile.wipe", r#"{"target": 1}"#, &ctx)
        .await;
    let Err(ToolError::NeedsApproval { token, .. }) = held else {
        panic!("{held:?}")
    };
    let denied = registry.deny(&token, "not today", &ctx).await.unwrap();
    let record = records.0.lock().unwrap().pop().unwrap();
    assert_eq!(denied.audit.tool.as_deref(), Some("hostile.wipe"));
    assert_eq!(denied.audit.outcome.as_deref(), Some("denied"));
    assert_eq!(denied.audit.user.as_deref(), Some("alice"));
    assert_eq!(Some(record.ts), denied.audit.ts);
    assert_eq!(Some(record.duration_ms), denied.audit.duration_ms);
}

#[tokio::test]
async fn durations_are_rounded_to_the_microsecond() {
    let records = Records::default();
    let registry = Registry::builder()
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let ctx = Ctx::new();
    let mut durations = Vec::new();
    for _ in 0..20 {
        let ok = registry
            .call("hostile.mirror", r#"{"value": [1, 2]}"#, &ctx)
            .await;
        durations.push(ok.unwrap().audit.duration_ms.unwrap());
        let failed = registry
            .call("hostile.mirror", "[]", &ctx)
            .for_model()
            .await;
        durations.push(failed.audit.duration_ms.unwrap());
    }
    durations.extend(records.0.lock().unwrap().iter().map(|r| r.duration_ms));
    for duration in durations {
        let text = serde_json::to_string(&duration).unwrap();
        let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
        assert!(decimals <= 3, "duration_ms {text} has more than 3 decimals");
    }
}

// --- random values ---

/// Stands for a deep chain in a generated value: proptest drops values it generates, and a deep
/// one would overflow the stack there, so chains are grafted in by the test itself.
const DEEP: &str = "\u{1}deep chain";

/// Any JSON value: wide arrays and objects, huge strings, odd numbers, unicode, and [`DEEP`]
/// markers where deep chains go.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        Just(json!(1e308)),
        Just(json!(-0.0)),
        Just(json!(u64::MAX)),
        Just(json!(i64::MIN)),
        ".{0,40}".prop_map(Value::from),
        "[\\u{0}-\\u{1f}\"\\\\\\u{7f}-\\u{10ffff}]{0,20}".prop_map(Value::from),
        (0usize..3_000_000).prop_map(|n| Value::from("é".repeat(n / 2))),
        Just(Value::from(DEEP)),
    ];
    leaf.prop_recursive(6, 256, 16, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..16).prop_map(Value::Array),
            // Distinct keys: a repeated key would drop the value it replaces, recursively.
            prop::collection::btree_map("[a-z]{1,6}|query|limit|filters|target|text", inner, 0..8)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// No value makes a call panic or abort; each answer is a result or a typed error, and a
    /// value deeper than the limit always gets the depth error.
    #[test]
    fn random_values_get_a_result_or_a_typed_error(
        value in any_value(),
        tool in prop::sample::select(vec![
            "hostile.echo", "hostile.mirror", "hostile.wipe", "hostile.find", "hostile.nothing",
        ]),
        wrap in any::<bool>(),
        depth in prop_oneof![0usize..300, 0usize..200_000],
    ) {
        let value = graft(value, depth);
        let args = if wrap { json_object("target", value) } else { value };
        let too_deep = depth_of(&args) > MAX_ARGS_DEPTH;
        let outcome = runtime().block_on(registry().call(tool, args, &Ctx::new()));
        match outcome {
            Ok(result) => prop_assert!(result.audit.tool.is_some()),
            Err(error) => {
                let expected = [
                    "invalid_arguments", "arguments_too_large", "arguments_too_deep",
                    "needs_approval", "unknown_tool",
                ];
                prop_assert!(expected.contains(&error.code()), "{error:?}");
                if too_deep && tool != "hostile.nothing" {
                    prop_assert_eq!(error.code(), "arguments_too_deep");
                }
            }
        }
    }
}

#[test]
fn the_catalog_shows_a_declared_argument_limit_and_not_the_default() {
    let catalog = Registry::global().catalog(Listing::every()).json();
    let tools = catalog["tools"].as_array().unwrap();
    let metadata =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["metadata"].clone();
    assert_eq!(metadata("hostile.echo")["max_args_bytes"], 64);
    assert_eq!(metadata("hostile.echo")["module"], "hostile");
    assert!(metadata("hostile.mirror").get("max_args_bytes").is_none());
    let page = Registry::global().catalog(Listing::every()).html();
    assert!(page.contains("<dt>Arguments</dt><dd>up to 64 bytes</dd>"));
}

/// A linked resource template, as an application declares one.
#[tool_registry::resource(uri = "hostile://note/{id}", mime_type = "text/plain", complete(id = note_ids))]
async fn hostile_note(id: String) -> String {
    format!("note {id}")
}

fn note_ids(typed: &str) -> Vec<String> {
    (0..150)
        .map(|n| n.to_string())
        .filter(|id| id.starts_with(typed))
        .collect()
}

/// A linked prompt, as an application declares one.
#[tool_registry::prompt(permission = "user")]
async fn hostile_prompt(#[arg(desc = "Who is greeted.")] who: String, ctx: &Ctx) -> String {
    format!("Greet {who} for {}", ctx.user().unwrap_or("nobody"))
}

#[test]
fn linked_offers_are_in_the_global_registry_under_their_permission() {
    use tool_registry::offer::{CompletionRequest, CompletionTarget};
    let global = registry();
    let templates = global.resource_templates(&Scope::guest());
    let note = templates
        .iter()
        .find(|t| t.uri() == "hostile://note/{id}")
        .unwrap();
    assert_eq!(
        note.description(),
        "A linked resource template, as an application declares one."
    );
    assert_eq!(note.mime_type(), Some("text/plain"));
    assert!(
        global
            .prompts(&Scope::guest())
            .iter()
            .all(|p| p.name() != "hostile_prompt")
    );
    let prompt = global
        .prompts(&Scope::user("ann"))
        .into_iter()
        .find(|p| p.name() == "hostile_prompt")
        .unwrap();
    assert_eq!(prompt.arguments()[0].name, "who");
    assert!(prompt.arguments()[0].required);
    let without = Registry::builder().without_linked().build().unwrap();
    assert!(without.resource_templates(&Scope::trusted()).is_empty());
    let hostile =
        tool_registry::offer::PromptSpec::new("x<b>", |_request| async move { Ok(Vec::new()) })
            .with_description("<script>alert(1)</script>");
    without.register_prompt(hostile).unwrap();
    let page = without.catalog(tool_registry::Listing::every()).html();
    assert!(!page.contains("<script>alert") && page.contains("&lt;script&gt;alert(1)"));
    assert!(page.contains("<code>x&lt;b&gt;</code>"));
    assert!(without.remove_prompt("x<b>"));
    assert!(
        without
            .catalog(tool_registry::Listing::every())
            .json()
            .get("prompts")
            .is_none()
    );

    // The catalog documents them, for what its reader may see.
    let markdown = global.catalog(&Scope::user("ann")).markdown();
    assert!(
        markdown.contains("# Resources") && markdown.contains("`hostile://note/{id}` (template)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("| `hostile_prompt` | `who` | user |"),
        "{markdown}"
    );
    let page = global.catalog(&Scope::user("ann")).html();
    assert!(
        page.contains("<section class=\"offers\" id=\"resources\">"),
        "the page shows them"
    );
    assert!(page.contains("<code>hostile://note/{id}</code> (template)"));
    assert!(page.contains("<code>hostile_prompt</code>"));
    let json = global.catalog(&Scope::guest()).json();
    let templates = json["resource_templates"].as_array().unwrap();
    assert!(
        templates
            .iter()
            .any(|t| t["uri_template"] == "hostile://note/{id}"),
        "{json}"
    );
    assert!(
        json["prompts"]
            .as_array()
            .is_none_or(|prompts| prompts.iter().all(|p| p["name"] != "hostile_prompt"))
    );

    runtime().block_on(async {
        let ctx = Ctx::for_scope(Scope::user("ann"));
        let contents = global
            .read_resource("hostile://note/7", &ctx)
            .await
            .unwrap();
        assert_eq!(contents[0].uri, "hostile://note/7");
        let arguments = [("who".to_owned(), "Ada".to_owned())].into();
        let messages = global
            .get_prompt("hostile_prompt", arguments, &ctx)
            .await
            .unwrap();
        let text = tool_registry::content::wire::to_value(&messages[0].content);
        assert_eq!(text["text"], "Greet Ada for ann");
        let missing = global
            .get_prompt("hostile_prompt", Default::default(), &ctx)
            .await
            .unwrap_err();
        assert_eq!(missing.code(), "missing_argument");
        let extra = [
            ("who".to_owned(), "A".to_owned()),
            ("whom".to_owned(), "B".to_owned()),
        ]
        .into();
        let extra = global
            .get_prompt("hostile_prompt", extra, &ctx)
            .await
            .unwrap_err();
        assert_eq!(extra.code(), "unknown_argument");
        assert!(extra.to_string().contains("it takes: who"), "{extra}");
    });

    // At most 100 values, and how many there were.
    let target = CompletionTarget::Resource("hostile://note/{id}".into());
    let request = CompletionRequest {
        value: "1".into(),
        ..Default::default()
    };
    let completion = global
        .complete(&target, "id", &request, &Scope::guest())
        .unwrap();
    assert_eq!(
        (
            completion.values.len(),
            completion.total,
            completion.has_more
        ),
        (61, 61, false)
    );
    let request = CompletionRequest::default();
    let completion = global
        .complete(&target, "id", &request, &Scope::guest())
        .unwrap();
    assert_eq!(
        (
            completion.values.len(),
            completion.total,
            completion.has_more
        ),
        (100, 150, true)
    );
}

#[test]
fn a_reader_or_prompt_that_panics_hangs_or_overflows_is_a_typed_error_and_audited() {
    use tool_registry::content::{ContentLimits, Resource};
    use tool_registry::offer::{
        CompletionRequest, CompletionTarget, PromptMessage, PromptSpec, ResourceSpec, completer,
    };
    let records = Records::default();
    let limits = ContentLimits::DEFAULT.with_max_blocks(3);
    let registry = Registry::builder()
        .without_linked()
        .default_timeout(Duration::from_millis(100))
        .content_limits(limits)
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let panics = ResourceSpec::new("bad://panics", "panics", |_request| async move {
        panic!("the reader broke");
        #[allow(unreachable_code)]
        Ok(Vec::new())
    })
    .unwrap();
    let hangs = ResourceSpec::new("bad://hangs", "hangs", |_request| async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        Ok(Vec::new())
    })
    .unwrap();
    let floods = ResourceSpec::new("bad://floods", "floods", |request| async move {
        Ok((0..10)
            .map(|n| Resource::text(request.uri.clone(), n.to_string()))
            .collect())
    })
    .unwrap();
    for spec in [panics, hangs, floods] {
        registry.register_resource(spec).unwrap();
    }
    let broken = PromptSpec::new("broken", |_request| async move {
        Ok((0..5).map(|_| PromptMessage::user("x")).collect())
    })
    .with_completion("x", completer(|_request| panic!("the completer broke")));
    registry.register_prompt(broken).unwrap();

    runtime().block_on(async {
        let ctx = Ctx::for_scope(Scope::user("ann"));
        let error = registry
            .read_resource("bad://panics", &ctx)
            .await
            .unwrap_err();
        assert_eq!(error.code(), "panicked", "{error}");
        let started = Instant::now();
        let error = registry
            .read_resource("bad://hangs", &ctx)
            .await
            .unwrap_err();
        assert_eq!(error.code(), "timed_out", "{error}");
        assert!(started.elapsed() < Duration::from_secs(5));
        let error = registry
            .read_resource("bad://floods", &ctx)
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_output", "{error}");
        let error = registry
            .get_prompt("broken", Default::default(), &ctx)
            .await
            .unwrap_err();
        assert_eq!(error.code(), "invalid_output", "{error}");
        let huge = "x".repeat(1 << 20);
        let error = registry.read_resource(&huge, &ctx).await.unwrap_err();
        assert_eq!(error.code(), "unknown_resource");
        assert!(
            error.to_string().len() < 5000,
            "the error quotes a bounded URI"
        );
    });
    let target = CompletionTarget::Prompt("broken".into());
    let error = registry
        .complete(&target, "x", &CompletionRequest::default(), &Scope::guest())
        .unwrap_err();
    assert_eq!(error.code(), "panicked");

    let records = records.0.lock().unwrap();
    let outcomes: Vec<(&str, &str)> = records
        .iter()
        .map(|record| (record.tool.as_ref(), record.outcome.as_ref()))
        .collect();
    assert!(
        outcomes.contains(&("resource:bad://panics", "panicked")),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&("resource:bad://hangs", "timed_out")),
        "{outcomes:?}"
    );
    assert!(
        outcomes.contains(&("prompt:broken", "invalid_output")),
        "{outcomes:?}"
    );
    assert!(
        records
            .iter()
            .all(|record| record.user.as_deref() == Some("ann"))
    );
}
