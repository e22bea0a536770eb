//! What an operator of the command line sees: one `tracing` subscriber on standard error, its
//! filter from `RUST_LOG` (warnings and errors, and one line per server start and stop, unless
//! set), as text or JSON lines (`--log-format`), exporting spans over OTLP where the `OTEL_*`
//! variables say (feature `otlp`); the audit trail (`--audit`); the metrics (`--metrics`,
//! feature `metrics`); and what a server says of itself when it starts.

#[cfg(feature = "http")]
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tool_registry_telemetry::Telemetry;

#[cfg(feature = "http")]
use tool_registry_core::{Registry, Scope};

pub use tool_registry_telemetry::DEFAULT_LOG_FILTER;

/// Whether the next command line installs the subscriber ([`log_to_stderr`]).
static INSTALL: AtomicBool = AtomicBool::new(false);

/// How log lines are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Text, one event a line.
    #[default]
    Pretty,
    /// JSON lines, for log shippers.
    Json,
}

/// The command lines this process runs next ([`crate::run`]) write their logs on standard
/// error, with the subscriber they install from `RUST_LOG` and `--log-format`. [`crate::main`]
/// and [`crate::main_with`] do this; an application that calls [`crate::run`] itself (for its
/// own argument handling) calls it first. Tests that call `run` in process leave it off.
pub fn log_to_stderr() {
    INSTALL.store(true, Ordering::Relaxed);
}

/// Installs the subscriber, once, if [`log_to_stderr`] asked: the telemetry to keep until the
/// command ends (its last spans are sent then), or why it could not start.
pub(super) fn install(format: LogFormat) -> Result<Option<Telemetry>, String> {
    if !INSTALL.swap(false, Ordering::Relaxed) {
        return Ok(None);
    }
    let format = match format {
        LogFormat::Pretty => tool_registry_telemetry::LogFormat::Pretty,
        LogFormat::Json => tool_registry_telemetry::LogFormat::Json,
    };
    match Telemetry::init(format) {
        Ok(telemetry) => Ok(Some(telemetry)),
        // Someone else's subscriber (an application's own, installed before `run`): theirs.
        Err(tool_registry_telemetry::TelemetryError::AlreadyInstalled) => Ok(None),
        Err(error) => Err(error.to_string()),
    }
}

/// What `--audit` and `--metrics` ask for.
#[derive(clap::Args)]
pub(super) struct ObserveArgs {
    /// Append every call's audit record, one JSON line each, to FILE (created readable by its
    /// owner only; several processes may share it), or write them on standard output (`-`).
    #[arg(long, global = true, value_name = "FILE|-")]
    audit: Option<std::path::PathBuf>,
    /// Serve `GET /metrics` in Prometheus's text format on ADDR (`127.0.0.1:9464`; port 0 for
    /// any free one, printed at start) while `serve` or `mcp --http` runs.
    #[cfg(feature = "metrics")]
    #[arg(long, global = true, value_name = "ADDR")]
    metrics: Option<String>,
    /// Let `--metrics` listen beyond loopback. The metrics ask for no credentials: whoever
    /// reaches the address reads the names of the tools called and how often.
    #[cfg(feature = "metrics")]
    #[arg(long, global = true)]
    metrics_public: bool,
}

/// The metrics of this run, and the address they are served on, until a server takes them.
#[cfg(feature = "metrics")]
static METRICS: std::sync::Mutex<
    Option<(tool_registry_telemetry::Metrics, std::net::TcpListener)>,
> = std::sync::Mutex::new(None);

impl ObserveArgs {
    /// `builder` with the audit trail and the metrics' sink; an error names the flag.
    pub(super) fn observe(
        &self,
        builder: tool_registry_core::RegistryBuilder,
    ) -> Result<tool_registry_core::RegistryBuilder, String> {
        let mut builder = builder;
        if let Some(destination) = &self.audit {
            let trail = tool_registry_telemetry::audit_trail(destination).map_err(|error| {
                format!("--audit: cannot open {}: {error}", destination.display())
            })?;
            builder = builder.also_audit(trail);
        }
        #[cfg(feature = "metrics")]
        if let Some(address) = &self.metrics {
            let listener = std::net::TcpListener::bind(address.as_str())
                .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
                .map_err(|error| format!("--metrics: cannot listen on {address}: {error}"))?;
            let local = listener
                .local_addr()
                .is_ok_and(|addr| addr.ip().is_loopback());
            if !local && !self.metrics_public {
                return Err(format!(
                    "--metrics: {address} is beyond loopback, and the metrics ask for no credentials; listen on 127.0.0.1, or add --metrics-public"
                ));
            }
            let metrics = tool_registry_telemetry::Metrics::install()
                .map_err(|error| format!("--metrics: {error}"))?;
            builder = builder.also_audit(metrics.sink());
            *METRICS.lock().unwrap_or_else(|e| e.into_inner()) = Some((metrics, listener));
        }
        Ok(builder)
    }
}

/// Serves the metrics `--metrics` asked for, on the server's runtime, for as long as it runs;
/// the address is said on `out` (`metrics on http://ADDR/metrics`, the line after `listening
/// on`) and in the log.
#[cfg(feature = "http")]
pub(super) fn serve_metrics(out: &mut dyn std::io::Write) {
    #[cfg(feature = "metrics")]
    {
        let Some((metrics, listener)) = METRICS.lock().unwrap_or_else(|e| e.into_inner()).take()
        else {
            return;
        };
        let address = listener
            .local_addr()
            .map(|addr| format!("http://{addr}/metrics"))
            .unwrap_or_default();
        match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => {
                tracing::info!(target: "tool_registry::serve", %address, "serving metrics");
                let _ = writeln!(out, "metrics on {address}");
                tokio::spawn(metrics.serve(listener));
            }
            Err(error) => {
                tracing::error!(target: "tool_registry::serve", %error, "cannot serve the metrics");
            }
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = out;
}

#[cfg(feature = "http")]
/// A server's start: one line (`tool_registry::serve`, info), then one line for each tool it
/// serves to `scope` with its version and where it comes from (`tool_registry::tools`, info).
pub(super) fn started(what: &str, address: &str, registry: &Arc<Registry>, scope: &Scope) {
    let tools = registry.tools(scope);
    tracing::info!(target: "tool_registry::serve", %address, tools = tools.len(), "serving {what}");
    for tool in tools {
        let origin = match (tool.is_linked(), tool.module()) {
            (true, _) => "compiled".to_owned(),
            (false, Some(module)) => format!("module {module}"),
            (false, None) => "run-time".to_owned(),
        };
        tracing::info!(
            target: "tool_registry::tools",
            tool = tool.name(),
            version = tool.version().unwrap_or("-"),
            %origin,
            "Loaded tool"
        );
    }
}

/// A server's stop.
#[cfg(feature = "http")]
pub(super) fn stopped(what: &str, address: &str) {
    tracing::info!(target: "tool_registry::serve", %address, "stopped serving {what}");
}
