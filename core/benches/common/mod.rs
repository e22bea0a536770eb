//! What the benchmarks share: the tools, a hand-written dispatcher over the same functions, and
//! the executor that drives both.

pub mod rounds;

use std::borrow::Cow;
use std::time::{Instant, SystemTime};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_registry::__private::{CallEnv, CallResult, ToolParts, output, parse_args, schema_for};
use tool_registry::def::{ArgInfo, SourceLocation, ToolDef};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, ToolArgs, ToolResult, tool};

pub use rounds::block_on;

// ---------------------------------------------------------------------------------------------
// The tools: small, realistic, and cheap enough that dispatch overhead is what is measured.

/// Adds two integers.
#[tool(category = "math", read_only, idempotent)]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

/// Greets someone, with an optional greeting.
#[tool(category = "chat", read_only)]
async fn greet(
    #[arg(desc = "Who to greet")] name: String,
    #[arg(desc = "The greeting, `Hello` when absent")] greeting: Option<String>,
) -> String {
    format!("{}, {name}!", greeting.as_deref().unwrap_or("Hello"))
}

#[derive(Debug, Clone, Serialize)]
pub struct Note {
    title: &'static str,
    score: u32,
}

const NOTES: &[(&str, &str)] = &[
    ("Caching decisions", "we cache rendered pages for rust docs"),
    ("Weekly sync", "rust migration status and hiring"),
    ("Postgres tuning", "vacuum settings and index bloat"),
    (
        "Release checklist",
        "tag, changelog, publish the rust crates",
    ),
    ("Onboarding", "laptop, accounts, first rust task"),
    ("Incident 42", "queue backlog after deploy"),
    ("Design: search", "ranking notes by term frequency"),
    ("Reading list", "rust async book, tokio internals"),
    ("Budget", "cloud spend by team"),
    ("Retro", "what went well, what to change"),
    ("API style", "naming, errors, pagination"),
    ("Rust tips", "clippy lints worth enabling in rust code"),
];

/// Searches the notes for a term.
///
/// Returns the best matching notes, best first.
#[tool(category = "search", read_only, cost = "cheap", tags(notes, search))]
async fn search(
    #[arg(desc = "What to look for")] query: String,
    #[arg(desc = "How many notes", default = 5)] limit: u32,
) -> Vec<Note> {
    find_notes(&query, limit)
}

/// The notes that hold `query`, best first, at most `limit`: what `search` answers.
pub fn find_notes(query: &str, limit: u32) -> Vec<Note> {
    let mut hits: Vec<Note> = NOTES
        .iter()
        .filter_map(|(title, body)| {
            let score = body.matches(query).count() as u32;
            (score > 0).then_some(Note { title, score })
        })
        .collect();
    hits.sort_by(|a, b| b.score.cmp(&a.score).then(a.title.cmp(b.title)));
    hits.truncate(limit as usize);
    hits
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
    Kelvin,
}

/// Converts a temperature to kelvin.
#[tool(category = "math", read_only, idempotent)]
fn to_kelvin(value: f64, unit: Unit) -> Result<f64, String> {
    let kelvin = match unit {
        Unit::Celsius => value + 273.15,
        Unit::Fahrenheit => (value - 32.0) * 5.0 / 9.0 + 273.15,
        Unit::Kelvin => value,
    };
    if kelvin < 0.0 {
        Err(format!("{value} is below absolute zero"))
    } else {
        Ok(kelvin)
    }
}

/// Says who is asking.
#[tool(category = "chat", read_only)]
async fn whoami(#[arg(desc = "Put before the user id")] prefix: String, ctx: &Ctx) -> String {
    format!("{prefix}:{}", ctx.user().unwrap_or("anonymous"))
}

/// Each tool with the arguments a model would send it.
pub const CALLS: &[(&str, &str)] = &[
    ("add", r#"{"a": 40, "b": 2}"#),
    ("greet", r#"{"name": "Ada", "greeting": "Good morning"}"#),
    ("search", r#"{"query": "rust"}"#),
    ("to_kelvin", r#"{"value": 21.5, "unit": "celsius"}"#),
    ("whoami", r#"{"prefix": "user"}"#),
];

// ---------------------------------------------------------------------------------------------
// The baseline: what one writes by hand without the registry, over the same functions.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AddArgs {
    pub a: i64,
    pub b: i64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    name: String,
    greeting: Option<String>,
}

fn default_limit() -> u32 {
    5
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    query: String,
    #[serde(default = "default_limit")]
    limit: u32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToKelvinArgs {
    value: f64,
    unit: Unit,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WhoamiArgs {
    prefix: String,
}

#[derive(Debug)]
pub enum HandError {
    UnknownTool,
    Json(serde_json::Error),
    Tool(String),
}

impl std::fmt::Display for HandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::UnknownTool => f.write_str("unknown tool"),
            Self::Json(error) => write!(f, "invalid arguments: {error}"),
            Self::Tool(message) => f.write_str(message),
        }
    }
}

impl From<serde_json::Error> for HandError {
    fn from(error: serde_json::Error) -> Self {
        Self::Json(error)
    }
}

pub async fn hand_written(name: &str, text: &str, ctx: &Ctx) -> Result<Value, HandError> {
    Ok(match name {
        "add" => {
            let args: AddArgs = serde_json::from_str(text)?;
            serde_json::to_value(add(args.a, args.b))?
        }
        "greet" => {
            let args: GreetArgs = serde_json::from_str(text)?;
            serde_json::to_value(greet(args.name, args.greeting).await)?
        }
        "search" => {
            let args: SearchArgs = serde_json::from_str(text)?;
            serde_json::to_value(search(args.query, args.limit).await)?
        }
        "to_kelvin" => {
            let args: ToKelvinArgs = serde_json::from_str(text)?;
            serde_json::to_value(to_kelvin(args.value, args.unit).map_err(HandError::Tool)?)?
        }
        "whoami" => {
            let args: WhoamiArgs = serde_json::from_str(text)?;
            serde_json::to_value(whoami(args.prefix, ctx).await)?
        }
        _ => return Err(HandError::UnknownTool),
    })
}

/// The hand-written dispatcher plus what the registry adds to every call: a `ToolResult` with
/// the audit record stamped. The gap between this and `Registry::call` is pure dispatch cost.
pub async fn hand_written_audited(
    name: &'static str,
    text: &str,
    ctx: &Ctx,
) -> Result<ToolResult, HandError> {
    let started = Instant::now();
    let mut result = ToolResult::ok(hand_written(name, text, ctx).await?);
    stamp_audit_copy(&mut result, name, started, ctx);
    Ok(result)
}

// ---------------------------------------------------------------------------------------------
// Plumbing.

/// A copy of what `Registry::call` does to a result after the tool returns, to price it alone.
pub fn stamp_audit_copy(result: &mut ToolResult, tool: &'static str, started: Instant, ctx: &Ctx) {
    let audit = &mut result.audit;
    audit.duration_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    audit.tool = Some(Cow::Borrowed(tool));
    audit.ts = Some(SystemTime::now());
    audit.outcome = Some(Cow::Borrowed(if result.success { "ok" } else { "failed" }));
    if let Some(user) = ctx.user() {
        audit.user = Some(std::sync::Arc::from(user));
    }
}

// ---------------------------------------------------------------------------------------------
// Synthetic registries, for lookup against the number of tools.

fn leak(text: String) -> &'static str {
    Box::leak(text.into_boxed_str())
}

/// The call shim `#[tool]` generates for `add`, written out so synthetic tools can share it.
fn synthetic_call<'a>(args: ToolArgs<'_>, _env: CallEnv<'a>) -> CallResult<'a> {
    let args: AddArgs = parse_args(args)?;
    Ok(Box::pin(async move { output::value(add(args.a, args.b)) }))
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct SyntheticArgs {
    a: i64,
    b: i64,
}

/// A registry of `count` tools named `tool_00000`, `tool_00001`, ... that all add.
pub fn synthetic_registry(count: usize) -> Registry {
    const ARGS: &[ArgInfo] = &[
        ArgInfo {
            name: "a",
            rust_type: "i64",
            required: true,
        },
        ArgInfo {
            name: "b",
            rust_type: "i64",
            required: true,
        },
    ];
    let mut builder = Registry::builder().without_linked();
    for i in 0..count {
        let name = leak(format!("tool_{i:05}"));
        let def = ToolDef::__new(ToolParts {
            name,
            description: "Adds two integers.",
            category: Some("math"),
            source: SourceLocation {
                crate_name: "dispatch",
                module_path: "dispatch",
                file: file!(),
                line: i as u32 + 1,
                column: 1,
            },
            args: ARGS,
            input_schema: schema_for::<SyntheticArgs>,
            call: synthetic_call,
            ..ToolParts::DEFAULT
        });
        builder = builder.tool(Box::leak(Box::new(def)));
    }
    builder.build().expect("synthetic names are unique")
}

/// 64 names spread over a synthetic registry of `count` tools, so a larger registry is not read
/// from one hot cache line.
pub fn lookup_names(count: usize) -> Vec<String> {
    (0..64)
        .map(|i| format!("tool_{:05}", i * count / 64 % count))
        .collect()
}

#[allow(dead_code)] // used by the paired and formats benchmarks only
/// Registers `count` run-time tools `rt_00000`, `rt_00001`, ... that add, beside the
/// registry's own.
pub fn add_run_time_tools(registry: &Registry, count: usize) {
    for i in 0..count {
        let spec = tool_registry::ToolSpec::builder(format!("rt_{i:05}"))
            .description("Adds two integers.")
            .input_schema(serde_json::json!({
                "type": "object",
                "properties": { "a": { "type": "integer" }, "b": { "type": "integer" } },
                "required": ["a", "b"],
                "additionalProperties": false,
            }))
            .build()
            .expect("a valid spec");
        registry
            .register(
                spec,
                ToolHandler::new(|args: Value, _ctx: Ctx| async move {
                    let int = |key: &str| args[key].as_i64().unwrap_or_default();
                    Ok::<_, String>(add(int("a"), int("b")))
                }),
            )
            .expect("a new name");
    }
}

#[allow(dead_code)] // used by the paired and formats benchmarks only
/// 64 names spread over `count` run-time tools of [`add_run_time_tools`].
pub fn run_time_names(count: usize) -> Vec<String> {
    (0..64)
        .map(|i| format!("rt_{:05}", i * count / 64 % count))
        .collect()
}
