//! MCP over streamable HTTP: rmcp's service behind the layers of `layers.rs` (who each request
//! is, by [`Callers`], and the bounds on sessions and bodies), bound to loopback unless told
//! otherwise; a resource server's protected resource metadata beside it.

use std::io;
use std::sync::Arc;

use axum::Router;
use axum::middleware;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tool_registry_core::Scope;
use tool_registry_core::registry::Shared;
use tower::ServiceBuilder;

use super::callers::Callers;
use super::layers;
use super::quiet::{self, Quiet};
use super::server::McpServer;
use super::sessions::Sessions;
use super::stateless::{self, Stateless};

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
    let tasks = layers::Tasks2025 {
        server: server.clone(),
        sessions: Arc::clone(&sessions),
    };
    let stateless = Stateless {
        server: server.clone(),
    };
    let quiet = Quiet {
        server: server.clone(),
        sessions: Arc::clone(&sessions),
    };
    // Each session and each stateless request gets a handler of its own, whose end is the
    // session's end for the tasks it starts.
    let service = StreamableHttpService::new(
        move || Ok(server.for_session()),
        Arc::clone(&sessions),
        config,
    );
    // The protected resource metadata of a resource server, read without a token (RFC 9728):
    // at the path the resource's own path names, and at the bare well-known path.
    #[cfg(feature = "oauth")]
    let metadata = callers
        .oauth()
        .map(|server| (server.metadata_path(), server.metadata()));
    // Each request goes down these in order, each one job (see `layers.rs`), then to rmcp.
    let stack = ServiceBuilder::new()
        .layer(middleware::from_fn_with_state(
            Arc::new(callers),
            layers::authenticate,
        ))
        // A stateless request is answered here when it can be, before anything of sessions.
        .layer(middleware::from_fn_with_state(
            Arc::new(stateless),
            stateless::stateless,
        ))
        .layer(middleware::from_fn_with_state(
            sessions,
            layers::bound_sessions,
        ))
        .layer(middleware::from_fn(layers::refuse_long_answers))
        // A session's call of a tool that writes nothing to its client is answered here, once
        // a body too long for rmcp was told to the question it answers.
        .layer(middleware::from_fn_with_state(
            Arc::new(quiet),
            quiet::quiet,
        ))
        .layer(middleware::from_fn_with_state(
            Arc::new(tasks),
            layers::tasks_2025,
        ))
        .layer(middleware::from_fn(layers::name_the_task));
    #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
    let mut router = Router::new()
        .nest_service("/mcp", ArcService(Arc::new(service)))
        .layer(stack);
    #[cfg(feature = "oauth")]
    if let Some((path, document)) = metadata {
        let document = axum::Json(document);
        let bare = "/.well-known/oauth-protected-resource";
        let paths = if path == bare {
            vec![bare]
        } else {
            vec![path.as_str(), bare]
        };
        for at in paths {
            let document = document.clone();
            router = router.route(at, axum::routing::get(move || async move { document }));
        }
    }
    router
}

/// rmcp's service behind one `Arc`. A layer clones what it wraps for every request, and rmcp's
/// service clones its configuration (lists of hosts and origins) when it is cloned: behind the
/// `Arc`, each layer clones a pointer, and the configuration is cloned once a request, by the
/// call below, as it would be with no layer at all.
struct ArcService<S>(Arc<S>);

impl<S> Clone for ArcService<S> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<S, R> tower::Service<R> for ArcService<S>
where
    S: tower::Service<R> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        // rmcp's service is always ready: each call clones it and works on the clone.
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: R) -> Self::Future {
        S::clone(&self.0).call(request)
    }
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
