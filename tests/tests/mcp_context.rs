//! What a tool asks of its MCP client (`Ctx::ask`, `Ctx::sample`, `Ctx::release_stream`),
//! against clients that answer badly: a form answer that does not match the form, a client
//! without the capability, a client that never answers, a 10 MB completion, and a reconnect
//! with a forged `Last-Event-ID`; on the 2026-07-28 revision, questions as `input_required`
//! results whose `requestState` is refused when changed, replayed, expired or another caller's,
//! an answer of the wrong schema, and 10,000 questions left pending. The server is the registry's own MCP server over streamable
//! HTTP on a free loopback port, started and stopped by each test; the clients are rmcp's
//! streamable HTTP client with a hostile handler, and requests written by hand.

// Sampling is deprecated by the 2026-07-28 revision; clients of the `initialize` era use it.
#![allow(deprecated)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ClientInfo, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ErrorData,
};
use rmcp::service::{RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tool_registry::call::{AskError, Form, FormAnswer, Sampling};
use tool_registry::mcp::{Callers, McpServer};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, Scope, ToolError, ToolSpec};

#[path = "../../tools/tests/common/redis.rs"]
mod redis;

/// Held shared by every test of this file, and alone by the one that measures the process's
/// memory, so that no other test's allocations blur its figure.
static EXCLUSIVE: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

async fn shared() -> tokio::sync::RwLockReadGuard<'static, ()> {
    EXCLUSIVE.read().await
}

/// How a hostile client answers the server's requests.
#[derive(Clone, Copy, PartialEq)]
enum Hostile {
    /// Declares elicitation and sampling; answers a form with fields of the wrong types.
    WrongTypes,
    /// Declares nothing.
    Declares,
    /// Declares elicitation and never answers.
    Silent,
    /// Declares sampling and answers with 10 MB of text.
    Huge,
    /// Declares sampling and answers with 2 MB of text: read, and over the 1 MiB a completion
    /// may hold.
    Big,
}

/// How many `notifications/cancelled` the hostile clients heard (only a silent client's wait is
/// ever given up in these tests).
static CANCELLED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl ClientHandler for Hostile {
    async fn on_cancelled(
        &self,
        _params: rmcp::model::CancelledNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        CANCELLED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    fn get_info(&self) -> ClientInfo {
        let capabilities = match self {
            Self::Declares => json!({}),
            _ => json!({"elicitation": {}, "sampling": {}}),
        };
        serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": capabilities,
            "clientInfo": {"name": "hostile", "version": "1"}
        }))
        .unwrap()
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if *self == Self::Silent {
            std::future::pending::<()>().await;
        }
        Ok(serde_json::from_value(json!({
            "action": "accept",
            "content": {"name": 42, "extra": "not in the form"}
        }))
        .unwrap())
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let text = "x".repeat(if *self == Self::Big {
            2 << 20
        } else {
            10 << 20
        });
        Ok(serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": text},
            "model": "hostile-model",
            "stopReason": "endTurn"
        }))
        .unwrap())
    }
}

/// A tool's error as the test reads it: the `Debug` of the [`AskError`].
fn failed(error: AskError) -> ToolError {
    ToolError::failed(format!("{error:?}"))
}

/// The registry of the tools that ask: `ask_name` (a form with one required string),
/// `sample` (a completion), `release` (lets go of its stream, then answers).
fn registry() -> Arc<Registry> {
    registry_on(Registry::builder().without_linked())
}

/// [`registry`] built from `builder`.
fn registry_on(builder: tool_registry::RegistryBuilder) -> Arc<Registry> {
    let registry = builder.build().unwrap();
    let spec = |name: &str| {
        ToolSpec::builder(name)
            .description("A tool that asks its client.")
            .timeout(Duration::from_secs(1))
            .build()
            .unwrap()
    };
    registry
        .register(
            spec("ask_name"),
            ToolHandler::new(|_: Value, ctx: Ctx| async move {
                let form = Form::new(
                    "Your name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                )
                .map_err(failed)?;
                match ctx.ask(form).await.map_err(failed)? {
                    FormAnswer::Accepted(fields) => Ok::<_, ToolError>(Value::Object(fields)),
                    other => Ok(json!(other.action())),
                }
            }),
        )
        .unwrap();
    registry
        .register(
            spec("sample"),
            ToolHandler::new(|_: Value, ctx: Ctx| async move {
                let sampled = ctx.sample(Sampling::new("hi")).await.map_err(failed)?;
                Ok::<_, ToolError>(sampled.text.map_or(0, |text| text.len()))
            }),
        )
        .unwrap();
    let confirmed = ToolSpec::builder("approve_then_ask")
        .description("Needs a person's approval, then asks its client.")
        .requires_confirmation(true)
        .timeout(Duration::from_secs(1))
        .build()
        .unwrap();
    registry
        .register(
            confirmed,
            ToolHandler::new(|_: Value, ctx: Ctx| async move {
                let form = Form::new("Why?", json!({"type": "object", "properties": {}}))
                    .map_err(failed)?;
                Ok::<_, ToolError>(json!(ctx.ask(form).await.map_err(failed)?.action()))
            }),
        )
        .unwrap();
    registry
        .register(
            spec("release"),
            ToolHandler::new(|_: Value, ctx: Ctx| async move {
                let released = ctx.release_stream();
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok::<_, String>(format!("answered after release: {released}"))
            }),
        )
        .unwrap();
    Arc::new(registry)
}

/// The MCP server on a free loopback port, stopped when dropped.
struct Served {
    url: String,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

async fn serve() -> Served {
    serve_with(Callers::new(), tool_registry::mcp::STATE_TTL).await
}

async fn connect(served: &Served, client: Hostile) -> RunningService<RoleClient, Hostile> {
    client
        .serve(StreamableHttpClientTransport::from_uri(served.url.clone()))
        .await
        .unwrap()
}

/// Calls `tool`; its answer's text and whether it is an error.
async fn call(client: &RunningService<RoleClient, Hostile>, tool: &str) -> (String, bool) {
    let result = client
        .call_tool(CallToolRequestParams::new(tool.to_owned()))
        .await
        .unwrap();
    let text = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    (text, result.is_error == Some(true))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_does_not_match_the_form_is_a_typed_error() {
    let _shared = shared().await;
    let served = serve().await;
    let client = connect(&served, Hostile::WrongTypes).await;
    let (text, is_error) = call(&client, "ask_name").await;
    assert!(is_error, "{text}");
    assert!(text.contains("Mismatch"), "{text}");
    assert!(text.contains("/name"), "the error names the field: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_the_capability_is_not_asked_and_the_call_does_not_wait() {
    let _shared = shared().await;
    let served = serve().await;
    let client = connect(&served, Hostile::Declares).await;
    // Refused as unsupported, not ended by the call's timeout.
    for tool in ["ask_name", "sample"] {
        let (text, is_error) = call(&client, tool).await;
        assert!(is_error, "{text}");
        assert!(text.contains("Unsupported"), "{tool}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_answers_holds_the_call_only_until_its_timeout() {
    let _shared = shared().await;
    let served = serve().await;
    let client = connect(&served, Hostile::Silent).await;
    let started = Instant::now();
    let (text, is_error) = call(&client, "ask_name").await;
    let took = started.elapsed();
    assert!(is_error, "{text}");
    assert!(
        text.contains("timed out") || text.contains("timeout"),
        "{text}"
    );
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(30),
        "the call ended after {took:?}, its timeout is 1 s"
    );
    // The question given up is cancelled at the client, which stops asking its user.
    let waited = Instant::now();
    while CANCELLED.load(std::sync::atomic::Ordering::SeqCst) == 0 {
        assert!(
            waited.elapsed() < Duration::from_secs(10),
            "no cancellation came"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The server goes on: the next call is answered.
    let (text, _) = call(&client, "release").await;
    assert!(text.contains("answered after release"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_completion_is_refused_at_once_as_too_large() {
    let _shared = shared().await;
    let served = serve().await;
    let client = connect(&served, Hostile::Huge).await;
    // Refused as too large (the server reads 4 MiB of one message), not ended by the call's
    // timeout.
    let (text, is_error) = call(&client, "sample").await;
    assert!(is_error, "{text}");
    assert!(text.contains("TooLarge"), "{text}");
    assert!(text.contains("bytes: None, limit: 4194304"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_read_but_over_its_bound_is_too_large_with_its_size() {
    let _shared = shared().await;
    let served = serve().await;
    let client = connect(&served, Hostile::Big).await;
    let (text, is_error) = call(&client, "sample").await;
    assert!(is_error, "{text}");
    assert!(text.contains("TooLarge"), "{text}");
    // Its size as compact JSON: the text, its quotes and `{"type":"text","text":...}`.
    let size = (2 << 20) + r#"{"type":"text","text":""}"#.len();
    assert!(
        text.contains(&format!("bytes: Some({size}), limit: 1048576")),
        "{text}"
    );
}

/// An MCP client speaking streamable HTTP by hand (the 2025-11-25 revision).
struct Raw {
    http: reqwest::Client,
    url: String,
}

impl Raw {
    /// A session opened: `initialize`, then `notifications/initialized`.
    async fn open(&self) -> String {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "raw", "version": "1"}}
        });
        let answer = self.post(None, init).await;
        let session = answer
            .headers()
            .get("mcp-session-id")
            .unwrap()
            .to_str()
            .unwrap()
            .to_owned();
        let _ = answer.text().await;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(Some(&session), initialized).await.status(), 202);
        session
    }

    async fn post(&self, session: Option<&str>, body: Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send().await.unwrap()
    }

    /// A `GET` resuming after `last_event_id`: the status and the whole body.
    async fn resume(&self, session: &str, last_event_id: &str) -> (u16, String) {
        let response = self
            .http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        let body = tokio::time::timeout(Duration::from_secs(10), response.text())
            .await
            .expect("the resumed stream ends")
            .unwrap();
        (status, body)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_stream_is_resumed_in_its_session_only_and_a_forged_id_is_refused() {
    let _shared = shared().await;
    let served = serve().await;
    let raw = Raw {
        http: reqwest::Client::new(),
        url: served.url.clone(),
    };
    let (mine, other) = (raw.open().await, raw.open().await);
    let call = json!({
        "jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "release", "arguments": {}}
    });
    let released = raw.post(Some(&mine), call).await.text().await.unwrap();
    // The stream ended before the answer, after its priming event: an id and `retry`.
    assert!(!released.contains("answered after release"), "{released}");
    assert!(released.contains("retry:"), "{released}");
    let last = released
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("id:"))
        .expect("an event id")
        .trim()
        .to_owned();
    // Another session naming this stream, and ids that name nothing: refused, nothing read.
    for (session, id) in [
        (&other, last.as_str()),
        (&mine, "999/999"),
        (&mine, "../../../etc/passwd"),
        (&mine, &"9".repeat(4000)),
    ] {
        let (status, body) = raw.resume(session, id).await;
        assert_eq!(status, 400, "{id}: {body}");
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["error"]["code"], -32600, "{body}");
        assert!(!body.contains("answered after release"), "{body}");
    }
    // Its own session reads the rest: the answer.
    let (status, body) = raw.resume(&mine, &last).await;
    assert_eq!(status, 200, "{body}");
    let answer = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == 7)
        .unwrap_or_else(|| panic!("the answer after resuming: {body}"));
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(text, "answered after release: true");
}

/// The MCP server on a free loopback port for `callers`, its `requestState`s good for `ttl`.
async fn serve_with(callers: Callers, ttl: Duration) -> Served {
    serve_registry(registry(), callers, ttl).await
}

/// The MCP server of `registry` on a free loopback port.
async fn serve_registry(registry: Arc<Registry>, callers: Callers, ttl: Duration) -> Served {
    let (bound_tx, bound) = oneshot::channel();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        McpServer::new(registry, Scope::trusted())
            .request_state_ttl(ttl)
            .serve_http_until(
                callers,
                "127.0.0.1:0",
                |addr| {
                    let _ = bound_tx.send(addr);
                },
                async {
                    let _ = stopped.await;
                },
            )
            .await
            .unwrap();
    });
    let addr = bound.await.unwrap();
    Served {
        url: format!("http://{addr}/mcp"),
        stop: Some(stop),
    }
}

/// A request of the stateless revision written by hand, from a client that declares
/// elicitation and sampling: the message that answers it (a JSON body, or its SSE event).
async fn stateless(url: &str, token: &str, method: &str, name: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}},
    });
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let text = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .header("mcp-name", name)
        .bearer_auth(token)
        .body(body.to_string())
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    if let Ok(message) = serde_json::from_str::<Value>(&text) {
        return message;
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|message| message["id"] == 1)
        .unwrap_or_else(|| panic!("no answer in {text}"))
}

/// `ask_name` called by the caller of `token` with `responses` and `state`: its answer.
async fn ask_name(url: &str, token: &str, responses: Option<Value>, state: Option<&str>) -> Value {
    call_asking(url, token, "ask_name", responses, state).await
}

/// `tool` called by the caller of `token` with `responses` and `state`: its answer.
async fn call_asking(
    url: &str,
    token: &str,
    tool: &str,
    responses: Option<Value>,
    state: Option<&str>,
) -> Value {
    let mut params = json!({"name": tool, "arguments": {}});
    if let Some(responses) = responses {
        params["inputResponses"] = responses;
    }
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    stateless(url, token, "tools/call", tool, params).await
}

/// A first round of `ask_name` for the caller of `token`: the question's key and the state.
async fn first_round(url: &str, token: &str) -> (String, String) {
    let answer = ask_name(url, token, None, None).await;
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    let (key, question) = result["inputRequests"]
        .as_object()
        .unwrap()
        .iter()
        .next()
        .unwrap();
    assert_eq!(question["method"], "elicitation/create", "{answer}");
    assert_eq!(question["params"]["message"], "Your name?", "{answer}");
    (
        key.clone(),
        result["requestState"].as_str().unwrap().to_owned(),
    )
}

fn named(key: &str, name: Value) -> Value {
    json!({key: {"action": "accept", "content": {"name": name}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_is_asked_by_input_required_results_sealed_bound_expiring_and_used_once() {
    let _shared = shared().await;
    let callers = Callers::new()
        .with("ann-token", Scope::user("ann"))
        .with("bob-token", Scope::user("bob"));
    let served = serve_with(callers, Duration::from_secs(1)).await;
    let url = served.url.as_str();
    let refused = |answer: &Value| {
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState"),
            "{answer}"
        );
        answer["error"].clone()
    };

    // The answer runs the call once; the same state again is refused.
    let (key, state) = first_round(url, "ann-token").await;
    assert_eq!(key, "q1");
    let done = ask_name(
        url,
        "ann-token",
        Some(named(&key, json!("Ada"))),
        Some(&state),
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Ada"),
        "{done}"
    );
    let replayed = refused(
        &ask_name(
            url,
            "ann-token",
            Some(named(&key, json!("Eve"))),
            Some(&state),
        )
        .await,
    );

    // A changed state, another caller's, and an expired one: the same error as a replay.
    let (key, state) = first_round(url, "ann-token").await;
    let mut tampered = state.clone();
    let last = tampered.pop().unwrap();
    tampered.push(if last == 'A' { 'B' } else { 'A' });
    let changed = refused(
        &ask_name(
            url,
            "ann-token",
            Some(named(&key, json!("Ada"))),
            Some(&tampered),
        )
        .await,
    );
    let stolen = refused(
        &ask_name(
            url,
            "bob-token",
            Some(named(&key, json!("Bob"))),
            Some(&state),
        )
        .await,
    );
    let (key, state) = first_round(url, "ann-token").await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let expired = refused(
        &ask_name(
            url,
            "ann-token",
            Some(named(&key, json!("Ada"))),
            Some(&state),
        )
        .await,
    );
    assert!(
        replayed == changed && changed == stolen && stolen == expired,
        "{replayed} {changed} {stolen} {expired}"
    );

    // An answer of the wrong schema is the tool's typed error, not a run with bad data.
    let (key, state) = first_round(url, "ann-token").await;
    let wrong = ask_name(url, "ann-token", Some(named(&key, json!(5))), Some(&state)).await;
    assert_eq!(wrong["result"]["isError"], true, "{wrong}");
    assert!(
        wrong["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Mismatch"),
        "{wrong}"
    );
    // An answer that is no result object at all is refused before the tool runs.
    let (key, state) = first_round(url, "ann-token").await;
    let not_an_object = ask_name(url, "ann-token", Some(json!({key: 12345})), Some(&state)).await;
    assert_eq!(not_an_object["error"]["code"], -32602, "{not_an_object}");
}

/// The resident memory of this process, in kilobytes.
fn resident_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_pending_questions_of_one_caller_keep_nothing_on_the_server() {
    let _alone = EXCLUSIVE.write().await;
    let served = serve_with(
        Callers::new().with("ann-token", Scope::user("ann")),
        Duration::from_secs(600),
    )
    .await;
    let url = served.url.clone();
    let round = |n: usize| {
        let url = url.clone();
        async move {
            for _ in 0..n {
                let answer = ask_name(&url, "ann-token", None, None).await;
                assert_eq!(answer["result"]["resultType"], "input_required", "{answer}");
            }
        }
    };
    // Warm up: buffers, the codec, the allocator's arenas.
    futures::future::join_all((0..8).map(|_| round(50))).await;
    let before = resident_kb();
    futures::future::join_all((0..16).map(|_| round(625))).await;
    let grown = resident_kb().saturating_sub(before);
    // A question that waits costs the server nothing: its state is the client's to keep.
    assert!(
        grown < 16 * 1024,
        "10,000 pending questions grew the process by {grown} kB"
    );
}

#[tokio::test]
async fn a_local_call_that_asks_or_samples_gets_no_client_at_once() {
    let _shared = shared().await;
    let registry = registry();
    let ctx = Ctx::new();
    for tool in ["ask_name", "sample"] {
        let result = registry.call(tool, json!({}), &ctx).await;
        let error = result.unwrap_err().to_string();
        assert!(error.contains("NoClient"), "{tool}: {error}");
    }
    let result = registry.call("release", json!({}), &ctx).await.unwrap();
    assert_eq!(result.content, json!("answered after release: false"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_asked_on_one_instance_of_a_fleet_is_answered_on_another() {
    let _shared = shared().await;
    let redis = redis::Redis::start();
    use tool_registry::redis::FleetBuilder;
    let fleet = || {
        tool_registry::redis::Fleet::new(&redis.url)
            .unwrap()
            .prefix("rounds")
    };
    let callers = || Callers::new().with("ann-token", Scope::user("ann"));
    let ttl = tool_registry::mcp::STATE_TTL;
    let one = serve_registry(
        registry_on(Registry::builder().without_linked().redis(&fleet())),
        callers(),
        ttl,
    )
    .await;
    let two = serve_registry(
        registry_on(Registry::builder().without_linked().redis(&fleet())),
        callers(),
        ttl,
    )
    .await;
    // Asked on one instance, answered on the other: no session, no affinity.
    let (key, state) = first_round(&one.url, "ann-token").await;
    let done = ask_name(
        &two.url,
        "ann-token",
        Some(named(&key, json!("Ada"))),
        Some(&state),
    )
    .await;
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert!(
        done["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Ada"),
        "{done}"
    );
    // A server of another key does not take the fleet's states.
    let stranger = serve_with(callers(), ttl).await;
    let (key, state) = first_round(&one.url, "ann-token").await;
    let refused = ask_name(
        &stranger.url,
        "ann-token",
        Some(named(&key, json!("Eve"))),
        Some(&state),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_approved_then_asking_on_the_stateless_revision_ends_with_a_typed_refusal() {
    let _shared = shared().await;
    let callers = Callers::new().with("ann-token", Scope::user("ann"));
    let served = serve_with(callers, tool_registry::mcp::STATE_TTL).await;
    let url = served.url.as_str();
    let call =
        |responses, state| call_asking(url, "ann-token", "approve_then_ask", responses, state);
    let asked = call(None, None).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    assert!(
        asked["result"]["inputRequests"]["confirm"].is_object(),
        "{asked}"
    );
    let state = asked["result"]["requestState"].as_str().unwrap().to_owned();
    let yes = json!({"confirm": {"action": "accept", "content": {"approve": true}}});
    let refused = call(Some(yes), Some(&state)).await;
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    let text = refused["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("cannot do both"), "{text}");
}
