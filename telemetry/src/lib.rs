//! What an operator of a tool registry's servers sees: logs on standard error, the audit
//! trail, spans exported over OTLP, and metrics in Prometheus's format. `toolreg` turns all of
//! it on from its command line (`--log-format`, `--audit`, `--metrics`, the `OTEL_*`
//! variables); an application gets the same from a line each:
//!
//! ```no_run
//! use tool_registry_core::Registry;
//! use tool_registry_telemetry::{LogFormat, Telemetry, audit_trail};
//!
//! // Logs from `RUST_LOG`; spans over OTLP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set.
//! let telemetry = Telemetry::init(LogFormat::Json)?;
//! // Every call's audit record, one JSON line each, appended to a file only its owner reads.
//! let registry = Registry::builder().also_audit(audit_trail("audit.jsonl")?).build()?;
//! // ... serve ...
//! telemetry.shutdown(); // the spans still buffered are sent
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | file | what |
//! | --- | --- |
//! | `lib.rs` | this map, [`TelemetryError`] |
//! | `logs.rs` | `Telemetry`: the subscriber (`RUST_LOG`, `LogFormat`, `DEFAULT_LOG_FILTER`) and, with `otlp`, its exporting layer (feature `subscriber`, on by default) |
//! | `otlp.rs` | the OTLP span exporter the `OTEL_*` variables describe (feature `otlp`) |
//! | `trail.rs` | [`audit_trail`]: the audit trail as JSON lines, with the trace's id |
//! | `report.rs` | what the front ends report (sessions, connections, refusals, tasks), and every metric's [`names`] |
//! | `metrics.rs` | `Metrics`: the Prometheus recorder, the audit sink that counts calls, `GET /metrics` (feature `prometheus`) |

#[cfg(feature = "subscriber")]
mod logs;
#[cfg(feature = "prometheus")]
mod metrics;
#[cfg(feature = "otlp")]
mod otlp;
pub mod report;
mod trail;

#[cfg(feature = "subscriber")]
pub use logs::{DEFAULT_LOG_FILTER, LogFormat, Telemetry};
#[cfg(feature = "prometheus")]
pub use metrics::{Metrics, MetricsSink};
pub use report::names;
pub use trail::{AUDIT_SCHEMA, audit_trail, current_trace_id};

/// Why telemetry could not start.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// A subscriber was installed already: this process's logs are someone else's to set up.
    #[error(
        "a tracing subscriber is installed already; call Telemetry::init once, before any other"
    )]
    AlreadyInstalled,
    /// The `OTEL_*` variables ask for an exporter this build cannot make.
    #[error("cannot export traces: {0}")]
    Exporter(String),
    /// The metrics recorder could not be installed.
    #[error("cannot record metrics: {0}")]
    Metrics(String),
}
