//! The subscriber: log lines on standard error, filtered by `RUST_LOG`, as text or JSON lines;
//! with `otlp`, a second layer that exports the registry's spans.

use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;
use tracing_subscriber::{EnvFilter, Layer, Registry};

use crate::TelemetryError;

/// The filter without `RUST_LOG`: warnings and errors, and the servers' start and stop (target
/// `tool_registry::serve`); `RUST_LOG=info` adds a line per tool served, module connected and call.
pub const DEFAULT_LOG_FILTER: &str = "warn,tool_registry::serve=info";

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Text, one event a line.
    #[default]
    Pretty,
    /// JSON lines, for log shippers.
    Json,
}

/// The process's telemetry, installed by [`Telemetry::init`]: keep it while the process runs,
/// and [`shutdown`](Self::shutdown) it (or drop it) at the end so that buffered spans are
/// sent.
#[must_use = "dropping it stops exporting spans"]
pub struct Telemetry {
    #[cfg(feature = "otlp")]
    traces: Option<crate::otlp::Traces>,
}

impl Telemetry {
    /// Installs the process's subscriber: log lines on standard error in `format`, filtered by
    /// `RUST_LOG` ([`DEFAULT_LOG_FILTER`] unless set), colored on a terminal only. With the
    /// `otlp` feature, when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set,
    /// the spans of the registry (targets `tool_registry*`, INFO and above, whatever
    /// `RUST_LOG` says) are exported too, as the other standard variables describe:
    /// `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or `grpc`),
    /// `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, `OTEL_SERVICE_NAME`
    /// (`toolreg` unless set), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER`;
    /// `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` turn it off.
    pub fn init(format: LogFormat) -> Result<Self, TelemetryError> {
        let filter = EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
        let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let lines = tracing_subscriber::fmt::layer()
            .with_ansi(terminal)
            .with_writer(std::io::stderr);
        let lines: Box<dyn Layer<Registry> + Send + Sync> = match format {
            LogFormat::Pretty => lines.with_filter(filter).boxed(),
            LogFormat::Json => lines.json().with_filter(filter).boxed(),
        };
        #[cfg(feature = "otlp")]
        {
            let traces = crate::otlp::Traces::from_env()?;
            crate::trail::EXPORTING.store(traces.is_some(), std::sync::atomic::Ordering::Relaxed);
            let mut layers = vec![lines];
            layers.extend(traces.as_ref().map(crate::otlp::Traces::layer));
            tracing_subscriber::registry()
                .with(layers)
                .try_init()
                .map_err(|_| TelemetryError::AlreadyInstalled)?;
            Ok(Self { traces })
        }
        #[cfg(not(feature = "otlp"))]
        {
            tracing_subscriber::registry()
                .with(lines)
                .try_init()
                .map_err(|_| TelemetryError::AlreadyInstalled)?;
            Ok(Self {})
        }
    }

    /// Whether spans are exported (the `otlp` feature, and the `OTEL_*` variables set).
    pub fn exports_traces(&self) -> bool {
        #[cfg(feature = "otlp")]
        return self.traces.is_some();
        #[cfg(not(feature = "otlp"))]
        false
    }

    /// Sends the spans still buffered, and stops exporting. Dropping does the same.
    pub fn shutdown(self) {}
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        #[cfg(feature = "otlp")]
        if let Some(traces) = self.traces.take() {
            traces.shutdown();
        }
    }
}
