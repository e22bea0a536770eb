//! HTTP tool modules (feature `http`): serve a registry's tools to other processes, and use
//! theirs as tools of this registry, named `module.tool`.
//!
//! | file | what |
//! | --- | --- |
//! | `server.rs` | [`Server`], [`serve`]: `GET /manifest`, `POST /execute`, `GET /health`, and the catalog at `/` |
//! | `listen.rs` | [`ConnectionLimits`]: the accept loop both servers share, with a connection cap, header, body and idle timeouts, a body's minimum rate, and a stop with a deadline |
//! | `wire.rs` | what travels: [`Manifest`], [`ExecuteRequest`], [`Health`] |
//! | `auth.rs` | the shared secret, compared in constant time |
//! | `grant.rs` | [`ClientCredentials`]: a gateway's access tokens for a module that is a resource server (client credentials, the authorization server found from the module's metadata), kept until shortly before they expire |
//! | `oauth/` | `oauth::ResourceServer` (feature `oauth`; its files listed in `oauth/mod.rs`): a server as an OAuth 2.1 resource server (protected resource metadata, the `401` challenge, access tokens checked as JWTs against the authorization server's keys or by introspection, mapped to a [`Scope`](tool_registry_core::Scope)) |
//! | `map.rs` | [`ModuleMap`], [`Module`]: where the modules are (with a shared secret or client credentials), from code or TOML |
//! | `cache.rs` | [`ManifestCache`], [`FileManifestCache`], [`MemoryManifestCache`] |
//! | `gateway.rs` | [`Gateway`]: discovery, the cache, refreshes, registering `module.tool` |
//! | `error.rs` | [`ModuleError`]: a module unreachable, or an HTTP error status, as a call's `ToolError::Remote` and back |
//! | `remote.rs` | one forwarded call and its typed failures; its answer read within the gateway's bounds (blocks counted as the body arrives, then read one at a time) |
//! | `trace.rs` | the W3C `traceparent` header between the two sides |
//!
//! # A module
//!
//! Any binary serves its registry, or the part of it a [`Scope`](tool_registry_core::Scope) may see:
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! tool_registry::http::serve(tool_registry::Registry::global(), "127.0.0.1:8000").await
//! # }
//! ```
//!
//! - `GET /manifest`: the module's name and version and every tool the caller may see, each a
//!   [`ToolSpec`](tool_registry_core::ToolSpec) named `module.tool`.
//! - `POST /execute` with `{"tool_name", "arguments", "user_id", "level"}`: the
//!   [`ToolResult`](tool_registry_core::ToolResult) of the call, after every gate of the pipeline for that
//!   caller (scope, validation, rate limits, evaluation gate, confirmation, timeout, audit).
//!   A refused request answers a typed error body `{"error": {"code", "message", ...}}`
//!   with the codes of [`ToolError`](tool_registry_core::ToolError): `400` or `422` (`invalid_arguments`)
//!   for a body that is not JSON or not an execute request, `413` (`arguments_too_large`) for
//!   a body over [`MAX_BODY_BYTES`], `404` (`unknown_tool`) for a tool that does not exist or
//!   that the caller may not see — the same bytes for both.
//! - `POST /execute` with `"task": true` (a client that follows tasks): a tool declared
//!   `task = "optional"` that runs longer than a moment, or `task = "required"`, answers
//!   `202 Accepted` with `{"task": {"id", "status", ...}}` ([`TaskAnswer`]); `POST /tasks/get`
//!   and `POST /tasks/cancel` with `{"task_id", "user_id", "level"}` ([`TaskRequest`]) read and
//!   cancel it, for its caller only (anyone else's is `404` `task_not_found`, as an unknown id).
//!   A gateway sends `"task": true` for such tools, polls the task, and cancels it when its own
//!   call is dropped.
//! - `GET /health`: `{"status": "ok", "name"}`.
//!
//! The request's `user_id` and `level` are believed only from a client that sends the
//! module's shared secret ([`Server::token`]) as `Authorization: Bearer <secret>`; any other
//! client is a guest, and sees and runs what a guest may. Ctrl-C or SIGTERM stops the server:
//! no new connection is taken, connections with no call in flight close at once, and the calls
//! in flight finish first, within a deadline. What a client can hold besides its requests is
//! bounded ([`ConnectionLimits`]: a connection cap, header, body and idle timeouts, a body's
//! minimum rate; a request counts as a call only once its body has arrived whole).
//!
//! # A gateway
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tool_registry::http::{Gateway, ModuleMap};
//! use tool_registry::{Ctx, Registry, Scope};
//!
//! let registry = Arc::new(Registry::builder().build()?);
//! let map = ModuleMap::from_toml(r#"
//!     [modules.kb]
//!     url = "http://127.0.0.1:8000"
//!     token_env = "KB_MODULE_TOKEN"
//! "#)?;
//! let gateway = Gateway::builder(registry.clone(), map)
//!     .cache_file(".toolreg-modules.json")
//!     .build()?;
//! gateway.start().await;                          // cache first, then the modules, at once
//! tokio::spawn(gateway.clone().keep_fresh());     // fetched again when the TTL runs out
//!
//! let ctx = Ctx::for_scope(Scope::user("alice"));
//! let result = registry.call("kb.research", r#"{"query": "caching"}"#, &ctx).await?;
//! # Ok(()) }
//! ```
//!
//! Remote tools are run-time tools of the registry: listed in every provider format (with
//! their wire names, `kb__research` where a provider refuses `.`), documented in the catalog,
//! and scoped like local tools — permission levels, modules and allow-lists apply to them
//! exactly as to local ones, and every gate runs at the gateway for the caller, then at the
//! module for the user and level the gateway sends. A call is routed by the first `.` of its
//! name; a name no module gives is an unknown tool, like any name the caller may not see.
//! Each call may take 30 s (120 s for a module configured `slow`), after which it is
//! [`ToolError::TimedOut`](tool_registry_core::ToolError::TimedOut); a module that cannot be reached is
//! [`ModuleError::Unreachable`], an HTTP error status without a typed body
//! [`ModuleError::Status`] with the start of the body (each a [`ToolError::Remote`](tool_registry_core::ToolError::Remote)
//! to the caller, with its code), and a typed error from the module is that error. A tool
//! annotated idempotent is tried once more after a failure that may not have reached it
//! (connection refused or dropped, `502`, `503`, `504`).
//!
//! # Traces
//!
//! Every call is a `tracing` span (`execute_tool`); a forwarded call carries the W3C
//! `traceparent` of that span, and the module's request span continues it, so that an
//! application that installs `tracing-opentelemetry` sees the gateway's call and the module's
//! work as one trace.

#![warn(missing_docs)]

pub mod auth;
mod cache;
mod error;
mod gateway;
mod grant;
pub mod listen;
mod map;
#[cfg(feature = "oauth")]
pub mod oauth;
mod remote;
mod server;
mod trace;
mod wire;

pub use cache::{
    CachedManifest, FileManifestCache, MANIFEST_TTL, ManifestCache, MemoryManifestCache,
};
pub use error::ModuleError;
pub use gateway::{
    DEFAULT_CACHE_FILE, Gateway, GatewayBuilder, GatewayError, MAX_MANIFEST_BYTES,
    MAX_MODULE_TOOLS, ModuleStatus, Source,
};
pub use grant::ClientCredentials;
pub use listen::ConnectionLimits;
pub use map::{
    DISCOVERY_TIMEOUT, MODULE_TIMEOUT, Module, ModuleMap, ModuleMapError, SLOW_MODULE_TIMEOUT,
};
pub use remote::MAX_RESULT_BYTES;
pub use server::{DEFAULT_MODULE_NAME, MAX_BODY_BYTES, Server, shutdown_signal};
pub use trace::{TRACEPARENT, continue_traceparent, current_traceparent};
pub use wire::{ExecuteRequest, Health, Manifest, RemoteTask, TaskAnswer, TaskRequest};

use tool_registry_core::registry::Shared;

/// Serves `registry` (every tool, as the module [`DEFAULT_MODULE_NAME`], to guests) on the
/// loopback address `addr` until Ctrl-C or SIGTERM. See [`Server`] for a name, a secret, a
/// scope.
pub async fn serve(
    registry: impl Into<Shared>,
    addr: impl tokio::net::ToSocketAddrs,
) -> std::io::Result<()> {
    Server::new(registry).serve(addr).await
}
