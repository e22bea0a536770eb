//! The registry as the parser's tool set: the knowledge-base tools the parser's case files call
//! (`parse/tests/cases/`), declared here with `#[tool]`, give exactly the schemas and tags of
//! their twin tool list in `parse/tests/support/kb.rs`, and every case reads the same with the
//! registry as with that list (the parser's own tests use the list); the prompt block; and the
//! `parse` / `run` commands.

// What the parser's own tests use besides; this test takes the case reader and the twin list.
#[allow(dead_code)]
#[path = "../../parse/tests/support/cases.rs"]
mod cases;
#[allow(dead_code)]
#[path = "../../parse/tests/support/kb.rs"]
mod kb;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::parse::{self, ToolSet};
use tool_registry::{Registry, tool};

// ---------------------------------------------------------------------------------------------
// The tools the cases call.

/// Search the web for pages about a topic.
#[tool]
fn search(#[arg(desc = "What to look for")] query: String, limit: Option<u32>) -> String {
    format!("{} results for {query}", limit.unwrap_or(5))
}

/// Get the current weather for a city.
#[tool]
fn get_weather(city: String, unit: Option<String>, days: Option<u32>) -> String {
    format!(
        "sunny in {city} ({}) for {} days",
        unit.unwrap_or_default(),
        days.unwrap_or(1)
    )
}

/// Write a file.
#[tool]
fn write_file(path: String, content: String) -> String {
    format!("wrote {} bytes to {path}", content.len())
}

/// Evaluate an arithmetic expression.
#[tool]
fn calculate(expression: String) -> String {
    expression
}

/// Set an alarm.
#[tool]
fn set_alarm(hour: u8, minute: u8, enabled: bool, label: Option<String>) -> String {
    format!("{hour:02}:{minute:02} {enabled} {label:?}")
}

/// When to be reminded of an event.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
struct Reminder {
    minutes: u32,
    channel: String,
}

/// The arguments of `create_event`.
#[derive(Debug, Deserialize, JsonSchema)]
struct EventArgs {
    /// The event's title.
    title: String,
    /// Who is invited.
    attendees: Vec<String>,
    /// How long it lasts.
    duration_hours: f64,
    /// A reminder before it starts.
    reminder: Option<Reminder>,
}

/// Create a calendar event.
#[tool]
fn create_event(#[args] args: EventArgs) -> String {
    let reminder = args
        .reminder
        .map(|r| format!(", reminded {} min before by {}", r.minutes, r.channel));
    format!(
        "{} with {} people for {} h{}",
        args.title,
        args.attendees.len(),
        args.duration_hours,
        reminder.unwrap_or_default()
    )
}

/// The current time.
#[tool]
fn get_time() -> String {
    "12:00".into()
}

/// Run a shell command.
#[tool]
fn run_shell(command: String, timeout_seconds: Option<u32>) -> String {
    format!("ran {command} ({timeout_seconds:?})")
}

/// Fails on purpose.
#[tool]
fn always_fails() -> Result<String, tool_registry::ToolError> {
    Err(tool_registry::ToolError::failed("this tool always fails"))
}

/// Search the knowledge base for notes on a topic.
#[tool(tag = "RESEARCH", example = "RESEARCH: [search query]")]
fn research(query: String) -> String {
    query
}

/// Archive source material contributed by a user.
#[tool(tag = "SOURCE", example = "SOURCE: [description]")]
fn source(description: String) -> String {
    description
}

/// Draft a KB claim from a user's assertion.
#[tool(tag = "CLAIM", example = "CLAIM: [specific assertion]")]
fn claim(assertion: String) -> String {
    assertion
}

/// What kind of thing was learned.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Category {
    Factual,
    Communication,
    StructuredData,
}

/// Record a correction or new fact from conversation.
#[tool(
    tag = "LEARNING",
    pattern = r"(factual|communication|structured_data)\s+(.+)",
    groups(category, content),
    example = "LEARNING: [category] [what was learned]"
)]
fn learning(category: Category, content: String) -> String {
    format!("{category:?}: {content}")
}

/// Leave a note the user sees.
#[tool(tag = "NOTE", strip_from_display = false)]
fn note(text: String) -> String {
    text
}

/// Rate the answer from 1 to 5 stars.
#[tool(tag = "RATE", pattern = r"(\d+)\s+(.+)", groups(stars, comment))]
fn rate(stars: u8, comment: String) -> String {
    format!("{stars}: {comment}")
}

fn registry() -> &'static Registry {
    Registry::global()
}

// ---------------------------------------------------------------------------------------------
// The twin tool list of the parser's tests.

#[test]
fn the_registry_gives_the_schemas_and_tags_of_the_parsers_twin_list() {
    let twin: Value = serde_json::from_str(&kb::case_file("kb_tools.json")).unwrap();
    let ours: Vec<Value> = registry()
        .tools(Listing::every())
        .into_iter()
        .map(|t| json!({ "name": t.name(), "parameters": t.input_schema().as_value() }))
        .collect();
    assert_eq!(
        Value::Array(ours),
        twin,
        "the tools here changed: write their schemas to parse/tests/cases/kb_tools.json"
    );
    let tags: Vec<_> = registry()
        .tools(Listing::every())
        .into_iter()
        .filter_map(|t| Some((t.name().to_owned(), *t.tag()?, t.strip_from_display())))
        .collect();
    let twin_tags: Vec<_> = kb::KB_TAGS
        .iter()
        .map(|(name, form, strip)| ((*name).to_owned(), *form, *strip))
        .collect();
    assert_eq!(
        tags, twin_tags,
        "the tags here and in parse/tests/support/kb.rs differ"
    );
}

#[test]
fn every_case_reads_the_same_with_the_registry_as_with_its_twin_list() {
    let mut checked = 0;
    for case in cases::all_cases()
        .into_iter()
        .filter(|case| !case.openai_tools)
    {
        let read = |tools: &dyn ToolSet| {
            if case.any {
                parse::any_with(&case.input, tools, case.options)
            } else {
                parse::text_with(&case.input, tools, case.options)
            }
        };
        assert_eq!(
            read(registry()),
            read(kb::kb_tools()),
            "{}: {}",
            case.file,
            case.name
        );
        checked += 1;
    }
    assert!(checked > 300, "only {checked} cases");
}

// ---------------------------------------------------------------------------------------------
// Registry-only behaviour.

#[test]
fn prompt_block_lists_the_tag_tools() {
    let block = registry().prompt_block(Listing::every());
    assert_eq!(
        block,
        "## Tools\n\n\
         To use a tool, write its tag at the start of a line of its own, followed by a colon, a space and the argument, exactly as shown. \
         Each such line is one call; write several lines to make several calls. Do not put tag lines in code blocks or quotes.\n\n\
         - `CLAIM: [specific assertion]`: Draft a KB claim from a user's assertion.\n\
         - `LEARNING: [category] [what was learned]`: Record a correction or new fact from conversation.\n\
         - `NOTE: [text]`: Leave a note the user sees. (the user sees this line)\n\
         - `RATE: [stars] [comment]`: Rate the answer from 1 to 5 stars.\n\
         - `RESEARCH: [search query]`: Search the knowledge base for notes on a topic.\n\
         - `SOURCE: [description]`: Archive source material contributed by a user.\n"
    );
    let hidden_only = registry().prompt_block(
        Listing::every().keep(|def| def.strip_from_display() && def.name() != "rate"),
    );
    assert!(hidden_only.contains("The user does not see these lines."));
    assert!(!hidden_only.contains("NOTE") && !hidden_only.contains("RATE"));
    assert_eq!(
        registry().prompt_block(Listing::every().keep(|_| false)),
        ""
    );
    assert_eq!(
        registry().prompt_block(&tool_registry::Scope::trusted()),
        block
    );
}

#[test]
fn registry_tag_values_are_typed_and_aliases_resolve_later() {
    let parsed = parse::text("RATE: 4 solid\nRATE: many stars", registry());
    assert_eq!(
        parsed.calls[0].arguments,
        json!({"stars": 4, "comment": "solid"})
    );
    assert_eq!(parsed.errors[0].code(), "tag_mismatch");
}

// ---------------------------------------------------------------------------------------------
// The `parse` and `run` commands.

fn cli(args: &[&str], input: &str) -> (i32, String, String) {
    let dir = std::env::temp_dir().join(format!("toolreg-parse-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!(
        "input-{}.txt",
        args.join("_").replace(['/', ' '], "-")
    ));
    std::fs::write(&path, input).unwrap();
    let mut argv = vec!["toolreg"];
    argv.extend_from_slice(args);
    let path_text = path.display().to_string();
    argv.extend_from_slice(&["--input", &path_text]);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = tool_registry::cli::run(argv, Registry::builder(), &mut out, &mut err);
    (
        code,
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
    )
}

#[test]
fn cli_parse_prints_calls_content_reasoning_and_errors() {
    let (code, out, err) = cli(
        &["parse"],
        "<think>hm</think>Checking.\n<tool_call>\n<function=get_weather>\n<parameter=days>\n2\n</parameter>\n</function>\n</tool_call>",
    );
    assert_eq!(code, 0, "{err}");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value,
        json!({"calls": [{"name": "get_weather", "arguments": {"days": 2}}], "content": "Checking.", "reasoning": "hm", "errors": [], "unknown": []})
    );
}

#[test]
fn cli_parse_types_parameters_by_a_tool_list() {
    let tools =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../parse/tests/cases/tools.json");
    let tools = tools.display().to_string();
    let (code, out, _) = cli(
        &["parse", "--tools", &tools],
        "<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n<parameter=offset>\n10\n</parameter>\n</function>\n<function=get_weather>{}</function>",
    );
    assert_eq!(code, 0);
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        value["calls"],
        json!([{"name": "read_file", "arguments": {"path": "a.txt", "offset": 10}}])
    );
    // get_weather is this program's tool, not in the list.
    assert_eq!(value["unknown"][0]["name"], "get_weather");

    let (code, _, err) = cli(&["parse", "--tools", "/nonexistent/tools.json"], "x");
    assert_eq!(code, 2);
    assert!(err.contains("cannot read the tool list"), "{err}");
}

#[test]
fn cli_run_executes_the_calls_and_prints_results() {
    let (code, out, err) = cli(
        &["run", "--user", "alice"],
        "On it.\n[get_time(), calculate(expression='1+1')]",
    );
    // A pythonic list on a line of its own after prose: both calls run.
    assert_eq!(code, 0, "{err}");
    let value: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = (value["results"].as_array().unwrap().iter())
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_time", "calculate"], "{value}");
    assert_eq!(value["content"], "On it.");
    // In a sentence it is prose, and nothing runs.
    let (code, out, err) = cli(
        &["run", "--user", "alice"],
        "On it: [get_time(), calculate(expression='1+1')] is what I would call.",
    );
    assert_eq!(code, 0, "{err}");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["results"], json!([]));

    let (code, out, err) = cli(
        &["run", "--user", "alice"],
        "<tool_call>{\"name\": \"get_time\", \"arguments\": {}}</tool_call>\nRESEARCH: tokio\nDone.",
    );
    assert_eq!(code, 0, "{err}");
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["results"][0]["name"], "get_time");
    assert_eq!(value["results"][0]["result"]["content"], "12:00");
    assert_eq!(value["results"][1]["result"]["content"], "tokio");
    assert_eq!(value["results"][1]["result"]["success"], true);
    assert_eq!(value["content"], "Done.");
}

#[test]
fn cli_run_exits_1_when_a_call_fails_or_names_an_unknown_tool() {
    let (code, out, _) = cli(
        &["run"],
        "<tool_call>{\"name\": \"always_fails\", \"arguments\": {}}</tool_call>",
    );
    assert_eq!(code, 1);
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["results"][0]["result"]["success"], false);

    let (code, out, _) = cli(
        &["run"],
        "<tool_call>{\"name\": \"rm_everything\", \"arguments\": {}}</tool_call>",
    );
    assert_eq!(code, 1);
    let value: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(value["results"], json!([]));
    assert_eq!(value["unknown"][0]["name"], "rm_everything");

    let (code, _, _) = cli(
        &["run"],
        "<tool_call>{\"name\": \"get_time\", \"arguments\": {",
    );
    assert_eq!(code, 1);

    let (code, _, err) = cli(&["run", "--bogus"], "");
    assert_eq!(code, 2, "{err}");
}
