//! Servers under load: many clients on loopback for a fixed time against
//!
//! - `echo`: a bare axum server that answers a POST with its body (the floor of any HTTP server);
//! - `module`: `module serve --http` (the `toolreg serve` command line, `tool_registry::cli`,
//!   over this crate's tools), `POST /execute` of `util.echo`;
//! - `module-audit`: the same with `--audit FILE`, every call's audit record appended to a
//!   file;
//! - `mcp-2025`: `module mcp --http`, `tools/call` of `util.echo` in a session of the 2025-11-25
//!   revision (`initialize` first, one session per client);
//! - `mcp-2026`: the same server, `tools/call` as the stateless 2026-07-28 revision writes it
//!   (no session; the revision's headers and `_meta`);
//! - `rmcp-2025`, `rmcp-2026`: rmcp's own streamable HTTP server of the same tool
//!   (`#[tool_router]`), spoken to as the two above;
//! - `mcp-list`, `rmcp-list`: `tools/list` of the stateless revision from a server of 1,000
//!   tools (a registry of run-time tools served by `tool_registry::mcp`, one page of 1,000;
//!   rmcp's server with the same 1,000 definitions), read as bytes, not parsed, so that what is
//!   compared is the servers' cost.
//!
//! Every server is a process of its own, started here and stopped by its process id. Each
//! client holds one connection and sends its next request when the last is answered. The table
//! gives requests per second, p50/p99/max latency, errors, the server's processor time per
//! request (µs; the clients share the machine, so this tells a server's own cost), and its
//! resident memory after the warm-up, every 5 s and at the end.
//!
//! ```sh
//! cargo bench -p tool-registry-tests --bench load                 # 64 clients, 30 s a server
//! LOAD_SECONDS=10 LOAD_CLIENTS=16 LOAD_TARGETS=echo,module cargo bench -p tool-registry-tests --bench load
//! ```
//!
//! Without `--bench` (`cargo test --benches`) every server runs 1 s with 4 clients, and any
//! failed request fails the run. docs/PERFORMANCE.md has the figures.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::serve::ListenerExt;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

/// The text every call sends and expects back.
const TEXT: &str = "the quick brown fox jumps over the lazy dog";

/// The 2025-11-25 revision, the last before the stateless one.
const V2025: &str = "2025-11-25";
/// The stateless revision.
const V2026: &str = "2026-07-28";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--serve") {
        let role = args.get(at + 1).map(String::as_str);
        return serve(role.unwrap_or_default());
    }
    let bench = args.iter().any(|a| a == "--bench");
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
            })
            .unwrap_or(default)
    };
    let (seconds, clients) = match bench {
        true => (number("LOAD_SECONDS", 30), number("LOAD_CLIENTS", 64)),
        false => (1, 4),
    };
    let wanted = std::env::var("LOAD_TARGETS").unwrap_or_default();
    let targets: Vec<Target> = Target::ALL
        .into_iter()
        .filter(|t| wanted.is_empty() || wanted.split(',').any(|w| w.trim() == t.name()))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{clients} clients, {seconds} s each, 1 s warm-up; latency in µs; RSS in MiB (after the warm-up → every 5 s → end)"
    );
    println!(
        "{:<9} {:>9} {:>7} {:>7} {:>7} {:>7} {:>8}  rss",
        "server", "req/s", "p50", "p99", "max", "errors", "cpu/req"
    );
    let mut failed = false;
    for target in targets {
        let server = Server::start(target);
        let report = runtime.block_on(load(
            target,
            &server,
            clients as usize,
            Duration::from_secs(seconds),
        ));
        failed |= report.errors > 0 || report.latencies.is_empty();
        report.print(target);
        drop(server);
    }
    if failed && !bench {
        eprintln!("load: some requests failed (see the errors column)");
        std::process::exit(1);
    }
}

/// A server under test.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Echo,
    Module,
    ModuleAudit,
    Mcp2025,
    Mcp2026,
    Rmcp2025,
    Rmcp2026,
    McpList,
    RmcpList,
}

impl Target {
    const ALL: [Self; 9] = [
        Self::Echo,
        Self::Module,
        Self::ModuleAudit,
        Self::Mcp2025,
        Self::Mcp2026,
        Self::Rmcp2025,
        Self::Rmcp2026,
        Self::McpList,
        Self::RmcpList,
    ];

    /// The tool the server's clients call.
    fn tool(self) -> &'static str {
        match self {
            Self::Rmcp2025 | Self::Rmcp2026 => "echo",
            _ => "util.echo",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Self::Echo => "echo",
            Self::Module => "module",
            Self::ModuleAudit => "module-audit",
            Self::Mcp2025 => "mcp-2025",
            Self::Mcp2026 => "mcp-2026",
            Self::Rmcp2025 => "rmcp-2025",
            Self::Rmcp2026 => "rmcp-2026",
            Self::McpList => "mcp-list",
            Self::RmcpList => "rmcp-list",
        }
    }
}

/// A server process, killed when dropped.
struct Server {
    child: Child,
    /// The URL requests go to.
    url: String,
}

impl Server {
    fn start(target: Target) -> Self {
        let module = env!("CARGO_BIN_EXE_module");
        let this = std::env::current_exe().unwrap();
        let mut command = match target {
            Target::Echo => {
                let mut c = Command::new(&this);
                c.args(["--serve", "echo"]);
                c
            }
            Target::Rmcp2025 | Target::Rmcp2026 => {
                let mut c = Command::new(&this);
                c.args(["--serve", "rmcp"]);
                c
            }
            Target::McpList | Target::RmcpList => {
                let mut c = Command::new(&this);
                let role = match target {
                    Target::McpList => "mcp-list",
                    _ => "rmcp-list",
                };
                c.args(["--serve", role]);
                c
            }
            Target::Module => {
                let mut c = Command::new(module);
                c.args(["serve", "--http", "127.0.0.1:0"]);
                c
            }
            Target::ModuleAudit => {
                let mut c = Command::new(module);
                let trail = audit_trail();
                let _ = std::fs::remove_file(&trail);
                c.arg("--audit").arg(trail);
                c.args(["serve", "--http", "127.0.0.1:0"]);
                c
            }
            Target::Mcp2025 | Target::Mcp2026 => {
                let mut c = Command::new(module);
                c.args(["mcp", "--http", "127.0.0.1:0"]);
                c
            }
        };
        let dir = std::env::temp_dir();
        let mut child = command
            .current_dir(dir)
            .env_remove("TOOLREG_MODULE_TOKEN")
            .env_remove("TOOLREG_SWITCHES")
            .env_remove("RUST_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .expect("the server prints its address");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| {
                let _ = child.kill();
                panic!("{} did not start: {line:?}", target.name())
            })
            .to_owned();
        let url = match target {
            Target::Echo => format!("{base}/echo"),
            Target::Module | Target::ModuleAudit => format!("{base}/execute"),
            Target::Rmcp2025 | Target::Rmcp2026 | Target::McpList | Target::RmcpList => {
                format!("{base}/mcp")
            }
            // `mcp --http` prints its endpoint.
            Target::Mcp2025 | Target::Mcp2026 => base,
        };
        Self { child, url }
    }

    /// The processor time the process has used (user and system).
    fn cpu(&self) -> Duration {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // The fields after the command's name in parentheses; utime and stime are the 14th
        // and 15th of the line, in clock ticks (100 a second on Linux).
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<u64>().ok())
                .unwrap_or(0)
        };
        Duration::from_millis((ticks(11) + ticks(12)) * 10)
    }

    /// The resident memory of the process, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(audit_trail());
    }
}

/// The audit trail of `module-audit`: a file of this run's own, removed with the server.
fn audit_trail() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("load-audit-{}.jsonl", std::process::id()))
}

/// What one run measured.
struct Report {
    elapsed: Duration,
    latencies: Vec<u32>,
    errors: u64,
    /// Resident memory after the warm-up, every 5 s, and at the end, in KiB.
    rss: Vec<u64>,
    /// The server's processor time over the measured part.
    cpu: Duration,
    first_error: Option<String>,
}

impl Report {
    fn print(&self, target: Target) {
        let mut sorted = self.latencies.clone();
        sorted.sort_unstable();
        let at = |q: f64| match sorted.len() {
            0 => 0,
            n => sorted[((n as f64 * q) as usize).min(n - 1)],
        };
        let rss: Vec<String> = self
            .rss
            .iter()
            .map(|k| format!("{:.1}", *k as f64 / 1024.0))
            .collect();
        println!(
            "{:<9} {:>9.0} {:>7} {:>7} {:>7} {:>7} {:>8.1}  {}",
            target.name(),
            sorted.len() as f64 / self.elapsed.as_secs_f64(),
            at(0.50),
            at(0.99),
            sorted.last().copied().unwrap_or(0),
            self.errors,
            self.cpu.as_secs_f64() * 1e6 / sorted.len().max(1) as f64,
            rss.join(" → "),
        );
        if let Some(error) = &self.first_error {
            println!("          first error: {error}");
        }
    }
}

/// One client's connection and what it sends.
struct Client {
    http: reqwest::Client,
    url: String,
    target: Target,
    /// The session of a 2025-11-25 client.
    session: Option<String>,
    body: String,
}

impl Client {
    async fn open(target: Target, url: &str) -> Result<Self, String> {
        // One connection per client: a pool of one idle connection, HTTP/1.1.
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1)
            .http1_only()
            .build()
            .map_err(|e| e.to_string())?;
        let body = match target {
            Target::Echo | Target::Module | Target::ModuleAudit => {
                format!(r#"{{"tool_name":"util.echo","arguments":{{"text":"{TEXT}"}}}}"#)
            }
            Target::Mcp2025 => call_body("util.echo", ""),
            Target::Rmcp2025 => call_body("echo", ""),
            Target::Mcp2026 | Target::Rmcp2026 => {
                call_body(target.tool(), &format!(",{}", meta_2026()))
            }
            Target::McpList | Target::RmcpList => format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{}}}}}"#,
                meta_2026()
            ),
        };
        let mut client = Self {
            http,
            url: url.to_owned(),
            target,
            session: None,
            body,
        };
        if matches!(target, Target::Mcp2025 | Target::Rmcp2025) {
            client.initialize().await?;
        }
        Ok(client)
    }

    /// The 2025-11-25 handshake: `initialize`, then `notifications/initialized`.
    async fn initialize(&mut self) -> Result<(), String> {
        let init = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{V2025}","capabilities":{{}},"clientInfo":{{"name":"load","version":"1.0.0"}}}}}}"#
        );
        let response = self.post(init).send().await.map_err(|e| e.to_string())?;
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .ok_or_else(|| format!("no session: {}", response.status()))?;
        let text = response.text().await.map_err(|e| e.to_string())?;
        if !text.contains("\"result\"") {
            return Err(format!("initialize: {text}"));
        }
        self.session = Some(session);
        let done = self
            .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !done.status().is_success() {
            return Err(format!("notifications/initialized: {}", done.status()));
        }
        Ok(())
    }

    fn post(&self, body: String) -> reqwest::RequestBuilder {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(session) = &self.session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", V2025);
        }
        if matches!(self.target, Target::Mcp2026 | Target::Rmcp2026) {
            request = request
                .header("mcp-protocol-version", V2026)
                .header("mcp-method", "tools/call")
                .header("mcp-name", self.target.tool());
        }
        if matches!(self.target, Target::McpList | Target::RmcpList) {
            request = request
                .header("mcp-protocol-version", V2026)
                .header("mcp-method", "tools/list");
        }
        request
    }

    /// One call; an error names what was wrong with its answer.
    async fn call(&self) -> Result<(), String> {
        let response = self
            .post(self.body.clone())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let status = response.status();
        if matches!(self.target, Target::McpList | Target::RmcpList) {
            // A list is read as bytes, not parsed: a result at its head, its last tool at its
            // tail.
            let bytes = response.bytes().await.map_err(|e| e.to_string())?;
            let head = &bytes[..bytes.len().min(64)];
            let tail = &bytes[bytes.len().saturating_sub(1024)..];
            let has = |within: &[u8], what: &str| {
                within.windows(what.len()).any(|w| w == what.as_bytes())
            };
            return match status.is_success() && has(head, "\"result\"") && has(tail, LAST_TOOL) {
                true => Ok(()),
                false => Err(format!(
                    "{status}: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)])
                )),
            };
        }
        let text = response.text().await.map_err(|e| e.to_string())?;
        let ok = status.is_success()
            && text.contains(TEXT)
            && !text.contains("\"isError\":true")
            && !text.contains("\"error\"");
        match ok {
            true => Ok(()),
            false => Err(format!(
                "{status}: {}",
                text.chars().take(300).collect::<String>()
            )),
        }
    }
}

/// The `_meta` of a request of the stateless revision.
fn meta_2026() -> String {
    format!(
        r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{V2026}","io.modelcontextprotocol/clientCapabilities":{{}},"io.modelcontextprotocol/clientInfo":{{"name":"load","version":"1.0.0"}}}}"#
    )
}

/// How many tools the list servers hold, and the name of the last.
const LIST_TOOLS: usize = 1000;
const LAST_TOOL: &str = "tool_0999";

/// The definition of list tool `i`, as MCP writes it: a name, a description and an input
/// schema of two properties, one required.
fn list_tool(i: usize) -> serde_json::Value {
    serde_json::json!({
        "name": format!("tool_{i:04}"),
        "description": format!("Tool number {i} of the list: looks a record up by its key and says what it holds."),
        "inputSchema": {
            "type": "object",
            "properties": {
                "key": {"type": "string", "description": "The record's key"},
                "limit": {"type": "integer", "minimum": 1, "description": "How many at most"}
            },
            "required": ["key"]
        }
    })
}

/// The registry of the list's 1,000 run-time tools.
fn list_registry() -> Arc<tool_registry::Registry> {
    let registry = tool_registry::Registry::builder()
        .without_linked()
        .build()
        .unwrap();
    for i in 0..LIST_TOOLS {
        let spec = tool_registry::ToolSpec::from_provider(&list_tool(i))
            .unwrap()
            .spec;
        registry.register(spec, None).unwrap();
    }
    Arc::new(registry)
}

/// A `tools/call` of `name` with `TEXT`, `meta` added to its parameters.
fn call_body(name: &str, meta: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{{"text":"{TEXT}"}}{meta}}}}}"#
    )
}

/// `clients` clients against `server` for a second of warm-up and then `time`.
async fn load(target: Target, server: &Server, clients: usize, time: Duration) -> Report {
    let mut opened = Vec::with_capacity(clients);
    for _ in 0..clients {
        match Client::open(target, &server.url).await {
            Ok(client) => opened.push(Arc::new(client)),
            Err(error) => {
                return Report {
                    elapsed: time,
                    latencies: Vec::new(),
                    errors: 1,
                    rss: vec![server.rss_kib()],
                    cpu: Duration::ZERO,
                    first_error: Some(format!("opening a client: {error}")),
                };
            }
        }
    }
    let warm_until = Instant::now() + Duration::from_secs(1);
    let until = warm_until + time;
    let tasks: Vec<_> = opened
        .into_iter()
        .map(|client| {
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(1 << 16);
                let mut errors = 0u64;
                let mut first_error = None;
                loop {
                    let start = Instant::now();
                    if start >= until {
                        break;
                    }
                    let result = client.call().await;
                    if start < warm_until {
                        continue;
                    }
                    match result {
                        Ok(()) => latencies.push(start.elapsed().as_micros() as u32),
                        Err(error) => {
                            errors += 1;
                            first_error.get_or_insert(error);
                        }
                    }
                }
                (latencies, errors, first_error)
            })
        })
        .collect();
    tokio::time::sleep_until(warm_until.into()).await;
    let mut rss = vec![server.rss_kib()];
    let cpu_start = server.cpu();
    while Instant::now() + Duration::from_secs(5) < until {
        tokio::time::sleep(Duration::from_secs(5)).await;
        rss.push(server.rss_kib());
    }
    tokio::time::sleep_until(until.into()).await;
    let cpu = server.cpu().saturating_sub(cpu_start);
    let mut report = Report {
        elapsed: time,
        latencies: Vec::new(),
        errors: 0,
        rss,
        cpu,
        first_error: None,
    };
    for task in tasks {
        let (latencies, errors, first_error) = task.await.unwrap();
        report.latencies.extend(latencies);
        report.errors += errors;
        if report.first_error.is_none() {
            report.first_error = first_error;
        }
    }
    report.rss.push(server.rss_kib());
    report
}

/// Runs a server of this binary (`--serve echo|rmcp`) on a free loopback port, printing
/// `listening on http://ADDR` first, until killed.
fn serve(role: &str) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let router = match role {
            "echo" => axum::Router::new().route(
                "/echo",
                axum::routing::post(|body: axum::body::Bytes| async move { body }),
            ),
            "rmcp" => {
                let service: StreamableHttpService<Echo, LocalSessionManager> =
                    StreamableHttpService::new(
                        || Ok(Echo::new()),
                        Default::default(),
                        StreamableHttpServerConfig::default(),
                    );
                axum::Router::new().nest_service("/mcp", service)
            }
            "mcp-list" => {
                tool_registry::mcp::McpServer::new(list_registry(), tool_registry::Scope::guest())
                    .with_page_size(LIST_TOOLS)
                    .router(tool_registry::mcp::Callers::new(), Vec::new())
            }
            "rmcp-list" => {
                let service: StreamableHttpService<List, LocalSessionManager> =
                    StreamableHttpService::new(
                        || Ok(List::new()),
                        Default::default(),
                        StreamableHttpServerConfig::default(),
                    );
                axum::Router::new().nest_service("/mcp", service)
            }
            other => panic!("--serve echo|rmcp|mcp-list|rmcp-list, not {other:?}"),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening on http://{}", listener.local_addr().unwrap());
        // Without `TCP_NODELAY` an answer written in parts (an event stream's) waits out the
        // client's delayed acknowledgement, some 40 ms; the registry's servers set it too.
        let listener = listener.tap_io(|stream| {
            let _ = stream.set_nodelay(true);
        });
        axum::serve(listener, router).await.unwrap();
    });
}

/// The arguments of rmcp's `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to say back.
    text: String,
}

/// rmcp's server of the same tool.
#[derive(Clone)]
struct Echo {
    tool_router: rmcp::handler::server::router::tool::ToolRouter<Echo>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Self {
            tool_router: Self::tool_router(),
        }
    }

    /// Say the text back.
    #[tool]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {}

/// rmcp's server of the list's 1,000 tools, the definitions the registry writes for them (so
/// that both servers send the same list), built once and cloned for each answer, as rmcp's own
/// tool router lists its tools.
#[derive(Clone)]
struct List {
    tools: Arc<Vec<rmcp::model::Tool>>,
}

impl List {
    fn new() -> Self {
        static TOOLS: std::sync::OnceLock<Arc<Vec<rmcp::model::Tool>>> = std::sync::OnceLock::new();
        let tools = TOOLS.get_or_init(|| {
            let registry = list_registry();
            let written = registry.provider_tools(
                tool_registry::format::Provider::Mcp,
                &tool_registry::Scope::guest(),
            );
            Arc::new(
                written
                    .iter()
                    .map(|tool| serde_json::from_value(tool.clone()).unwrap())
                    .collect(),
            )
        });
        Self {
            tools: Arc::clone(tools),
        }
    }
}

impl ServerHandler for List {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(
            self.tools.as_ref().clone(),
        ))
    }
}
