//! The commands that cross the process boundary (feature `http`): `serve --http`, `modules
//! list|refresh`, and `--module-map`, which makes every command see the modules' tools.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Subcommand};

use super::output::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, print_json, shown};
use super::runtime::block_on;
use tool_registry_core::Registry;
use tool_registry_core::Scope;
use tool_registry_http::{ConnectionLimits, Gateway, ModuleMap, Server, shutdown_signal};

/// The file fetched manifests are kept in.
pub const MODULE_CACHE_ENV: &str = "TOOLREG_MODULE_CACHE";
const MODULE_CACHE_DEFAULT: &str = tool_registry_http::DEFAULT_CACHE_FILE;
/// The variable a module's shared secret is read from by `serve`.
pub const MODULE_TOKEN_ENV: &str = "TOOLREG_MODULE_TOKEN";

/// Where remote modules are.
#[derive(Args)]
pub(super) struct ModuleArgs {
    /// A TOML file of `[modules.NAME]` tables (HTTP modules: `url`, optional `token`,
    /// `token_env`, `slow = true`) and `[mcp.NAME]` tables (MCP servers: `command = [..]` or
    /// `url`): their tools join every command as `NAME.tool`.
    #[arg(long = "module-map", global = true, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Where fetched manifests are kept [default: $TOOLREG_MODULE_CACHE or ./.toolreg-modules.json].
    #[arg(long = "module-cache", global = true, value_name = "FILE")]
    cache: Option<PathBuf>,
}

/// `serve`.
#[derive(Args)]
pub(super) struct ServeArgs {
    /// The address to listen on (port 0 picks a free one; the address is printed).
    #[arg(long, value_name = "ADDR")]
    http: String,
    /// The module's name, the first segment of its tools' names in its manifest.
    #[arg(long, value_name = "NAME", default_value = tool_registry_http::DEFAULT_MODULE_NAME)]
    module: String,
    /// Listen on an address other than loopback.
    #[arg(long)]
    public: bool,
    /// Be an OAuth 2.1 resource server too, as the `[oauth]` table of FILE says (the
    /// authorization server, its keys or introspection endpoint, the rules from tokens to
    /// scopes): a bearer token that is not the module's secret is an access token.
    #[cfg(feature = "oauth")]
    #[arg(long, value_name = "FILE")]
    oauth: Option<std::path::PathBuf>,
    #[command(flatten)]
    connections: ConnectionArgs,
    #[command(flatten)]
    pub(super) tasks: super::tasks::TaskArgs,
}

/// The bounds a server keeps on its connections (`serve --http` and `mcp --http`).
#[derive(Args)]
pub(super) struct ConnectionArgs {
    /// How many connections are open at once; a new client at the cap takes the place of the
    /// connection idle longest (a request whose body has not ended counts as idle).
    #[arg(long, value_name = "N", default_value_t = ConnectionLimits::DEFAULT_MAX_CONNECTIONS as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_connections: u64,
    /// How long a request's headers may take to arrive.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    header_timeout: std::time::Duration,
    /// How long a request's body may take to arrive in all.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    body_timeout: std::time::Duration,
    /// The fewest bytes a second a request's body must bring, counted over each 5 s from the
    /// end of its headers (a window in which the body ends is not counted); 0 for no minimum.
    #[arg(long, value_name = "BYTES", default_value_t = ConnectionLimits::DEFAULT_MIN_BODY_RATE)]
    min_body_rate: u64,
    /// How long a connection may stay open with no call in flight (a request whose body has not
    /// ended is not one yet).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = humantime::parse_duration)]
    idle_timeout: std::time::Duration,
    /// How long a stop (Ctrl-C, SIGTERM) waits for the calls in flight to answer.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
    stop_deadline: std::time::Duration,
}

impl ConnectionArgs {
    /// The limits these flags give.
    pub(super) fn limits(&self) -> ConnectionLimits {
        ConnectionLimits::default()
            .max_connections(usize::try_from(self.max_connections).unwrap_or(usize::MAX))
            .header_timeout(self.header_timeout)
            .body_timeout(self.body_timeout)
            .min_body_rate(self.min_body_rate)
            .idle_timeout(self.idle_timeout)
            .stop_deadline(self.stop_deadline)
    }
}

/// `modules`.
#[derive(Args)]
pub(super) struct ModulesArgs {
    #[command(subcommand)]
    action: ModulesAction,
}

#[derive(Subcommand, Clone, Copy)]
enum ModulesAction {
    /// Each module with its address, its tool count, where its manifest came from and when it
    /// expires.
    List,
    /// Fetch every manifest now.
    Refresh,
}

/// With `--module-map`, a gateway whose modules' tools are registered; a module map that
/// cannot be read is a usage error.
pub(super) fn attach(
    args: &ModuleArgs,
    registry: &Arc<Registry>,
    #[cfg(feature = "redis")] fleet: Option<&tool_registry_redis::Fleet>,
    err: &mut dyn Write,
) -> Result<Attached, i32> {
    let Some(path) = &args.map else {
        return Ok(Attached::default());
    };
    let map = ModuleMap::from_file(path).map_err(|error| {
        let _ = writeln!(err, "error: {error}");
        EXIT_USAGE
    })?;
    let cache = args
        .cache
        .clone()
        .or_else(|| {
            std::env::var_os(MODULE_CACHE_ENV)
                .filter(|v| !v.is_empty())
                .map(Into::into)
        })
        .unwrap_or_else(|| MODULE_CACHE_DEFAULT.into());
    let gateway = Gateway::builder(Arc::clone(registry), map).cache_file(cache);
    // In a fleet, the manifests are the fleet's.
    #[cfg(feature = "redis")]
    let gateway = match fleet {
        Some(fleet) => gateway.cache(fleet.manifest_cache()),
        None => gateway,
    };
    let gateway = gateway.build().map_err(|error| {
        let _ = writeln!(err, "error: {error}");
        EXIT_USAGE
    })?;
    let statuses = block_on(err, gateway.start()).ok_or(EXIT_TOOL_ERROR)?;
    for status in statuses {
        match &status.error {
            Some(error) => {
                let _ = writeln!(
                    err,
                    "warning: module `{}` left out: {error}",
                    shown(&status.name)
                );
            }
            None => tracing::info!(
                target: "tool_registry::modules",
                module = %shown(&status.name),
                url = %status.url,
                tools = status.tools,
                "connected to module"
            ),
        }
    }
    Ok(Attached {
        #[cfg(feature = "mcp")]
        _mcp: mount_mcp(
            path,
            registry,
            #[cfg(feature = "redis")]
            fleet,
            err,
        )?,
        gateway: Some(gateway),
    })
}

/// What `--module-map` attached, kept for the command's run.
#[derive(Default)]
pub(super) struct Attached {
    /// The HTTP modules' gateway.
    pub(super) gateway: Option<Gateway>,
    /// The MCP servers mounted (`[mcp.NAME]`); their sessions last as long as this.
    #[cfg(feature = "mcp")]
    _mcp: Vec<tool_registry_mcp::McpModule>,
}

/// Mounts the `[mcp.NAME]` servers of the module map; one that cannot be mounted is left out
/// with a warning. In a fleet, a protected server's tokens are the fleet's (one refresh at a
/// time across it) unless its `oauth` table names a `token_file`.
#[cfg(feature = "mcp")]
fn mount_mcp(
    path: &std::path::Path,
    registry: &Arc<Registry>,
    #[cfg(feature = "redis")] fleet: Option<&tool_registry_redis::Fleet>,
    err: &mut dyn Write,
) -> Result<Vec<tool_registry_mcp::McpModule>, i32> {
    let text = std::fs::read_to_string(path).map_err(|error| {
        let _ = writeln!(
            err,
            "error: cannot read the module map {}: {error}",
            path.display()
        );
        EXIT_USAGE
    })?;
    let servers = tool_registry_mcp::McpServerConfig::from_toml(&text).map_err(|message| {
        let _ = writeln!(err, "error: {message}");
        EXIT_USAGE
    })?;
    let mut mounted = Vec::new();
    #[cfg(all(feature = "redis", not(feature = "oauth")))]
    let _ = fleet;
    for (name, config) in &servers {
        #[cfg(all(feature = "redis", feature = "oauth"))]
        if let (Some(fleet), Some(table), Some(url)) = (fleet, config.oauth(), config.url())
            && table.token_file().is_none()
        {
            let oauth = match table.oauth() {
                Ok(oauth) => oauth.store(fleet.credentials(name)),
                Err(why) => {
                    let _ = writeln!(err, "warning: MCP server `{}` left out: {why}", shown(name));
                    continue;
                }
            };
            let mount =
                tool_registry_mcp::McpModule::connect_oauth(Arc::clone(registry), name, url, oauth);
            match block_on(err, mount) {
                Some(Ok(module)) => mounted.push(connected(name, module)),
                Some(Err(error)) => {
                    let _ = writeln!(err, "warning: {error}; its tools are left out");
                }
                None => return Err(EXIT_TOOL_ERROR),
            }
            continue;
        }
        let mount = tool_registry_mcp::McpModule::mount_config(Arc::clone(registry), name, config);
        match block_on(err, mount) {
            Some(Ok(module)) => mounted.push(connected(name, module)),
            Some(Err(error)) => {
                let _ = writeln!(err, "warning: {error}; its tools are left out");
            }
            None => return Err(EXIT_TOOL_ERROR),
        }
    }
    Ok(mounted)
}

/// A mounted MCP server, said in the log.
#[cfg(feature = "mcp")]
fn connected(name: &str, module: tool_registry_mcp::McpModule) -> tool_registry_mcp::McpModule {
    tracing::info!(target: "tool_registry::modules", server = %shown(name), tools = module.tools().len(), "mounted MCP server");
    module
}

/// `serve --http ADDR`: the tools `scope` allows, until Ctrl-C or SIGTERM.
pub(super) fn serve(
    args: ServeArgs,
    registry: &Arc<Registry>,
    tasks: tool_registry_core::task::Tasks,
    scope: Scope,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let token = std::env::var(MODULE_TOKEN_ENV).unwrap_or_default();
    let served = scope.clone();
    #[cfg_attr(not(feature = "oauth"), allow(unused_mut))]
    let mut server = Server::new(Arc::clone(registry))
        .name(args.module)
        .scope(scope)
        .token(token)
        .beyond_loopback(args.public)
        .connection_limits(args.connections.limits())
        .tasks(tasks);
    #[cfg(feature = "oauth")]
    if let Some(path) = &args.oauth {
        let read = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read {}: {error}", path.display()))
            .and_then(|text| tool_registry_http::oauth::ResourceServer::from_toml(&text))
            .and_then(|found| {
                found.ok_or_else(|| format!("{} has no [oauth] table", path.display()))
            });
        match read {
            Ok(oauth) => server = server.oauth(oauth),
            Err(error) => {
                let _ = writeln!(err, "error: --oauth: {error}");
                return EXIT_USAGE;
            }
        }
    }
    let outcome = block_on(err, async {
        let listener = server.bind(args.http.as_str()).await?;
        let addr = listener.local_addr()?;
        let address = format!("http://{addr}");
        super::logs::started("tools over HTTP", &address, registry, &served);
        let _ = writeln!(out, "listening on {address}");
        super::logs::serve_metrics(out);
        let _ = out.flush();
        let served = server.serve_on(listener, shutdown_signal()).await;
        super::logs::stopped("tools over HTTP", &address);
        served
    });
    match outcome {
        Some(Ok(())) => EXIT_OK,
        Some(Err(error)) => {
            let _ = writeln!(err, "error: cannot serve on {}: {error}", args.http);
            EXIT_USAGE
        }
        None => EXIT_TOOL_ERROR,
    }
}

/// `modules list|refresh`.
pub(super) fn modules(
    args: ModulesArgs,
    gateway: Option<&Gateway>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Some(gateway) = gateway else {
        let _ = writeln!(
            err,
            "error: no modules: give a module map with --module-map FILE (a `[modules.NAME]` table with `url = \"http://host:port\"` per module)"
        );
        return EXIT_USAGE;
    };
    let refresh = matches!(args.action, ModulesAction::Refresh);
    let statuses = match args.action {
        ModulesAction::List => block_on(err, gateway.status()),
        ModulesAction::Refresh => block_on(err, gateway.refresh()),
    };
    let Some(statuses) = statuses else {
        return EXIT_TOOL_ERROR;
    };
    let failed = refresh && statuses.iter().any(|status| status.error.is_some());
    if let Err(error) = print_json(out, &statuses) {
        let _ = writeln!(err, "error: {error}");
        return EXIT_TOOL_ERROR;
    }
    if failed { EXIT_TOOL_ERROR } else { EXIT_OK }
}
