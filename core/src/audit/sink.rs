//! Where audit records go: [`AuditSink`], and the two sinks the crate provides.

use std::io::Write as _;

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
            tool = %super::Shown::name(&r.tool),
            version = r.version.as_deref(),
            user = r.user.as_deref(),
            level = r.level.map(|level| level.as_str()),
            chat_id = r.chat_id,
            duration_ms = r.duration_ms,
            outcome = %r.outcome,
            gate = r.gate.as_deref(),
            cache = r.cache.map(super::CacheAnswer::as_str),
            approval = r.approval.as_deref(),
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

impl<S: AuditSink + ?Sized> AuditSink for std::sync::Arc<S> {
    fn record(&self, record: &AuditRecord<'_>) {
        (**self).record(record);
    }
}

/// Both sinks receive every record, `A` first: `registry.audit_sink((TracingAuditSink,
/// file))`.
impl<A: AuditSink, B: AuditSink> AuditSink for (A, B) {
    fn record(&self, record: &AuditRecord<'_>) {
        self.0.record(record);
        self.1.record(record);
    }
}

/// Appends each record as one JSON line (the schema of [`AuditRecord`]) to a file or to
/// standard output: the audit trail.
///
/// A file is created readable and writable by its owner only (mode `0600` on Unix) and opened
/// for appending; each line is written by one `write` call on the appending descriptor, so
/// several processes may append to one file at once and every line stays whole.
///
/// ```no_run
/// use tool_registry::Registry;
/// use tool_registry::audit::{JsonLinesAuditSink, TracingAuditSink};
///
/// let trail = JsonLinesAuditSink::open("audit.jsonl")?;
/// let registry = Registry::builder().audit_sink((TracingAuditSink, trail)).build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct JsonLinesAuditSink {
    out: std::sync::Mutex<Box<dyn std::io::Write + Send>>,
    field: Option<ExtraField>,
}

/// A field [`JsonLinesAuditSink::with_field`] adds to every line: its key, and what gives its
/// value.
type ExtraField = (&'static str, fn() -> Option<String>);

impl JsonLinesAuditSink {
    /// Opens (or creates, owner-only) `path` for appending.
    pub fn open(path: impl AsRef<std::path::Path>) -> std::io::Result<Self> {
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path)?;
        Ok(Self::to_writer(file))
    }

    /// Writes to standard output.
    pub fn stdout() -> Self {
        Self::to_writer(std::io::stdout())
    }

    /// Writes to `out`, one `write_all` a line.
    pub fn to_writer(out: impl std::io::Write + Send + 'static) -> Self {
        Self {
            out: std::sync::Mutex::new(Box::new(out)),
            field: None,
        }
    }

    /// Adds `key` to each line, with the value `value` gives when the record is written (the
    /// current trace's id, say), left out when it gives none. `key` must not be one of the
    /// record's own.
    pub fn with_field(mut self, key: &'static str, value: fn() -> Option<String>) -> Self {
        self.field = Some((key, value));
        self
    }
}

impl AuditSink for JsonLinesAuditSink {
    fn record(&self, record: &AuditRecord<'_>) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        if let Some((key, value)) = self.field
            && let Some(value) = value()
            && line.last() == Some(&b'}')
        {
            line.pop();
            line.push(b',');
            let _ = serde_json::to_writer(&mut line, key);
            line.push(b':');
            let _ = serde_json::to_writer(&mut line, &value);
            line.push(b'}');
        }
        line.push(b'\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(error) = out.write_all(&line).and_then(|()| out.flush()) {
            tracing::warn!(target: "tool_registry::audit", %error, "cannot write the audit trail");
        }
    }
}
