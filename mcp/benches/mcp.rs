//! The registry over MCP beside rmcp's own macro-routed server of the same tools, each reached by
//! rmcp's client over an in-process pipe (`tokio::io::duplex`, the `initialize` era):
//!
//! - `mcp/call`: a `tools/call` round trip of `echo_0500` to our [`McpServer`] (`ours`) and to
//!   the macro-routed server (`rmcp_macros`), against a direct call of the same tool in the
//!   registry (`direct`, the baseline);
//! - `mcp/handler`: the same call without a transport: each server's `call_tool` handler
//!   called with a request context made for the call, and the registry's call of the tool with
//!   the arguments as text (`registry_text`);
//! - `peers/add`: the text path beside its peers: `Registry::call` of the trivial linked `add`
//!   with its arguments as text, rmcp's handler of the same tool (the text read into rmcp's
//!   arguments object, then `call_tool`), and a hand-written `match` over serde;
//! - `mcp/list_1000`: `tools/list` of 1,000 tools for one caller, to each server, against the
//!   registry's own cached MCP list (`direct`).
//!
//! Both servers have the same 1,000 tools, `echo_0000` to `echo_0999`, each answering its
//! arguments as JSON text under the same description and input schema (`echo/mod.rs`). Ours is a
//! registry of run-time tools behind a trusted caller's scope. The macro-routed one,
//! [`MacroEcho`], is written as rmcp's examples write a server: its one tool, `echo`, is a
//! `#[tool]` fn taking `Parameters<EchoArgs>` in a `#[tool_router]` impl, and
//! `#[tool_handler(router = self.tool_router)] impl ServerHandler` answers `tools/list` and
//! `tools/call` from the `ToolRouter<Self>` in its field. 1,000 tools cannot be written by hand,
//! so that router is built from the one `#[tool_router]` generates: its `echo` route (the
//! generated handler, which reads `Parameters<EchoArgs>` and calls the fn) is cloned 1,000
//! times into `ToolRouter::new()` with `add_route`, each clone's `Tool` renamed `echo_NNNN` and
//! given the shared description and input schema. Every call thus runs the macro's handler.
//!
//! Both servers are checked to give the same answer before anything is measured: the same 1,000
//! tool names with the same descriptions and input schemas, and the same echo content.
//!
//! - `mcp/image_1mib`: a tool answering a 1 MiB PNG and a small value, served: `serve` is the
//!   call and the line our server writes on stdio for it (the result message, rmcp's
//!   `CallToolResult`, the JSON-RPC line: `mcp::bench::mcp_stdio_answer`), `round_trip` the whole
//!   `tools/call` from rmcp's client over the pipe to our server on its stdio transport
//!   (`mcp::bench::mcp_serve_lines`; the client reads the line and the base64 back),
//!   and `baseline` what the answer cannot cost less than: the 1 MiB base64-encoded, and the
//!   text copied once.
//!
//! Run with `cargo bench -p tool-registry-mcp --bench mcp`; docs/PERFORMANCE.md has the figures.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

// The linked `add` and its hand-written dispatch.
mod common;
// The bare echo server both benchmarks compare with, kept once beside the HTTP benchmark.
#[path = "../../http/benches/echo/mod.rs"]
mod echo;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject,
    NumberOrString, Tool,
};
use rmcp::service::{Peer, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ErrorData, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde_json::{Value, json};
use tool_registry::format::Provider;
use tool_registry::mcp::McpServer;
use tool_registry::{Ctx, Registry, Scope};

/// The runtime both sides of each pipe run on: two workers, as the machine has two cores.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30)
}

/// The 1,000 tool names both servers have.
fn names() -> impl Iterator<Item = String> {
    (0..1000).map(|i| format!("echo_{i:04}"))
}

/// The arguments of the macro-routed `echo`.
#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// What to echo
    text: String,
}

/// rmcp's macro-routed server of the echo tools (see the top of this file for how its 1,000
/// routes are made).
#[derive(Clone)]
struct MacroEcho {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl MacroEcho {
    /// Answer the arguments as they came.
    #[tool]
    async fn echo(
        &self,
        Parameters(args): Parameters<EchoArgs>,
    ) -> Result<ContentBlock, ErrorData> {
        ContentBlock::json(args)
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MacroEcho {}

impl MacroEcho {
    /// The generated `echo` route under each of `names`.
    fn new(names: impl Iterator<Item = String>) -> Self {
        let echo = Self::tool_router()
            .into_iter()
            .next()
            .expect("`#[tool_router]` made the `echo` route");
        let Value::Object(schema) = echo::input_schema() else {
            unreachable!("the echo tools' input schema is an object")
        };
        let schema: Arc<JsonObject> = Arc::new(schema);
        let mut tool_router = ToolRouter::new();
        for name in names {
            let mut route = echo.clone();
            route.attr.name = name.into();
            route.attr.description = Some(echo::DESCRIPTION.into());
            route.attr.input_schema = schema.clone();
            tool_router.add_route(route);
        }
        Self { tool_router }
    }
}

/// The arguments of rmcp's `add`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first addend
    a: i64,
    /// The second addend
    b: i64,
}

/// rmcp's macro-routed server of the trivial `add`, as its examples write a tool.
#[derive(Clone)]
struct MacroAdd {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl MacroAdd {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Add two integers.
    #[tool]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> String {
        a.saturating_add(b).to_string()
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for MacroAdd {}

/// A client session with `server` over an in-process pipe; the server runs on the runtime.
async fn connect<S: ServerHandler>(server: S) -> RunningService<RoleClient, ()> {
    connect_with_peer(server).await.0
}

/// [`connect`], and the server's side of the session: what a handler's request context holds.
async fn connect_with_peer<S: ServerHandler>(
    server: S,
) -> (RunningService<RoleClient, ()>, Peer<RoleServer>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 20);
    let (peer_tx, peer_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let running = server.serve(tokio::io::split(server_end)).await.unwrap();
        let _ = peer_tx.send(running.peer().clone());
        let _ = running.waiting().await;
    });
    let client = ().serve(tokio::io::split(client_end)).await.unwrap();
    (client, peer_rx.await.unwrap())
}

/// What a listed tool says of itself: its name, description and input schema.
fn described(tools: Vec<Tool>) -> Vec<(String, Option<String>, JsonObject)> {
    tools
        .into_iter()
        .map(|tool| {
            let description = tool.description.map(|d| d.into_owned());
            (
                tool.name.into_owned(),
                description,
                (*tool.input_schema).clone(),
            )
        })
        .collect()
}

/// What a call answered: its content and whether it failed.
fn answered(result: &CallToolResult) -> (Value, bool) {
    let content = serde_json::to_value(&result.content).unwrap();
    (content, result.is_error.unwrap_or(false))
}

fn mcp(c: &mut Criterion) {
    let runtime = runtime();
    let registry: Arc<Registry> = echo::echo_registry(names());
    let (ours, theirs, peer) = runtime.block_on(async {
        let ours = connect(McpServer::new(registry.clone(), Scope::trusted())).await;
        let (theirs, peer) = connect_with_peer(MacroEcho::new(names())).await;
        (ours, theirs, peer)
    });
    let arguments = serde_json::json!({"text": "the quick brown fox"})
        .as_object()
        .unwrap()
        .clone();
    let call = || CallToolRequestParams::new("echo_0500").with_arguments(arguments.clone());
    let ctx = Ctx::new();

    // The same answer from both servers, before anything is measured.
    let (our_call, their_call) = runtime.block_on(async {
        let ours = ours.call_tool(call()).await.unwrap();
        let theirs = theirs.call_tool(call()).await.unwrap();
        (ours, theirs)
    });
    assert_eq!(answered(&our_call), answered(&their_call));
    assert_eq!(
        answered(&our_call),
        (
            serde_json::json!([{"type": "text", "text": r#"{"text":"the quick brown fox"}"#}]),
            false
        )
    );
    let (our_list, their_list) = runtime.block_on(async {
        let ours = ours.list_all_tools().await.unwrap();
        let theirs = theirs.list_all_tools().await.unwrap();
        (described(ours), described(theirs))
    });
    assert_eq!(our_list.len(), 1000);
    assert_eq!(our_list, their_list);

    let mut group = c.benchmark_group("mcp/call");
    group.bench_function("direct", |b| {
        b.iter(|| {
            runtime.block_on(
                registry
                    .call(
                        "echo_0500",
                        black_box(Value::Object(arguments.clone())),
                        &ctx,
                    )
                    .for_model(),
            )
        })
    });
    group.bench_function("ours", |b| {
        b.iter(|| runtime.block_on(ours.call_tool(black_box(call()))).unwrap())
    });
    group.bench_function("rmcp_macros", |b| {
        b.iter(|| {
            runtime
                .block_on(theirs.call_tool(black_box(call())))
                .unwrap()
        })
    });
    group.finish();

    // The handlers alone, no transport: each server's `call_tool` with a request context made
    // for the call (what rmcp's service hands a handler), and the registry's own call of the
    // same tool with the arguments as text.
    let (our_server, their_server) = (
        McpServer::new(registry.clone(), Scope::trusted()),
        MacroEcho::new(names()),
    );
    let context = || RequestContext::new(NumberOrString::Number(1), peer.clone());
    let text = serde_json::to_string(&arguments).unwrap();
    let (our_answer, their_answer) = runtime.block_on(async {
        let ours = our_server.call_tool(call(), context()).await.unwrap();
        let theirs = their_server.call_tool(call(), context()).await.unwrap();
        (ours, theirs)
    });
    let complete = |response: CallToolResponse| match response {
        CallToolResponse::Complete(result) => answered(&result),
        other => panic!("{other:?}"),
    };
    assert_eq!(complete(our_answer), complete(their_answer));
    let mut group = c.benchmark_group("mcp/handler");
    group.bench_function("registry_text", |b| {
        b.iter(|| {
            runtime.block_on(
                registry
                    .call("echo_0500", black_box(text.as_str()), &ctx)
                    .for_model(),
            )
        })
    });
    group.bench_function("ours", |b| {
        b.iter(|| {
            runtime
                .block_on(our_server.call_tool(black_box(call()), context()))
                .unwrap()
        })
    });
    group.bench_function("rmcp_macros", |b| {
        b.iter(|| {
            runtime
                .block_on(their_server.call_tool(black_box(call()), context()))
                .unwrap()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("mcp/list_1000");
    group.bench_function("direct", |b| {
        b.iter(|| registry.provider_tools(Provider::Mcp, black_box(&Scope::trusted())))
    });
    group.bench_function("ours", |b| {
        b.iter(|| runtime.block_on(ours.list_all_tools()).unwrap())
    });
    group.bench_function("rmcp_macros", |b| {
        b.iter(|| runtime.block_on(theirs.list_all_tools()).unwrap())
    });
    group.finish();
}

/// The text path against its peers: `Registry::call` of the trivial linked `add` with its
/// arguments as text (`registry_text`), rmcp's handler of the same tool (`rmcp_handler`: the
/// text read into the arguments object rmcp takes, and `call_tool` with a request context made
/// for the call), and a hand-written `match` over serde (`hand_written`), all on one
/// single-threaded executor inside the runtime's context.
fn peers(c: &mut Criterion) {
    use common::block_on;

    let runtime = runtime();
    let (_client, peer) = runtime.block_on(connect_with_peer(MacroAdd::new()));
    let _entered = runtime.enter();
    let server = MacroAdd::new();
    let registry = Registry::global();
    let ctx = Ctx::new().with_user("alice");
    let text = r#"{"a": 20, "b": 22}"#;
    let rmcp_call = |text: &str| {
        let arguments: JsonObject = serde_json::from_str(text).unwrap();
        let params = CallToolRequestParams::new("add").with_arguments(arguments);
        server.call_tool(
            params,
            RequestContext::new(NumberOrString::Number(1), peer.clone()),
        )
    };
    // The same sum from each.
    let ours = block_on(registry.call("add", text, &ctx)).unwrap();
    assert_eq!(ours.content, json!(42));
    let by_hand = block_on(common::hand_written("add", text, &ctx)).unwrap();
    assert_eq!(by_hand, json!(42));
    let CallToolResponse::Complete(theirs) = block_on(rmcp_call(text)).unwrap() else {
        panic!("rmcp's add did not complete");
    };
    assert_eq!(answered(&theirs).0, json!([{"type": "text", "text": "42"}]));

    let mut group = c.benchmark_group("peers/add");
    group.bench_function("hand_written", |b| {
        b.iter(|| block_on(common::hand_written("add", black_box(text), &ctx)))
    });
    group.bench_function("registry_text", |b| {
        b.iter(|| block_on(registry.call("add", black_box(text), &ctx)))
    });
    group.bench_function("rmcp_handler", |b| {
        b.iter(|| block_on(rmcp_call(black_box(text))))
    });
    group.finish();
}

fn image(c: &mut Criterion) {
    use base64::Engine as _;
    let runtime = runtime();
    let (registry, png) = tool_registry::bench::picture_registry(1 << 20);
    let registry = Arc::new(registry);
    // Our server on its own transport, as `toolreg mcp` runs on stdio.
    let server = McpServer::new(registry.clone(), Scope::trusted());
    let client = runtime.block_on(async {
        let (client_end, server_end) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            let (input, output) = tokio::io::split(server_end);
            let _ = tool_registry::mcp::bench::mcp_serve_lines(server, input, output).await;
        });
        ().serve(tokio::io::split(client_end)).await.unwrap()
    });
    let ctx = Ctx::new();
    let serve = || async {
        let result = registry.call("picture", json!({}), &ctx).for_model().await;
        tool_registry::mcp::bench::mcp_stdio_answer(&registry, "picture", &result, 7).unwrap()
    };
    let call = || CallToolRequestParams::new("picture");

    // The client reads back the very bytes, before anything is measured.
    let answer = runtime.block_on(client.call_tool(call())).unwrap();
    let image = answer.content[1].as_image().unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    assert_eq!(decoded, png);
    assert_eq!(answer.structured_content, Some(json!({"bytes": 1 << 20})));

    let mut group = c.benchmark_group("mcp/image_1mib");
    group.bench_function("baseline", |b| {
        b.iter(|| {
            let text = base64::engine::general_purpose::STANDARD.encode(black_box(&png));
            black_box(text.as_bytes().to_vec())
        })
    });
    group.bench_function("serve", |b| b.iter(|| runtime.block_on(serve())));
    group.bench_function("round_trip", |b| {
        b.iter(|| {
            runtime
                .block_on(client.call_tool(black_box(call())))
                .unwrap()
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = mcp, peers, image
}
criterion_main!(benches);
