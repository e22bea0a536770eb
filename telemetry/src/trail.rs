//! The audit trail: every call's [`AuditRecord`](tool_registry_core::audit::AuditRecord) as one JSON
//! line, with the id of the trace the call belongs to.

use tool_registry_core::audit::JsonLinesAuditSink;

/// The JSON Schema of one line of the audit trail (draft 2020-12): the fields of
/// [`AuditRecord`](tool_registry_core::audit::AuditRecord), and `trace_id`.
pub const AUDIT_SCHEMA: &str = include_str!("../audit.schema.json");

/// The audit trail at `destination`: `-` for standard output, else a file, created readable
/// by its owner only and appended to (several processes may share one; each line is written
/// whole). Each line is one call's [`AuditRecord`](tool_registry_core::audit::AuditRecord), with
/// `trace_id` when the call's span belongs to an exported trace.
pub fn audit_trail(
    destination: impl AsRef<std::path::Path>,
) -> std::io::Result<JsonLinesAuditSink> {
    let destination = destination.as_ref();
    let sink = match destination.as_os_str() == "-" {
        true => JsonLinesAuditSink::stdout(),
        false => JsonLinesAuditSink::open(destination)?,
    };
    Ok(sink.with_field("trace_id", current_trace_id))
}

/// Whether this process exports its spans ([`Telemetry::init`](crate::Telemetry) found an OTLP
/// endpoint): without it no span has a trace id, and none is looked for.
#[cfg(feature = "otlp")]
pub(crate) static EXPORTING: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The id of the trace the current span belongs to, in 32 hex digits: with the `otlp` feature,
/// when spans are exported ([`Telemetry`](crate::Telemetry)); `None` otherwise.
pub fn current_trace_id() -> Option<String> {
    #[cfg(feature = "otlp")]
    {
        if !EXPORTING.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        use opentelemetry::trace::TraceContextExt as _;
        use tracing_opentelemetry::OpenTelemetrySpanExt as _;
        let span = tracing::Span::current();
        if span.is_none() {
            return None;
        }
        let context = span.context();
        let otel = context.span();
        let ids = otel.span_context();
        ids.is_valid().then(|| ids.trace_id().to_string())
    }
    #[cfg(not(feature = "otlp"))]
    None
}
