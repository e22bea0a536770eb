//! W3C trace context across the process boundary: the gateway sends its call's span as a
//! `traceparent` header, and the module's request span continues that trace.
//!
//! Trace and span ids exist only when the application installs `tracing-opentelemetry`;
//! without it no header is sent and nothing is read.

use axum::http::HeaderMap;
use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The header of the W3C Trace Context recommendation.
pub const TRACEPARENT: &str = "traceparent";

/// The `traceparent` value of the current span, when it belongs to a trace (what a client sends
/// the server it calls: the `traceparent` header, or an MCP request's `_meta.traceparent`).
pub fn current_traceparent() -> Option<String> {
    let span = tracing::Span::current();
    if span.is_none() {
        return None;
    }
    let context = span.context();
    let otel = context.span();
    let parent = otel.span_context();
    parent.is_valid().then(|| {
        format!(
            "00-{}-{}-{:02x}",
            parent.trace_id(),
            parent.span_id(),
            parent.trace_flags().to_u8()
        )
    })
}

/// Reads a `traceparent` value: version `00`, 32 hex digits of trace id, 16 of span id, 2 of
/// flags; ids of all zeros are invalid.
pub(super) fn parse_traceparent(value: &str) -> Option<SpanContext> {
    let mut parts = value.trim().split('-');
    let (version, trace, span, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |text: &str, len: usize| {
        text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    if version != "00"
        || parts.next().is_some()
        || !hex(trace, 32)
        || !hex(span, 16)
        || !hex(flags, 2)
    {
        return None;
    }
    let context = SpanContext::new(
        TraceId::from_hex(trace).ok()?,
        SpanId::from_hex(span).ok()?,
        TraceFlags::new(u8::from_str_radix(flags, 16).ok()?),
        true,
        TraceState::default(),
    );
    context.is_valid().then_some(context)
}

/// Makes `span` continue the trace the request's `traceparent` names, if any.
pub(super) fn continue_trace(span: &tracing::Span, headers: &HeaderMap) {
    if let Some(value) = headers
        .get(TRACEPARENT)
        .and_then(|value| value.to_str().ok())
    {
        continue_traceparent(span, value);
    }
}

/// Makes `span` continue the trace a `traceparent` value names (the header of a request, an MCP
/// request's `_meta.traceparent`); a value that is not well formed is ignored.
pub fn continue_traceparent(span: &tracing::Span, traceparent: &str) {
    let Some(parent) = parse_traceparent(traceparent) else {
        return;
    };
    let context = opentelemetry::Context::new().with_remote_span_context(parent);
    let _ = span.set_parent(context);
}

/// The span of one request a module serves, named as OpenTelemetry's HTTP conventions ask.
pub(super) fn request_span(method: &str, path: &str) -> tracing::Span {
    tracing::info_span!(
        target: "tool_registry::http",
        "http_request",
        otel.name = format!("{method} {path}"),
        otel.kind = "server",
        http.request.method = method,
        url.path = path,
    )
}

#[cfg(test)]
mod tests {
    use super::parse_traceparent;

    #[test]
    fn a_traceparent_is_read_only_when_well_formed() {
        let good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let context = parse_traceparent(good).unwrap();
        assert_eq!(
            context.trace_id().to_string(),
            "4bf92f3577b34da6a3ce929d0e0e4736"
        );
        assert!(context.is_remote());
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
        ] {
            assert!(parse_traceparent(bad).is_none(), "{bad}");
        }
    }
}
