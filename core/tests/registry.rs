//! The runtime against tools declared in this test crate: dispatch, errors, schemas, formats,
//! the catalog.

use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_registry::{Ctx, Listing, Registry, State, ToolError, ToolResult, format, tool};

#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Category {
    Factual,
    Communication,
    StructuredData,
}

/// Record a correction or a new fact from the conversation.
///
/// Corrections are reviewed before they reach the knowledge base.
#[tool(
    tag = "LEARNING",
    pattern = r"(factual|communication|structured_data)\s+(.+)",
    groups(category, content),
    version = "1.0.0",
    category = "memory",
    tags(kb, review),
    aliases(learn),
    idempotent = false
)]
fn learning(
    #[arg(desc = "What kind of correction")] category: Category,
    #[arg(desc = "What was learned")] content: String,
) -> String {
    format!("{category:?}: {content}")
}

/// A point on a map.
#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    /// Degrees north.
    lat: f64,
    /// Degrees east.
    lon: f64,
}

/// The arguments of `geo.nearby`.
#[derive(Debug, Deserialize, JsonSchema)]
struct NearbyArgs {
    /// Where to look from.
    center: Point,
    /// How far to look, in kilometres.
    #[serde(default = "default_radius")]
    radius_km: f64,
    /// Only places of these kinds.
    kinds: Option<Vec<String>>,
}

fn default_radius() -> f64 {
    5.0
}

/// Find places near a point.
#[tool(
    name = "geo.nearby",
    read_only,
    open_world,
    cost = "expensive",
    tier = "high",
    timeout = "10s"
)]
async fn nearby(#[args] args: NearbyArgs, ctx: &Ctx) -> Result<Value, ToolError> {
    Ok(json!({
        "center": [args.center.lat, args.center.lon],
        "radius_km": args.radius_km,
        "kinds": args.kinds,
        "for": ctx.user(),
    }))
}

struct Prefix(&'static str);

/// Greet someone.
#[tool(permission = "user", cooldown = "1m 30s", daily_limit = 10)]
async fn greet(
    #[arg(desc = "Who to greet", rename = "who")] name: String,
    #[arg(default = 1)] times: u8,
    prefix: State<Prefix>,
) -> String {
    vec![format!("{}{name}", prefix.0); usize::from(times)].join(" ")
}

#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the vault is closed on Sundays")
    }
}

/// Open the vault.
#[tool(
    destructive,
    requires_confirmation,
    requires_gate,
    sequential,
    defer_loading
)]
async fn vault(day: String) -> Result<String, Refused> {
    if day == "sunday" {
        Err(Refused)
    } else {
        Ok("opened".into())
    }
}

/// Fail with a typed tool error.
#[tool]
async fn typed_error() -> Result<(), ToolError> {
    Err(ToolError::handler("typed_error", "disk full"))
}

/// Report with full control over the result.
#[tool(strip_from_display = false, tag = "NOTE")]
async fn note(text: String) -> ToolResult {
    ToolResult::ok(json!({ "saved": text.len() }))
        .with_message("noted")
        .with_side_effect("created:inbox/note.md")
        .with_audit("bytes", text.len())
}

/// Do nothing, successfully.
#[tool]
fn nothing() {}

/// Panic on purpose.
#[tool]
async fn explode(#[arg(desc = "What to say")] why: Option<String>) -> String {
    panic!("{}", why.unwrap_or_else(|| "boom".into()))
}

/// Archive a report.
#[tool(idempotent, max_result_bytes = 4096, confirm_if = outside_drafts)]
fn archive(path: String) -> String {
    format!("archived {path}")
}

/// Count today's reports.
#[tool(idempotent, cache = "1m", cache_per_user = false)]
fn tally() -> u32 {
    3
}

/// Whether archiving `path` needs a person's approval: `archive`'s `confirm_if`.
fn outside_drafts(path: &str) -> bool {
    !path.starts_with("drafts/")
}

fn registry() -> Registry {
    Registry::builder()
        .state(Prefix("hello "))
        .build()
        .expect("no duplicate names")
}

fn ctx() -> Ctx {
    Ctx::new().with_user("alice").with_chat_id(7)
}

#[tokio::test]
async fn calls_with_text_and_value_arguments() {
    let registry = registry();
    let text = registry
        .call(
            "learning",
            r#"{"category": "factual", "content": "water is wet"}"#,
            &ctx(),
        )
        .await;
    assert_eq!(text.unwrap().content, "Factual: water is wet");
    let value = registry
        .call(
            "learning",
            json!({"category": "structured_data", "content": "x"}),
            &ctx(),
        )
        .await;
    assert_eq!(value.unwrap().content, "StructuredData: x");
    let alias = registry
        .call(
            "learn",
            json!({"category": "communication", "content": "y"}),
            &ctx(),
        )
        .await;
    assert_eq!(alias.unwrap().content, "Communication: y");
}

#[tokio::test]
async fn defaults_renames_state_and_args_structs_apply() {
    let registry = registry();
    let greeting = registry
        .call("greet", r#"{"who": "Ada"}"#, &ctx())
        .await
        .unwrap();
    assert_eq!(greeting.content, "hello Ada");
    // `greet` has a cooldown per user: another user calls it next.
    let bob = Ctx::new().with_user("bob");
    let twice = registry
        .call("greet", r#"{"who": "Ada", "times": 2}"#, &bob)
        .await
        .unwrap();
    assert_eq!(twice.content, "hello Ada hello Ada");

    let nearby = registry
        .call(
            "geo.nearby",
            r#"{"center": {"lat": 1.5, "lon": 2}}"#,
            &ctx(),
        )
        .await
        .unwrap();
    assert_eq!(
        nearby.content,
        json!({"center": [1.5, 2.0], "radius_km": 5.0, "kinds": null, "for": "alice"})
    );
}

#[tokio::test]
async fn results_carry_the_registry_audit() {
    let registry = registry();
    let result = registry
        .call("note", r#"{"text": "hello"}"#, &ctx())
        .await
        .unwrap();
    assert_eq!(result.message.as_deref(), Some("noted"));
    assert_eq!(result.side_effects, ["created:inbox/note.md"]);
    let audit = serde_json::to_value(&result.audit).unwrap();
    assert_eq!(audit["tool"], "note");
    assert_eq!(audit["user"], "alice");
    assert_eq!(audit["outcome"], "ok");
    assert_eq!(audit["bytes"], 5);
    assert!(audit["duration_ms"].as_f64().unwrap() >= 0.0);
    let ts = audit["ts"].as_str().unwrap();
    assert!(
        ts.ends_with('Z') && ts.len() == "2026-01-01T00:00:00.000Z".len(),
        "{ts}"
    );

    let unit = registry.call("nothing", "", &ctx()).await.unwrap();
    assert!(unit.success);
    assert_eq!(unit.content, Value::Null);
}

#[tokio::test]
async fn argument_errors_name_the_field_and_what_was_expected() {
    let registry = registry();
    let cases = [
        (r#"{"category": "factual"}"#, "", "missing field `content`"),
        (
            r#"{"category": "opinion", "content": "x"}"#,
            "category",
            "unknown variant `opinion`",
        ),
        (
            r#"{"category": "factual", "content": 3}"#,
            "content",
            "invalid type: integer `3`, expected a string",
        ),
        (
            r#"{"category": "factual", "content": "x", "extra": 1}"#,
            "extra",
            "unknown field `extra`",
        ),
        (r#"{"category": "factual", "#, "", "malformed JSON"),
        (r#"["factual", "x"]"#, "", "must be a JSON object"),
        (
            r#"{"category": "factual", "content": "x"} trailing"#,
            "",
            "malformed JSON",
        ),
    ];
    for (args, path, expected) in cases {
        let error = registry.call("learning", args, &ctx()).await.unwrap_err();
        match &error {
            ToolError::InvalidArguments {
                tool,
                path: got,
                message,
            } => {
                assert_eq!(tool, "learning");
                assert_eq!(got, path, "path for {args}");
                assert!(message.contains(expected), "{args}: {message}");
            }
            other => panic!("{args}: expected invalid arguments, got {other:?}"),
        }
        assert_eq!(error.code(), "invalid_arguments");
        assert!(
            error
                .to_string()
                .contains("fix the arguments and call again")
        );
    }
    let nested = registry
        .call(
            "geo.nearby",
            r#"{"center": {"lat": "north", "lon": 2}}"#,
            &ctx(),
        )
        .await;
    match nested.unwrap_err() {
        ToolError::InvalidArguments { path, .. } => assert_eq!(path, "center.lat"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn tool_errors_keep_their_kind() {
    let registry = registry();
    // `vault` needs a person's approval first.
    let held = registry
        .call("vault", r#"{"day": "sunday"}"#, &ctx())
        .await
        .unwrap_err();
    let ToolError::NeedsApproval { token, .. } = held else {
        panic!("{held:?}")
    };
    let refused = registry.approve(&token, &ctx()).await.unwrap_err();
    assert_eq!(
        refused,
        ToolError::handler("vault", "the vault is closed on Sundays")
    );
    let typed = registry
        .call("typed_error", "{}", &ctx())
        .await
        .unwrap_err();
    assert_eq!(typed, ToolError::handler("typed_error", "disk full"));
    let unknown = registry
        .call("no_such_tool", "{}", &ctx())
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), "unknown_tool");

    let for_model = ToolResult::from(refused);
    assert!(!for_model.success);
    assert_eq!(for_model.content["error"]["code"], "handler_error");
    assert_eq!(for_model.audit.outcome.as_deref(), Some("handler_error"));
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_and_the_registry_goes_on() {
    let registry = registry();
    let error = registry
        .call("explode", r#"{"why": "on purpose"}"#, &ctx())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::Panicked {
            tool: "explode".into(),
            message: "on purpose".into()
        }
    );
    let after = registry
        .call(
            "learning",
            r#"{"category": "factual", "content": "still here"}"#,
            &ctx(),
        )
        .await;
    assert!(after.unwrap().success);
}

#[tokio::test]
async fn missing_state_is_a_misconfiguration_not_a_panic() {
    let bare = Registry::builder().build().unwrap();
    let error = bare
        .call("greet", r#"{"who": "Ada"}"#, &ctx())
        .await
        .unwrap_err();
    assert_eq!(error.code(), "misconfigured");
    assert!(
        error
            .to_string()
            .contains("Registry::builder().state(value)"),
        "{error}"
    );
}

#[test]
fn metadata_is_stored_as_declared() {
    let registry = registry();
    let names: Vec<_> = registry
        .tools(Listing::every())
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
    assert_eq!(
        registry
            .get("learn", Listing::every())
            .map(|t| t.name().to_owned())
            .as_deref(),
        Some("learning")
    );

    let learning = registry.get("learning", Listing::every()).unwrap();
    assert_eq!(
        learning.short_description(),
        "Record a correction or a new fact from the conversation."
    );
    assert_eq!(learning.version(), Some("1.0.0"));
    assert_eq!(learning.tags().collect::<Vec<_>>(), ["kb", "review"]);
    let tag = learning.tag().unwrap();
    assert_eq!(
        (tag.prefix, tag.groups),
        ("LEARNING", &["category", "content"][..])
    );
    assert_eq!(tag.example, "LEARNING: [category] [content]");
    assert!(learning.strip_from_display());
    assert_eq!(learning.annotations().idempotent, Some(false));

    let greet = registry.get("greet", Listing::every()).unwrap();
    assert_eq!(greet.cooldown(), Some(std::time::Duration::from_secs(90)));
    assert_eq!(greet.daily_limit(), Some(10));
    assert_eq!(greet.permission(), tool_registry::Permission::User);
    assert_eq!(greet.args()[0].name, "who");
    assert!(!greet.args()[1].required);

    let vault = registry.get("vault", Listing::every()).unwrap();
    assert!(vault.requires_gate() && vault.sequential() && vault.defer_loading());
    assert_eq!(vault.annotations().destructive, Some(true));
    assert_eq!(vault.annotations().requires_confirmation, Some(true));

    let nearby = registry.get("geo.nearby", Listing::every()).unwrap();
    assert_eq!(nearby.module(), Some("geo"));
    assert_eq!(nearby.timeout(), Some(std::time::Duration::from_secs(10)));
    assert_eq!(nearby.source().unwrap().file, "core/tests/registry.rs");

    let note = registry.get("note", Listing::every()).unwrap();
    assert!(!note.strip_from_display());
    assert_eq!(note.tag().unwrap().groups, ["text"]);
}

#[test]
fn schemas_are_2020_12_with_descriptions_defaults_and_required() {
    let registry = registry();
    let schema = registry
        .get("greet", Listing::every())
        .map(|tool| tool.input_schema().clone())
        .unwrap();
    let schema = schema.as_value();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["required"], json!(["who"]));
    assert_eq!(schema["properties"]["who"]["description"], "Who to greet");
    assert_eq!(schema["properties"]["times"]["default"], 1);
    let (greet, again) = (
        registry.get("greet", Listing::every()).unwrap(),
        registry.get("greet", Listing::every()).unwrap(),
    );
    assert!(std::ptr::eq(greet.input_schema(), again.input_schema()));
    insta::assert_json_snapshot!(
        "learning_schema",
        registry
            .get("learning", Listing::every())
            .map(|tool| tool.input_schema().clone())
            .unwrap()
    );
    insta::assert_json_snapshot!(
        "nearby_schema",
        registry
            .get("geo.nearby", Listing::every())
            .map(|tool| tool.input_schema().clone())
            .unwrap()
    );
}

#[test]
fn provider_tools_cover_every_tool_and_are_built_once() {
    let registry = registry();
    let all = registry.provider_tools(format::Provider::OpenAi, Listing::every());
    assert!(std::ptr::eq(
        all.json(),
        registry
            .provider_tools(format::Provider::OpenAi, Listing::every())
            .json()
    ));
    assert_eq!(all.as_array().unwrap().len(), registry.len());
    let trusted = tool_registry::Scope::trusted();
    let read_only = |t: &tool_registry::Tool| t.annotations().read_only == Some(true);
    let only_read_only = registry.provider_tools(
        format::Provider::OpenAi,
        tool_registry::Listing::of(&trusted).keep(&read_only),
    );
    insta::assert_json_snapshot!("openai_read_only", only_read_only);
    for entry in all.as_array().unwrap() {
        assert_eq!(entry["type"], "function");
        assert!(entry["function"]["parameters"].get("$schema").is_none());
        assert_eq!(entry["function"]["parameters"]["type"], "object");
    }
}

#[test]
fn catalog_documents_every_tool() {
    let registry = registry();
    insta::assert_snapshot!(
        "catalog_markdown",
        registry.catalog(Listing::every()).markdown()
    );
    let json = registry.catalog(Listing::every()).json();
    let greet = json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "greet")
        .unwrap();
    assert_eq!(
        greet["arguments"][0],
        json!({"name": "who", "type": "string", "rust_type": "String", "required": true, "description": "Who to greet"})
    );
    assert_eq!(greet["metadata"]["cooldown"], "1m 30s");
}

#[test]
fn catalog_page_documents_every_tool() {
    let registry = registry();
    let page = registry.catalog(Listing::every()).html();
    // The style and the script are the same for every registry: the snapshot keeps the rest.
    let (head, rest) = page.split_once("<style>").unwrap();
    let (_, body) = rest.split_once("</style>").unwrap();
    let (body, _) = body.split_once("<script>").unwrap();
    insta::assert_snapshot!(
        "catalog_html",
        format!("{head}<style>…</style>{body}<script>…")
    );
    assert_eq!(
        page,
        registry.catalog(Listing::every()).html(),
        "the same registry, the same page"
    );
}

#[test]
fn catalog_shows_the_cache_the_result_limit_and_conditional_confirmation() {
    let registry = registry();
    let condition = json!({ "properties": { "path": { "not": { "pattern": "^drafts/" } } } });
    let spec = tool_registry::ToolSpec::builder("remote.archive")
        .description("Archive a report elsewhere.")
        .input_schema(json!({ "type": "object", "properties": { "path": { "type": "string" } } }))
        .annotations(tool_registry::def::Annotations {
            read_only: Some(true),
            ..tool_registry::def::Annotations::NONE
        })
        .max_result_bytes(16384)
        .confirm_if(condition.clone())
        .build()
        .unwrap();
    registry.register(spec, None).unwrap();
    let spec = tool_registry::ToolSpec::builder("remote.tally")
        .description("Count reports elsewhere.")
        .annotations(tool_registry::def::Annotations {
            read_only: Some(true),
            ..tool_registry::def::Annotations::NONE
        })
        .cache(std::time::Duration::from_secs(300))
        .build()
        .unwrap();
    registry.register(spec, None).unwrap();
    let catalog = registry.catalog(Listing::every());

    let json = catalog.json();
    let metadata = |name: &str| {
        json["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()["metadata"]
            .clone()
    };
    assert_eq!(
        metadata("tally")["cache"],
        json!({ "ttl": "1m", "per_user": false })
    );
    assert_eq!(
        metadata("remote.tally")["cache"],
        json!({ "ttl": "5m", "per_user": true })
    );
    let compiled = metadata("archive");
    assert_eq!(compiled["max_result_bytes"], 4096);
    assert_eq!(compiled["confirm_if"], true, "a compiled predicate is code");
    let run_time = metadata("remote.archive");
    assert_eq!(run_time["max_result_bytes"], 16384);
    assert_eq!(
        run_time["confirm_if"], condition,
        "a spec's condition is its schema"
    );
    for plain in ["greet", "nothing"] {
        for key in ["cache", "max_result_bytes", "confirm_if"] {
            assert!(metadata(plain).get(key).is_none(), "{plain} has no {key}");
        }
    }

    let markdown = catalog.markdown();
    let section = |name: &str| {
        let start = markdown.find(&format!("\n## `{name}`\n")).unwrap();
        let end = markdown[start + 1..]
            .find("\n## ")
            .map_or(markdown.len(), |end| start + 1 + end);
        markdown[start..end].to_owned()
    };
    assert!(
        section("tally").contains("\n- **Cache:** results reused for 1m, shared by every user\n")
    );
    assert!(section("remote.tally").contains("\n- **Cache:** results reused for 5m, per user\n"));
    let compiled = section("archive");
    assert!(compiled.contains(
        "\n- **Result limit:** 4096 bytes of text; longer results are shortened with a note\n"
    ));
    assert!(
        compiled.contains("\n- **Confirmation:** asked per call, depending on the arguments\n")
    );
    assert!(
        !section("tally").contains("cache `"),
        "not on the metadata line too"
    );
    let run_time = section("remote.archive");
    assert!(run_time.contains("\n- **Result limit:** 16384 bytes of text;"));
    assert!(run_time.contains(&format!(
        "\n- **Confirmation:** asked per call, when the arguments match `{condition}`\n"
    )));
    for plain in ["greet", "nothing"] {
        let section = section(plain);
        for line in ["**Cache:**", "**Result limit:**", "**Confirmation:**"] {
            assert!(!section.contains(line), "{plain}: {section}");
        }
    }

    let page = catalog.html();
    let card = |name: &str| {
        let start = page
            .find(&format!("<article class=\"tool\" id=\"tool-{name}\""))
            .unwrap();
        let end = start + page[start..].find("</article>").unwrap();
        page[start..end].to_owned()
    };
    assert!(
        card("tally")
            .contains("<dt>Cache</dt><dd>results reused for 1m, shared by every user</dd>")
    );
    assert!(
        card("remote.tally").contains("<dt>Cache</dt><dd>results reused for 5m, per user</dd>")
    );
    let compiled = card("archive");
    assert!(compiled.contains(
        "<dt>Results</dt><dd>up to 4 KiB of text; longer ones are shortened with a note</dd>"
    ));
    assert!(
        compiled.contains("<dt>confirm_if</dt><dd>Asked per call, depending on the arguments</dd>")
    );
    assert!(!compiled.contains("Confirmation schema"));
    let run_time = card("remote.archive");
    assert!(run_time.contains("<dt>Results</dt><dd>up to 16 KiB of text;"));
    assert!(run_time.contains(
        "<dt>confirm_if</dt><dd>Asked per call, when the arguments match the confirmation schema</dd>"
    ));
    assert!(run_time.contains("<summary>Confirmation schema</summary>"));
    assert!(run_time.contains("&quot;^drafts/&quot;"));
    for plain in ["greet", "nothing"] {
        let card = card(plain);
        for row in [
            "<dt>Cache</dt>",
            "<dt>Results</dt>",
            "<dt>confirm_if</dt>",
            "Confirmation schema",
        ] {
            assert!(!card.contains(row), "{plain}: {card}");
        }
    }
}

#[test]
fn a_name_claimed_twice_is_reported_with_both_locations() {
    let learning = Registry::global()
        .get("learning", Listing::every())
        .unwrap();
    let error = match Registry::builder()
        .tool(learning.definition().unwrap())
        .build()
    {
        Err(tool_registry::registry::BuildError::Duplicates(error)) => error,
        Err(other) => panic!("expected duplicates, got {other}"),
        Ok(_) => panic!("a duplicate must be refused"),
    };
    let names: Vec<_> = error.clashes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        ["learn", "learning"],
        "the name and the alias both clash"
    );
    let message = error.to_string();
    assert_eq!(message.lines().count(), 2);
    for line in message.lines() {
        assert_eq!(line.matches("core/tests/registry.rs:").count(), 2, "{line}");
    }
    assert!(message.contains("#[tool(name = \"...\")]"));
}
