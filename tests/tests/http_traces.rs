//! One trace across a gateway and its module: every call is an `execute_tool` span named and
//! fielded as OpenTelemetry's generative-AI conventions ask, and the module's spans continue
//! the gateway's trace through the `traceparent` header (real HTTP on loopback).

use std::sync::Arc;

use opentelemetry::trace::{SpanKind, TracerProvider as _};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use tool_registry::ToolSpec;
use tool_registry::http::{Gateway, MemoryManifestCache, Module, ModuleMap, Server};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, Scope};
use tracing_subscriber::layer::SubscriberExt;

fn attribute(span: &SpanData, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| kv.value.to_string())
}

fn module_registry() -> Arc<Registry> {
    let registry = Registry::builder().without_linked().build().unwrap();
    let echo = ToolSpec::builder("echo")
        .description("Answer the arguments.")
        .build()
        .unwrap();
    registry
        .register(
            echo,
            ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
        )
        .unwrap();
    let fail = ToolSpec::builder("fail")
        .description("Always fails.")
        .build()
        .unwrap();
    registry
        .register(
            fail,
            ToolHandler::new(|_args: Value, _ctx: Ctx| async move { Err::<Value, _>("it broke") }),
        )
        .unwrap();
    Arc::new(registry)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_call_and_the_module_work_are_one_trace() {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("tests")));
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let server = Server::new(module_registry())
        .name("m")
        .token("trace-secret");
    let listener = server.bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let serving = tokio::spawn(server.serve_on(listener, std::future::pending()));

    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    Gateway::builder(
        registry.clone(),
        ModuleMap::new().with("m", Module::new(&addr).token("trace-secret")),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap()
    .start()
    .await;
    let ctx = Ctx::for_scope(Scope::user("alice"));
    let ok = registry
        .call(
            "m.echo",
            json!({"x": 1}),
            &ctx.clone().with_call_id("call_7"),
        )
        .await
        .unwrap();
    assert_eq!(ok.content, json!({"x": 1}));
    let failed = registry.call("m.fail", json!({}), &ctx).await.unwrap_err();
    assert_eq!(failed.code(), "handler_error");
    serving.abort();
    provider.force_flush().unwrap();

    let spans = exporter.get_finished_spans().unwrap();
    let named =
        |name: &str| -> Vec<&SpanData> { spans.iter().filter(|s| s.name == name).collect() };
    let gateway_ok = named("execute_tool m.echo");
    let module_ok = named("execute_tool echo");
    let requests = named("POST /execute");
    assert_eq!(
        gateway_ok.len(),
        1,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    assert_eq!(module_ok.len(), 1);
    assert_eq!(requests.len(), 2);
    let (gateway_ok, module_ok) = (gateway_ok[0], module_ok[0]);

    for span in [gateway_ok, module_ok] {
        assert_eq!(
            attribute(span, "gen_ai.operation.name").as_deref(),
            Some("execute_tool")
        );
        assert_eq!(span.span_kind, SpanKind::Internal);
    }
    assert_eq!(
        attribute(gateway_ok, "gen_ai.tool.name").as_deref(),
        Some("m.echo")
    );
    assert_eq!(
        attribute(module_ok, "gen_ai.tool.name").as_deref(),
        Some("echo")
    );
    assert_eq!(attribute(gateway_ok, "user").as_deref(), Some("alice"));
    assert_eq!(
        attribute(module_ok, "user").as_deref(),
        Some("alice"),
        "the module ran it for alice"
    );
    assert_eq!(attribute(gateway_ok, "error.type"), None);
    assert_eq!(
        attribute(gateway_ok, "gen_ai.tool.call.id").as_deref(),
        Some("call_7")
    );
    assert_eq!(
        attribute(module_ok, "gen_ai.tool.call.id").as_deref(),
        Some("call_7"),
        "the id travels with the call"
    );

    // The module's request continues the gateway's call, and its own call is under it.
    let request = requests
        .iter()
        .find(|r| r.span_context.trace_id() == gateway_ok.span_context.trace_id())
        .expect("the module's request span has the gateway's trace id");
    assert_eq!(request.parent_span_id, gateway_ok.span_context.span_id());
    assert_eq!(request.span_kind, SpanKind::Server);
    assert_eq!(
        module_ok.span_context.trace_id(),
        gateway_ok.span_context.trace_id()
    );
    assert_eq!(module_ok.parent_span_id, request.span_context.span_id());

    // A failure is marked on both sides with its error type.
    let gateway_failed = named("execute_tool m.fail")[0];
    let module_failed = named("execute_tool fail")[0];
    assert_eq!(
        attribute(gateway_failed, "error.type").as_deref(),
        Some("handler_error")
    );
    assert_eq!(
        attribute(module_failed, "error.type").as_deref(),
        Some("handler_error")
    );
    assert_eq!(
        module_failed.span_context.trace_id(),
        gateway_failed.span_context.trace_id()
    );
    assert_ne!(
        gateway_failed.span_context.trace_id(),
        gateway_ok.span_context.trace_id()
    );
}
