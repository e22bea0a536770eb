//! Tools from two crates (`tool-registry-tools` and `tool-registry-tests`) in one registry:
//! listing, lookup, schemas, and every reference tool called through `Registry::call`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::def::Cost;
use tool_registry::format::Provider;
use tool_registry::{Ctx, Permission, Registry, ToolArgs, ToolError, ToolResult};
use tool_registry_tests::{Counter, Tenant};
use tool_registry_tools::Config;

/// The tools of `tool-registry-tools`.
const REFERENCE_TOOLS: &[&str] = &[
    "chart.draw",
    "chart.export",
    "claim",
    "file_manager.clear_folder",
    "file_manager.create_document",
    "file_manager.delete_file",
    "file_manager.list",
    "file_manager.read",
    "file_manager.wait_for",
    "learning",
    "research",
    "scheduler.add_job",
    "scheduler.list_jobs",
    "scheduler.remove_job",
    "source",
];

/// The tools of `tool-registry-tests`.
const TEST_TOOLS: &[&str] = &[
    "bank.transfer",
    "code_executor.run_python",
    "code_executor.run_shell",
    "docs.search",
    "gated.publish",
    "gated.wire",
    "quota.ping",
    "quota.spend",
    "quota.stamp",
    "research.fetch_webpage",
    "research.web_search",
    "util.add",
    "util.barrier",
    "util.count",
    "util.divide",
    "util.echo",
    "util.identity",
    "util.linger",
    "util.panic",
    "util.plan",
    "util.sleep",
    "util.upper",
    "util.whoami",
];

/// A registry over a fresh temporary folder.
struct Env {
    dir: tempfile::TempDir,
    config: Config,
    registry: Registry,
}

impl Env {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let config = Config::under(dir.path());
        let registry = registry_for(&config);
        Self {
            dir,
            config,
            registry,
        }
    }

    async fn call<'a>(
        &self,
        name: &str,
        args: impl Into<ToolArgs<'a>>,
    ) -> Result<ToolResult, ToolError> {
        // A person approves every call that asks for it, so that the handler itself is tested.
        let ctx = Ctx::trusted().with_user("tester");
        match self.registry.call(name, args, &ctx).await {
            Err(ToolError::NeedsApproval { token, .. }) => {
                self.registry.approve(&token, &ctx).await
            }
            other => other,
        }
    }

    async fn ok<'a>(&self, name: &str, args: impl Into<ToolArgs<'a>>) -> ToolResult {
        match self.call(name, args).await {
            Ok(result) => {
                assert!(result.success, "{name}: {result:?}");
                result
            }
            Err(error) => panic!("{name} failed: {error}"),
        }
    }

    fn sandbox(&self) -> PathBuf {
        self.config.sandbox_root.clone()
    }
}

fn registry_for(config: &Config) -> Registry {
    Registry::builder()
        .state(config.clone())
        .state(Counter::default())
        .build()
        .expect("no duplicates")
}

/// The `(path, message)` of an `InvalidArguments` error; panics on anything else.
fn invalid(outcome: Result<ToolResult, ToolError>) -> (String, String) {
    match outcome {
        Err(ToolError::InvalidArguments { path, message, .. }) => (path, message),
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                walk(base, &path, out);
            } else {
                out.push(
                    path.strip_prefix(base)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// Listing, lookup, metadata, schemas

#[test]
fn tools_of_both_crates_are_collected_sorted_and_found_by_alias() {
    let global = Registry::global();
    let tools: Vec<_> = global.tools(Listing::every()).into_iter().collect();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "the listing is sorted by name");
    for name in REFERENCE_TOOLS.iter().chain(TEST_TOOLS) {
        assert!(names.contains(name), "{name} is missing from {names:?}");
    }
    assert_eq!(
        names.len(),
        REFERENCE_TOOLS.len() + TEST_TOOLS.len(),
        "{names:?}"
    );

    let research = global.get("research", Listing::every()).unwrap();
    assert_eq!(research.source().unwrap().crate_name, "tool_registry_tools");
    assert_eq!(research.source().unwrap().file, "tools/src/tools/kb.rs");
    let echo = global.get("util.echo", Listing::every()).unwrap();
    assert_eq!(echo.source().unwrap().crate_name, "tool_registry_tests");
    assert_eq!(echo.source().unwrap().file, "tests/src/lib.rs");

    for (alias, name) in [
        ("echo", "util.echo"),
        ("say", "util.echo"),
        ("plus", "util.add"),
        ("file_manager.read_file", "file_manager.read"),
        ("file_manager.list_files", "file_manager.list"),
    ] {
        assert_eq!(
            global
                .get(alias, Listing::every())
                .map(|t| t.name().to_owned())
                .as_deref(),
            Some(name),
            "{alias}"
        );
    }
    assert!(global.get("util", Listing::every()).is_none());
    assert!(global.get("UTIL.ECHO", Listing::every()).is_none());

    let built = Env::new();
    let built_tools: Vec<_> = built.registry.tools(Listing::every()).into_iter().collect();
    let built_names: Vec<&str> = built_tools.iter().map(|t| t.name()).collect();
    assert_eq!(
        built_names, names,
        "a builder registry starts from the same linked tools"
    );
}

#[tokio::test]
async fn aliases_call_the_tool_and_unknown_names_are_typed_errors() {
    let env = Env::new();
    let result = env.ok("say", r#"{"text": "hi"}"#).await;
    assert_eq!(result.content, json!("hi"));
    assert_eq!(
        result.audit.tool.as_deref(),
        Some("util.echo"),
        "the audit names the tool, not the alias"
    );
    assert_eq!(
        env.ok("plus", json!({"a": 2, "b": 3})).await.content,
        json!(5)
    );
    assert_eq!(
        env.call("util.nope", "{}").await,
        Err(ToolError::UnknownTool {
            name: "util.nope".to_owned(),
            suggestion: None,
            module: None,
        })
    );
    assert_eq!(
        env.call("util.ad", "{}").await,
        Err(ToolError::UnknownTool {
            name: "util.ad".to_owned(),
            suggestion: Some("util.add".to_owned()),
            module: None,
        })
    );
    // A module no tool belongs to is named as unknown, beside the tool.
    let nomodule = env.call("nomodule.tool", "{}").await.unwrap_err();
    assert_eq!(
        nomodule,
        ToolError::UnknownTool {
            name: "nomodule.tool".to_owned(),
            suggestion: None,
            module: Some("nomodule".to_owned()),
        }
    );
    assert_eq!(nomodule.code(), "unknown_tool");
    assert!(
        nomodule
            .to_string()
            .starts_with("unknown tool `nomodule.tool`: no module `nomodule` is available to you;"),
        "{nomodule}"
    );
    // A module whose every tool is hidden from the caller reads as one that does not exist;
    // a caller who sees one of its tools is told only that the tool is unknown.
    let guest = Ctx::for_scope(tool_registry::Scope::guest());
    let hidden = env
        .registry
        .call("scheduler.add_job", "{}", &guest)
        .await
        .unwrap_err();
    let absent = env
        .registry
        .call("schedulr.add_job", "{}", &guest)
        .await
        .unwrap_err();
    assert_eq!(
        hidden.to_string().replace("scheduler", "X"),
        absent.to_string().replace("schedulr", "X")
    );
    let user = Ctx::for_scope(tool_registry::Scope::user("u"));
    let seen = env
        .registry
        .call("scheduler.add_job", "{}", &user)
        .await
        .unwrap_err();
    assert!(
        matches!(&seen, ToolError::UnknownTool { module: None, .. }),
        "{seen}"
    );
}

#[test]
fn reference_tools_declare_their_metadata() {
    let registry = Registry::global();
    let research = registry.get("research", Listing::every()).unwrap();
    assert_eq!(
        research.short_description(),
        "Search the knowledge base for notes on a topic."
    );
    assert_eq!(research.category(), Some("search"));
    assert_eq!(research.cost(), Cost::Cheap);
    assert_eq!(research.daily_limit(), Some(3));
    assert_eq!(research.annotations().read_only, Some(true));
    assert_eq!(research.version(), Some("1.0.0"));
    let tag = research.tag().unwrap();
    assert_eq!(
        (tag.prefix, tag.pattern, tag.groups),
        ("RESEARCH", "(.+)", &["query"][..])
    );
    assert_eq!(tag.example, "RESEARCH: [search query]");

    for (name, prefix, example) in [
        ("source", "SOURCE", "SOURCE: [description]"),
        ("claim", "CLAIM", "CLAIM: [specific assertion]"),
        (
            "learning",
            "LEARNING",
            "LEARNING: [category] [what was learned]",
        ),
    ] {
        let tool = registry.get(name, Listing::every()).unwrap();
        let tag = tool.tag().unwrap_or_else(|| panic!("{name} has a tag"));
        assert_eq!((tag.prefix, tag.example), (prefix, example));
    }
    let learning = registry.get("learning", Listing::every()).unwrap();
    let learning = learning.tag().unwrap();
    assert_eq!(
        learning.pattern,
        r"(factual|communication|structured_data)\s+(.+)"
    );
    assert_eq!(learning.groups, ["category", "content"]);
    assert_eq!(
        registry
            .get("source", Listing::every())
            .unwrap()
            .short_description(),
        "Archive source material contributed by a user."
    );
    assert_eq!(
        registry
            .get("claim", Listing::every())
            .unwrap()
            .short_description(),
        "Draft a knowledge-base claim from a user's assertion."
    );
    assert_eq!(
        registry
            .get("learning", Listing::every())
            .unwrap()
            .short_description(),
        "Record a correction or new fact from conversation."
    );

    let delete = registry
        .get("file_manager.delete_file", Listing::every())
        .unwrap();
    assert_eq!(delete.permission(), Permission::User);
    assert_eq!(delete.annotations().destructive, Some(true));
    assert_eq!(delete.module(), Some("file_manager"));
    assert_eq!(
        registry
            .get("file_manager.create_document", Listing::every())
            .unwrap()
            .permission(),
        Permission::Guest
    );
    assert_eq!(
        registry
            .get("file_manager.read", Listing::every())
            .unwrap()
            .annotations()
            .read_only,
        Some(true)
    );
    assert_eq!(
        registry
            .get("scheduler.add_job", Listing::every())
            .unwrap()
            .permission(),
        Permission::Admin
    );
    assert_eq!(
        registry
            .get("scheduler.remove_job", Listing::every())
            .unwrap()
            .permission(),
        Permission::Admin
    );
    assert_eq!(
        registry
            .get("scheduler.list_jobs", Listing::every())
            .unwrap()
            .annotations()
            .read_only,
        Some(true)
    );

    for name in REFERENCE_TOOLS {
        let def = registry.get(name, Listing::every()).unwrap();
        assert!(
            def.short_description().ends_with('.'),
            "{name}: {:?}",
            def.short_description()
        );
        assert!(def.category().is_some(), "{name} has a category");
        assert_eq!(def.version(), Some("1.0.0"), "{name}");
    }
}

#[test]
fn openai_tools_cover_every_tool_with_required_descriptions_and_defaults() {
    let registry = Registry::global();
    let all = registry.provider_tools(Provider::OpenAi, tool_registry::Listing::every());
    let tools = all.as_array().expect("an array");
    assert_eq!(tools.len(), registry.len());
    let by_name = |name: &str| -> &Value {
        let wire = tool_registry::format::Provider::OpenAi.wire_name(name);
        let tool = tools.iter().find(|t| t["function"]["name"] == *wire);
        &tool.unwrap_or_else(|| panic!("{name} is not in the OpenAI tools"))["function"]
    };

    for (def, tool) in registry.tools(Listing::every()).into_iter().zip(tools) {
        assert_eq!(tool["type"], "function");
        let function = &tool["function"];
        assert_eq!(
            function["name"],
            *tool_registry::format::Provider::OpenAi.wire_name(def.name()),
            "same order as the listing, under the name OpenAI accepts"
        );
        assert_eq!(function["description"], def.description());
        let parameters = &function["parameters"];
        assert_eq!(parameters["type"], "object", "{}", def.name());
        assert!(
            parameters.get("$schema").is_none(),
            "{}: OpenAI parameters carry no $schema",
            def.name()
        );
        assert!(parameters["properties"].is_object(), "{}", def.name());
        if !def.args().is_empty() {
            let required: BTreeSet<&str> = def
                .args()
                .iter()
                .filter(|a| a.required)
                .map(|a| a.name)
                .collect();
            let listed: BTreeSet<&str> = parameters["required"]
                .as_array()
                .map(|r| r.iter().map(|v| v.as_str().unwrap()).collect())
                .unwrap_or_default();
            assert_eq!(listed, required, "{}", def.name());
            for arg in def.args() {
                let property = &parameters["properties"][arg.name];
                assert!(
                    property.is_object(),
                    "{}: no property {}",
                    def.name(),
                    arg.name
                );
                assert!(
                    property["description"].is_string(),
                    "{}.{} has a description",
                    def.name(),
                    arg.name
                );
            }
        }
    }

    let research = &by_name("research")["parameters"];
    assert_eq!(research["required"], json!(["query"]));
    assert_eq!(research["properties"]["limit"]["default"], 5);
    assert_eq!(
        research["properties"]["query"]["description"],
        "What to look for: words or a phrase"
    );

    let create = &by_name("file_manager.create_document")["parameters"];
    assert_eq!(create["required"], json!(["path", "content"]));
    assert_eq!(create["properties"]["overwrite"]["default"], false);
    assert_eq!(create["additionalProperties"], false);

    let read = &by_name("file_manager.read")["parameters"];
    assert_eq!(read["properties"]["max_bytes"]["default"], 65536);
    assert_eq!(read["required"], json!(["path"]));

    let list = &by_name("file_manager.list")["parameters"];
    assert!(
        list["required"].as_array().is_none_or(Vec::is_empty),
        "an Option is not required: {list}"
    );

    let learning = by_name("learning")["parameters"].to_string();
    for category in ["factual", "communication", "structured_data"] {
        assert!(learning.contains(&format!("\"{category}\"")), "{learning}");
    }

    let add_job = &by_name("scheduler.add_job")["parameters"];
    assert_eq!(add_job["required"], json!(["name", "schedule", "command"]));

    let search = &by_name("research.web_search");
    assert_eq!(
        search["description"],
        "Search the web and return results.\n\nAn offline stand-in for the HTTP module of the same name: the results are made up from the\nquery, numbered from 1."
    );
    assert_eq!(search["parameters"]["required"], json!(["query"]));
    assert_eq!(
        search["parameters"]["properties"]["max_results"]["description"],
        "Max results"
    );

    assert_eq!(
        by_name("util.add")["parameters"]["properties"]["b"]["default"],
        0
    );
    assert_eq!(
        by_name("util.whoami")["parameters"]["properties"]["greeting"]["default"],
        "hello"
    );
    let upper = &by_name("util.upper")["parameters"];
    assert_eq!(
        upper["required"],
        json!(["input"]),
        "rename changes the JSON name"
    );
    assert!(upper["properties"]["text"].is_null());

    let plan = &by_name("util.plan")["parameters"];
    let required: BTreeSet<&str> = plan["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(
        required,
        BTreeSet::from(["steps", "title"]),
        "an #[args] struct's defaulted fields are optional"
    );
    assert_eq!(
        plan["properties"]["title"]["description"],
        "What the plan is for."
    );
    assert_eq!(plan["properties"]["priority"]["default"], "normal");
}

#[test]
fn input_schemas_are_json_schema_2020_12() {
    let registry = Registry::global();
    for def in registry.tools(Listing::every()) {
        let schema = registry
            .get(def.name(), Listing::every())
            .unwrap()
            .input_schema()
            .clone();
        let schema = schema.as_value();
        assert_eq!(
            schema["$schema"],
            "https://json-schema.org/draft/2020-12/schema",
            "{}",
            def.name()
        );
        assert_eq!(schema["type"], "object", "{}", def.name());
    }
    let plan = registry
        .get("util.plan", Listing::every())
        .map(|tool| tool.input_schema().clone())
        .unwrap()
        .as_value()
        .to_string();
    assert!(
        plan.contains("\"$defs\""),
        "nested types are definitions: {plan}"
    );
    for name in ["Step", "Owner", "Priority"] {
        assert!(
            plan.contains(&format!("#/$defs/{name}")),
            "{name} in {plan}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Argument errors

#[tokio::test]
async fn bad_arguments_name_what_is_wrong_and_where() {
    let env = Env::new();

    let (path, message) = invalid(
        env.call("research", r#"{"query": "x", "limit": "five"}"#)
            .await,
    );
    assert_eq!(path, "limit");
    assert!(message.contains("expected u32"), "{message}");

    let (path, message) = invalid(env.call("research", "{}").await);
    assert_eq!(path, "");
    assert!(message.contains("missing field `query`"), "{message}");

    let (path, message) = invalid(
        env.call("research", json!({"query": "x", "depth": 2}))
            .await,
    );
    assert_eq!(path, "depth");
    assert!(message.contains("unknown field `depth`"), "{message}");

    let (path, message) = invalid(env.call("research", r#"{"query": "x""#).await);
    assert_eq!(path, "");
    assert!(message.contains("malformed JSON"), "{message}");

    for not_an_object in [
        ToolArgs::Text("[1, 2]"),
        ToolArgs::Text("\"query\""),
        ToolArgs::Value(json!(7)),
    ] {
        let (path, message) = invalid(env.call("research", not_an_object).await);
        assert_eq!(path, "");
        assert!(message.contains("must be a JSON object"), "{message}");
    }

    let (path, _) = invalid(
        env.call("learning", json!({"category": "opinion", "content": "x"}))
            .await,
    );
    assert_eq!(path, "category");
    let (path, _) = invalid(
        env.call(
            "file_manager.create_document",
            json!({"path": "a", "content": 5}),
        )
        .await,
    );
    assert_eq!(path, "content");
    let (path, _) = invalid(
        env.call(
            "file_manager.create_document",
            json!({"path": "a", "content": "", "overwrite": "yes"}),
        )
        .await,
    );
    assert_eq!(path, "overwrite");

    // Nested fields of an `#[args]` struct.
    let good =
        json!({"title": "t", "steps": [{"name": "a", "minutes": 5}, {"name": "b", "minutes": 10}]});
    let mut bad = good.clone();
    bad["steps"][1]["minutes"] = json!("ten");
    assert_eq!(
        invalid(env.call("util.plan", bad).await).0,
        "steps[1].minutes"
    );
    let mut bad = good.clone();
    bad["priority"] = json!("asap");
    let (path, message) = invalid(env.call("util.plan", bad).await);
    assert_eq!(path, "priority");
    assert!(
        message.contains("urgent"),
        "the variants are listed: {message}"
    );
    let mut bad = good.clone();
    bad["owner"] = json!({"name": "ann", "phone": "1"});
    assert_eq!(invalid(env.call("util.plan", bad).await).0, "owner.phone");

    // Validation the tools do themselves reports the argument the same way.
    assert_eq!(
        invalid(
            env.call("research", json!({"query": "x", "limit": 0}))
                .await
        )
        .0,
        "limit"
    );
    assert_eq!(
        invalid(env.call("research", json!({"query": " ?! "})).await).0,
        "query"
    );
    assert_eq!(
        invalid(env.call("util.upper", json!({"text": "a"})).await).0,
        "text"
    );

    let error = env.call("research", r#"{"query": 1}"#).await.unwrap_err();
    assert_eq!(error.code(), "invalid_arguments");
    assert!(
        error
            .to_string()
            .starts_with("invalid arguments for tool `research`: at `query`: "),
        "{error}"
    );
    assert!(
        tree(env.dir.path()).is_empty(),
        "no call above wrote anything: {:?}",
        tree(env.dir.path())
    );
}

// ---------------------------------------------------------------------------------------------
// The knowledge-base tools

fn write_note(kb: &Path, rel: &str, text: &str) {
    let path = kb.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn research_searches_the_kb_and_leaves_out_the_inbox() {
    let env = Env::new();
    let kb = &env.config.kb_dir;
    write_note(
        kb,
        "decisions/caching.md",
        "---\ntitle: Caching decision\n---\nWe cache module manifests in Redis for one hour.\n",
    );
    write_note(kb, "notes/redis.txt", "Redis runs on the default port.\n");
    write_note(kb, "notes/other.md", "# Unrelated\nNothing here.\n");
    write_note(
        kb,
        "inbox/sources/draft.md",
        "manifests manifests manifests cache cache\n",
    );
    for i in 0..7 {
        write_note(
            kb,
            &format!("many/{i}.md"),
            &format!("# Note {i}\nA cache note.\n"),
        );
    }

    let ctx = Ctx::new().with_user("researcher-1");
    let result = env
        .registry
        .call(
            "research",
            r#"{"query": "cache manifests", "limit": 2}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert!(result.success);
    let notes = result.content.as_array().unwrap();
    assert_eq!(notes.len(), 2);
    assert_eq!(notes[0]["path"], "decisions/caching.md");
    assert_eq!(notes[0]["title"], "Caching decision");
    assert!(
        notes[0]["snippet"]
            .as_str()
            .unwrap()
            .contains("module manifests"),
        "{}",
        notes[0]
    );
    assert!(notes[0]["score"].as_u64().unwrap() > notes[1]["score"].as_u64().unwrap());
    assert!(notes[0]["modified"].is_string());
    assert!(
        !result.content.to_string().contains("inbox"),
        "inbox drafts are not knowledge yet"
    );
    assert_eq!(result.side_effects, ["searched:kb:cache manifests"]);
    assert!(
        result
            .message
            .as_deref()
            .unwrap()
            .contains("Caching decision (decisions/caching.md)")
    );
    assert_eq!(result.audit.user.as_deref(), Some("researcher-1"));
    assert_eq!(result.audit.extra["matches"], 2);

    let ctx = Ctx::new().with_user("researcher-2");
    let result = env
        .registry
        .call("research", json!({"query": "cache"}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        result.content.as_array().unwrap().len(),
        5,
        "limit defaults to 5"
    );

    let ctx = Ctx::new().with_user("researcher-3");
    let result = env
        .registry
        .call("research", json!({"query": "kubernetes"}), &ctx)
        .await
        .unwrap();
    assert_eq!(result.content, json!([]));
    assert_eq!(
        result.message.as_deref(),
        Some("No notes found for \"kubernetes\".")
    );
}

/// The front matter of a note as `key: value` pairs.
fn front_matter(text: &str) -> Vec<(String, String)> {
    let body = text.strip_prefix("---\n").expect("front matter");
    let end = body.find("\n---\n").expect("front matter end");
    body[..end]
        .lines()
        .map(|line| {
            let (k, v) = line.split_once(": ").unwrap();
            (k.to_owned(), v.to_owned())
        })
        .collect()
}

fn created_file(env: &Env, result: &ToolResult, folder: &str) -> (String, String) {
    assert_eq!(result.side_effects.len(), 1, "{result:?}");
    let rel = result.side_effects[0]
        .strip_prefix("created:")
        .expect("a created: side effect")
        .to_owned();
    assert!(
        rel.starts_with(&format!("inbox/{folder}/")) && rel.ends_with(".md"),
        "{rel}"
    );
    let path = env.config.kb_dir.join(&rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (rel, text)
}

#[tokio::test]
async fn source_and_claim_write_notes_to_the_inbox() {
    let env = Env::new();
    let ctx = Ctx::new()
        .with_user("alice")
        .with_chat_id(42)
        .with_confidence(0.8)
        .with_user_message("Here's the paper on tag parsing\nsecond line");

    let args = json!({"description": "Paper: \"Response tags\" beat JSON tools", "url": "https://example.org/p"});
    let result = env
        .registry
        .call("source", args.clone(), &ctx)
        .await
        .unwrap();
    assert!(result.success);
    let (rel, text) = created_file(&env, &result, "sources");
    assert!(
        rel.ends_with("-paper-response-tags-beat-json-tools.md"),
        "{rel}"
    );
    assert_eq!(result.content["path"], rel);
    let front = front_matter(&text);
    assert!(
        front.contains(&("type".into(), "source".into())),
        "{front:?}"
    );
    assert!(front.contains(&(
        "title".into(),
        r#""Paper: \"Response tags\" beat JSON tools""#.into()
    )));
    assert!(front.contains(&("url".into(), "\"https://example.org/p\"".into())));
    assert!(front.contains(&("contributed_by".into(), "\"alice\"".into())));
    assert!(front.contains(&("chat_id".into(), "42".into())));
    assert!(
        text.contains("\n> Here's the paper on tag parsing\n> second line\n"),
        "{text}"
    );
    assert_eq!(result.audit.tool.as_deref(), Some("source"));

    let again = env.registry.call("source", args, &ctx).await.unwrap();
    let (second, _) = created_file(&env, &again, "sources");
    assert_ne!(second, rel, "a second source never replaces the first");
    let suffix = second
        .strip_prefix(rel.trim_end_matches(".md"))
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|rest| rest.strip_suffix(".md"))
        .unwrap_or_else(|| panic!("{second} is not {rel} with a suffix"));
    assert!(
        suffix.len() == 6
            && suffix
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()),
        "{second}"
    );

    let result = env
        .registry
        .call(
            "claim",
            json!({"assertion": "Tag parsing needs no JSON mode.", "evidence": "The paper."}),
            &ctx,
        )
        .await
        .unwrap();
    let (rel, text) = created_file(&env, &result, "claims");
    assert!(rel.ends_with("-tag-parsing-needs-no-json-mode.md"), "{rel}");
    let front = front_matter(&text);
    assert!(
        front.contains(&("status".into(), "draft".into())),
        "{front:?}"
    );
    assert!(front.contains(&("confidence".into(), "0.8".into())));
    assert!(front.contains(&("proposed_by".into(), "\"alice\"".into())));
    assert!(
        text.contains("# Tag parsing needs no JSON mode.\n"),
        "{text}"
    );
    assert!(text.contains("## Evidence\n\nThe paper.\n"), "{text}");
    assert_eq!(result.content["status"], "draft");
    assert!(
        result
            .message
            .as_deref()
            .unwrap()
            .contains("Tag parsing needs no JSON mode.")
    );

    assert_eq!(
        invalid(env.call("claim", json!({"assertion": "   "})).await).0,
        "assertion"
    );
    let files = tree(&env.config.inbox_dir);
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(
        tree(env.dir.path())
            .iter()
            .all(|f| f.starts_with("kb/inbox/")),
        "only the inbox is written"
    );
}

#[tokio::test]
async fn learning_appends_one_json_line_per_call() {
    let env = Env::new();
    let ctx = Ctx::new().with_user("bob").with_chat_id(7);
    let first = env
        .registry
        .call(
            "learning",
            json!({"category": "structured_data", "content": "Dates are ISO 8601."}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(first.side_effects, ["appended:inbox/learnings.jsonl"]);
    assert_eq!(first.content["category"], "structured_data");
    env.registry
        .call(
            "learning",
            json!({"category": "factual", "content": "The bot runs on Rust."}),
            &ctx,
        )
        .await
        .unwrap();

    let text = std::fs::read_to_string(env.config.inbox_dir.join("learnings.jsonl")).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["category"], "structured_data");
    assert_eq!(lines[0]["content"], "Dates are ISO 8601.");
    assert_eq!(lines[1]["category"], "factual");
    assert_eq!(lines[1]["user"], "bob");
    assert_eq!(lines[1]["chat_id"], 7);
    assert!(lines[1]["ts"].as_str().unwrap().ends_with('Z'));
}

// ---------------------------------------------------------------------------------------------
// The file manager

#[tokio::test]
async fn file_manager_creates_reads_lists_and_deletes() {
    let env = Env::new();
    let root = env.sandbox();

    let created = env
        .ok(
            "file_manager.create_document",
            json!({"path": "notes/todo.md", "content": "- milk\n"}),
        )
        .await;
    assert_eq!(created.side_effects, ["created:notes/todo.md"]);
    assert_eq!(
        std::fs::read_to_string(root.join("notes/todo.md")).unwrap(),
        "- milk\n"
    );

    let (path, message) = invalid(
        env.call(
            "file_manager.create_document",
            json!({"path": "notes/todo.md", "content": "x"}),
        )
        .await,
    );
    assert_eq!(path, "path");
    assert!(
        message.contains("already exists") && message.contains("overwrite"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("notes/todo.md")).unwrap(),
        "- milk\n",
        "left alone"
    );

    let updated = env
        .ok(
            "file_manager.create_document",
            json!({"path": "./notes/todo.md", "content": "- eggs\n", "overwrite": true}),
        )
        .await;
    assert_eq!(updated.side_effects, ["updated:notes/todo.md"]);
    assert_eq!(
        std::fs::read_to_string(root.join("notes/todo.md")).unwrap(),
        "- eggs\n"
    );

    let read = env
        .ok("file_manager.read", json!({"path": "notes/todo.md"}))
        .await;
    assert_eq!(
        read.content,
        json!({"path": "notes/todo.md", "content": "- eggs\n", "size": 7, "truncated": false})
    );
    let part = env
        .ok(
            "file_manager.read_file",
            json!({"path": "notes/todo.md", "max_bytes": 3}),
        )
        .await;
    assert_eq!(part.content["content"], "- e");
    assert_eq!(part.content["truncated"], true);
    assert_eq!(
        invalid(
            env.call(
                "file_manager.read",
                json!({"path": "notes/todo.md", "max_bytes": 0})
            )
            .await
        )
        .0,
        "max_bytes"
    );
    assert_eq!(
        invalid(
            env.call("file_manager.read", json!({"path": "notes"}))
                .await
        )
        .0,
        "path"
    );

    env.ok(
        "file_manager.create_document",
        json!({"path": "b.txt", "content": "bee"}),
    )
    .await;
    let listing = env.ok("file_manager.list", "").await;
    assert_eq!(
        listing.content,
        json!({"dir": ".", "truncated": false, "entries": [
            {"name": "b.txt", "path": "b.txt", "kind": "file", "size": 3},
            {"name": "notes", "path": "notes", "kind": "dir"},
        ]})
    );
    let notes = env.ok("file_manager.list", json!({"dir": "notes"})).await;
    assert_eq!(
        notes.content["entries"],
        json!([{"name": "todo.md", "path": "notes/todo.md", "kind": "file", "size": 7}])
    );
    assert_eq!(
        invalid(
            env.call("file_manager.list", json!({"dir": "missing"}))
                .await
        )
        .0,
        "dir"
    );

    let deleted = env
        .ok("file_manager.delete_file", json!({"path": "notes/todo.md"}))
        .await;
    assert_eq!(deleted.side_effects, ["deleted:notes/todo.md"]);
    assert!(!root.join("notes/todo.md").exists());
    let (path, message) = invalid(
        env.call("file_manager.delete_file", json!({"path": "notes/todo.md"}))
            .await,
    );
    assert_eq!(path, "path");
    assert!(message.contains("there is no file"), "{message}");
    let (_, message) = invalid(
        env.call("file_manager.delete_file", json!({"path": "notes"}))
            .await,
    );
    assert!(message.contains("folder"), "{message}");
    assert!(root.join("notes").is_dir(), "folders are not deleted");
}

#[tokio::test]
async fn sandbox_escapes_are_refused_and_nothing_outside_is_touched() {
    let env = Env::new();
    let root = env.sandbox();
    std::fs::create_dir_all(&root).unwrap();
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "top secret").unwrap();
    let absolute_secret = outside.join("secret.txt").to_string_lossy().into_owned();
    let absolute_new = outside.join("new.txt").to_string_lossy().into_owned();

    let mut escapes = vec![
        "../outside/secret.txt".to_owned(),
        "../outside/new.txt".to_owned(),
        "notes/../../outside/new.txt".to_owned(),
        "..".to_owned(),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("secret-link.txt"))
            .unwrap();
        escapes.extend(
            [
                "link/secret.txt",
                "link/new.txt",
                "link/sub/new.txt",
                "secret-link.txt",
            ]
            .map(String::from),
        );
    }
    let before = tree(env.dir.path());

    for path in &escapes {
        for (tool, args) in [
            (
                "file_manager.create_document",
                json!({"path": path, "content": "pwned", "overwrite": true}),
            ),
            ("file_manager.read", json!({"path": path})),
            ("file_manager.delete_file", json!({"path": path})),
            ("file_manager.list", json!({"dir": path})),
        ] {
            let (arg, message) = invalid(env.call(tool, args).await);
            assert_eq!(
                arg,
                if tool == "file_manager.list" {
                    "dir"
                } else {
                    "path"
                }
            );
            assert!(
                message.contains("escapes the sandbox root"),
                "{tool} {path}: {message}"
            );
        }
    }
    for path in [&absolute_secret, &absolute_new, &"/etc/passwd".to_owned()] {
        for (tool, args) in [
            (
                "file_manager.create_document",
                json!({"path": path, "content": "pwned", "overwrite": true}),
            ),
            ("file_manager.read", json!({"path": path})),
            ("file_manager.delete_file", json!({"path": path})),
        ] {
            let (arg, message) = invalid(env.call(tool, args).await);
            assert_eq!(arg, "path");
            assert!(message.contains("is absolute"), "{tool} {path}: {message}");
        }
    }

    assert_eq!(
        tree(env.dir.path()),
        before,
        "nothing was created or deleted"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "top secret"
    );
    assert_eq!(
        invalid(
            env.call(
                "file_manager.create_document",
                json!({"path": "", "content": "x"})
            )
            .await
        )
        .0,
        "path"
    );
}

// ---------------------------------------------------------------------------------------------
// The scheduler

#[tokio::test]
async fn scheduler_jobs_persist_in_the_file_across_registries() {
    let env = Env::new();
    let admin = Ctx::trusted().with_user("root");
    let added = env
        .registry
        .call(
            "scheduler.add_job",
            json!({"name": "digest", "schedule": "0  9 * * 1-5", "command": "send-digest", "description": "Morning digest"}),
            &admin,
        )
        .await
        .unwrap();
    assert_eq!(added.side_effects, ["scheduled:digest"]);
    assert_eq!(added.content["schedule"], "0 9 * * 1-5", "normalized");
    assert_eq!(added.content["created_by"], "root");
    env.ok(
        "scheduler.add_job",
        json!({"name": "backup", "schedule": "every 6h", "command": "backup.sh"}),
    )
    .await;

    // A registry built afresh reads the file, not memory.
    let fresh = registry_for(&env.config);
    let listed = fresh
        .call("scheduler.list_jobs", Value::Null, &Ctx::new())
        .await
        .unwrap();
    let names: Vec<&str> = listed
        .content
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["backup", "digest"]);
    let on_disk: Value =
        serde_json::from_str(&std::fs::read_to_string(&env.config.schedule_file).unwrap()).unwrap();
    assert_eq!(on_disk["version"], 1);
    assert_eq!(on_disk["jobs"][1]["description"], "Morning digest");

    let (path, message) = invalid(
        env.call(
            "scheduler.add_job",
            json!({"name": "digest", "schedule": "@daily", "command": "x"}),
        )
        .await,
    );
    assert_eq!(path, "name");
    assert!(message.contains("already exists"), "{message}");
    for bad in ["61 * * * *", "* * *", "@sometimes", "every never"] {
        let (path, message) = invalid(
            env.call(
                "scheduler.add_job",
                json!({"name": "bad", "schedule": bad, "command": "x"}),
            )
            .await,
        );
        assert_eq!(path, "schedule", "{bad}: {message}");
    }
    assert_eq!(
        invalid(
            env.call(
                "scheduler.add_job",
                json!({"name": "a b", "schedule": "@daily", "command": "x"})
            )
            .await
        )
        .0,
        "name"
    );

    let removed = fresh
        .call("scheduler.remove_job", json!({"name": "digest"}), &admin)
        .await
        .unwrap();
    assert_eq!(removed.side_effects, ["removed:digest"]);
    let listed = env.ok("scheduler.list_jobs", "{}").await;
    assert_eq!(listed.content.as_array().unwrap().len(), 1);
    assert_eq!(listed.content[0]["name"], "backup");
    let (path, message) = invalid(
        env.call("scheduler.remove_job", json!({"name": "digest"}))
            .await,
    );
    assert_eq!(path, "name");
    assert!(
        message.contains("backup"),
        "the message lists the jobs there are: {message}"
    );

    let files = tree(env.dir.path());
    assert_eq!(
        files,
        ["scheduler.json", "scheduler.json.lock"],
        "no temporary file is left behind (the lock file stays: removing it would race)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_scheduler_changes_are_not_lost() {
    let env = Env::new();
    let registry = Arc::new(registry_for(&env.config));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let registry = Arc::clone(&registry);
        tasks.spawn(async move {
            let args =
                json!({"name": format!("job-{i:02}"), "schedule": "@hourly", "command": "true"});
            registry.call("scheduler.add_job", args, &Ctx::new()).await
        });
    }
    while let Some(outcome) = tasks.join_next().await {
        assert!(outcome.unwrap().unwrap().success);
    }
    let fresh = registry_for(&env.config);
    let listed = fresh
        .call("scheduler.list_jobs", "", &Ctx::new())
        .await
        .unwrap();
    assert_eq!(
        listed.content.as_array().unwrap().len(),
        16,
        "{}",
        listed.content
    );
}

#[tokio::test]
async fn a_corrupt_schedule_file_is_reported_and_kept() {
    let env = Env::new();
    std::fs::write(&env.config.schedule_file, "{not json").unwrap();
    let error = env
        .call(
            "scheduler.add_job",
            json!({"name": "a", "schedule": "@daily", "command": "x"}),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ToolError::Handler { tool, message } if tool == "scheduler.add_job" && message.contains("not a valid schedule")),
        "{error:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&env.config.schedule_file).unwrap(),
        "{not json",
        "never overwritten"
    );
}

// ---------------------------------------------------------------------------------------------
// The shapes of the test crate's tools

#[tokio::test]
async fn a_panicking_tool_is_isolated_and_the_next_call_works() {
    let env = Env::new();
    let error = env
        .call("util.panic", json!({"message": "boom"}))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Panicked {
            tool: "util.panic".to_owned(),
            message: "boom".to_owned()
        }
    );
    assert_eq!(error.code(), "panicked");
    assert_eq!(
        env.ok("util.echo", json!({"text": "still here"}))
            .await
            .content,
        "still here"
    );

    let error = Registry::global()
        .call("util.panic", "", &Ctx::new())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Panicked {
            tool: "util.panic".to_owned(),
            message: "util.panic was called".to_owned()
        }
    );
    assert_eq!(
        Registry::global()
            .call("util.add", r#"{"a": 40, "b": 2}"#, &Ctx::new())
            .await
            .unwrap()
            .content,
        42
    );
}

#[tokio::test]
async fn errors_sync_tools_context_and_state_reach_the_caller() {
    let env = Env::new();
    assert_eq!(
        env.ok("util.divide", json!({"dividend": 7, "divisor": 2}))
            .await
            .content,
        3
    );
    assert_eq!(
        env.call("util.divide", json!({"dividend": 1, "divisor": 0}))
            .await,
        Err(ToolError::Handler {
            tool: "util.divide".to_owned(),
            message: "cannot divide 1 by 0".to_owned()
        })
    );
    let as_result = ToolResult::from(
        env.call("util.divide", json!({"dividend": 1, "divisor": 0}))
            .await
            .unwrap_err(),
    );
    assert!(!as_result.success);
    assert_eq!(as_result.content["error"]["code"], "handler_error");

    assert_eq!(
        env.ok("util.upper", r#"{"input": "abc"}"#).await.content,
        "ABC"
    );
    assert_eq!(
        env.ok("util.add", json!({"a": i64::MAX, "b": 1}))
            .await
            .content,
        json!(i64::MAX)
    );

    let ctx = Ctx::new()
        .with_user("carol")
        .with_chat_id(-100)
        .with_user_message("who am I?")
        .with_confidence(0.5)
        .with_metadata("request_id", "r-1")
        .with(Tenant("acme".into()));
    let me = env.registry.call("util.whoami", "", &ctx).await.unwrap();
    assert_eq!(
        me.content,
        json!({"user": "carol", "chat_id": -100, "user_message": "who am I?", "confidence": 0.5,
               "request_id": "r-1", "tenant": "acme", "greeting": "hello"})
    );
    assert_eq!(me.audit.user.as_deref(), Some("carol"));
    assert_eq!(me.audit.outcome.as_deref(), Some("ok"));
    assert!(me.audit.ts.is_some() && me.audit.duration_ms.is_some());
    let anonymous = env
        .registry
        .call("util.whoami", json!({"greeting": "hi"}), &Ctx::new())
        .await
        .unwrap();
    assert_eq!(anonymous.content["user"], Value::Null);
    assert_eq!(anonymous.content["greeting"], "hi");

    let summary = env
        .ok(
            "util.plan",
            json!({"title": "Launch", "priority": "urgent", "owner": {"name": "Dee"},
                   "steps": [{"name": "build", "minutes": 30}, {"name": "ship", "minutes": 15}]}),
        )
        .await;
    assert_eq!(
        summary.content,
        json!({"title": "Launch", "steps": 2, "total_minutes": 45, "priority": "urgent", "owner": "Dee"})
    );
    assert_eq!(
        env.ok("util.plan", json!({"title": "t", "steps": []}))
            .await
            .content["priority"],
        "normal"
    );

    assert_eq!(env.ok("util.count", "").await.content, 1);
    assert_eq!(env.ok("util.count", json!({"by": 2})).await.content, 3);
    let error = Registry::global()
        .call("util.count", "", &Ctx::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ToolError::Misconfigured { tool, message } if tool == "util.count" && message.contains("Counter")),
        "{error:?}"
    );
    let error = Registry::global()
        .call("file_manager.list", "", &Ctx::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ToolError::Misconfigured { message, .. } if message.contains("Config")),
        "a reference tool without its Config says so: {error:?}"
    );

    let hits = env
        .ok(
            "research.web_search",
            json!({"query": "Rust tools", "max_results": 2}),
        )
        .await;
    assert_eq!(hits.content.as_array().unwrap().len(), 2);
    assert_eq!(
        hits.content[1]["url"],
        "https://example.invalid/rust-tools/2"
    );
}
