//! `mcp`: the tools over MCP, on standard input and output as the caller the scope flags
//! describe, or on streamable HTTP for the callers of a file; its tasks in the fleet's Redis
//! with `--redis`.

use std::io::Write;

use super::output::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE};
use super::runtime::block_on;
use tool_registry_core::Registry;
use tool_registry_core::Scope;
use tool_registry_mcp::SessionLimits;

/// `mcp`'s flags.
#[derive(clap::Args)]
pub(super) struct McpArgs {
    /// Serve streamable HTTP on this loopback address instead of stdio (port 0 picks a free one;
    /// the address is printed).
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http: a TOML file of `[[caller]]` tables mapping bearer tokens to users, levels
    /// and allow-lists.
    #[arg(long, value_name = "FILE", requires = "http")]
    callers: Option<std::path::PathBuf>,
    /// How many tools one `tools/list` page holds.
    #[arg(long, value_name = "N", default_value_t = tool_registry_mcp::PAGE_SIZE as u64, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    page_size: u64,
    /// With --http: how many sessions are open at once, every caller together.
    #[arg(long, value_name = "N", default_value_t = SessionLimits::DEFAULT_MAX_SESSIONS, requires = "http")]
    max_sessions: usize,
    /// With --http: how many sessions one token of the callers file may have open at once.
    #[arg(long, value_name = "N", default_value_t = SessionLimits::DEFAULT_PER_CALLER, requires = "http")]
    max_sessions_per_caller: usize,
    /// With --http: how many sessions callers without a token may have open at once, together.
    #[arg(long, value_name = "N", default_value_t = SessionLimits::DEFAULT_GUESTS, requires = "http")]
    max_guest_sessions: usize,
    /// With --http: how long a session may go without a request before it ends.
    #[arg(long, value_name = "DURATION", default_value = "300s", value_parser = humantime::parse_duration, requires = "http")]
    session_expiry: std::time::Duration,
    #[command(flatten)]
    connections: super::modules::ConnectionArgs,
    #[command(flatten)]
    pub(super) tasks: super::tasks::TaskArgs,
}

/// `mcp`: stdio as `scope`, or streamable HTTP for the callers of the file.
pub(super) fn mcp(
    args: McpArgs,
    registry: &std::sync::Arc<Registry>,
    tasks: tool_registry_core::task::Tasks,
    scope: Scope,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let listed = std::sync::Arc::clone(registry);
    let registry = std::sync::Arc::clone(registry);
    let server = |scope| {
        tool_registry_mcp::McpServer::new(registry, scope)
            .with_page_size(usize::try_from(args.page_size).unwrap_or(usize::MAX))
            .session_limits(
                SessionLimits::default()
                    .max_sessions(args.max_sessions)
                    .per_caller(args.max_sessions_per_caller)
                    .guests(args.max_guest_sessions)
                    .idle_expiry(args.session_expiry),
            )
            .connection_limits(args.connections.limits())
            .tasks(tasks)
    };
    let outcome = match &args.http {
        None => block_on(err, server(scope).serve_stdio()),
        Some(addr) => {
            let callers = match &args.callers {
                Some(path) => match tool_registry_mcp::Callers::from_file(path) {
                    Ok(callers) => callers,
                    Err(message) => {
                        let _ = writeln!(err, "error: {message}");
                        return EXIT_USAGE;
                    }
                },
                None => tool_registry_mcp::Callers::new(),
            };
            let mut address = String::new();
            let served = block_on(
                err,
                server(Scope::guest()).serve_http(callers, addr.as_str(), |bound| {
                    address = format!("http://{bound}/mcp");
                    super::logs::started("tools over MCP", &address, &listed, &Scope::guest());
                    let _ = writeln!(out, "listening on {address}");
                    super::logs::serve_metrics(out);
                    let _ = out.flush();
                }),
            );
            super::logs::stopped("tools over MCP", &address);
            served
        }
    };
    match outcome {
        Some(Ok(())) => EXIT_OK,
        Some(Err(error)) => {
            let _ = writeln!(err, "error: MCP stopped: {error}");
            EXIT_USAGE
        }
        None => EXIT_TOOL_ERROR,
    }
}
