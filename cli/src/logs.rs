//! The command line's logs: one `tracing` subscriber on standard error, its filter from
//! `RUST_LOG` (warnings and errors, and one line per server start and stop, unless set), as
//! text or JSON lines (`--log-format`); and what a server says of itself when it starts.

#[cfg(feature = "http")]
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[cfg(feature = "http")]
use tool_registry_core::{Registry, Scope};

/// The filter without `RUST_LOG`: warnings and errors, and the servers' start and stop.
pub const DEFAULT_LOG_FILTER: &str = "warn,tool_registry::serve=info";

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

/// Installs the subscriber, once, if [`log_to_stderr`] asked.
pub(super) fn install(format: LogFormat) {
    if !INSTALL.swap(false, Ordering::Relaxed) {
        return;
    }
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER));
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(terminal)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Pretty => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
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
