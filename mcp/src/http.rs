//! MCP over streamable HTTP: rmcp's service behind a bearer-token check that decides who each
//! request is ([`Callers`]), bound to loopback unless told otherwise.

use std::io;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Method, Request, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::model::ErrorCode;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::server::{Caller, McpServer};
use super::sessions::{Full, Owner, Refused, Sessions};
use super::stdio::error_answer;
use super::tasks_2025::{self, Handling};
use tool_registry_core::Permission;
use tool_registry_core::Scope;
use tool_registry_core::registry::Shared;
use tool_registry_core::task::TaskOwner;
use tool_registry_http::auth::Secret;

/// The header that names a session.
const SESSION_ID: &str = "mcp-session-id";

/// The JSON-RPC error code of an `initialize` refused for a session bound (in the range
/// JSON-RPC leaves to servers).
pub const TOO_MANY_SESSIONS: i32 = -32_000;

/// Who a bearer token speaks for, over MCP's streamable HTTP: each token maps to a user, a
/// permission level, and optionally an allow-list and modules. A request without a token is a
/// guest; a token not in the list is refused with `401`.
///
/// ```toml
/// [[caller]]
/// token_env = "MCP_ADMIN_TOKEN"   # or token = "…"
/// user = "ann"
/// level = "admin"
/// allow_list = "ops"              # optional
/// modules = ["kb", "files"]       # optional
/// ```
#[derive(Clone, Default)]
pub struct Callers {
    entries: Vec<(Secret, Scope)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallersFile {
    #[serde(default)]
    caller: Vec<CallerEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallerEntry {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
    user: String,
    #[serde(default)]
    level: Option<Permission>,
    #[serde(default)]
    allow_list: Option<String>,
    #[serde(default)]
    modules: Option<Vec<String>>,
}

impl Callers {
    /// No tokens: every request is a guest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a token and the scope it speaks for.
    pub fn with(mut self, token: &str, scope: Scope) -> Self {
        if let Some(secret) = Secret::new(token) {
            self.entries.push((secret, scope));
        }
        self
    }

    /// Reads `[[caller]]` tables from TOML text.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let file: CallersFile = toml::from_str(text).map_err(|error| {
            format!(
                "the callers file is not valid: {error}; write one `[[caller]]` table per token with `token` or `token_env`, `user`, and optionally `level`, `allow_list`, `modules`"
            )
        })?;
        let mut callers = Self::new();
        for entry in file.caller {
            let token = entry
                .token
                .or_else(|| {
                    entry
                        .token_env
                        .as_deref()
                        .and_then(|var| std::env::var(var).ok())
                })
                .filter(|token| !token.is_empty())
                .ok_or_else(|| {
                    format!(
                        "caller `{}` has no token (or its `token_env` is unset)",
                        entry.user
                    )
                })?;
            let mut scope =
                Scope::user(entry.user).with_level(entry.level.unwrap_or(Permission::User));
            if let Some(list) = entry.allow_list {
                scope = scope.with_allow_list(list);
            }
            if let Some(modules) = entry.modules {
                scope = scope.with_modules(modules);
            }
            callers = callers.with(&token, scope);
        }
        Ok(callers)
    }

    /// Reads a callers file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read the callers file {}: {error}", path.display()))?;
        Self::from_toml(&text)
    }

    /// The place and scope of a token, looked up in constant time per entry.
    fn scope_of(&self, token: &str) -> Option<(usize, Scope)> {
        let mut found = None;
        for (at, (secret, scope)) in self.entries.iter().enumerate() {
            if secret.matches(token) && found.is_none() {
                found = Some((at, scope.clone()));
            }
        }
        found
    }

    /// Who a request is, from its `Authorization` header: a guest without one, the caller of
    /// a known token, and for anything else why it is refused (with `401`).
    fn caller_of(&self, headers: &axum::http::HeaderMap) -> Result<(Owner, Scope), &'static str> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Ok((Owner::Guest, Scope::network_guest()));
        };
        let token = value
            .to_str()
            .map_err(|_| {
                "the Authorization header is not text; send `Authorization: Bearer <token>` with a token from the server's callers file, or no header to call as a guest"
            })?
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or(
                "send the token as `Authorization: Bearer <token>`, or no header to call as a guest",
            )?;
        self.scope_of(token)
            .map(|(at, scope)| (Owner::Token(at), scope))
            .ok_or(
                "unknown token; send a token from the server's callers file, or none to call as a guest",
            )
    }
}

/// The MCP endpoint at `/mcp` for `registry`: each request runs as the caller its token names
/// (a guest without one). Browser requests from an origin other than `origins` are refused.
/// Sessions are bounded by [`SessionLimits::default`](super::SessionLimits::default); see [`McpServer::session_limits`].
pub fn router(registry: impl Into<Shared>, callers: Callers, origins: Vec<String>) -> Router {
    McpServer::new(registry, Scope::guest()).router(callers, origins)
}

impl McpServer {
    /// This server's MCP endpoint at `/mcp`, each request as the caller its token names in
    /// `callers` (with this server's scope without one: make it [`Scope::guest`] for a
    /// server others reach). Browser requests from an origin other than `origins` are refused.
    pub fn router(self, callers: Callers, origins: Vec<String>) -> Router {
        http_router(self, callers, origins, CancellationToken::new())
    }

    /// Serves this server over streamable HTTP at `http://ADDR/mcp` until Ctrl-C or SIGTERM;
    /// see [`serve_http`].
    pub async fn serve_http(
        self,
        callers: Callers,
        addr: impl tokio::net::ToSocketAddrs,
        on_bound: impl FnOnce(std::net::SocketAddr),
    ) -> io::Result<()> {
        serve_router(
            self,
            callers,
            addr,
            on_bound,
            tool_registry_http::shutdown_signal(),
        )
        .await
    }

    /// Like [`serve_http`](Self::serve_http), until `shutdown` completes rather than a signal.
    pub async fn serve_http_until(
        self,
        callers: Callers,
        addr: impl tokio::net::ToSocketAddrs,
        on_bound: impl FnOnce(std::net::SocketAddr),
        shutdown: impl std::future::Future<Output = ()>,
    ) -> io::Result<()> {
        serve_router(self, callers, addr, on_bound, shutdown).await
    }
}

/// What the bearer check holds: the callers, the sessions it binds to them, and the server
/// (for the 2025-11-25 revision's tasks, answered before rmcp).
struct Gate {
    callers: Callers,
    sessions: Arc<Sessions>,
    server: McpServer,
}

fn http_router(
    server: McpServer,
    callers: Callers,
    origins: Vec<String>,
    stop: CancellationToken,
) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_origins(origins)
        .with_cancellation_token(stop);
    let sessions = Arc::new(Sessions::new(server.session_limits.clone()));
    let gate = Arc::new(Gate {
        callers,
        sessions: Arc::clone(&sessions),
        server: server.clone(),
    });
    // Each session and each stateless request gets a handler of its own, whose end is the
    // session's end for the tasks it starts.
    let service = StreamableHttpService::new(move || Ok(server.for_session()), sessions, config);
    Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(gate, authenticate))
}

fn unauthorized(message: &'static str) -> Response {
    let mut refused = (StatusCode::UNAUTHORIZED, message).into_response();
    refused
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    refused
}

async fn authenticate(
    State(gate): State<Arc<Gate>>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let (owner, scope) = match gate.callers.caller_of(request.headers()) {
        Ok(caller) => caller,
        Err(why) => return unauthorized(why),
    };
    // The address a guest's tasks count under (see `task::TaskOwner::guest`).
    let peer = (request.extensions())
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
        .map(|info| info.0.ip());
    request.extensions_mut().insert(Caller(scope.clone(), peer));
    request
        .extensions_mut()
        .insert(Arc::clone(gate.sessions.resumable()));
    if let Some(refused) = too_long_answer(&mut request, owner, &next).await {
        return refused;
    }
    // Only a POST without a session id may open a session, and only an `initialize` does: read
    // which request it is only when the caller has no room left.
    let opens = request.method() == Method::POST && !request.headers().contains_key(SESSION_ID);
    if opens && let Some(full) = gate.sessions.full_for(owner) {
        let (parts, body) = request.into_parts();
        let limit = StreamableHttpServerConfig::default().max_request_body_bytes;
        let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
            return (
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request body is too large",
            )
                .into_response();
        };
        if let Some(id) = initialize_id(&bytes) {
            return too_many(&gate.sessions, full, owner, id);
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    // The 2025-11-25 revision's tasks, which rmcp no longer speaks: its task requests are
    // answered here, and what it says of tasks is added to rmcp's answers.
    let mut amend = None;
    if let Some(era) = era_2025(&request) {
        let (parts, body) = request.into_parts();
        let bytes = match read_body(body).await {
            Ok(bytes) => bytes,
            Err(refused) => return refused,
        };
        match era {
            Era2025::Opens if tasks_2025::initializes(&bytes) => {
                amend = Some(tasks_2025::Amend::Initialize);
            }
            Era2025::Session(id) if gate.sessions.is_of(&id, owner) => {
                // A guest's tasks are its session's alone.
                let guests = &gate.server.tasks_of().limits().guests;
                let tasks = TaskOwner::of_caller(&scope, Some(&id), peer, guests);
                match tasks_2025::handle(&gate.server, &scope, &tasks, &bytes).await {
                    Handling::Pass => {}
                    Handling::Amend(kind) => amend = Some(kind),
                    Handling::Answer(message) => return axum::Json(message).into_response(),
                }
            }
            // Another caller's session, or none: rmcp answers it as it does.
            _ => {}
        }
        request = Request::from_parts(parts, Body::from(bytes));
    }
    if names_no_task(&request) {
        request = match name_the_task(request).await {
            Ok(request) => request,
            Err(refused) => return refused,
        };
    }
    let (response, refused) = Sessions::scope_request(owner, next.run(request)).await;
    match (refused, amend) {
        // Another request took the last place between the check above and this one's turn.
        (Some(Refused::Full(full)), _) => too_many(&gate.sessions, full, owner, Value::Null),
        (Some(Refused::Resume(why)), _) => (
            StatusCode::BAD_REQUEST,
            axum::Json(serde_json::json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32600, "message": why},
            })),
        )
            .into_response(),
        (None, Some(kind)) => amended(response, kind, &gate.server, &scope).await,
        (None, None) => response,
    }
}

/// A POST in a session whose body says it is longer than rmcp reads: refused `413`. When its
/// first bytes show it is the client's answer to a request of the server (a form, a
/// completion), that request is told, as an error marked too long, rather than left waiting
/// for its call's timeout. `None` for every other request, untouched.
async fn too_long_answer(
    request: &mut Request<Body>,
    owner: Owner,
    next: &Next,
) -> Option<Response> {
    let limit = StreamableHttpServerConfig::default().max_request_body_bytes;
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
    let _ = Sessions::scope_request(owner, next.clone().run(told)).await;
    Some(refused)
}

/// How much of a body too long to read is kept to find whether it is an answer, and its id.
const HEAD_BYTES: usize = 4 << 10;

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

/// The body of a request, within rmcp's own bound.
async fn read_body(body: Body) -> Result<axum::body::Bytes, Response> {
    let limit = StreamableHttpServerConfig::default().max_request_body_bytes;
    axum::body::to_bytes(body, limit).await.map_err(|_| {
        (
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is too large",
        )
            .into_response()
    })
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
async fn name_the_task(request: Request<Body>) -> Result<Request<Body>, Response> {
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
    let limit = StreamableHttpServerConfig::default().max_request_body_bytes;
    let Ok(bytes) = axum::body::to_bytes(body, limit).await else {
        return Err((
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is too large",
        )
            .into_response());
    };
    let id = serde_json::from_slice::<Message>(&bytes)
        .ok()
        .map(|message| message.params.task_id)
        .filter(|id| !id.is_empty() && id.len() <= 256 && id.bytes().all(|b| b.is_ascii_graphic()));
    if let Some(value) = id.and_then(|id| HeaderValue::from_str(&id).ok()) {
        parts.headers.insert("mcp-name", value);
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
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
        (Full::Caller, Owner::Token(_)) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "this token has as many MCP sessions open as it may ({}); end one with DELETE /mcp and its Mcp-Session-Id, or wait until one is {expiry} s idle",
                limits.per_caller
            ),
        ),
    };
    let body = error_answer(id, ErrorCode(TOO_MANY_SESSIONS), &message);
    (status, axum::Json(body)).into_response()
}

/// Serves `registry` over MCP's streamable HTTP at `http://ADDR/mcp` until Ctrl-C or SIGTERM.
/// `addr` must be loopback; `on_bound` hears the address bound (port 0 picks one).
pub async fn serve_http(
    registry: impl Into<Shared>,
    callers: Callers,
    addr: impl tokio::net::ToSocketAddrs,
    on_bound: impl FnOnce(std::net::SocketAddr),
) -> io::Result<()> {
    serve_router(
        McpServer::new(registry, Scope::guest()),
        callers,
        addr,
        on_bound,
        tool_registry_http::shutdown_signal(),
    )
    .await
}

async fn serve_router(
    server: McpServer,
    callers: Callers,
    addr: impl tokio::net::ToSocketAddrs,
    on_bound: impl FnOnce(std::net::SocketAddr),
    shutdown: impl std::future::Future<Output = ()>,
) -> io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "refusing to serve MCP on {local}, which is not a loopback address; bind 127.0.0.1"
            ),
        ));
    }
    let origins = vec![
        format!("http://127.0.0.1:{}", local.port()),
        format!("http://localhost:{}", local.port()),
    ];
    on_bound(local);
    let limits = server.connection_limits.clone();
    let stop = CancellationToken::new();
    let router = http_router(server, callers, origins, stop.clone());
    let served = tool_registry_http::listen::serve(listener, router, limits, shutdown).await;
    // What the stop left running (sessions, their streams) ends with the server.
    stop.cancel();
    served
}
