#![doc = include_str!("../README.md")]
#![warn(missing_docs)]
// docs.rs builds with `--cfg docsrs` (see `[package.metadata.docs.rs]`) on a nightly rustdoc,
// which marks each feature-gated module with the feature it needs; a stable build skips it.
#![cfg_attr(docsrs, feature(doc_cfg))]

// The contracts: every module and root name of `tool-registry-core`, as this crate's own
// (`tool_registry::Registry`, `tool_registry::gate::Gate`, the macros, and the hidden
// `__private` that `#[tool]` expands to).
#[doc(inline)]
pub use tool_registry_core::*;

/// The `toolreg` command line, for any application's tools (`tool-registry-cli`).
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
#[doc(inline)]
pub use tool_registry_cli as cli;

/// HTTP tool modules: serve a registry's tools, use other processes' (`tool-registry-http`).
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
#[doc(inline)]
pub use tool_registry_http as http;

/// MCP: a registry's tools over the Model Context Protocol, other servers' tools in a registry
/// (`tool-registry-mcp`).
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
#[doc(inline)]
pub use tool_registry_mcp as mcp;

/// What an operator sees: logs, the audit trail, OTLP traces, Prometheus metrics
/// (`tool-registry-telemetry`).
#[cfg(feature = "telemetry")]
#[cfg_attr(docsrs, doc(cfg(feature = "telemetry")))]
#[doc(inline)]
pub use tool_registry_telemetry as telemetry;

/// A test kit for a registry's tools: every tool called with arguments from its schema, a
/// scripted model, an in-process MCP client (`tool-registry-testing`).
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
#[doc(inline)]
pub use tool_registry_testing as testing;

/// A fleet on Redis: the stores every instance shares (`tool-registry-redis`).
#[cfg(feature = "redis")]
#[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
#[doc(inline)]
pub use tool_registry_redis as redis;

/// The README of the repository, compiled as a doc test so that its examples stay true.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
struct RepositoryReadme;
