//! What a running tool may ask of the client its caller reaches it through: [`ClientLink`],
//! set on a call's [`Ctx`](super::Ctx) by a front end that has a client (the MCP server), and
//! [`LogLevel`], the levels a tool logs at.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ask::{AskError, Form, FormAnswer, Root, Sampled, Sampling};

/// What [`ClientLink::ask`] and [`ClientLink::sample`] give back: the client's answer, once it
/// comes.
pub type Asking<T> = Pin<Box<dyn Future<Output = Result<T, AskError>> + Send + 'static>>;

/// How much a message a tool logs matters: MCP's levels (those of syslog, RFC 5424), from the
/// least to the most severe. Ordered: `Debug < Info < ... < Emergency`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detail for whoever debugs the tool.
    Debug,
    /// What the tool is doing.
    Info,
    /// Normal but worth noticing.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A part of the tool cannot work.
    Critical,
    /// Someone must act at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// The level as MCP writes it: `debug`, `info`, `notice`, `warning`, `error`, `critical`,
    /// `alert`, `emergency`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The client a call's caller reaches the tool through, as the tool may use it while it runs.
/// A front end with such a client (the MCP server) sets one on the call's context
/// ([`Ctx::with_client`](super::Ctx::with_client)); a call without one logs into `tracing`.
pub trait ClientLink: Send + Sync + 'static {
    /// Sends `data`, logged at `level` by `logger`, to the client, when the client's own filter
    /// (MCP's `logging/setLevel`) lets that level through; never waits for the client.
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value);

    /// Asks the person behind the client the question of `form` (MCP's form elicitation).
    /// [`Ctx::ask`](super::Ctx::ask) checks the answer against the form and bounds its wait;
    /// a link only delivers it. A client that cannot be asked is [`AskError::Unsupported`]
    /// at once, never a wait; so is a link that does not say how.
    fn ask(&self, form: Form) -> Asking<FormAnswer> {
        let _ = form;
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "its link does not carry questions".into(),
        ))))
    }

    /// Ends the stream the call's answer would come on, when the client can take it up again
    /// (MCP's streamable HTTP in a session, SEP-1699): the client reconnects and reads the
    /// rest, the answer included. Whether a stream was released; `false` by default.
    fn release_stream(&self) -> bool {
        false
    }

    /// Asks the client's model for the completion `sampling` describes (MCP's sampling).
    /// [`Ctx::sample`](super::Ctx::sample) bounds the completion's size and its wait.
    fn sample(&self, sampling: Sampling) -> Asking<Sampled> {
        let _ = sampling;
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "its link does not carry sampling requests".into(),
        ))))
    }

    /// Asks the client for its roots (MCP's `roots/list`); `key` names the request where the
    /// client answers by name. Unsupported unless the link carries it.
    fn roots(&self, key: Option<&str>) -> Asking<Vec<Root>> {
        let _ = key;
        Box::pin(std::future::ready(Err(AskError::Unsupported(
            "its link does not carry roots requests".into(),
        ))))
    }
}

/// A call's [`ClientLink`], printable.
#[derive(Clone)]
pub(crate) struct Link(pub(crate) std::sync::Arc<dyn ClientLink>);

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClientLink")
    }
}

/// `data` logged at `level` into `tracing` (target `tool_registry::tool_log`), for a call
/// without a client.
pub fn log_locally(level: LogLevel, logger: Option<&str>, data: &Value, call: Option<&str>) {
    let logger = logger.unwrap_or("");
    let call = call.unwrap_or("");
    match level {
        LogLevel::Debug => {
            tracing::debug!(target: "tool_registry::tool_log", logger, call, %data, "a tool logged");
        }
        LogLevel::Info | LogLevel::Notice => {
            tracing::info!(target: "tool_registry::tool_log", logger, call, level = level.as_str(), %data, "a tool logged");
        }
        LogLevel::Warning => {
            tracing::warn!(target: "tool_registry::tool_log", logger, call, %data, "a tool logged");
        }
        _ => {
            tracing::error!(target: "tool_registry::tool_log", logger, call, level = level.as_str(), %data, "a tool logged");
        }
    }
}
