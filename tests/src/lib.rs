//! A second crate of tools, so the integration tests see tools from several crates in one
//! registry. Each tool exercises one shape the macro must handle: aliases, a sync function, a
//! panic, an error, an `#[args]` struct with nested types, `&Ctx` and `State<T>`.

use std::sync::atomic::{AtomicU64, Ordering};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_registry::{Ctx, State, tool};

/// One result of [`web_search`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The page title.
    pub title: String,
    /// The page address.
    pub url: String,
}

/// Search the web and return results.
///
/// An offline stand-in for the HTTP module of the same name: the results are made up from the
/// query, numbered from 1.
#[tool(
    name = "research.web_search",
    category = "search",
    tags(web, fake),
    cost = "cheap",
    permission = "guest",
    read_only,
    idempotent
)]
pub async fn web_search(
    #[arg(desc = "Search query")] query: String,
    #[arg(desc = "Max results")] max_results: Option<u32>,
) -> Vec<SearchHit> {
    let slug: String = query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("-")
        .to_lowercase();
    (1..=max_results.unwrap_or(3).min(10))
        .map(|i| SearchHit {
            title: format!("{query} #{i}"),
            url: format!("https://example.invalid/{slug}/{i}"),
        })
        .collect()
}

/// Say the text back.
#[tool(
    name = "util.echo",
    aliases(echo, say),
    category = "util",
    read_only,
    idempotent
)]
pub async fn echo(#[arg(desc = "The text to say back")] text: String) -> String {
    text
}

/// Add two integers.
///
/// Saturates instead of overflowing.
#[tool(
    name = "util.add",
    aliases(plus),
    category = "util",
    version = "2.1.0",
    read_only,
    idempotent
)]
pub async fn add(
    #[arg(desc = "The first addend")] a: i64,
    #[arg(desc = "The second addend", default = 0)] b: i64,
) -> i64 {
    a.saturating_add(b)
}

/// Upper-case the text. A synchronous tool.
#[tool(name = "util.upper", category = "util", read_only, idempotent)]
pub fn upper(#[arg(desc = "The text to upper-case", rename = "input")] text: String) -> String {
    text.to_uppercase()
}

/// Always panic, to prove a panicking tool cannot take the caller down.
#[tool(name = "util.panic", category = "util", tier = "low", defer_loading)]
pub async fn panic_tool(#[arg(desc = "The panic message")] message: Option<String>) -> String {
    panic!(
        "{}",
        message.unwrap_or_else(|| "util.panic was called".to_owned())
    )
}

/// Divide two integers, or fail with an error.
#[tool(name = "util.divide", category = "util", read_only, idempotent)]
pub fn divide(
    #[arg(desc = "The dividend")] dividend: i64,
    #[arg(desc = "The divisor; zero is an error")] divisor: i64,
) -> Result<i64, String> {
    dividend
        .checked_div(divisor)
        .ok_or_else(|| format!("cannot divide {dividend} by {divisor}"))
}

/// How urgent a plan is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Whenever there is time.
    Low,
    /// This week.
    Normal,
    /// Today.
    Urgent,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Step {
    /// What to do.
    pub name: String,
    /// How long it takes, in minutes.
    pub minutes: u32,
}

/// Who is responsible.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Owner {
    /// Their name.
    pub name: String,
    /// Their e-mail address, if known.
    #[serde(default)]
    pub email: Option<String>,
}

/// The arguments of [`plan`], as one struct.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// What the plan is for.
    pub title: String,
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// How urgent it is.
    #[serde(default = "normal")]
    pub priority: Priority,
    /// Who is responsible.
    #[serde(default)]
    pub owner: Option<Owner>,
}

fn normal() -> Priority {
    Priority::Normal
}

/// A summary of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSummary {
    /// The plan's title.
    pub title: String,
    /// How many steps it has.
    pub steps: usize,
    /// The minutes of all steps.
    pub total_minutes: u32,
    /// Its priority.
    pub priority: Priority,
    /// The owner's name, if any.
    pub owner: Option<String>,
}

/// Summarize a plan: its steps, their total time and who owns it.
#[tool(name = "util.plan", category = "util", read_only, idempotent)]
pub async fn plan(#[args] args: PlanArgs) -> PlanSummary {
    PlanSummary {
        steps: args.steps.len(),
        total_minutes: args.steps.iter().map(|s| s.minutes).sum(),
        title: args.title,
        priority: args.priority,
        owner: args.owner.map(|o| o.name),
    }
}

/// What [`whoami`] reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Caller {
    /// The user id, if known.
    pub user: Option<String>,
    /// The chat id, if known.
    pub chat_id: Option<i64>,
    /// The message that led to the call.
    pub user_message: Option<String>,
    /// The model's confidence.
    pub confidence: Option<f64>,
    /// The `request_id` metadata entry.
    pub request_id: Option<String>,
    /// The tenant extension, if one was added with `Ctx::with`.
    pub tenant: Option<String>,
    /// The greeting the model asked for.
    pub greeting: String,
}

/// A typed extension the tests put on the `Ctx`.
#[derive(Debug, Clone)]
pub struct Tenant(pub String);

/// Report who is calling, from the request context.
#[tool(name = "util.whoami", category = "util", read_only, idempotent)]
pub async fn whoami(
    #[arg(desc = "How to greet", default = String::from("hello"))] greeting: String,
    ctx: &Ctx,
) -> Caller {
    Caller {
        user: ctx.user().map(str::to_owned),
        chat_id: ctx.chat_id(),
        user_message: ctx.user_message().map(str::to_owned),
        confidence: ctx.confidence(),
        request_id: ctx
            .metadata()
            .get("request_id")
            .and_then(|v| v.as_str())
            .map(str::to_owned),
        tenant: ctx.get::<Tenant>().map(|t| t.0.clone()),
        greeting,
    }
}

/// Application state for [`count`]: a shared counter.
#[derive(Debug, Default)]
pub struct Counter(pub AtomicU64);

/// Add to the shared counter and return its new value.
#[tool(name = "util.count", category = "util", sequential)]
pub fn count(
    #[arg(desc = "How much to add", default = 1)] by: u64,
    counter: State<Counter>,
) -> u64 {
    counter.0.fetch_add(by, Ordering::SeqCst) + by
}

/// Fetch a web page and return its text (an offline fake: it returns a canned page).
#[tool(
    name = "research.fetch_webpage",
    category = "search",
    open_world,
    permission = "guest"
)]
pub async fn fetch_webpage(#[arg(desc = "The address of the page")] url: String) -> String {
    format!("<html><title>{url}</title></html>")
}

/// Run a short Python snippet (an offline fake: it only reports what it would run).
#[tool(
    name = "code_executor.run_python",
    category = "code",
    permission = "user"
)]
pub async fn run_python(#[arg(desc = "The Python source")] code: String) -> String {
    format!("would run {} bytes of Python", code.len())
}

/// Run a shell command (an offline fake: it only reports what it would run).
#[tool(
    name = "code_executor.run_shell",
    category = "terminal",
    permission = "admin"
)]
pub async fn run_shell(#[arg(desc = "The command line")] command: String) -> String {
    format!("would run `{command}`")
}

/// Wait, then answer; for timeouts and batches.
#[tool(name = "util.sleep", category = "util", read_only, timeout = "200ms")]
pub async fn sleep(#[arg(desc = "How long to wait, in milliseconds")] ms: u64, ctx: &Ctx) -> u64 {
    ctx.progress(format!("sleeping {ms} ms"));
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

/// Wait as long as asked (a minute at most), then answer; for slow modules and shutdowns.
#[tool(name = "util.linger", category = "util", read_only, timeout = "60s")]
pub async fn linger(#[arg(desc = "How long to wait, in milliseconds")] ms: u64) -> u64 {
    let ms = ms.min(60_000);
    tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
    ms
}

/// Report the caller's user and permission level, as the registry sees them.
#[tool(name = "util.identity", category = "util", read_only, idempotent)]
pub async fn identity(ctx: &Ctx) -> serde_json::Value {
    serde_json::json!({ "user": ctx.user(), "level": ctx.scope().level().as_str() })
}

/// Record the order calls run in; runs alone in a batch.
#[tool(name = "util.barrier", category = "util", sequential)]
pub async fn barrier(#[arg(desc = "A label")] label: String) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    label
}

/// Spend one of the caller's three daily quota units.
#[tool(name = "quota.spend", category = "quota", daily_limit = 3)]
pub async fn spend() -> &'static str {
    "spent"
}

/// Ping, at most every 30 seconds per user.
#[tool(name = "quota.ping", category = "quota", cooldown = "30s")]
pub async fn ping() -> &'static str {
    "pong"
}

/// Which process answered, and the how-manieth call of it this was: the answer of a cached
/// tool, so that a test can tell which process ran it.
#[tool(name = "quota.stamp", category = "quota", read_only, cache = "5m")]
pub async fn stamp(
    #[arg(desc = "Any word; it comes back in the answer")] word: String,
    ctx: &Ctx,
) -> String {
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    format!(
        "{word} for {} by process {} call {call}",
        ctx.user().unwrap_or("nobody"),
        std::process::id()
    )
}

/// How many times a gated tool actually ran.
#[derive(Debug, Default)]
pub struct Runs(pub std::sync::atomic::AtomicUsize);

/// Publish a post; an evaluation gate decides.
#[tool(
    name = "gated.publish",
    category = "gated",
    requires_gate,
    cost = "expensive"
)]
pub async fn publish(#[arg(desc = "The post")] text: String, runs: State<Runs>) -> String {
    runs.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("published: {text}")
}

/// Wire money; an evaluation gate decides, and without a gate nothing is sent.
#[tool(
    name = "gated.wire",
    category = "gated",
    requires_gate,
    gate_fail_closed
)]
pub async fn wire(#[arg(desc = "How much")] amount: u32, runs: State<Runs>) -> String {
    runs.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("wired {amount}")
}

/// Transfer money between accounts; a person approves each transfer.
#[tool(
    name = "bank.transfer",
    category = "bank",
    requires_confirmation,
    destructive
)]
pub async fn transfer(
    #[arg(desc = "How much")] amount: u32,
    #[arg(desc = "To whom")] to: String,
) -> String {
    format!("sent {amount} to {to}")
}

/// Whether the caller's documents are indexed (the scope's `documents` flag).
pub fn has_documents(scope: &tool_registry::Scope) -> bool {
    scope.has_flag("documents")
}

/// Search the caller's uploaded documents.
#[tool(name = "docs.search", category = "search", enabled = has_documents)]
pub async fn docs_search(#[arg(desc = "What to look for")] query: String) -> String {
    format!("no document mentions {query}")
}

/// A result's outcome as the tests compare it: `ok`, or its error code (`rate_limited`,
/// `store_unavailable`, ...).
pub fn outcome(result: &tool_registry::ToolResult) -> String {
    if result.success {
        "ok".to_owned()
    } else {
        result
            .audit
            .outcome
            .as_deref()
            .unwrap_or_default()
            .to_owned()
    }
}

/// Each `mode` of [`hooked_registry`]'s `echo`, with what a call of it answers through every
/// front end: `ok`, or the error code.
pub const HOOK_CASES: [(&str, &str); 6] = [
    ("plain", "ok"),
    ("secret", "ok"),
    ("panic", "panicked"),
    ("hang", "timed_out"),
    ("invalid", "invalid_arguments"),
    ("refuse", "refused"),
];

/// A registry of one run-time tool, `echo` (`{"mode": "..."}`, a 300 ms timeout), behind a
/// hook that misbehaves as `mode` says, for the tests that show every front end running the
/// same hooks: `panic` panics in the hook, `hang` never decides, `invalid` rewrites the
/// arguments into what the schema refuses, `refuse` refuses, `secret` lets the call run and
/// redacts its answer afterwards; anything else goes through untouched.
pub fn hooked_registry() -> tool_registry::Registry {
    use serde_json::{Value, json};
    use tool_registry::hook::{self, Before};
    use tool_registry::spec::ToolHandler;

    let registry = tool_registry::Registry::builder()
        .without_linked()
        .hook(hook::before("hostile", |call| {
            match call.args()["mode"].as_str().unwrap_or_default() {
                "panic" => panic!("the hook has a bug"),
                "hang" => Before::later(std::future::pending()),
                "invalid" => Before::Rewrite(json!({"mode": 5})),
                "refuse" => Before::Refuse("this mode is not allowed".into()),
                _ => Before::Continue,
            }
        }))
        .hook(hook::after("redact", |_, result| {
            let text = result.content.as_str()?;
            if !text.contains("secret") {
                return None;
            }
            result.content = Value::String(text.replace("secret", "[redacted]"));
            Some("redacted".into())
        }))
        .build()
        .expect("the hooked registry");
    let spec = tool_registry::ToolSpec::builder("echo")
        .description("Say the mode back.")
        .input_schema(json!({
            "type": "object",
            "properties": {"mode": {"type": "string"}},
            "required": ["mode"]
        }))
        .timeout(std::time::Duration::from_millis(300))
        .build()
        .expect("the echo spec");
    registry
        .register(
            spec,
            ToolHandler::new(|args: Value, _| async move {
                Ok::<_, String>(format!("mode {} with a secret", args["mode"]))
            }),
        )
        .expect("echo registers");
    registry
}
