//! Guests of `toolreg mcp --http` (requests without a token) kept apart from each other's
//! tasks, on one server and on two instances sharing Redis: a guest's task started in a
//! 2025-11-25 session is listed, read, followed and cancelled only in that session; a guest of
//! the stateless 2026-07-28 revision (rmcp's client) reaches no session's task, and no session
//! reaches its; every way in is the answer a forged id gets. One address that starts as many
//! tasks as it may leaves the other addresses their share, on `toolreg mcp --http` and on a
//! tool module (`toolreg serve`) alike. The guests come from 127.0.0.1 and 127.0.0.2 (both
//! loopback) to be two addresses.

use std::net::IpAddr;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, ProtocolVersion,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};

use crate::common;
#[path = "common/mcp_http.rs"]
mod mcp_http;
#[path = "common/redis.rs"]
mod redis;
// Only its server is used here.
#[allow(dead_code)]
#[path = "common/serve.rs"]
mod serve;

/// The revision of the sessions.
const SESSIONS: &str = "2025-11-25";

/// A tool a guest may run as a task: waits for a file that never comes.
const WAIT: &str = "file_manager.wait_for";

/// An id no task has.
const FORGED: &str = "00000000000000000000000000000000";

/// An HTTP client whose connections come from `ip`.
fn client_from(ip: [u8; 4]) -> reqwest::Client {
    reqwest::Client::builder()
        .local_address(Some(IpAddr::from(ip)))
        .build()
        .unwrap()
}

/// A guest's 2025-11-25 session, spoken by hand.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    /// `initialize` and `notifications/initialized` as a guest, from `http`'s address.
    async fn open(http: &reqwest::Client, url: &str) -> Self {
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": SESSIONS,
                "capabilities": {},
                "clientInfo": {"name": "guest", "version": "1"}
            }
        });
        let response = post(http, url, None, &initialize).await;
        let id = response
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_owned();
        let session = Self {
            http: http.clone(),
            url: url.to_owned(),
            id,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let done = post(&session.http, url, Some(&session.id), &initialized).await;
        assert_eq!(done.status(), 202);
        session
    }

    /// One request's JSON-RPC answer.
    async fn rpc(&self, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let response = post(&self.http, &self.url, Some(&self.id), &body).await;
        let text = response.text().await.unwrap();
        let message = if text.trim_start().starts_with('{') {
            Some(text.as_str())
        } else {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .next_back()
        };
        serde_json::from_str(message.unwrap_or_default().trim())
            .unwrap_or_else(|_| panic!("{method}: no JSON-RPC answer in {text:?}"))
    }

    /// A task of `WAIT` started: its id, or the error's message.
    async fn start(&self) -> Result<String, String> {
        let params = json!({
            "name": WAIT,
            "arguments": {"path": "never.txt", "timeout_seconds": 60},
            "task": {"ttl": 60_000}
        });
        let answer = self.rpc("tools/call", params).await;
        match answer["result"]["task"]["taskId"].as_str() {
            Some(id) => Ok(id.to_owned()),
            None => Err(answer["error"]["message"].as_str().unwrap_or("").to_owned()),
        }
    }

    /// The ids `tasks/list` shows this session.
    async fn list(&self) -> Vec<String> {
        let answer = self.rpc("tasks/list", json!({})).await;
        let tasks = answer["result"]["tasks"].as_array().expect("a task list");
        (tasks.iter())
            .map(|task| task["taskId"].as_str().unwrap().to_owned())
            .collect()
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: &Value,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", SESSIONS);
    }
    request.send().await.unwrap()
}

/// A client of the stateless revision that follows tasks.
#[derive(Clone)]
struct FollowsTasks;

impl rmcp::ClientHandler for FollowsTasks {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("stateless-guest", "1.0.0"),
        )
    }
}

type Stateless = rmcp::service::RunningService<rmcp::RoleClient, FollowsTasks>;

/// A guest of the 2026-07-28 revision, from `http`'s address.
async fn stateless(http: reqwest::Client, url: &str) -> Stateless {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let stateless = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    };
    let client = FollowsTasks
        .serve_with_lifecycle(
            StreamableHttpClientTransport::with_client(http, config),
            stateless,
        )
        .await
        .expect("a 2026-07-28 client");
    let version = client
        .peer()
        .peer_info()
        .map(|info| info.protocol_version.clone());
    assert_eq!(version, Some(ProtocolVersion::V_2026_07_28));
    client
}

/// The error of every request of `session` that names another's task `theirs`, beside the
/// one a forged id gets: the same, `-32602`.
async fn unknown_everywhere(session: &Session, theirs: &str) {
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let answer = session.rpc(method, json!({"taskId": theirs})).await;
        let forged = session.rpc(method, json!({"taskId": FORGED})).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
        assert_eq!(answer["error"], forged["error"], "{method}");
    }
    assert!(!session.list().await.iter().any(|id| id == theirs));
}

/// Guest A in a session from 127.0.0.1 on `first`; guest B in a session from 127.0.0.2 on
/// `second`; guest C of the stateless revision from 127.0.0.2 on `second`.
async fn guests_apart(first: &str, second: &str) {
    let (here, there) = (client_from([127, 0, 0, 1]), client_from([127, 0, 0, 2]));
    let a = Session::open(&here, first).await;
    let b = Session::open(&there, second).await;
    let a_task = a.start().await.unwrap();
    assert!(
        a_task.len() == 32 && a_task.bytes().all(|b| b.is_ascii_hexdigit()),
        "{a_task}"
    );
    assert_eq!(a.list().await, std::slice::from_ref(&a_task));
    assert!(b.list().await.is_empty(), "B sees none of A's tasks");
    unknown_everywhere(&b, &a_task).await;

    // The stateless guest reaches no session's task, and no session reaches its.
    let c = stateless(there.clone(), second).await;
    let get = c.get_task(GetTaskParams::new(a_task.clone())).await;
    let forged = c.get_task(GetTaskParams::new(FORGED)).await;
    assert_eq!(
        format!("{get:?}"),
        format!("{forged:?}").replace(FORGED, &a_task)
    );
    assert!(
        c.cancel_task(CancelTaskParams::new(a_task.clone()))
            .await
            .is_err()
    );
    let wait = CallToolRequestParams::new(WAIT).with_arguments(
        serde_json::from_value(json!({"path": "never.txt", "timeout_seconds": 60})).unwrap(),
    );
    let c_task = match c.call_tool_once(wait).await.unwrap() {
        CallToolResponse::Task(created) => created.task.task_id,
        other => panic!("a slow call of a tool that may be a task is one: {other:?}"),
    };
    unknown_everywhere(&a, &c_task).await;
    unknown_everywhere(&b, &c_task).await;

    // A's own task is A's: working, then cancelled by A.
    let own = a.rpc("tasks/get", json!({"taskId": a_task})).await;
    assert_eq!(own["result"]["status"], "working", "{own}");
    let cancelled = a.rpc("tasks/cancel", json!({"taskId": a_task})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");

    // A starts as many tasks as its address may; a second session from that address shares
    // the bound; the other address keeps its share.
    let mut started = vec![];
    let refused = loop {
        match a.start().await {
            Ok(id) => started.push(id),
            Err(message) => break message,
        }
        assert!(started.len() <= 40, "no bound stopped one guest");
    };
    assert_eq!(started.len(), 8, "{refused}");
    assert!(
        refused.contains("8 running among the guests of your address"),
        "{refused}"
    );
    let again = Session::open(&here, second).await;
    assert!(again.start().await.is_err(), "the address's share is used");
    let b_task = b.start().await.expect("another address keeps its share");
    assert_eq!(b.list().await, std::slice::from_ref(&b_task));

    for id in started {
        let done = a.rpc("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(done["result"]["status"], "cancelled", "{done}");
    }
    b.rpc("tasks/cancel", json!({"taskId": b_task})).await;
    c.cancel_task(CancelTaskParams::new(c_task)).await.unwrap();
    c.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guests_of_one_server_never_reach_each_others_tasks_nor_use_up_each_others_share() {
    let dir = common::workspace();
    let served = mcp_http::serve_http(dir.path());
    guests_apart(&served.url, &served.url).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guests_of_two_instances_on_one_redis_stay_apart_and_share_their_address_bound() {
    let redis = redis::Redis::start();
    let dir = common::workspace();
    let flags = ["--redis", redis.url.as_str()];
    let first = mcp_http::serve_http_with(dir.path(), &flags);
    let second = mcp_http::serve_http_with(dir.path(), &flags);
    guests_apart(&first.url, &second.url).await;
}

/// A guest's `POST /execute` of `WAIT` (for `seconds`) as a task on a tool module: the status
/// and the answer.
async fn execute_task(http: &reqwest::Client, addr: &str, seconds: u64) -> (u16, Value) {
    let request = json!({
        "tool_name": WAIT,
        "arguments": {"path": "never.txt", "timeout_seconds": seconds},
        "task": true
    });
    let response = http
        .post(format!("{addr}/execute"))
        .header("content-type", "application/json")
        .body(request.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_str(&response.text().await.unwrap()).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_modules_guests_of_one_address_cannot_use_up_every_guests_share() {
    let dir = common::workspace();
    let served = serve::serve(dir.path(), &["serve", "--http", "127.0.0.1:0"]);
    let (here, there) = (client_from([127, 0, 0, 1]), client_from([127, 0, 0, 2]));
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (here, addr) = (here.clone(), served.addr.clone());
        calls.spawn(async move { execute_task(&here, &addr, 60).await });
    }
    while let Some(done) = calls.join_next().await {
        let (status, answer) = done.unwrap();
        assert_eq!(status, 202, "{answer}");
    }
    // The address's share is used: a slow call from it answers within its request instead.
    let (status, answer) = execute_task(&here, &served.addr, 2).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["content"]["waited_seconds"], 2, "{answer}");
    let (status, answer) = execute_task(&there, &served.addr, 60).await;
    assert_eq!(status, 202, "another address keeps its share: {answer}");
}
