//! What a mounted server's answer may cost, across real processes: an MCP server on stdio (this
//! crate's `hostile_mcp`) answering 500,000 `resource_link` blocks, or a value nested 140
//! levels, an HTTP module (an axum stand-in on loopback) answering 300,000 blocks, and an MCP
//! server over streamable HTTP (an axum stand-in on loopback) answering 280,000 or 500,000 in
//! a JSON body, or 280,000 in an SSE event. Each call is `invalid_output` at once, and the
//! memory of the process that reads the answers (this one, or a gateway, this crate's `module`
//! serving a module map) is read from `/proc` before and after three calls: it grows by less
//! than [`BOUND`] at its peak and comes back.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_registry::mcp::McpModule;
use tool_registry::{Ctx, Registry, ToolError};

/// The most three hostile answers may add to the peak resident memory of the process reading
/// them. The MCP server's line (24 MB of links) is counted as it arrives and dropped at the
/// first block past the bound, and no block is built from it; the HTTP module's body (15 MB)
/// is read only up to the first block past the bound.
const BOUND: u64 = 64 << 20;

/// How much more than before the calls the process may hold once they are over.
const SETTLED: u64 = 16 << 20;

/// A call that fails at once, not at its tool's 30 s timeout.
const AT_ONCE: Duration = Duration::from_secs(10);

/// The blocks the MCP server answers.
const MCP_BLOCKS: usize = 500_000;

/// The blocks the HTTP module answers.
const HTTP_BLOCKS: usize = 300_000;

/// Held by every test of this file for its whole run: the tests measure the memory of this
/// process (and reset its peak), which another test's servers and answers, run alongside by
/// `cargo test`, would add to.
static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A line of `/proc/PID/status`, in bytes.
fn status_bytes(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = (status.lines())
        .find_map(|line| line.strip_prefix(key))
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("{key} in /proc/{pid}/status"));
    kib << 10
}

/// What a process holds now, and the most it held since [`Memory::start`].
struct Memory {
    pid: u32,
    before: u64,
}

impl Memory {
    /// Starts measuring process `pid`: its peak is set back to what it holds now where the
    /// kernel allows (`clear_refs`), else the peak so far stands as the start.
    fn start(pid: u32) -> Self {
        let reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok();
        let before = match reset {
            true => status_bytes(pid, "VmRSS:"),
            false => status_bytes(pid, "VmHWM:"),
        };
        Self { pid, before }
    }

    /// The growth at the peak and now, each from before, in bytes; printed.
    fn grown(&self, what: &str) -> (u64, u64) {
        let peak = status_bytes(self.pid, "VmHWM:").saturating_sub(self.before);
        let now = status_bytes(self.pid, "VmRSS:").saturating_sub(self.before);
        eprintln!(
            "{what}: resident {} MiB before, peak +{} MiB, after +{} MiB",
            self.before >> 20,
            peak >> 20,
            now >> 20
        );
        (peak, now)
    }
}

/// Three calls, each timed: what each answered, and how long it took.
async fn three<F, Fut, T>(call: F) -> Vec<(T, Duration)>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut outcomes = Vec::new();
    for _ in 0..std::env::var("CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3)
    {
        let started = Instant::now();
        let outcome = call().await;
        outcomes.push((outcome, started.elapsed()));
    }
    outcomes
}

/// The `hostile_mcp` server, mounted in `registry` as `hostile`.
async fn mount_hostile(registry: &Arc<Registry>) -> McpModule {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_hostile_mcp"));
    McpModule::spawn(Arc::clone(registry), "hostile", command)
        .await
        .expect("the hostile server mounts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_answering_500_000_blocks_costs_the_registry_nothing_and_fails_at_once() {
    let _alone = ALONE.lock().await;
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let _module = mount_hostile(&registry).await;
    let ctx = Ctx::new();
    // A call like any other first, so that what a first call sets up is not counted.
    let small = registry.call("hostile.small", json!({}), &ctx).await;
    assert_eq!(small.unwrap().content, json!("ok"));

    let memory = Memory::start(std::process::id());
    let outcomes = three(|| registry.call("hostile.links", json!({}), &ctx)).await;
    let (peak, after) = memory.grown("500,000 blocks from an MCP server on stdio, three calls");
    for (outcome, took) in &outcomes {
        match outcome {
            Err(ToolError::InvalidOutput { path, message, .. }) => {
                assert!(message.contains("1000"), "{path}: {message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(*took < AT_ONCE, "the call took {took:?}");
    }
    assert!(peak < BOUND, "the peak grew by {} MiB", peak >> 20);
    assert!(
        after < SETTLED,
        "the process stays {} MiB larger",
        after >> 20
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_answer_nested_140_levels_fails_its_call_at_once() {
    let _alone = ALONE.lock().await;
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let _module = mount_hostile(&registry).await;
    let ctx = Ctx::new();
    let started = Instant::now();
    let error = registry
        .call("hostile.deep", json!({}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "invalid_output", "{error}");
    assert!(error.to_string().contains("128 levels"), "{error}");
    assert!(started.elapsed() < AT_ONCE, "{:?}", started.elapsed());
    // The session goes on.
    let small = registry.call("hostile.small", json!({}), &ctx).await;
    assert_eq!(small.unwrap().content, json!("ok"));
}

/// A gateway process: this crate's `module` serving, to guests, the modules of the map
/// `map` (TOML), killed when dropped.
struct Gateway {
    child: Child,
    addr: String,
}

impl Gateway {
    fn start(dir: &Path, map: &str) -> Self {
        std::fs::write(dir.join("map.toml"), map).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_module"))
            .args(["--module-map", "map.toml"])
            .args(["serve", "--http", "127.0.0.1:0", "--module", "gw"])
            .current_dir(dir)
            .env("TOOLREG_MODULE_TOKEN", "")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the module binary starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let addr = (line.trim().strip_prefix("listening on "))
            .unwrap_or_else(|| panic!("the gateway did not start: {line:?}"))
            .to_owned();
        Self { child, addr }
    }

    /// A guest's call of `tool`: the status and the body.
    async fn call(&self, tool: &str) -> (u16, Value) {
        let response = reqwest::Client::new()
            .post(format!("{}/execute", self.addr))
            .json(&json!({"tool_name": tool, "arguments": {}}))
            .send()
            .await
            .unwrap();
        let status = response.status().as_u16();
        (status, response.json().await.unwrap())
    }

    /// Three guest calls of `tool`, each `invalid_output` at once, and the gateway's memory
    /// grown by less than [`BOUND`] at its peak and back after; `what` names the figures.
    async fn three_refused(&self, tool: &str, what: &str) {
        let memory = Memory::start(self.child.id());
        let outcomes = three(|| self.call(tool)).await;
        let (peak, after) = memory.grown(what);
        for ((status, body), took) in &outcomes {
            let error = &body["content"]["error"];
            assert_eq!(error["code"], "invalid_output", "{status}: {body}");
            assert!(
                error["message"].as_str().unwrap().contains("1000"),
                "{body}"
            );
            assert!(*took < AT_ONCE, "the call took {took:?}");
        }
        assert!(
            peak < BOUND,
            "the gateway's peak grew by {} MiB",
            peak >> 20
        );
        assert!(
            after < SETTLED,
            "the gateway stays {} MiB larger",
            after >> 20
        );
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_mounting_an_mcp_server_answering_500_000_blocks_stays_small() {
    let _alone = ALONE.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let server = env!("CARGO_BIN_EXE_hostile_mcp");
    let gateway = Gateway::start(
        dir.path(),
        &format!("[mcp.hostile]\ncommand = [{server:?}, \"{MCP_BLOCKS}\"]\n"),
    );
    let (status, small) = gateway.call("hostile.small").await;
    assert_eq!((status, &small["content"]), (200, &json!("ok")), "{small}");
    gateway
        .three_refused(
            "hostile.links",
            "500,000 blocks from an MCP server through a gateway, three guest calls",
        )
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_of_an_http_module_answering_300_000_blocks_stays_small() {
    let _alone = ALONE.lock().await;
    use axum::routing::{get, post};
    let manifest = json!({
        "name": "wide",
        "tools": [{
            "tool_name": "wide.links",
            "description": "Answers links.",
            "input_schema": {"type": "object"},
        }],
    })
    .to_string();
    let link = r#"{"type":"resource_link","uri":"kb:1","name":"x"}"#;
    let body = axum::body::Bytes::from(format!(
        r#"{{"success":true,"content":null,"blocks":[{}]}}"#,
        vec![link; HTTP_BLOCKS].join(",")
    ));
    assert!(body.len() < 16 << 20, "within a module answer's 16 MiB");
    let app = axum::Router::new()
        .route("/manifest", get(move || async move { manifest }))
        .route(
            "/execute",
            post(move || {
                let body = body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let module = format!("http://{}", listener.local_addr().unwrap());
    let served = tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir().unwrap();
    let map = format!("[modules.wide]\nurl = {module:?}\n");
    let gateway = tokio::task::spawn_blocking(move || {
        let gateway = Gateway::start(dir.path(), &map);
        (gateway, dir)
    })
    .await
    .unwrap();
    gateway
        .0
        .three_refused(
            "wide.links",
            "300,000 blocks from an HTTP module through a gateway, three guest calls",
        )
        .await;
    served.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registrys_own_bound_is_the_one_an_mcp_answer_is_read_against() {
    let _alone = ALONE.lock().await;
    let registry = Arc::new(
        Registry::builder()
            .without_linked()
            .content_limits(tool_registry::content::ContentLimits::DEFAULT.with_max_blocks(10))
            .build()
            .unwrap(),
    );
    let _module = mount_hostile(&registry).await;
    let error = registry
        .call("hostile.links", json!({}), &Ctx::new())
        .await
        .unwrap_err();
    assert_eq!(error.code(), "invalid_output", "{error}");
    assert!(
        error.to_string().contains("more than 10 content blocks"),
        "{error}"
    );
}

/// The blocks of the answers a hostile MCP server over streamable HTTP sends within rmcp's
/// 16 MiB bound on a JSON answer: about 14 MB, which rmcp's own client would build into about
/// 400 MB of its types.
const HTTP_MCP_BLOCKS: usize = 280_000;

/// A hostile MCP server over streamable HTTP on loopback, in this process, with the
/// `initialize` handshake (a session id, `notifications/initialized` accepted with `202`) and
/// the tools `small` (one text block), `links` (the links `blocks` holds, as a JSON body) and
/// `events` (the same links in one SSE event). Each answer is sent as chunks of the shared
/// `blocks`, never copied per call, so the memory measured here is the client's. Returns the
/// server's URL.
async fn hostile_http_mcp(count: usize) -> String {
    use axum::body::{Body, Bytes};
    use axum::http::{StatusCode, header::CONTENT_TYPE};
    use axum::response::{IntoResponse, Response};
    use axum::routing::post;

    let link = r#"{"type":"resource_link","uri":"https://a","name":"a"}"#;
    let blocks = Bytes::from(vec![link; count].join(","));
    // The answer to `id`, its links between `head` and `tail`, as one JSON body or one event.
    let answer = move |id: String, sse: bool| {
        let (kind, head, tail) = match sse {
            false => ("application/json", String::new(), ""),
            true => ("text/event-stream", "data: ".to_owned(), "\n\n"),
        };
        let head = format!(r#"{head}{{"jsonrpc":"2.0","id":{id},"result":{{"content":["#);
        let tail = format!(r#"],"isError":false}}}}{tail}"#);
        let chunks = [Bytes::from(head), blocks.clone(), Bytes::from(tail)];
        let body = Body::from_stream(futures::stream::iter(
            chunks.map(Ok::<_, std::convert::Infallible>),
        ));
        ([(CONTENT_TYPE, kind)], body).into_response()
    };
    let json = |value: Value| -> Response {
        ([(CONTENT_TYPE, "application/json")], value.to_string()).into_response()
    };
    let mcp = move |body: Bytes| {
        let answer = answer.clone();
        async move {
            let Ok(message) = serde_json::from_slice::<Value>(&body) else {
                return StatusCode::BAD_REQUEST.into_response();
            };
            // Notifications and answers need nothing back.
            let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
                return StatusCode::ACCEPTED.into_response();
            };
            let result =
                |result: Value| json(json!({"jsonrpc": "2.0", "id": id, "result": result}));
            match method {
                "initialize" => {
                    let mut response = result(json!({
                        "protocolVersion": message["params"]["protocolVersion"],
                        "capabilities": {"tools": {}},
                        "serverInfo": {"name": "hostile", "version": "1.0.0"},
                    }));
                    response
                        .headers_mut()
                        .insert("mcp-session-id", "hostile".parse().unwrap());
                    response
                }
                "tools/list" => {
                    let tools = ["small", "links", "events"].map(|name| {
                        json!({
                            "name": name,
                            "description": format!("Answers `{name}`."),
                            "inputSchema": {"type": "object"},
                        })
                    });
                    result(json!({ "tools": tools }))
                }
                "tools/call" => match message["params"]["name"].as_str() {
                    Some("links") => answer(id.to_string(), false),
                    Some("events") => answer(id.to_string(), true),
                    _ => result(json!({"content": [{"type": "text", "text": "ok"}]})),
                },
                "ping" => result(json!({})),
                // `server/discover` among them: a server of the `initialize` era.
                _ => json(json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": {"code": -32601, "message": "Method not found"},
                })),
            }
        }
    };
    let app = axum::Router::new().route(
        "/mcp",
        post(mcp)
            .get(|| async { StatusCode::METHOD_NOT_ALLOWED })
            .delete(|| async { StatusCode::OK }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// Three calls of `tool` of a [`hostile_http_mcp`] server of `count` links, mounted with
/// `McpModule::connect`: each `invalid_output` at once naming the bound of 1,000 blocks, and
/// this process's memory grown by less than [`BOUND`] at its peak and back after.
async fn three_refused_over_http(count: usize, tool: &str, what: &str) {
    let url = hostile_http_mcp(count).await;
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let _module = McpModule::connect(Arc::clone(&registry), "hostile", &url, None)
        .await
        .expect("the hostile server mounts");
    let ctx = Ctx::new();
    // A call like any other first, so that what a first call sets up is not counted.
    let small = registry.call("hostile.small", json!({}), &ctx).await;
    assert_eq!(small.unwrap().content, json!("ok"));

    let memory = Memory::start(std::process::id());
    let name = format!("hostile.{tool}");
    let outcomes = three(|| registry.call(&name, json!({}), &ctx)).await;
    let (peak, after) = memory.grown(what);
    for (outcome, took) in &outcomes {
        match outcome {
            Err(ToolError::InvalidOutput { message, .. }) => {
                assert!(
                    message.contains("more than 1000 content blocks"),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(*took < Duration::from_secs(1), "the call took {took:?}");
    }
    assert!(peak < BOUND, "the peak grew by {} MiB", peak >> 20);
    assert!(
        after < SETTLED,
        "the process stays {} MiB larger",
        after >> 20
    );
    // The session goes on.
    let small = registry.call("hostile.small", json!({}), &ctx).await;
    assert_eq!(small.unwrap().content, json!("ok"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_over_http_answering_280_000_blocks_fails_at_once_and_costs_its_body() {
    let _alone = ALONE.lock().await;
    three_refused_over_http(
        HTTP_MCP_BLOCKS,
        "links",
        "280,000 blocks in a JSON answer from an MCP server over HTTP, three calls",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_over_http_answering_500_000_blocks_fails_at_once_past_16_mib() {
    let _alone = ALONE.lock().await;
    three_refused_over_http(
        MCP_BLOCKS,
        "links",
        "500,000 blocks in a JSON answer from an MCP server over HTTP, three calls",
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_over_http_answering_280_000_blocks_in_an_event_fails_at_once() {
    let _alone = ALONE.lock().await;
    three_refused_over_http(
        HTTP_MCP_BLOCKS,
        "events",
        "280,000 blocks in an SSE event from an MCP server over HTTP, three calls",
    )
    .await;
}
