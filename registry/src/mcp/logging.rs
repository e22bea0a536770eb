//! Logging to an MCP client (the `initialize` era's `logging/setLevel` and
//! `notifications/message`, deprecated by the 2026-07-28 revision's SEP-2577, hence the
//! `allow`): a call's [`ClientLink`] for [`Ctx::log`](crate::Ctx::log), and the session's level.
#![allow(deprecated)]

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::RoleServer;
use serde_json::Value;

use crate::call::{ClientLink, LogLevel};

/// Stores the least level the session's client wants, as `logging/setLevel` asked.
pub(super) fn set_level(store: &AtomicU8, level: rmcp::model::LoggingLevel) {
    store.store(level_of(level) as u8, Ordering::Relaxed);
}

/// How many log messages of one call wait for the client at most; more are dropped (counted in
/// `tracing`), so that a tool that logs in a loop never waits and never fills memory.
const LOG_QUEUE: usize = 1024;

/// A call's client over MCP, for [`Ctx::log`](crate::Ctx::log): messages at the session's level
/// or above go out as `notifications/message`, in order, through a queue of their own made at the
/// first message.
pub(super) struct McpClient {
    peer: rmcp::Peer<RoleServer>,
    level: Arc<AtomicU8>,
    queue: std::sync::OnceLock<
        tokio::sync::mpsc::Sender<rmcp::model::LoggingMessageNotificationParam>,
    >,
}

impl McpClient {
    pub(super) fn new(peer: rmcp::Peer<RoleServer>, level: Arc<AtomicU8>) -> Self {
        Self {
            peer,
            level,
            queue: std::sync::OnceLock::new(),
        }
    }
}

impl ClientLink for McpClient {
    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        if (level as u8) < self.level.load(Ordering::Relaxed) {
            return;
        }
        // A tool's own thread, outside the runtime, cannot start the queue: its message goes
        // into `tracing`.
        let runtime = match (self.queue.get(), tokio::runtime::Handle::try_current()) {
            (Some(_), _) => None,
            (None, Ok(runtime)) => Some(runtime),
            (None, Err(_)) => {
                crate::call::client::log_locally(level, logger, &data, None);
                return;
            }
        };
        let queue = self.queue.get_or_init(|| {
            let (sender, mut messages) = tokio::sync::mpsc::channel(LOG_QUEUE);
            let peer = self.peer.clone();
            let runtime = runtime.unwrap_or_else(tokio::runtime::Handle::current);
            runtime.spawn(async move {
                while let Some(message) = messages.recv().await {
                    if peer.notify_logging_message(message).await.is_err() {
                        return;
                    }
                }
            });
            sender
        });
        let mut message =
            rmcp::model::LoggingMessageNotificationParam::new(wire_level(level), data);
        if let Some(logger) = logger {
            message = message.with_logger(logger);
        }
        if queue.try_send(message).is_err() {
            tracing::debug!(target: "tool_registry::mcp", "a tool's log message was dropped: the client is behind");
        }
    }
}

fn wire_level(level: LogLevel) -> rmcp::model::LoggingLevel {
    use rmcp::model::LoggingLevel as Wire;
    match level {
        LogLevel::Debug => Wire::Debug,
        LogLevel::Info => Wire::Info,
        LogLevel::Notice => Wire::Notice,
        LogLevel::Warning => Wire::Warning,
        LogLevel::Error => Wire::Error,
        LogLevel::Critical => Wire::Critical,
        LogLevel::Alert => Wire::Alert,
        LogLevel::Emergency => Wire::Emergency,
    }
}

fn level_of(level: rmcp::model::LoggingLevel) -> LogLevel {
    use rmcp::model::LoggingLevel as Wire;
    match level {
        Wire::Debug => LogLevel::Debug,
        Wire::Info => LogLevel::Info,
        Wire::Notice => LogLevel::Notice,
        Wire::Warning => LogLevel::Warning,
        Wire::Error => LogLevel::Error,
        Wire::Critical => LogLevel::Critical,
        Wire::Alert => LogLevel::Alert,
        Wire::Emergency => LogLevel::Emergency,
    }
}
