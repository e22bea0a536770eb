//! Every call is one `tracing` span, `execute_tool`, fielded as OpenTelemetry's conventions for
//! generative AI ask; it is the current span while the stages and the handler run.
//!
//! One subscriber for the whole test binary (a handler on Tokio's blocking pool reads the global
//! one): a layer that keeps every span with its fields, its parent and the events inside it.
//! Each test calls as its own user and reads only the spans of that user.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use serde_json::{Value, json};
use tool_registry::{Ctx, Registry, ToolCall, ToolError, tool};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Instrument, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// Echo a text.
#[tool(name = "span.echo")]
fn echo(text: String) -> String {
    text
}

/// Always fail.
#[tool(name = "span.fails")]
fn fails() -> Result<String, ToolError> {
    Err(ToolError::failed("it failed"))
}

/// Say which span the handler runs in.
#[tool(name = "span.seen")]
async fn seen(ctx: &Ctx) -> Value {
    seen_from(ctx)
}

/// Say which span the handler runs in, from Tokio's blocking pool.
#[tool(name = "span.seen_blocking", blocking)]
fn seen_blocking(ctx: &Ctx) -> Value {
    seen_from(ctx)
}

/// Say which span the handler runs in; once a day.
#[tool(name = "span.once", daily_limit = 1)]
async fn once(ctx: &Ctx) -> Value {
    seen_from(ctx)
}

/// Say which span the handler runs in, once a person approved the call.
#[tool(name = "span.confirmed", requires_confirmation)]
async fn confirmed(ctx: &Ctx) -> Value {
    seen_from(ctx)
}

/// Log at every level, with no client to log to.
#[tool(name = "span.logs")]
async fn logs(ctx: &Ctx) -> &'static str {
    use tool_registry::call::LogLevel;
    ctx.log(LogLevel::Info, "a step");
    ctx.log_as(
        LogLevel::Error,
        Some("indexer"),
        serde_json::json!({"failed": 1}),
    );
    "logged"
}

/// What a handler sees: the current span's name and id, and the call's id; an event inside it.
fn seen_from(ctx: &Ctx) -> Value {
    tracing::info!(target: "spans_test", "inside the handler");
    let current = tracing::Span::current();
    json!({
        "span": current.metadata().map(|meta| meta.name()),
        "id": current.id().map(|id| id.into_u64()),
        "call_id": ctx.call_id(),
    })
}

/// A span as the subscriber saw it.
#[derive(Debug, Clone)]
struct Seen {
    id: u64,
    name: &'static str,
    target: &'static str,
    level: Level,
    fields: BTreeMap<&'static str, String>,
    /// The index of the parent in [`SPANS`].
    parent: Option<usize>,
    /// The targets of the events recorded inside it.
    events: Vec<&'static str>,
    closed: bool,
}

/// Every span since the subscriber was installed, in the order they were opened.
static SPANS: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

fn spans() -> MutexGuard<'static, Vec<Seen>> {
    SPANS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Where a live span is in [`SPANS`] (ids are reused once a span closes).
struct Index(usize);

struct Fields<'a>(&'a mut BTreeMap<&'static str, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name(), format!("{value:?}"));
    }
}

struct Recorder;

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let parent = span
            .parent()
            .and_then(|parent| parent.extensions().get::<Index>().map(|index| index.0));
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let meta = attrs.metadata();
        let mut spans = spans();
        spans.push(Seen {
            id: id.into_u64(),
            name: meta.name(),
            target: meta.target(),
            level: *meta.level(),
            fields,
            parent,
            events: Vec::new(),
            closed: false,
        });
        span.extensions_mut().insert(Index(spans.len() - 1));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        if let Some(index) = index_of(ctx.span(id)) {
            values.record(&mut Fields(&mut spans()[index].fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if let Some(index) = index_of(ctx.event_span(event)) {
            spans()[index].events.push(event.metadata().target());
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if let Some(index) = index_of(ctx.span(&id)) {
            spans()[index].closed = true;
        }
    }
}

fn index_of<S: for<'a> LookupSpan<'a>>(
    span: Option<tracing_subscriber::registry::SpanRef<'_, S>>,
) -> Option<usize> {
    span?.extensions().get::<Index>().map(|index| index.0)
}

/// The registry, with the subscriber installed once for the whole binary.
fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let subscriber = tracing_subscriber::registry().with(Recorder);
        tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
        Registry::builder().build().expect("the tools of this file")
    })
}

/// `user`'s call spans, in the order they were opened, with their indexes.
fn calls_of(user: &str) -> Vec<(usize, Seen)> {
    spans()
        .iter()
        .enumerate()
        .filter(|(_, span)| {
            span.name == "execute_tool" && span.fields.get("user").map(String::as_str) == Some(user)
        })
        .map(|(index, span)| (index, span.clone()))
        .collect()
}

/// The one call span of `user`.
fn call_of(user: &str) -> (usize, Seen) {
    let mut calls = calls_of(user);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    calls.remove(0)
}

/// The fields of every call span when it opens: `tool` as the span names it.
fn opened(tool: &str, user: &str) -> Vec<(&'static str, String)> {
    vec![
        ("otel.name", format!("execute_tool {tool}")),
        ("otel.kind", "internal".to_owned()),
        ("gen_ai.operation.name", "execute_tool".to_owned()),
        ("gen_ai.tool.name", tool.to_owned()),
        ("gen_ai.tool.type", "function".to_owned()),
        ("user", user.to_owned()),
    ]
}

/// The fields of a call span that ended with `outcome`, a failure unless it is `ok`.
fn ended(tool: &str, user: &str, outcome: &str) -> BTreeMap<&'static str, String> {
    let mut all: BTreeMap<_, _> = opened(tool, user).into_iter().collect();
    all.insert("outcome", outcome.to_owned());
    if outcome != "ok" {
        all.insert("error.type", outcome.to_owned());
        all.insert("otel.status_code", "ERROR".to_owned());
    }
    all
}

/// Asserts that the handler's answer names `span` as the current span and saw an event in it.
fn assert_ran_in(answer: &Value, span: &Seen) {
    assert_eq!(answer["span"], "execute_tool", "{answer}");
    assert_eq!(
        answer["id"], span.id,
        "the handler's current span is the call's"
    );
    assert!(
        span.events.contains(&"spans_test"),
        "the handler's event is inside the call span: {span:#?}"
    );
}

#[tokio::test]
async fn a_successful_call_is_one_execute_tool_span() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-ok");
    let request = tracing::info_span!("request");
    let result = registry
        .call("span.echo", r#"{"text": "a secret argument"}"#, &ctx)
        .instrument(request)
        .await
        .unwrap();
    assert_eq!(result.content, "a secret argument");

    let (_, span) = call_of("span-ok");
    assert_eq!(span.name, "execute_tool");
    assert_eq!(span.target, "tool_registry");
    assert_eq!(span.level, Level::INFO);
    assert_eq!(span.fields, ended("span.echo", "span-ok", "ok"));
    assert!(span.closed, "the span ends with the call");
    // The caller's span is the parent; the audit record is an event inside the call's.
    let parent = span.parent.map(|index| spans()[index].name);
    assert_eq!(parent, Some("request"));
    assert!(span.events.contains(&"tool_registry::audit"), "{span:#?}");
    // Neither the arguments nor the result are recorded.
    assert!(!format!("{span:?}").contains("secret"));
}

#[tokio::test]
async fn a_handler_error_is_an_error_span() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-fails");
    let error = registry.call("span.fails", "{}", &ctx).await.unwrap_err();
    assert_eq!(error.code(), "handler_error");

    let (_, span) = call_of("span-fails");
    assert_eq!(
        span.fields,
        ended("span.fails", "span-fails", "handler_error")
    );
    assert_eq!(span.fields["error.type"], "handler_error");
    assert_eq!(span.fields["otel.status_code"], "ERROR");
}

#[tokio::test]
async fn invalid_arguments_are_an_error_span() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-invalid");
    let result = registry
        .call("span.echo", r#"{"text": 5}"#, &ctx)
        .for_model()
        .await;
    assert!(!result.success);

    let (_, span) = call_of("span-invalid");
    assert_eq!(
        span.fields,
        ended("span.echo", "span-invalid", "invalid_arguments")
    );
}

#[tokio::test]
async fn an_unknown_tool_is_named_as_asked_escaped_and_cut() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-unknown");
    let error = registry
        .call("no.such\ntool", "{}", &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "unknown_tool");
    let long = "x".repeat(10_000);
    registry.call(&long, "{}", &ctx).await.unwrap_err();

    let calls = calls_of("span-unknown");
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert_eq!(
        calls[0].1.fields,
        ended("no.such\\ntool", "span-unknown", "unknown_tool")
    );
    let cut = format!("{}…", "x".repeat(64));
    assert_eq!(
        calls[1].1.fields,
        ended(&cut, "span-unknown", "unknown_tool")
    );
}

#[tokio::test]
async fn the_handler_runs_inside_the_call_span() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-seen");
    let result = registry.call("span.seen", "{}", &ctx).await.unwrap();

    let (_, span) = call_of("span-seen");
    assert_eq!(span.fields, ended("span.seen", "span-seen", "ok"));
    assert_ran_in(&result.content, &span);
}

#[tokio::test]
async fn a_blocking_handler_runs_inside_the_call_span_on_the_blocking_pool() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-blocking");
    let result = registry
        .call("span.seen_blocking", "{}", &ctx)
        .await
        .unwrap();

    let (_, span) = call_of("span-blocking");
    assert_eq!(
        span.fields,
        ended("span.seen_blocking", "span-blocking", "ok")
    );
    assert_ran_in(&result.content, &span);
}

#[tokio::test]
async fn a_rate_limited_call_is_an_error_span_and_the_staged_path_runs_inside_its_span() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-limited");
    let first = registry.call("span.once", "{}", &ctx).await.unwrap();
    let second = registry.call("span.once", "{}", &ctx).await.unwrap_err();
    assert_eq!(second.code(), "rate_limited");

    let calls = calls_of("span-limited");
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert_eq!(calls[0].1.fields, ended("span.once", "span-limited", "ok"));
    assert_ran_in(&first.content, &calls[0].1);
    assert_eq!(
        calls[1].1.fields,
        ended("span.once", "span-limited", "rate_limited")
    );
}

#[tokio::test]
async fn a_call_that_waits_for_approval_and_its_approval_are_two_spans() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-approve");
    let ToolError::NeedsApproval { token, .. } = registry
        .call("span.confirmed", "{}", &ctx)
        .await
        .unwrap_err()
    else {
        panic!("the tool needs approval");
    };
    let approved = registry.approve(&token, &ctx).await.unwrap();

    let calls = calls_of("span-approve");
    assert_eq!(calls.len(), 2, "{calls:#?}");
    assert_eq!(
        calls[0].1.fields,
        ended("span.confirmed", "span-approve", "needs_approval")
    );
    assert_eq!(
        calls[1].1.fields,
        ended("span.confirmed", "span-approve", "ok")
    );
    assert_ran_in(&approved.content, &calls[1].1);
}

#[tokio::test]
async fn a_batch_call_with_an_id_carries_it() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-batch");
    let mut with_id = ToolCall::new("span.seen", json!({}));
    with_id.id = Some("call_7".to_owned());
    let without_id = ToolCall::new("span.echo", json!({"text": "hi"}));
    let turn = tracing::info_span!("turn");
    let results = registry
        .execute([with_id, without_id], &ctx)
        .instrument(turn)
        .await;
    assert!(results.iter().all(|result| result.success), "{results:?}");
    assert_eq!(
        results[0].content["call_id"], "call_7",
        "the handler's ctx has it"
    );

    let calls = calls_of("span-batch");
    assert_eq!(calls.len(), 2, "{calls:#?}");
    let (_, seen) = calls
        .iter()
        .find(|(_, span)| span.fields["gen_ai.tool.name"] == "span.seen")
        .unwrap();
    let mut expected = ended("span.seen", "span-batch", "ok");
    expected.insert("gen_ai.tool.call.id", "call_7".to_owned());
    assert_eq!(seen.fields, expected);
    assert_ran_in(&results[0].content, seen);
    let (_, echo) = calls
        .iter()
        .find(|(_, span)| span.fields["gen_ai.tool.name"] == "span.echo")
        .unwrap();
    assert_eq!(echo.fields, ended("span.echo", "span-batch", "ok"));
    for (_, call) in &calls {
        assert_eq!(call.parent.map(|index| spans()[index].name), Some("turn"));
    }
}

#[tokio::test]
async fn a_call_id_set_on_the_context_is_carried() {
    let registry = registry();
    let ctx = Ctx::trusted()
        .with_user("span-ctx-id")
        .with_call_id("toolu_01");
    registry
        .call("span.echo", r#"{"text": "hi"}"#, &ctx)
        .await
        .unwrap();

    let (_, span) = call_of("span-ctx-id");
    let mut expected = ended("span.echo", "span-ctx-id", "ok");
    expected.insert("gen_ai.tool.call.id", "toolu_01".to_owned());
    assert_eq!(span.fields, expected);
}

#[tokio::test]
async fn a_call_id_written_by_a_model_is_escaped_and_cut() {
    let registry = registry();
    let id = format!("a\n{}", "x".repeat(10_000));
    let ctx = Ctx::trusted().with_user("span-long-id").with_call_id(id);
    registry
        .call("span.echo", r#"{"text": "hi"}"#, &ctx)
        .await
        .unwrap();

    let (_, span) = call_of("span-long-id");
    let shown = format!("a\\n{}…", "x".repeat(126));
    assert_eq!(span.fields["gen_ai.tool.call.id"], shown);
}

#[tokio::test]
async fn a_tool_without_a_client_logs_into_tracing_inside_its_call() {
    let registry = registry();
    let ctx = Ctx::trusted().with_user("span-logs");
    let result = registry.call("span.logs", "{}", &ctx).await.unwrap();
    assert_eq!(result.content, "logged");
    let (_, span) = call_of("span-logs");
    let logged = span
        .events
        .iter()
        .filter(|target| **target == "tool_registry::tool_log")
        .count();
    assert_eq!(
        logged, 2,
        "each message is one event inside the call's span: {span:#?}"
    );
}

#[tokio::test]
async fn a_request_turns_the_annotation_log_off_or_on_for_its_own_calls() {
    let registry = registry();
    let logged = |user: &str| {
        call_of(user)
            .1
            .events
            .contains(&"tool_registry::annotations")
    };
    let plain = Ctx::new().with_user("annotations-default");
    registry
        .call("span.echo", json!({"text": "a"}), &plain)
        .await
        .unwrap();
    assert!(
        logged("annotations-default"),
        "the registry logs them by default"
    );
    let quiet = Ctx::new()
        .with_user("annotations-off")
        .with_annotation_log(false);
    registry
        .call("span.echo", json!({"text": "a"}), &quiet)
        .await
        .unwrap();
    assert!(!logged("annotations-off"), "this request said no");
    let quiet_registry = Registry::builder().log_annotations(false).build().unwrap();
    let asked = Ctx::new()
        .with_user("annotations-on")
        .with_annotation_log(true);
    quiet_registry
        .call("span.echo", json!({"text": "a"}), &asked)
        .await
        .unwrap();
    assert!(logged("annotations-on"), "this request asked for them");
}
