//! The layers in front of rmcp's streamable HTTP service, each one job and each testable alone,
//! in the order a request goes down them (`http.rs` stacks them):
//!
//! 1. [`authenticate`]: who the request is, from its bearer token ([`Callers`]): a guest
//!    without one, `401` for a token not in the list; the caller and its address go on in the
//!    request's extensions.
//!    A stateless request that asks for no stream is answered next, without rmcp
//!    (`stateless.rs`).
//! 2. [`bound_sessions`]: the bounds on sessions: an `initialize` past the server's or the
//!    caller's share refused before rmcp opens a session, the request run as its caller's
//!    (so that rmcp's session store binds a session to the credentials that opened it).
//! 3. [`refuse_long_answers`]: a body in a session longer than rmcp reads is refused `413`; a
//!    client's answer to a question of the server that is too long is told to the question.
//!    A session's call of a tool that cannot write to its client is answered next, without
//!    rmcp (`quiet.rs`).
//! 4. [`tasks_2025`]: the 2025-11-25 revision's tasks, which rmcp no longer speaks: its task
//!    requests answered here, what it says of tasks added to rmcp's answers.
//! 5. [`name_the_task`]: the `Mcp-Name` header a `tasks/*` request left out, from its body.
//!
//! A body is read (within rmcp's own bound, [`read_body`]) only by the layers that must see it,
//! and only for the requests they concern.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::ErrorCode;
use rmcp::transport::StreamableHttpServerConfig;
use serde::Deserialize;
use serde_json::Value;
use tool_registry_core::Scope;
use tool_registry_core::task::TaskOwner;

use super::callers::Callers;
use super::server::{Caller, McpServer};
use super::sessions::{Full, Owner, Refused, Sessions};
use super::stdio::error_answer;
use super::tasks_2025::{self, Handling};

/// The header that names a session.
const SESSION_ID: &str = "mcp-session-id";

/// The JSON-RPC error code of an `initialize` refused for a session bound (in the range
/// JSON-RPC leaves to servers).
pub const TOO_MANY_SESSIONS: i32 = -32_000;

/// The most bytes of a request's body any layer reads: rmcp's own bound, so that a body read
/// here is one rmcp reads too. Read once: rmcp's default configuration allocates its lists of
/// hosts, and every request asks.
pub(super) fn body_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| StreamableHttpServerConfig::default().max_request_body_bytes)
}

/// The body of a request, within [`body_limit`]; `413` past it.
pub(super) async fn read_body(body: Body) -> Result<Bytes, Response> {
    axum::body::to_bytes(body, body_limit()).await.map_err(|_| {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is too large",
        )
            .into_response()
    })
}

/// The credentials the request came with, as [`authenticate`] found them (a guest's when it
/// did not run).
pub(super) fn owner_of(request: &Request<Body>) -> Owner {
    request
        .extensions()
        .get::<Owner>()
        .copied()
        .unwrap_or(Owner::Guest)
}

// 1. Who the request is.

/// Finds who the request is from its `Authorization` header, and refuses it `401` (with
/// `WWW-Authenticate: Bearer`) when the header names no caller. The request goes on with its
/// [`Caller`] (scope and address) and its [`Owner`] in its extensions.
pub(super) async fn authenticate(
    State(callers): State<Arc<Callers>>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let (owner, scope) = match callers.caller_of(request.headers()).await {
        Ok(caller) => caller,
        Err(refused) => return callers.refusal(refused),
    };
    // The address a guest's tasks count under (see `task::TaskOwner::guest`).
    let peer = (request.extensions())
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    request.extensions_mut().insert(Caller(scope, peer));
    request.extensions_mut().insert(owner);
    next.run(request).await
}

// 2. The bounds on sessions.

/// Refuses an `initialize` that would open a session past the server's bound (`503`) or its
/// caller's share (`429`), with a JSON-RPC error that says what to do; runs every other request
/// as its caller's, and answers the bound a session it would have opened met in the meantime.
/// Only a POST without a session id may open one, and only an `initialize` does: its body is
/// read only when the caller has no room left.
pub(super) async fn bound_sessions(
    State(sessions): State<Arc<Sessions>>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let owner = owner_of(&request);
    request
        .extensions_mut()
        .insert(Arc::clone(sessions.resumable()));
    let opens = request.method() == Method::POST && !request.headers().contains_key(SESSION_ID);
    if opens && let Some(full) = sessions.full_for(owner) {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        if let Some(id) = initialize_id(&bytes) {
            return too_many(&sessions, full, owner, id);
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    let (response, refused) = Sessions::scope_request(owner, next.run(request)).await;
    match refused {
        // Another request took the last place between the check above and this one's turn.
        Some(Refused::Full(full)) => too_many(&sessions, full, owner, Value::Null),
        Some(Refused::Resume(why)) => (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32600, "message": why},
            })),
        )
            .into_response(),
        None => response,
    }
}

/// The id of an `initialize` request, if the body is one.
fn initialize_id(body: &[u8]) -> Option<Value> {
    #[derive(Deserialize)]
    struct Head {
        method: Option<String>,
        #[serde(default)]
        id: Value,
    }
    let head: Head = serde_json::from_slice(body).ok()?;
    (head.method.as_deref() == Some("initialize")).then_some(head.id)
}

/// The answer to an `initialize` past a session bound: a JSON-RPC error, `503` for the
/// server's bound and `429` for the caller's share.
fn too_many(sessions: &Sessions, full: Full, owner: Owner, id: Value) -> Response {
    let limits = sessions.limits();
    let expiry = limits.idle_expiry.as_secs();
    let (status, message) = match (full, owner) {
        (Full::Server, _) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the server has as many MCP sessions open as it allows ({}); try again when one ends (a session ends with DELETE /mcp, or after {expiry} s without a request)",
                limits.max_sessions
            ),
        ),
        (Full::Caller, Owner::Guest) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "callers without a token have as many MCP sessions open as they may ({}); end one with DELETE /mcp and its Mcp-Session-Id, wait until one is {expiry} s idle, or call with a token",
                limits.guests
            ),
        ),
        (Full::Caller, _) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "this token has as many MCP sessions open as it may ({}); end one with DELETE /mcp and its Mcp-Session-Id, or wait until one is {expiry} s idle",
                limits.per_caller
            ),
        ),
    };
    let bound = match full {
        Full::Server => "too_many_sessions",
        Full::Caller => "too_many_sessions_for_caller",
    };
    tracing::warn!(target: "tool_registry::mcp", bound, "a session was refused: {message}");
    tool_registry_telemetry::report::refused("mcp", bound);
    let body = error_answer(id, ErrorCode(TOO_MANY_SESSIONS), &message);
    (status, axum::Json(body)).into_response()
}

// 3. Bodies longer than rmcp reads.

/// Refuses `413` a POST in a session whose body says it is longer than rmcp reads, telling a
/// question of the server its answer was too long when the body's first bytes show it is one.
pub(super) async fn refuse_long_answers(mut request: Request<Body>, next: Next) -> Response {
    match too_long_answer(&mut request, &next).await {
        Some(refused) => refused,
        None => next.run(request).await,
    }
}

/// A POST in a session whose body says it is longer than rmcp reads: refused `413`. When its
/// first bytes show it is the client's answer to a request of the server (a form, a
/// completion), that request is told, as an error marked too long, rather than left waiting
/// for its call's timeout. `None` for every other request, untouched.
async fn too_long_answer(request: &mut Request<Body>, next: &Next) -> Option<Response> {
    let limit = body_limit();
    let long = request.method() == Method::POST
        && request.headers().contains_key(SESSION_ID)
        && request
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|length| length.to_str().ok()?.parse::<u64>().ok())
            .is_some_and(|length| length > limit as u64);
    if !long {
        return None;
    }
    let refused = (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is longer than {limit} bytes"),
    )
        .into_response();
    let (mut parts, body) = std::mem::take(request).into_parts();
    let mut head = Vec::new();
    let mut frames = body.into_data_stream();
    while head.len() < HEAD_BYTES {
        match futures::StreamExt::next(&mut frames).await {
            Some(Ok(bytes)) => head.extend_from_slice(&bytes),
            _ => break,
        }
    }
    drop(frames);
    let Some(id) = super::peek::answer_id_of(&head[..head.len().min(HEAD_BYTES)]) else {
        return Some(refused);
    };
    let told = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": super::peek::too_long_answer(limit),
    });
    parts.headers.remove(header::CONTENT_LENGTH);
    let told = Request::from_parts(parts, Body::from(told.to_string()));
    let _ = next.clone().run(told).await;
    Some(refused)
}

/// How much of a body too long to read is kept to find whether it is an answer, and its id.
const HEAD_BYTES: usize = 4 << 10;

// 4. The 2025-11-25 revision's tasks.

/// Which request of the 2025-11-25 revision this may be.
enum Era2025 {
    /// A POST without a session: maybe its `initialize`.
    Opens,
    /// A POST in the session with this id.
    Session(String),
}

/// Whether `request` may be one of the 2025-11-25 revision's that concern tasks: a POST in a
/// session of that revision (its `MCP-Protocol-Version` header), or one that may open such a
/// session (no session, and none of the 2026-07-28 revision's `Mcp-Method` header).
fn era_2025(request: &Request<Body>) -> Option<Era2025> {
    if request.method() != Method::POST {
        return None;
    }
    let headers = request.headers();
    match headers.get(SESSION_ID).and_then(|id| id.to_str().ok()) {
        Some(id) => (headers
            .get("mcp-protocol-version")
            .is_some_and(|version| version == tasks_2025::VERSION))
        .then(|| Era2025::Session(id.to_owned())),
        None => (!headers.contains_key("mcp-method")).then_some(Era2025::Opens),
    }
}

/// What the 2025-11-25 tasks layer answers from: the server's tasks, and the sessions, to know
/// whose a session is.
pub(super) struct Tasks2025 {
    pub(super) server: McpServer,
    pub(super) sessions: Arc<Sessions>,
}

/// Answers the 2025-11-25 revision's task requests in its caller's own sessions from the
/// registry's tasks, and adds what that revision says of tasks to rmcp's answers
/// (`capabilities.tasks` to an `initialize`, `execution.taskSupport` to `tools/list`). Every
/// other request, another caller's session among them, goes on untouched.
pub(super) async fn tasks_2025(
    State(tasks): State<Arc<Tasks2025>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let Some(era) = era_2025(&request) else {
        return next.run(request).await;
    };
    let owner = owner_of(&request);
    let Caller(scope, peer) = (request.extensions().get::<Caller>().cloned())
        .unwrap_or_else(|| Caller(Scope::network_guest(), None));
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let mut amend = None;
    match era {
        Era2025::Opens if tasks_2025::initializes(&bytes) => {
            amend = Some(tasks_2025::Amend::Initialize);
        }
        Era2025::Session(id) if tasks.sessions.is_of(&id, owner) => {
            // A guest's tasks are its session's alone.
            let guests = &tasks.server.tasks_of().limits().guests;
            let of = TaskOwner::of_caller(&scope, Some(&id), peer, guests);
            match tasks_2025::handle(&tasks.server, &scope, &of, &bytes).await {
                Handling::Pass => {}
                Handling::Amend(kind) => amend = Some(kind),
                Handling::Answer(message) => return axum::Json(message).into_response(),
            }
        }
        // Another caller's session, or none: rmcp answers it as it does.
        _ => {}
    }
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    match amend {
        Some(kind) => amended(response, kind, &tasks.server, &scope).await,
        None => response,
    }
}

/// The most bytes of rmcp's answer that is amended (a `tools/list` page, an `initialize`).
const MAX_AMENDED_BYTES: usize = 16 << 20;

/// rmcp's `response` given what the 2025-11-25 revision says of tasks: each JSON-RPC message
/// in it (an event stream's `data:` lines, or a JSON body) amended.
async fn amended(
    response: Response,
    kind: tasks_2025::Amend,
    server: &McpServer,
    scope: &Scope,
) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_AMENDED_BYTES).await else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "the answer is too large").into_response();
    };
    let amend = |text: &str| -> Option<String> {
        let mut message: Value = serde_json::from_str(text).ok()?;
        tasks_2025::amend(kind, server, scope, &mut message);
        serde_json::to_string(&message).ok()
    };
    let text = String::from_utf8_lossy(&bytes);
    let body = if text.trim_start().starts_with('{') {
        amend(&text).unwrap_or_else(|| text.into_owned())
    } else {
        let mut out = String::with_capacity(text.len() + 128);
        for line in text.split_inclusive('\n') {
            let (content, end) = match line.strip_suffix('\n') {
                Some(content) => (content, "\n"),
                None => (line, ""),
            };
            match content.strip_prefix("data: ").and_then(amend) {
                Some(message) => {
                    out.push_str("data: ");
                    out.push_str(&message);
                }
                None => out.push_str(content),
            }
            out.push_str(end);
        }
        out
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(body))
}

// 5. The task a request names.

/// Adds the `Mcp-Name` header a `tasks/*` request of the tasks extension left out (some
/// clients do: the MCP Python SDK 2.3 with `fastmcp-tasks`), from its body's `params.taskId`.
pub(super) async fn name_the_task(request: Request<Body>, next: Next) -> Response {
    if !names_no_task(&request) {
        return next.run(request).await;
    }
    match with_task_name(request).await {
        Ok(request) => next.run(request).await,
        Err(refused) => refused,
    }
}

/// The methods of the tasks extension, whose `Mcp-Name` header is the task's id.
const TASK_METHODS: [&str; 3] = ["tasks/get", "tasks/update", "tasks/cancel"];

/// Whether `request` is a `tasks/*` request without the `Mcp-Name` header that names its task:
/// some clients (the MCP Python SDK 2.3 with `fastmcp-tasks`) leave it out.
fn names_no_task(request: &Request<Body>) -> bool {
    request.method() == Method::POST
        && !request.headers().contains_key("mcp-name")
        && request
            .headers()
            .get("mcp-method")
            .and_then(|method| method.to_str().ok())
            .is_some_and(|method| TASK_METHODS.contains(&method))
}

/// `request` with the `Mcp-Name` header its body's `params.taskId` gives, when that is a
/// plain header value; as it was otherwise (and rmcp answers the missing header).
async fn with_task_name(request: Request<Body>) -> Result<Request<Body>, Response> {
    #[derive(Deserialize)]
    struct Params {
        #[serde(rename = "taskId")]
        task_id: String,
    }
    #[derive(Deserialize)]
    struct Message {
        params: Params,
    }
    let (mut parts, body) = request.into_parts();
    let bytes = read_body(body).await?;
    let id = serde_json::from_slice::<Message>(&bytes)
        .ok()
        .map(|message| message.params.task_id)
        .filter(|id| !id.is_empty() && id.len() <= 256 && id.bytes().all(|b| b.is_ascii_graphic()));
    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        parts.headers.insert("mcp-name", value);
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::middleware::{from_fn, from_fn_with_state};
    use axum::routing::post;
    use serde_json::json;
    use tool_registry_core::Registry;
    use tower::ServiceExt;

    use super::*;
    use crate::SessionLimits;

    /// What the service behind a layer saw of a request: its caller, owner, headers and body.
    async fn echo(request: Request<Body>) -> axum::Json<Value> {
        let caller = (request.extensions().get::<Caller>())
            .map(|Caller(scope, _)| scope.user_id().unwrap_or("-").to_owned());
        let owner = request
            .extensions()
            .get::<Owner>()
            .map(|owner| format!("{owner:?}"));
        let name =
            (request.headers().get("mcp-name")).map(|name| name.to_str().unwrap().to_owned());
        let body = axum::body::to_bytes(request.into_body(), usize::MAX)
            .await
            .unwrap();
        axum::Json(json!({
            "caller": caller,
            "owner": owner,
            "mcp_name": name,
            "body": String::from_utf8_lossy(&body),
        }))
    }

    fn post_to(headers: &[(&str, &str)], body: impl Into<Body>) -> Request<Body> {
        let mut request = Request::post("/mcp");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(body.into()).unwrap()
    }

    async fn answer(router: Router, request: Request<Body>) -> (StatusCode, Value) {
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let value = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
        (status, value)
    }

    #[tokio::test]
    async fn authenticate_names_the_caller_or_refuses_with_a_bearer_challenge() {
        let callers = Callers::new().with("s3cret", Scope::user("ann"));
        let router = Router::new()
            .route("/mcp", post(echo))
            .layer(from_fn_with_state(Arc::new(callers), authenticate));
        let (status, seen) = answer(router.clone(), post_to(&[], "{}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            (seen["caller"].clone(), seen["owner"].clone()),
            (json!("-"), json!("Guest"))
        );
        let bearer = [("authorization", "Bearer s3cret")];
        let (_, seen) = answer(router.clone(), post_to(&bearer, "{}")).await;
        assert_eq!(
            (seen["caller"].clone(), seen["owner"].clone()),
            (json!("ann"), json!("Token(0)"))
        );
        for refused in ["Bearer nope", "Basic s3cret"] {
            let response = (router.clone())
                .oneshot(post_to(&[("authorization", refused)], "{}"))
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{refused}");
            assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Bearer");
        }
    }

    #[tokio::test]
    async fn bound_sessions_refuses_an_initialize_past_the_callers_share_and_passes_the_rest() {
        let limits = SessionLimits {
            guests: 0,
            ..SessionLimits::default()
        };
        let sessions = Arc::new(Sessions::new(limits));
        let router = Router::new()
            .route("/mcp", post(echo))
            .layer(from_fn_with_state(sessions, bound_sessions));
        let initialize = json!({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}});
        let (status, refused) = answer(router.clone(), post_to(&[], initialize.to_string())).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(refused["id"], 7);
        assert_eq!(refused["error"]["code"], TOO_MANY_SESSIONS);
        // Not an `initialize`, or in a session already: on to rmcp, the body whole.
        let ping = json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}).to_string();
        let (status, seen) = answer(router.clone(), post_to(&[], ping.clone())).await;
        assert_eq!(
            (status, seen["body"].clone()),
            (StatusCode::OK, json!(ping))
        );
        let in_session = [(SESSION_ID, "abc")];
        let (status, _) = answer(router, post_to(&in_session, initialize.to_string())).await;
        assert_eq!(status, StatusCode::OK);
    }

    #[tokio::test]
    async fn refuse_long_answers_refuses_a_long_body_in_a_session_and_tells_its_question() {
        let router = Router::new()
            .route("/mcp", post(echo))
            .layer(from_fn(refuse_long_answers));
        let long = (body_limit() + 1).to_string();
        // The client's answer to the server's question 5: the question hears it was too long.
        let answer_head = r#"{"jsonrpc": "2.0", "id": 5, "result": {"action": "accept", "content": {"note": "xxxx"#;
        let told = Arc::new(std::sync::Mutex::new(None));
        let seen = Arc::clone(&told);
        let telling = Router::new()
            .route(
                "/mcp",
                post(move |request: Request<Body>| {
                    let seen = Arc::clone(&seen);
                    async move {
                        let body = axum::body::to_bytes(request.into_body(), usize::MAX)
                            .await
                            .unwrap();
                        *seen.lock().unwrap() =
                            Some(serde_json::from_slice::<Value>(&body).unwrap());
                        StatusCode::ACCEPTED
                    }
                }),
            )
            .layer(from_fn(refuse_long_answers));
        let headers = [(SESSION_ID, "abc"), ("content-length", long.as_str())];
        let request = post_to(&headers, answer_head.to_owned());
        let (status, _) = answer(telling, request).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        let told = told.lock().unwrap().take().expect("the question was told");
        assert_eq!(told["id"], 5);
        assert!(told["error"].is_object(), "{told}");
        // A short body, or one outside a session: untouched.
        let (status, seen) = answer(router.clone(), post_to(&[(SESSION_ID, "abc")], "{}")).await;
        assert_eq!(
            (status, seen["body"].clone()),
            (StatusCode::OK, json!("{}"))
        );
        let request = post_to(&[("content-length", long.as_str())], answer_head.to_owned());
        let response = router.oneshot(request).await.unwrap();
        assert_ne!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    }

    #[tokio::test]
    async fn tasks_2025_adds_the_task_capability_to_that_revisions_initialize_only() {
        let registry = Registry::builder().without_linked().build().unwrap();
        let server = McpServer::new(Arc::new(registry), Scope::guest());
        let tasks = Tasks2025 {
            server,
            sessions: Arc::new(Sessions::new(SessionLimits::default())),
        };
        let rmcp = |request: Request<Body>| async move {
            let body = axum::body::to_bytes(request.into_body(), usize::MAX)
                .await
                .unwrap();
            let asked: Value = serde_json::from_slice(&body).unwrap();
            let version = asked["params"]["protocolVersion"].clone();
            axum::Json(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
                "protocolVersion": version, "capabilities": {"tools": {}},
            }}))
        };
        let router = Router::new()
            .route("/mcp", post(rmcp))
            .layer(from_fn_with_state(Arc::new(tasks), tasks_2025));
        let initialize = |version: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": version}})
            .to_string()
        };
        let (_, answered) = answer(router.clone(), post_to(&[], initialize("2025-11-25"))).await;
        assert!(
            answered["result"]["capabilities"]["tasks"].is_object(),
            "{answered}"
        );
        let (_, answered) = answer(router, post_to(&[], initialize("2025-06-18"))).await;
        assert!(
            answered["result"]["capabilities"].get("tasks").is_none(),
            "{answered}"
        );
    }

    #[tokio::test]
    async fn name_the_task_takes_a_plain_task_id_from_the_body() {
        let router = Router::new()
            .route("/mcp", post(echo))
            .layer(from_fn(name_the_task));
        let get = |id: &str| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": id}})
                .to_string()
        };
        let method = [("mcp-method", "tasks/get")];
        let (_, seen) = answer(router.clone(), post_to(&method, get("0a1b2c"))).await;
        assert_eq!(seen["mcp_name"], "0a1b2c");
        assert_eq!(seen["body"], get("0a1b2c"), "the body goes on whole");
        // Not a plain header value: left out, for rmcp to answer the missing header.
        let (_, seen) = answer(router.clone(), post_to(&method, get("a b"))).await;
        assert_eq!(seen["mcp_name"], Value::Null);
        // Named already, or not a task request: untouched.
        let named = [("mcp-method", "tasks/get"), ("mcp-name", "keep")];
        let (_, seen) = answer(router.clone(), post_to(&named, get("0a1b2c"))).await;
        assert_eq!(seen["mcp_name"], "keep");
        let (_, seen) = answer(
            router,
            post_to(&[("mcp-method", "tools/call")], get("0a1b2c")),
        )
        .await;
        assert_eq!(seen["mcp_name"], Value::Null);
    }
}
