//! MCP over streamable HTTP: rmcp's service behind a bearer-token check that decides who each
//! request is ([`Callers`]), bound to loopback unless told otherwise.

use std::io;
use std::path::Path;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderValue, Request, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde::Deserialize;

use super::server::{Caller, McpServer};
use crate::http::auth::Secret;
use crate::registry::Shared;
use crate::{Permission, Scope};

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

    /// The scope of a token, looked up in constant time per entry.
    fn scope_of(&self, token: &str) -> Option<Scope> {
        let mut found = None;
        for (secret, scope) in &self.entries {
            if secret.matches(token) && found.is_none() {
                found = Some(scope.clone());
            }
        }
        found
    }
}

/// The MCP endpoint at `/mcp` for `registry`: each request runs as the caller its token names
/// (a guest without one). Browser requests from an origin other than `origins` are refused.
pub fn router(registry: impl Into<Shared>, callers: Callers, origins: Vec<String>) -> Router {
    McpServer::new(registry, Scope::guest()).router(callers, origins)
}

impl McpServer {
    /// This server's MCP endpoint at `/mcp`, each request as the caller its token names in
    /// `callers` (with this server's scope without one: make it [`Scope::guest`] for a
    /// server others reach). Browser requests from an origin other than `origins` are refused.
    pub fn router(self, callers: Callers, origins: Vec<String>) -> Router {
        http_router(self, callers, origins)
    }

    /// Serves this server over streamable HTTP at `http://ADDR/mcp` until Ctrl-C or SIGTERM;
    /// see [`serve_http`].
    pub async fn serve_http(
        self,
        callers: Callers,
        addr: impl tokio::net::ToSocketAddrs,
        on_bound: impl FnOnce(std::net::SocketAddr),
    ) -> io::Result<()> {
        serve_router(self, callers, addr, on_bound).await
    }
}

fn http_router(server: McpServer, callers: Callers, origins: Vec<String>) -> Router {
    let config = StreamableHttpServerConfig::default().with_allowed_origins(origins);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(
            Arc::new(callers),
            authenticate,
        ))
}

async fn authenticate(
    State(callers): State<Arc<Callers>>,
    mut request: Request<Body>,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.strip_prefix("Bearer ").unwrap_or(value).to_owned());
    let scope = match given {
        None => Scope::guest(),
        Some(token) => match callers.scope_of(&token) {
            Some(scope) => scope,
            None => {
                let mut refused = (StatusCode::UNAUTHORIZED, "unknown token; send a token from the server's callers file, or none to call as a guest").into_response();
                refused
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                return refused;
            }
        },
    };
    request.extensions_mut().insert(Caller(scope));
    next.run(request).await
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
    )
    .await
}

async fn serve_router(
    server: McpServer,
    callers: Callers,
    addr: impl tokio::net::ToSocketAddrs,
    on_bound: impl FnOnce(std::net::SocketAddr),
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
    axum::serve(listener, http_router(server, callers, origins))
        .with_graceful_shutdown(crate::http::shutdown_signal())
        .await
}
