//! Where audit records go: [`AuditSink`], and the two sinks the crate provides.

use super::AuditRecord;
use crate::meta::Risk;

/// Receives one [`AuditRecord`] per call.
pub trait AuditSink: Send + Sync {
    /// Records one call. Must not block for long: it runs on the caller's task.
    fn record(&self, record: &AuditRecord<'_>);
}

/// The default sink: one `tracing` event per call (target `tool_registry::audit`).
#[derive(Debug, Default, Clone, Copy)]
pub struct TracingAuditSink;

impl AuditSink for TracingAuditSink {
    fn record(&self, r: &AuditRecord<'_>) {
        tracing::info!(
            target: "tool_registry::audit",
            tool = %r.tool,
            user = r.user.as_deref(),
            chat_id = r.chat_id,
            duration_ms = r.duration_ms,
            outcome = %r.outcome,
            risk = r.risk.map(Risk::as_str),
            read_only = r.annotations.and_then(|a| a.read_only),
            destructive = r.annotations.and_then(|a| a.destructive),
            idempotent = r.annotations.and_then(|a| a.idempotent),
            open_world = r.annotations.and_then(|a| a.open_world),
            requires_confirmation = r.annotations.and_then(|a| a.requires_confirmation),
            hooks = (!r.hooks.is_empty()).then(|| hooks_text(&r.hooks)),
            "tool call"
        );
    }
}

/// The hooks that acted, for a log line: `redact_secrets changed (redacted 1 secret), cache hit`.
fn hooks_text(hooks: &[super::Acted]) -> String {
    let mut text = String::new();
    for (i, acted) in hooks.iter().enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        text.push_str(&acted.hook);
        text.push(' ');
        text.push_str(acted.action);
        if let Some(detail) = &acted.detail {
            text.push_str(" (");
            text.push_str(detail);
            text.push(')');
        }
    }
    text
}

/// Appends each record as one JSON line to a file.
pub struct JsonLinesAuditSink {
    file: std::sync::Mutex<std::fs::File>,
}

impl JsonLinesAuditSink {
    /// Opens (or creates) `path` for appending.
    pub fn open(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Self {
            file: std::sync::Mutex::new(file),
        })
    }
}

impl AuditSink for JsonLinesAuditSink {
    fn record(&self, record: &AuditRecord<'_>) {
        use std::io::Write;
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(error) = file.write_all(&line) {
            tracing::warn!(target: "tool_registry::audit", %error, "cannot write the audit file");
        }
    }
}
