//! The module side: a registry's tools served as `GET /manifest`, `POST /execute` and
//! `GET /health` (and the catalog page at `/`).

use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, State};
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;
use tower_http::trace::TraceLayer;

use super::listen::ConnectionLimits;
use super::trace::{continue_trace, request_span};
use super::wire::{ExecuteRequest, Health, RemoteTask, TaskAnswer, TaskRequest};
use tool_registry_core::Permission;
use tool_registry_core::Scope;
use tool_registry_core::call::MAX_ARGS_BYTES;
use tool_registry_core::registry::Shared;
use tool_registry_core::task::{
    Become, Started, TaskCall, TaskError, TaskOwner, TaskSupport, Tasks, owner_of,
};
use tool_registry_core::{Ctx, ToolError};

/// The most bytes of a request body a server reads unless told otherwise: the largest argument
/// text a tool accepts by default ([`MAX_ARGS_BYTES`]) and 64 KiB for the rest of the request.
pub const MAX_BODY_BYTES: usize = MAX_ARGS_BYTES + (64 << 10);

/// What a refusal of the request as a whole names in place of a tool.
const REQUEST: &str = "POST /execute";

/// The name a module's server takes when none is given.
pub const DEFAULT_MODULE_NAME: &str = "tools";

/// A registry's tools served over HTTP, for gateways in other processes (see the
/// [module documentation](super)).
///
/// ```no_run
/// # async fn run() -> std::io::Result<()> {
/// use tool_registry::Registry;
/// use tool_registry::http::Server;
///
/// Server::new(Registry::global())
///     .name("kb")
///     .token(std::env::var("KB_MODULE_TOKEN").unwrap_or_default())
///     .serve("127.0.0.1:8000")
///     .await
/// # }
/// ```
#[derive(Clone)]
pub struct Server {
    registry: Shared,
    name: String,
    version: Option<String>,
    served: Scope,
    token: Option<super::auth::Secret>,
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<super::oauth::ResourceServer>>,
    max_body: usize,
    beyond_loopback: bool,
    page: bool,
    limits: ConnectionLimits,
    tasks: Tasks,
}

impl Server {
    /// Serves `registry` (a `&'static Registry` such as [`Registry::global`], or an
    /// `Arc<Registry>`), every tool of it, as the module [`DEFAULT_MODULE_NAME`], to guests
    /// only until [`token`](Self::token) is set.
    ///
    /// [`Registry::global`]: tool_registry_core::Registry::global
    pub fn new(registry: impl Into<Shared>) -> Self {
        Self {
            registry: registry.into(),
            name: DEFAULT_MODULE_NAME.to_owned(),
            version: None,
            served: Scope::trusted(),
            token: None,
            #[cfg(feature = "oauth")]
            oauth: None,
            max_body: MAX_BODY_BYTES,
            beyond_loopback: false,
            page: true,
            limits: ConnectionLimits::default(),
            tasks: Tasks::default(),
        }
    }

    /// Where the calls that became tasks are kept, and their bounds: in this process's memory
    /// unless set ([`Tasks::default`]); a fleet's store lets any instance answer for them.
    pub fn tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// The module's name: the first segment of every tool name in its manifest
    /// (`kb` serves `research` as `kb.research`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The module's version, reported in its manifest.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// Serves only the tools `scope` may see (its modules, allow-list, level): a tool outside
    /// it is unknown to every caller, trusted or not.
    pub fn scope(mut self, scope: Scope) -> Self {
        self.served = scope;
        self
    }

    /// The shared secret: a client that sends it as `Authorization: Bearer <secret>` is
    /// believed about the user and level it calls for; any other client is a guest. An empty
    /// secret is no secret.
    pub fn token(mut self, secret: impl AsRef<str>) -> Self {
        self.token = super::auth::Secret::new(secret.as_ref());
        self
    }

    /// Makes the module an OAuth 2.1 resource server too ([`super::oauth`], feature `oauth`): a bearer token that
    /// is not the shared secret is an access token `server` checks. An accepted token whose
    /// scope reaches [`Permission::Owner`] (a gateway's client, by the operator's rules) is
    /// believed about the user it calls for, at a level no higher than its own; any other runs
    /// as its own scope. A token not accepted, and a request without one unless the `[oauth]`
    /// table allows guests, is `401` with the challenge that names the protected resource
    /// metadata, served at its well-known path.
    #[cfg(feature = "oauth")]
    pub fn oauth(mut self, server: super::oauth::ResourceServer) -> Self {
        self.oauth = Some(Arc::new(server));
        self
    }

    /// The most bytes of a request body read; a longer body is refused with `413` and
    /// `arguments_too_large` before it is parsed. Default [`MAX_BODY_BYTES`].
    pub fn max_body_bytes(mut self, limit: usize) -> Self {
        self.max_body = limit;
        self
    }

    /// Lets [`serve`](Self::serve) listen on an address other than loopback. Off by default:
    /// a module is reached by its gateway on the same machine unless told otherwise.
    pub fn beyond_loopback(mut self, allow: bool) -> Self {
        self.beyond_loopback = allow;
        self
    }

    /// Whether `/` serves the catalog page of the tools a guest may see (on by default).
    pub fn catalog_page(mut self, on: bool) -> Self {
        self.page = on;
        self
    }

    /// The bounds kept on connections: how many at once, header, body and idle timeouts, a
    /// body's minimum rate, the stop's deadline ([`ConnectionLimits::default`] unless set).
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The routes, for an application that runs its own axum server or adds routes of its
    /// own.
    pub fn router(self) -> Router {
        let max_body = self.max_body;
        let page = self.page;
        let mut router = Router::new()
            .route("/manifest", get(manifest))
            .route("/execute", post(execute))
            .route("/tasks/get", post(task_get))
            .route("/tasks/cancel", post(task_cancel))
            .route("/health", get(health));
        if page {
            router = router.route("/", get(catalog_page));
        }
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            let document = axum::Json(oauth.metadata());
            let bare = "/.well-known/oauth-protected-resource";
            let path = oauth.metadata_path();
            let paths = if path == bare {
                vec![bare.to_owned()]
            } else {
                vec![path, bare.to_owned()]
            };
            for at in paths {
                let document = document.clone();
                router = router.route(&at, get(move || async move { document }));
            }
        }
        router
            .layer(DefaultBodyLimit::max(max_body))
            .layer(
                TraceLayer::new_for_http().make_span_with(|request: &Request<Body>| {
                    let span = request_span(request.method().as_str(), request.uri().path());
                    continue_trace(&span, request.headers());
                    span
                }),
            )
            .with_state(Arc::new(self))
    }

    /// Binds `addr` and serves until Ctrl-C or SIGTERM: then no new connection is taken, the
    /// ones with no call in flight (idle, or with a request whose body has not ended) close at
    /// once, and the calls in flight finish before it returns (within the
    /// [stop deadline](ConnectionLimits::stop_deadline)). An address that is not loopback is
    /// refused unless [`beyond_loopback`](Self::beyond_loopback) allows it.
    pub async fn serve(self, addr: impl tokio::net::ToSocketAddrs) -> io::Result<()> {
        let listener = self.bind(addr).await?;
        self.serve_on(listener, shutdown_signal()).await
    }

    /// Binds `addr` (loopback unless [`beyond_loopback`](Self::beyond_loopback)); serve on the
    /// listener with [`serve_on`](Self::serve_on). Port 0 picks a free port:
    /// `listener.local_addr()` tells which.
    pub async fn bind(
        &self,
        addr: impl tokio::net::ToSocketAddrs,
    ) -> io::Result<tokio::net::TcpListener> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let local: SocketAddr = listener.local_addr()?;
        if !local.ip().is_loopback() && !self.beyond_loopback {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "refusing to serve tools on {local}, which is not a loopback address; \
                     bind 127.0.0.1, or allow it with Server::beyond_loopback(true) \
                     (`--public` on the command line) and set a token"
                ),
            ));
        }
        Ok(listener)
    }

    /// Serves on `listener` within the [connection limits](Self::connection_limits) until
    /// `shutdown` completes; then no new connection is taken, the ones with no call in flight
    /// close at once, and the calls in flight finish before it returns (within the stop
    /// deadline).
    pub async fn serve_on(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> io::Result<()> {
        let limits = self.limits.clone();
        super::listen::serve(listener, self.router(), limits, shutdown).await
    }

    /// The caller's scope: the user and level the request names when it carries the secret (or
    /// an access token of a gateway's client), the scope of an accepted access token, else a
    /// guest; or the `401` of a resource server that wants a token it did not get.
    async fn caller(
        &self,
        headers: &HeaderMap,
        user: Option<&str>,
        level: Option<Permission>,
    ) -> Result<Caller, Response> {
        let given = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "));
        let guest = Caller {
            scope: Scope::network_guest(),
            trusted: false,
        };
        let named = |cap: Permission| {
            let mut scope =
                Scope::trusted().with_level(level.unwrap_or(Permission::Guest).min(cap));
            if let Some(user) = user {
                scope = scope.with_user(user);
            }
            Caller {
                scope,
                trusted: true,
            }
        };
        if let (Some(secret), Some(given)) = (&self.token, given)
            && secret.matches(given)
        {
            return Ok(named(Permission::Owner));
        }
        #[cfg(feature = "oauth")]
        if let Some(oauth) = &self.oauth {
            return match given {
                Some(given) => self.verified(oauth, given, named).await,
                None if oauth.allows_guests() => Ok(guest),
                None => Err(challenged(oauth, None)),
            };
        }
        if given.is_some() {
            tracing::warn!(target: "tool_registry::http", module = %self.name, "a request carried a wrong token; it runs as a guest");
            tool_registry_telemetry::report::refused("modules", "wrong_token");
        }
        Ok(guest)
    }

    /// The caller of an access token the resource server checks: believed about the user it
    /// names when its rules make it an owner, else its own scope; or the refusal.
    #[cfg(feature = "oauth")]
    async fn verified(
        &self,
        oauth: &super::oauth::ResourceServer,
        given: &str,
        named: impl Fn(Permission) -> Caller,
    ) -> Result<Caller, Response> {
        match oauth.verify(given).await {
            Ok(verified) if verified.scope.level() >= Permission::Owner => {
                Ok(named(verified.scope.level()))
            }
            Ok(verified) => Ok(Caller {
                scope: verified.scope,
                trusted: false,
            }),
            Err(refusal) => Err(challenged(oauth, Some(&refusal))),
        }
    }

    /// The local name of a tool named as the manifest names it.
    fn local_name<'n>(&self, name: &'n str) -> &'n str {
        name.strip_prefix(self.name.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .unwrap_or(name)
    }

    /// Whether `scope` may see and run the local tool `name` here.
    fn serves(&self, name: &str, scope: &Scope) -> bool {
        self.registry.get(name, &self.served).is_some() && self.registry.get(name, scope).is_some()
    }
}

struct Caller {
    scope: Scope,
    trusted: bool,
}

/// `GET /manifest`: every tool the caller may see, named `module.tool`.
async fn manifest(State(server): State<Arc<Server>>, headers: HeaderMap) -> Response {
    // A trusted gateway lists everything it may route and scopes its own callers.
    let caller = match server.caller(&headers, None, Some(Permission::Owner)).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let scope = if caller.trusted {
        Scope::trusted()
    } else {
        caller.scope
    };
    let tools: Vec<Value> = server
        .registry
        .tools(&scope)
        .into_iter()
        .filter(|tool| server.registry.get(tool.name(), &server.served).is_some())
        .filter_map(|tool| {
            let mut spec = serde_json::to_value(tool.spec()).ok()?;
            spec["tool_name"] = Value::String(format!("{}.{}", server.name, tool.name()));
            Some(spec)
        })
        .collect();
    let mut body = serde_json::json!({ "name": server.name, "tools": tools });
    if let Some(version) = &server.version {
        body["version"] = Value::String(version.clone());
    }
    json(StatusCode::OK, &body)
}

/// `POST /execute`: one call through every gate, for the caller the request may speak for.
async fn execute(
    State(server): State<Arc<Server>>,
    connected: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let error = ToolError::ArgumentsTooLarge {
                tool: REQUEST.to_owned(),
                limit: server.max_body,
            };
            return error_response(StatusCode::PAYLOAD_TOO_LARGE, &error);
        }
        Err(rejection) => {
            return refused(
                rejection.status(),
                format!("the request body cannot be read: {rejection}"),
            );
        }
    };
    let request: ExecuteRequest<'_> = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(error) => {
            let status = match error.classify() {
                serde_json::error::Category::Data => StatusCode::UNPROCESSABLE_ENTITY,
                _ => StatusCode::BAD_REQUEST,
            };
            return refused(
                status,
                format!(
                    "the request is not an execute request ({error}); send {{\"tool_name\": \"module.tool\", \"arguments\": {{...}}, \"user_id\": \"...\"}}"
                ),
            );
        }
    };
    let caller = match server
        .caller(&headers, request.user_id.as_deref(), request.level)
        .await
    {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let name = server.local_name(&request.tool_name);
    if !server.serves(name, &caller.scope) {
        let error = ToolError::UnknownTool {
            name: request.tool_name.into_owned(),
            suggestion: None,
            module: None,
        };
        return error_response(StatusCode::NOT_FOUND, &error);
    }
    let mut ctx = Ctx::for_scope(caller.scope);
    if let Some(id) = request.call_id.clone() {
        ctx = ctx.with_call_id(id);
    }
    let args = request.arguments.map_or("{}", |raw| raw.get());
    let plain = request.approval_token.is_none() && !(caller.trusted && request.confirmed);
    if request.task && plain {
        let support = server
            .registry
            .get(name, ctx.scope())
            .map_or(TaskSupport::Forbidden, |tool| tool.task_support());
        if support != TaskSupport::Forbidden {
            let peer = connected.map(|Extension(ConnectInfo(addr))| addr.ip());
            return execute_as_task(&server, name, args, ctx, support, peer).await;
        }
    }
    let result = match (&request.approval_token, caller.trusted && request.confirmed) {
        (_, true) => {
            (server.registry.call(name, args, &ctx))
                .confirmed()
                .for_model()
                .await
        }
        (Some(token), false) => {
            (server.registry.call(name, args, &ctx))
                .approved(token)
                .for_model()
                .await
        }
        (None, false) => server.registry.call(name, args, &ctx).for_model().await,
    };
    json(StatusCode::OK, &result)
}

/// `POST /execute` of a tool that may become a task, for a client that follows one: `202`
/// with the task when it became one, else `200` with the result. A guest's task (from `peer`)
/// is reached by its id alone and counts against its address's share and every guest's.
async fn execute_as_task(
    server: &Server,
    name: &str,
    args: &str,
    ctx: Ctx,
    support: TaskSupport,
    peer: Option<IpAddr>,
) -> Response {
    let arguments: Value = match serde_json::from_str(args) {
        Ok(arguments) => arguments,
        // The pipeline says what is wrong with them, as for any call.
        Err(_) => {
            return json(
                StatusCode::OK,
                &server.registry.call(name, args, &ctx).for_model().await,
            );
        }
    };
    let owner = TaskOwner::of_caller(ctx.scope(), None, peer, &server.tasks.limits().guests);
    let call = TaskCall {
        tool: name.to_owned(),
        arguments,
        ctx,
        owner,
        asks: false,
        inputs: None,
    };
    let when = match support {
        TaskSupport::Required => Become::Now,
        _ => Become::IfSlow,
    };
    match server.tasks.run(server.registry.clone(), call, when).await {
        Ok(Started::Ended(result)) => json(StatusCode::OK, &result),
        Ok(Started::Task(task)) => {
            let poll = server.tasks.limits().poll_interval;
            json(
                StatusCode::ACCEPTED,
                &TaskAnswer {
                    task: RemoteTask::of(task, poll),
                },
            )
        }
        Err(error) => task_refused(&error),
    }
}

/// A task request refused: `404` for an unknown task (another caller's alike), `429` past the
/// caller's bounds, `409` for a cancel of an ended task, `503` when the store failed.
fn task_refused(error: &TaskError) -> Response {
    let (status, code) = match error {
        TaskError::NotFound => (StatusCode::NOT_FOUND, "task_not_found"),
        TaskError::TooMany { .. } => (StatusCode::TOO_MANY_REQUESTS, "too_many_tasks"),
        TaskError::Ended(_) | TaskError::NoQuestion => (StatusCode::CONFLICT, "task_ended"),
        _ => (StatusCode::SERVICE_UNAVAILABLE, "task_store_unavailable"),
    };
    json(
        status,
        &serde_json::json!({"error": {"code": code, "message": error.to_string()}}),
    )
}

/// `POST /tasks/get`: the caller's task, its result once it completed.
async fn task_get(State(server): State<Arc<Server>>, headers: HeaderMap, body: Bytes) -> Response {
    on_task(&server, &headers, &body, false).await
}

/// `POST /tasks/cancel`: cancels the caller's task; its call is dropped.
async fn task_cancel(
    State(server): State<Arc<Server>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    on_task(&server, &headers, &body, true).await
}

/// The task a `/tasks/*` body names, for the caller it names: read, or cancelled.
async fn on_task(server: &Server, headers: &HeaderMap, body: &[u8], cancel: bool) -> Response {
    let request: TaskRequest = match serde_json::from_slice(body) {
        Ok(request) => request,
        Err(error) => {
            return refused(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!(
                    "the request is not a task request ({error}); send {{\"task_id\": \"...\", \"user_id\": \"...\"}}"
                ),
            );
        }
    };
    let caller = match server
        .caller(headers, request.user_id.as_deref(), request.level)
        .await
    {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let owner = owner_of(&caller.scope);
    let task = if cancel {
        server.tasks.cancel(&owner, &request.task_id).await
    } else {
        server.tasks.get(&owner, &request.task_id).await
    };
    match task {
        Ok(task) => {
            let poll = server.tasks.limits().poll_interval;
            json(
                StatusCode::OK,
                &TaskAnswer {
                    task: RemoteTask::of(task, poll),
                },
            )
        }
        Err(error) => task_refused(&error),
    }
}

/// `GET /health`.
async fn health(State(server): State<Arc<Server>>) -> Response {
    let health = Health {
        status: "ok".to_owned(),
        name: server.name.clone(),
    };
    json(StatusCode::OK, &health)
}

/// `GET /`: the catalog of what a guest may see, as a page.
async fn catalog_page(State(server): State<Arc<Server>>) -> Response {
    // A module that wants a token shows guests nothing.
    #[cfg(feature = "oauth")]
    if let Some(oauth) = server.oauth.as_ref().filter(|oauth| !oauth.allows_guests()) {
        return challenged(oauth, None);
    }
    let guest = Scope::guest();
    let page = server.registry.catalog(&guest).html();
    (
        [(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:",
        )],
        Html(page),
    )
        .into_response()
}

/// A resource server's refusal: `401` (or `403`) with its challenge.
#[cfg(feature = "oauth")]
fn challenged(
    oauth: &super::oauth::ResourceServer,
    refusal: Option<&super::oauth::Refusal>,
) -> Response {
    let status = refusal
        .and_then(|refusal| StatusCode::from_u16(refusal.status).ok())
        .unwrap_or(StatusCode::UNAUTHORIZED);
    let reason = match status {
        StatusCode::FORBIDDEN => "forbidden",
        _ => "unauthorized",
    };
    tracing::warn!(target: "tool_registry::http", status = status.as_u16(), why = refusal.map(|r| r.description.as_str()), "a request was refused: no valid access token");
    tool_registry_telemetry::report::refused("modules", reason);
    let message = refusal.map_or(
        "this module needs an access token; its protected resource metadata names the authorization server",
        |refusal| refusal.description.as_str(),
    );
    let mut response = json(
        status,
        &serde_json::json!({"error": {"code": "unauthorized", "message": message}}),
    );
    if let Ok(value) = axum::http::HeaderValue::from_str(&oauth.challenge(refusal)) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// A request refused before it reached a tool: its body is the typed error.
fn refused(status: StatusCode, message: String) -> Response {
    let error = ToolError::InvalidArguments {
        tool: REQUEST.to_owned(),
        path: String::new(),
        message,
    };
    error_response(status, &error)
}

fn error_response(status: StatusCode, error: &ToolError) -> Response {
    json(status, &serde_json::json!({ "error": error }))
}

fn json(status: StatusCode, body: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (status, [(header::CONTENT_TYPE, "application/json")], bytes).into_response(),
        Err(error) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the answer cannot be written as JSON: {error}"),
        )
            .into_response(),
    }
}

/// Completes on Ctrl-C, or on SIGTERM where there are signals.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
    tracing::info!(target: "tool_registry::http", "shutting down: calls in flight finish, new ones are refused");
}
