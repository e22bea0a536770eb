//! The `toolreg` command line, for any application's tools.
//!
//! One line in an application's `main` gives it `list`, `catalog`, `schema`, `tools`, `call`,
//! `approve` and `deny` over every `#[tool]` linked into the program, and `parse` and `run` to
//! read (and run) the calls in a model's output:
//!
//! ```no_run
//! tool_registry::cli::main();
//! ```
//!
//! Calls awaiting approval are kept in `--approvals FILE` (or `$TOOLREG_APPROVALS`, or
//! `./.toolreg-approvals.json`), with the key that signs them beside it in `FILE.key` and the tokens
//! already used in `FILE.used`; rate-limit
//! counts in `--limits FILE` (or `$TOOLREG_LIMITS`, or `./.toolreg-limits.json`), per `--user`
//! (calls without one count for `anonymous`; the guests of `serve` and `mcp --http` count for
//! `guest`, apart). Each file is changed under an OS lock, so any
//! number of processes can share them. Neither file is made before a tool needs it.
//!
//! Tools switched off with `disable` (by name, `--tag` or `--category`) are kept in
//! `--switches FILE` (or `$TOOLREG_SWITCHES`, or `./.toolreg-switches.json`): every command reads
//! it, and a running `serve` or `mcp` follows it, so a tool switched off in one terminal leaves
//! the server's listing and calls within a second (and its MCP clients hear `list_changed`).
//!
//! Exit codes: 0 on success, 1 when a called tool fails, 2 on a usage error, 141 when standard
//! output is closed before the answer is all written (`toolreg list | head -1`): the command
//! stops writing and says nothing on standard error, as a program a closed pipe ends.
//!
//! The files are listed from the bottom layer up: each imports only files listed before it, so no
//! circle runs between them.
//!
//! | file | what |
//! | --- | --- |
//! | `output.rs` | the exit codes ([`EXIT_OK`], [`EXIT_TOOL_ERROR`], [`EXIT_USAGE`], [`EXIT_PIPE_CLOSED`]), the streams that note a closed standard output, JSON as every command prints it, text made safe for a terminal |
//! | `logs.rs` | what an operator sees: the logs on standard error ([`LogFormat`], `RUST_LOG`, [`DEFAULT_LOG_FILTER`] unless set, spans over OTLP with feature `otlp`), `--audit`, `--metrics` (feature `metrics`), what a server says when it starts and stops |
//! | `blocks.rs` | a result's blocks as `call` prints them: binary ones by kind, MIME type and size, or saved with `--save DIR` in new files |
//! | `runtime.rs` | the async runtime: one current-thread runtime per run, ended without waiting for a timed-out blocking tool |
//! | `switches.rs` | the switch file: `--switches`, `disable` and `enable` in it, a running server following it |
//! | `commands.rs` | the commands on the registry alone (`list`, `schema`, `tools --strict`, `call`, `deny`, `snapshot`), the formats they print in |
//! | `parse.rs` | `parse` and `run`: the calls in a model's output, printed or run |
//! | `modules.rs` | `serve`, `modules` and `--module-map` (feature `http`) |
//! | `mcp.rs` | `mcp`: the tools over MCP, on stdio or streamable HTTP (feature `mcp`) |
//! | `tasks.rs` | the timing of `mcp`'s tasks and where they are kept; `tasks list|get|cancel` on a fleet's |
//! | `fleet.rs` | `--redis`: the stores and switches of a fleet, `disable` and `enable` across it (feature `redis`) |
//! | `lib.rs` | the flags and the commands, the registry they run on, each command handed to its file |

#![warn(missing_docs)]

use std::ffi::OsString;
use std::io::Write;

use clap::{Parser, Subcommand};

use tool_registry_core::Ctx;
use tool_registry_core::Permission;
use tool_registry_core::Registry;
use tool_registry_core::RegistryBuilder;
use tool_registry_core::Scope;
use tool_registry_core::format::Provider;
use tool_registry_core::gate::{JsonFileApprovals, JsonFileRateLimits};

mod blocks;
mod commands;
#[cfg(feature = "redis")]
mod fleet;
mod logs;
#[cfg(feature = "mcp")]
mod mcp;
#[cfg(feature = "http")]
mod modules;
mod output;
mod parse;
mod runtime;
mod switches;
mod tasks;

use commands::{
    CatalogFormat, ListFormat, ProviderFormat, call, deny, exit_code, finish, list, schema,
    snapshot, strict_tools,
};
use output::{print_json, shown};
use runtime::{RuntimeGuard, block_on};

#[cfg(feature = "redis")]
pub use fleet::REDIS_ENV;
pub use logs::{DEFAULT_LOG_FILTER, LogFormat, log_to_stderr};
pub use output::{EXIT_OK, EXIT_PIPE_CLOSED, EXIT_TOOL_ERROR, EXIT_USAGE};
pub use switches::SWITCHES_ENV;

/// The file pending approvals are kept in, so that `approve` can run in another process.
pub const APPROVALS_ENV: &str = "TOOLREG_APPROVALS";
const APPROVALS_DEFAULT: &str = ".toolreg-approvals.json";
/// The file rate-limit counts are kept in, so that `cooldown` and `daily_limit` hold across runs.
pub const LIMITS_ENV: &str = "TOOLREG_LIMITS";
const LIMITS_DEFAULT: &str = ".toolreg-limits.json";

#[derive(Parser)]
#[command(about = "List, document and call the tools linked into this program.")]
struct Cli {
    #[command(flatten)]
    scope: ScopeArgs,
    /// Where calls awaiting approval are kept [default: $TOOLREG_APPROVALS or ./.toolreg-approvals.json].
    #[arg(long, global = true, value_name = "FILE")]
    approvals: Option<std::path::PathBuf>,
    /// Where rate-limit counts are kept [default: $TOOLREG_LIMITS or ./.toolreg-limits.json].
    #[arg(long, global = true, value_name = "FILE")]
    limits: Option<std::path::PathBuf>,
    #[command(flatten)]
    switch_file: switches::SwitchFileArgs,
    #[cfg(feature = "redis")]
    #[command(flatten)]
    fleet: fleet::FleetArgs,
    #[cfg(feature = "http")]
    #[command(flatten)]
    modules: modules::ModuleArgs,
    /// How log lines are written on standard error (their filter: `RUST_LOG`; warnings,
    /// errors and servers' starts and stops unless set).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Pretty)]
    log_format: LogFormat,
    #[command(flatten)]
    observe: logs::ObserveArgs,
    #[command(subcommand)]
    command: Command,
}

/// Who is asking. Without `--user`, `--level`, `--modules` or `--allow-list`, the caller is
/// trusted and sees every tool; with any of them, the caller has a caller's rights: the level
/// `--level` names, or `user`. `--local`, `--embedding` and `--chat-id` describe the session,
/// not the caller, and change no rights.
#[derive(clap::Args)]
struct ScopeArgs {
    /// The user the call is made for, with a user's rights unless --level says otherwise.
    #[arg(long, global = true)]
    user: Option<String>,
    /// The caller's permission level: guest, user, admin or owner (unknown levels count as
    /// guest) [default: user when --user, --modules or --allow-list is given, else trusted].
    #[arg(long, global = true)]
    level: Option<String>,
    /// The modules the caller may use, comma-separated.
    #[arg(long, global = true, value_delimiter = ',')]
    modules: Option<Vec<String>>,
    /// The allow-list the caller is restricted to.
    #[arg(long = "allow-list", global = true, value_name = "NAME")]
    allow_list: Option<String>,
    /// Local mode (allow-lists apply their local rules).
    #[arg(long, global = true)]
    local: bool,
    /// Embedding is available (allow-lists add their embedding tools).
    #[arg(long, global = true)]
    embedding: bool,
    /// The chat the call belongs to.
    #[arg(long, global = true)]
    chat_id: Option<i64>,
}

impl ScopeArgs {
    fn scope(&self) -> Scope {
        // A caller the flags describe in any way is that caller, never the program itself: a
        // named user without a level is a user, as `Ctx::new().with_user(..)` is.
        let describes_a_caller = self.user.is_some()
            || self.level.is_some()
            || self.modules.is_some()
            || self.allow_list.is_some();
        let mut scope = if describes_a_caller {
            let level = self
                .level
                .as_deref()
                .map_or(Permission::User, Permission::from_name);
            Scope::trusted().with_level(level).include_deferred(false)
        } else {
            Scope::trusted()
        };
        if let Some(user) = &self.user {
            scope = scope.with_user(user.clone());
        }
        if let Some(chat_id) = self.chat_id {
            scope = scope.with_chat_id(chat_id);
        }
        if let Some(modules) = &self.modules {
            scope = scope.with_modules(
                modules
                    .iter()
                    .map(|m| m.trim().to_owned())
                    .filter(|m| !m.is_empty()),
            );
        }
        if let Some(list) = &self.allow_list {
            scope = scope.with_allow_list(list.clone());
        }
        if self.embedding {
            scope = scope.with_flag(tool_registry_core::scope::EMBEDDING_FLAG);
        }
        scope.local(self.local)
    }
}

#[derive(Subcommand)]
enum Command {
    /// List the tools the caller may see, with their short descriptions.
    List {
        /// `text` (one tool per line) or `json`.
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
        /// Also show where each tool is declared (`file:line:column`).
        #[arg(long, short)]
        verbose: bool,
    },
    /// Print the documentation of every tool (with feature `tokens`, what each tool and the
    /// whole list cost in prompt tokens).
    Catalog {
        /// `md` (Markdown), `json`, or `html` (one self-contained page to open in a browser:
        /// search, filters, a card per tool).
        #[arg(long, value_enum, default_value_t = CatalogFormat::Md)]
        format: CatalogFormat,
    },
    /// Print the JSON Schema of a tool's arguments.
    Schema {
        /// The tool's name or alias.
        name: String,
    },
    /// Print the caller's tool list in a model provider's format.
    Tools {
        /// The provider format.
        #[arg(long, value_enum, default_value_t = ProviderFormat::Openai)]
        format: ProviderFormat,
        /// Strict mode (OpenAI, Responses, Anthropic): every property required, optional ones
        /// nullable, `"strict": true`.
        #[arg(long)]
        strict: bool,
    },
    /// What the caller's tool list costs in prompt tokens for a provider, each tool and the
    /// whole list; exits 1 past `--budget` (feature `tokens`).
    #[cfg(feature = "tokens")]
    Tokens {
        /// The provider format.
        #[arg(long, value_enum, default_value_t = ProviderFormat::Openai)]
        provider: ProviderFormat,
        /// The most tokens the whole list may cost.
        #[arg(long)]
        budget: Option<usize>,
    },
    /// Call a tool and print its result as JSON.
    Call {
        /// The tool's name or alias.
        name: String,
        /// The arguments as a JSON object.
        #[arg(default_value = "{}")]
        args: String,
        /// The user's message that led to the call.
        #[arg(long)]
        message: Option<String>,
        /// Write the result's binary blocks (images, audio, files) to new files in this
        /// directory (made if missing) and print their paths; without it they are printed by
        /// kind, MIME type and size only.
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
    },
    /// Run a call that awaits approval (same --user as the call).
    Approve {
        /// The token the call printed.
        token: String,
        /// As for `call`: where to write the result's binary blocks.
        #[arg(long, value_name = "DIR")]
        save: Option<std::path::PathBuf>,
    },
    /// Refuse a call that awaits approval (same --user as the call).
    Deny {
        /// The token the call printed.
        token: String,
        /// Why, for the model.
        #[arg(long, default_value = "a person declined the call")]
        reason: String,
    },
    /// Print the registry's state as JSON: every tool within the caller's scope, switched on or
    /// off, with its spec, switch and origin (what `Registry::restore` reads back).
    Snapshot,
    /// Read a model's output on stdin and print the calls, content, reasoning and errors in it.
    Parse(parse::ParseArgs),
    /// Read a model's output on stdin, run the calls in it, and print their results.
    Run(parse::RunArgs),
    /// Serve the tools the scope flags allow as an HTTP tool module (`/manifest`, `/execute`,
    /// `/health`, the catalog at `/`) until Ctrl-C or SIGTERM.
    #[cfg(feature = "http")]
    Serve(modules::ServeArgs),
    /// List the HTTP tool modules of `--module-map`, or fetch their manifests again.
    #[cfg(feature = "http")]
    Modules(modules::ModulesArgs),
    /// Serve the tools over MCP: on standard input and output as the caller the scope flags
    /// describe, or with --http on streamable HTTP at http://ADDR/mcp, each request as the caller
    /// its bearer token names in --callers FILE (a guest without a token).
    #[cfg(feature = "mcp")]
    Mcp(mcp::McpArgs),
    /// The caller's tasks in the fleet's Redis (--redis): list them, read one, cancel one.
    #[command(subcommand)]
    Tasks(tasks::TasksCommand),
    /// Switch tools off, for listing and for calls, in this and every process that shares the
    /// switch file (a running `serve` or `mcp` follows it within a second).
    Disable(switches::SwitchArgs),
    /// Switch tools back on (undoes `disable` with the same selector).
    Enable(switches::SwitchArgs),
}

/// Runs the command line over every linked tool and exits with its code.
pub fn main() -> ! {
    main_with(Registry::builder())
}

/// Runs the command line over the registry `builder` makes (add application state, allow-lists
/// and policies there) and exits with its code.
pub fn main_with(builder: RegistryBuilder) -> ! {
    logs::log_to_stderr();
    let code = run(
        std::env::args_os(),
        builder,
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    );
    std::process::exit(code)
}

/// Runs one command line (`args[0]` is the program name) against the registry `builder`
/// makes, writing to `out` and `err`; returns the exit code ([`EXIT_PIPE_CLOSED`], with
/// nothing more said on `err`, once `out`'s reader has gone).
pub fn run<I, T>(args: I, builder: RegistryBuilder, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let closed = std::cell::Cell::new(false);
    let (mut out, mut err) = output::streams(out, err, &closed);
    let code = run_on(args, builder, &mut out, &mut err);
    // What is still buffered is part of the answer: a reader gone before it counts too.
    let _ = out.flush();
    if closed.get() { EXIT_PIPE_CLOSED } else { code }
}

/// [`run`] on streams that note a closed standard output.
fn run_on<I, T>(args: I, builder: RegistryBuilder, out: &mut dyn Write, err: &mut dyn Write) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => return usage(&error, out, err),
    };
    // Dropped last: the spans of the whole command are sent when it ends.
    let _telemetry = match logs::install(cli.log_format) {
        Ok(telemetry) => telemetry,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return EXIT_USAGE;
        }
    };
    let builder = match cli.observe.observe(builder) {
        Ok(builder) => builder,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return EXIT_USAGE;
        }
    };
    let _runtime = RuntimeGuard;
    if cli.command.serves() {
        runtime::serve_on_every_core();
    }
    #[cfg(feature = "redis")]
    let fleet = match cli.fleet.fleet(err) {
        Ok(fleet) => fleet,
        Err(code) => return code,
    };
    #[cfg(feature = "redis")]
    let registry = match &fleet {
        Some(fleet) => tool_registry_redis::FleetBuilder::redis(builder, fleet).build(),
        None => build(&cli, builder),
    };
    #[cfg(not(feature = "redis"))]
    let registry = build(&cli, builder);
    let registry = match registry {
        Ok(registry) => std::sync::Arc::new(registry),
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return EXIT_TOOL_ERROR;
        }
    };
    #[cfg(feature = "http")]
    let attached = match modules::attach(
        &cli.modules,
        &registry,
        #[cfg(feature = "redis")]
        fleet.as_ref(),
        err,
    ) {
        Ok(attached) => attached,
        Err(code) => return code,
    };
    if registry.is_empty() && !cli.command.reads_own_tool_list() {
        let _ = err.write_all(EMPTY_REGISTRY.as_bytes());
        return EXIT_USAGE;
    }
    #[cfg(feature = "redis")]
    let _following = match &fleet {
        Some(fleet) => Some(fleet::join(fleet, &registry, cli.command.serves(), err)),
        None => None,
    };
    #[cfg(feature = "redis")]
    let from_file = fleet.is_none();
    #[cfg(not(feature = "redis"))]
    let from_file = true;
    if from_file {
        let switched = match cli.switch_file.apply(&registry) {
            Ok(switched) => switched,
            Err(error) => {
                let _ = writeln!(err, "error: {error}");
                return EXIT_TOOL_ERROR;
            }
        };
        if cli.command.serves() {
            switched.follow(&registry);
        }
    }
    let scope = cli.scope.scope();
    if let Err(message) = check_allow_list(&registry, &scope) {
        let _ = writeln!(err, "error: {message}");
        return EXIT_USAGE;
    }
    let edges = Edges {
        registry: &registry,
        switches: &cli.switch_file,
        #[cfg(feature = "redis")]
        fleet: fleet.as_ref(),
        #[cfg(feature = "http")]
        gateway: attached.gateway.as_ref(),
    };
    command_on(cli.command, edges, scope, out, err)
}

/// What the commands need besides the registry and the caller's scope.
struct Edges<'a> {
    registry: &'a std::sync::Arc<Registry>,
    switches: &'a switches::SwitchFileArgs,
    #[cfg(feature = "redis")]
    fleet: Option<&'a tool_registry_redis::Fleet>,
    #[cfg(feature = "http")]
    gateway: Option<&'a tool_registry_http::Gateway>,
}

impl Edges<'_> {
    /// The fleet's task store with `--redis`; `None` when tasks live in the process.
    fn task_store(&self) -> Option<std::sync::Arc<dyn tool_registry_core::task::TaskStore>> {
        #[cfg(feature = "redis")]
        if let Some(fleet) = self.fleet {
            return Some(std::sync::Arc::new(fleet.task_store()));
        }
        None
    }
}

/// What clap says about a command line it cannot run (or `--help`, `--version`), and its code.
fn usage(error: &clap::Error, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let text = error.render().to_string();
    if error.use_stderr() {
        let _ = err.write_all(text.as_bytes());
        EXIT_USAGE
    } else {
        let _ = out.write_all(text.as_bytes());
        EXIT_OK
    }
}

/// Runs one command against the registry, as `scope`; returns the exit code.
fn command_on(
    command: Command,
    edges: Edges<'_>,
    scope: Scope,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let registry: &Registry = edges.registry;
    let written = match command {
        Command::List { format, verbose } => list(out, registry, &scope, format, verbose),
        Command::Catalog { format } => {
            let catalog = registry.catalog(&scope);
            #[cfg(feature = "tokens")]
            let catalog = catalog.with_token_counts();
            match format {
                CatalogFormat::Md => out.write_all(catalog.markdown().as_bytes()),
                CatalogFormat::Json => print_json(out, &catalog.json()),
                CatalogFormat::Html => out.write_all(catalog.html().as_bytes()),
            }
        }
        Command::Schema { name } => return schema(out, err, registry, &scope, &name),
        Command::Tools {
            format,
            strict: false,
        } => print_json(
            out,
            &registry.provider_tools(Provider::from(format), &scope),
        ),
        Command::Tools {
            format,
            strict: true,
        } => return strict_tools(out, err, registry, &scope, format),
        #[cfg(feature = "tokens")]
        Command::Tokens { provider, budget } => {
            return commands::tokens(out, err, registry, &scope, provider, budget);
        }
        Command::Call {
            name,
            args,
            message,
            save,
        } => {
            let mut ctx = Ctx::for_scope(scope);
            if let Some(message) = message {
                ctx = ctx.with_user_message(message);
            }
            return call(out, err, registry, &ctx, &name, &args, save.as_deref());
        }
        Command::Approve { token, save } => {
            let ctx = Ctx::for_scope(scope);
            let outcome = block_on(err, registry.approve(&token, &ctx));
            return finish(out, err, outcome, save.as_deref());
        }
        Command::Deny { token, reason } => return deny(out, err, registry, scope, &token, &reason),
        Command::Snapshot => snapshot(out, registry, &scope),
        Command::Parse(args) => return parse::parse(args, registry, &scope, out, err),
        Command::Run(args) => return parse::run(args, registry, Ctx::for_scope(scope), out, err),
        #[cfg(feature = "http")]
        Command::Serve(args) => {
            let tasks = args.tasks.tasks(edges.task_store());
            return modules::serve(args, edges.registry, tasks, scope, out, err);
        }
        #[cfg(feature = "http")]
        Command::Modules(args) => return modules::modules(args, edges.gateway, out, err),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => {
            let tasks = args.tasks.tasks(edges.task_store());
            return mcp::mcp(args, edges.registry, tasks, scope, out, err);
        }
        Command::Tasks(command) => {
            return tasks::tasks(command, edges.task_store(), &scope, out, err);
        }
        Command::Disable(args) => return switch(&edges, &args, true, out, err),
        Command::Enable(args) => return switch(&edges, &args, false, out, err),
    };
    exit_code(err, written)
}

/// `disable` (`off`) and `enable`: in the fleet's Redis with `--redis`, else in the switch
/// file.
fn switch(
    edges: &Edges<'_>,
    args: &switches::SwitchArgs,
    off: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    // A selector that covers no tool here is a typing error more often than a switch for
    // tools elsewhere: nothing is written.
    if args.covered(edges.registry) == 0 {
        let _ = writeln!(
            err,
            "error: no tool matches {}; `toolreg list` shows the tools (a tag or category: `toolreg catalog`)",
            args.shown()
        );
        return EXIT_TOOL_ERROR;
    }
    #[cfg(feature = "redis")]
    if let Some(fleet) = edges.fleet {
        return fleet::switch(fleet, args, off, edges.registry, out, err);
    }
    match edges.switches.switch(args, off, edges.registry, out) {
        Ok(()) => EXIT_OK,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            EXIT_TOOL_ERROR
        }
    }
}

/// The registry `builder` makes, with the command line's shared stores: approvals and rate
/// limits in files (from the flags, the environment, or the defaults).
fn build(
    cli: &Cli,
    builder: RegistryBuilder,
) -> Result<Registry, tool_registry_core::registry::BuildError> {
    let file = |flag: &Option<std::path::PathBuf>, env: &str, default: &str| {
        flag.clone()
            .or_else(|| {
                std::env::var_os(env)
                    .filter(|v| !v.is_empty())
                    .map(Into::into)
            })
            .unwrap_or_else(|| default.into())
    };
    let approvals = file(&cli.approvals, APPROVALS_ENV, APPROVALS_DEFAULT);
    let limits = file(&cli.limits, LIMITS_ENV, LIMITS_DEFAULT);
    builder
        .approval_store(JsonFileApprovals::new(approvals))
        .rate_limit_store(JsonFileRateLimits::new(limits))
        .build()
}

/// An `--allow-list` the program does not define is a usage error that names the ones it does.
fn check_allow_list(registry: &Registry, scope: &Scope) -> Result<(), String> {
    let Some(list) = scope.allow_list() else {
        return Ok(());
    };
    if registry.allow_lists().get(list).is_some() {
        return Ok(());
    }
    let known: Vec<String> = registry.allow_lists().names().map(shown).collect();
    let known = if known.is_empty() {
        "this program defines no allow-lists".to_owned()
    } else {
        format!("the allow-lists are {}", known.join(", "))
    };
    Err(format!(
        "there is no allow-list named {}; {known}",
        shown(list)
    ))
}

/// What every command says when no tool is linked into the program.
const EMPTY_REGISTRY: &str = "\
error: no tools are linked into this program.
A #[tool] in a library crate is linked only when the program names that crate. Name each crate
of tools once in the program's main.rs:

    tool_registry::link!(my_tools);

(or `use my_tools as _;`), then build again. `list` shows the tools that are linked.
";

impl Command {
    /// Whether the command works from a tool list it is given rather than this program's tools.
    /// Whether the command runs until stopped, following the switch file.
    fn serves(&self) -> bool {
        match self {
            #[cfg(feature = "http")]
            Command::Serve(_) => true,
            #[cfg(feature = "mcp")]
            Command::Mcp(_) => true,
            _ => false,
        }
    }

    fn reads_own_tool_list(&self) -> bool {
        matches!(self, Command::Parse(args) if args.has_tool_list())
    }
}
