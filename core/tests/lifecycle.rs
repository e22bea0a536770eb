//! Tools registered at run time, under the Tool Registry v2 rules: registration and its
//! version rules (the unversioned case included), listing, switching, removal, snapshots, the
//! changes subscribers see, and the one pipeline and listing shared with compiled tools.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tokio::sync::broadcast::error::TryRecvError;
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::audit::{AuditRecord, AuditSink};
use tool_registry::format::Provider;
use tool_registry::gate::{Decision, Gate, async_trait};
use tool_registry::registry::Selector;
use tool_registry::spec::{Origin, RegisterError, RegistryChange, SpecError, ToolHandler};
use tool_registry::{Ctx, Permission, Registry, Scope, Tool, ToolError, tool};

/// Answer with the same text.
#[tool(name = "util.ping", aliases("ping"), tags(net))]
fn ping(text: String) -> String {
    text
}

/// Add two numbers.
#[tool(name = "math.add", category = "math", version = "1.2.0-rc.1+build.7")]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn registry() -> Registry {
    Registry::builder().log_annotations(false).build().unwrap()
}

fn spec(name: &str, version: Option<&str>, schema: Value) -> ToolSpec {
    let builder = ToolSpec::builder(name)
        .description(format!("The {name} tool."))
        .input_schema(schema);
    match version {
        Some(version) => builder.version(version),
        None => builder,
    }
    .build()
    .unwrap()
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

fn city() -> Value {
    object(json!({ "city": { "type": "string" } }), &["city"])
}

fn names(registry: &Registry, include_disabled: bool) -> Vec<String> {
    registry
        .registrations()
        .into_iter()
        .filter(|r| include_disabled || r.enabled)
        .map(|r| r.tool.name().to_owned())
        .collect()
}

fn drain(rx: &mut tokio::sync::broadcast::Receiver<RegistryChange>) -> Vec<RegistryChange> {
    let mut changes = Vec::new();
    loop {
        match rx.try_recv() {
            Ok(change) => changes.push(change),
            Err(TryRecvError::Empty) => return changes,
            Err(error) => panic!("{error}"),
        }
    }
}

#[test]
fn a_new_name_is_registered_enabled_and_stamped() {
    let registry = registry();
    let before = SystemTime::now();
    let registration = registry
        .register(spec("weather", Some("1.0.0"), city()), None)
        .unwrap();
    let after = SystemTime::now();
    assert!(registration.enabled);
    let tool = &registration.tool;
    assert_eq!(tool.name(), "weather");
    assert_eq!(tool.version(), Some("1.0.0"));
    assert!(!tool.is_linked() && !tool.has_handler());
    let at = tool.created_at().unwrap();
    assert!(before <= at && at <= after, "{at:?}");
    assert!(
        registry
            .get("weather", Listing::every())
            .unwrap()
            .same(tool)
    );
    assert!(registry.registration("weather").unwrap().enabled);
}

#[test]
fn an_identical_spec_returns_the_registration_unchanged() {
    let registry = registry();
    let mut changes = registry.subscribe();
    let first = registry
        .register(spec("weather", Some("1.0.0"), city()), None)
        .unwrap();
    std::thread::sleep(Duration::from_millis(2));
    let again = registry
        .register(spec("weather", Some("1.0.0"), city()), None)
        .unwrap();
    assert!(again.tool.same(&first.tool), "the same registration");
    assert_eq!(again.tool.created_at(), first.tool.created_at());
    assert_eq!(
        drain(&mut changes),
        [RegistryChange::Registered {
            tool: "weather".into(),
            version: Some("1.0.0".into())
        }],
        "no change is published for an identical spec"
    );
}

#[test]
fn another_version_replaces_and_switches_on() {
    let registry = registry();
    let mut changes = registry.subscribe();
    let first = registry
        .register(spec("weather", Some("1.0.0"), city()), None)
        .unwrap();
    registry.disable(Selector::name("weather"));
    std::thread::sleep(Duration::from_millis(2));
    let second = registry
        .register(spec("weather", Some("2.0.0"), object(json!({}), &[])), None)
        .unwrap();
    assert!(!second.tool.same(&first.tool));
    assert!(
        second.enabled,
        "a replacement is a new registration, switched on"
    );
    assert!(second.tool.created_at() > first.tool.created_at());
    assert_eq!(
        registry.get("weather", Listing::every()).unwrap().version(),
        Some("2.0.0")
    );
    assert_eq!(
        drain(&mut changes),
        [
            RegistryChange::Registered {
                tool: "weather".into(),
                version: Some("1.0.0".into())
            },
            RegistryChange::Disabled {
                tools: vec!["weather".into()]
            },
            RegistryChange::Replaced {
                tool: "weather".into(),
                from: Some("1.0.0".into()),
                to: Some("2.0.0".into())
            },
        ]
    );
    // The old handle still reads as the tool it was.
    assert_eq!(first.tool.version(), Some("1.0.0"));
}

#[test]
fn the_same_version_with_another_spec_is_refused_with_advice() {
    let registry = registry();
    registry
        .register(spec("weather", Some("2.0.0"), city()), None)
        .unwrap();
    let error = registry
        .register(spec("weather", Some("2.0.0"), object(json!({}), &[])), None)
        .unwrap_err();
    assert_eq!(
        error,
        RegisterError::SameVersion {
            tool: "weather".into(),
            version: Some("2.0.0".into())
        }
    );
    let message = error.to_string();
    assert!(
        message.contains("at version `2.0.0`") && message.contains("another version"),
        "{message}"
    );
    assert_eq!(
        registry
            .get("weather", Listing::every())
            .unwrap()
            .input_schema()
            .as_value(),
        &city(),
        "the registered spec is unchanged"
    );
}

#[test]
fn two_unversioned_specs_have_the_same_version() {
    let registry = registry();
    registry
        .register(
            spec(
                "example",
                None,
                object(json!({ "a": { "type": "string" } }), &[]),
            ),
            None,
        )
        .unwrap();
    let error = registry
        .register(
            spec(
                "example",
                None,
                object(json!({ "b": { "type": "number" } }), &[]),
            ),
            None,
        )
        .unwrap_err();
    assert_eq!(
        error,
        RegisterError::SameVersion {
            tool: "example".into(),
            version: None
        }
    );
    assert!(
        error.to_string().contains("without a version")
            && error.to_string().contains("give the new spec a version"),
        "{error}"
    );
    // A version makes the update possible.
    let updated = registry
        .register(
            spec(
                "example",
                Some("1.0.0"),
                object(json!({ "b": { "type": "number" } }), &[]),
            ),
            None,
        )
        .unwrap();
    assert_eq!(updated.tool.version(), Some("1.0.0"));
    // No version is below every version: going back to none is a downgrade.
    let back = registry
        .register(spec("example", None, object(json!({}), &[])), None)
        .unwrap_err();
    assert_eq!(
        back,
        RegisterError::Downgrade {
            tool: "example".into(),
            registered: "1.0.0".into(),
            given: None
        }
    );
    assert_eq!(
        registry.get("example", Listing::every()).unwrap().version(),
        Some("1.0.0")
    );
}

#[test]
fn compiled_and_run_time_tools_list_together_sorted_and_switch_alike() {
    let registry = registry();
    registry.register(spec("zeta", None, city()), None).unwrap();
    registry
        .register(spec("alpha", None, city()), None)
        .unwrap();
    registry
        .register(spec("math.sub", None, city()), None)
        .unwrap();
    let all = names(&registry, true);
    assert_eq!(all, ["alpha", "math.add", "math.sub", "util.ping", "zeta"]);
    assert_eq!(
        registry
            .tools(Listing::every())
            .iter()
            .map(|t| t.name().to_owned())
            .collect::<Vec<_>>(),
        all
    );

    assert_eq!(registry.disable(Selector::name("alpha")), 1);
    assert_eq!(registry.disable(Selector::name("ping")), 1);
    assert_eq!(names(&registry, false), ["math.add", "math.sub", "zeta"]);
    assert_eq!(
        names(&registry, true),
        all,
        "disabled tools stay listed on request"
    );
    let tools: Vec<String> = registry
        .tools(&Scope::trusted())
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(tools, ["math.add", "math.sub", "zeta"]);
    assert!(!registry.registration("util.ping").unwrap().enabled);
}

#[test]
fn switches_are_idempotent_and_cover_no_unknown_name() {
    let registry = registry();
    registry
        .register(spec("weather", None, city()), None)
        .unwrap();
    let mut changes = registry.subscribe();
    let enabled = |name| registry.registration(name).unwrap().enabled;
    assert_eq!(registry.disable(Selector::name("weather")), 1);
    assert!(!enabled("weather"));
    assert_eq!(registry.disable(Selector::name("weather")), 1);
    assert!(!enabled("weather"));
    assert_eq!(registry.enable(Selector::name("weather")), 1);
    assert!(enabled("weather"));
    assert_eq!(registry.enable(Selector::name("weather")), 1);
    assert!(enabled("weather"));
    assert_eq!(
        drain(&mut changes),
        [
            RegistryChange::Disabled {
                tools: vec!["weather".into()]
            },
            RegistryChange::Enabled {
                tools: vec!["weather".into()]
            },
        ],
        "a switch that changes nothing publishes nothing"
    );
    assert_eq!(registry.enable(Selector::name("nope")), 0);
    assert!(registry.registration("nope").is_none());
    // Compiled tools switch too, by name or alias.
    assert_eq!(registry.disable(Selector::name("ping")), 1);
    assert!(!enabled("util.ping"));
}

#[test]
fn switches_by_tag_and_category_publish_the_tools_they_turn() {
    let registry = registry();
    registry
        .register(
            ToolSpec::builder("probe")
                .tags(["net"])
                .category("math")
                .build()
                .unwrap(),
            None,
        )
        .unwrap();
    let mut changes = registry.subscribe();
    assert_eq!(registry.disable(Selector::tag("net")), 2);
    assert_eq!(registry.disable(Selector::category("math")), 2);
    registry.enable(Selector::tag("net"));
    registry.enable(Selector::category("math"));
    assert_eq!(
        drain(&mut changes),
        [
            RegistryChange::Disabled {
                tools: vec!["probe".into(), "util.ping".into()]
            },
            RegistryChange::Disabled {
                tools: vec!["math.add".into()]
            },
            RegistryChange::Enabled {
                tools: vec!["util.ping".into()]
            },
            RegistryChange::Enabled {
                tools: vec!["math.add".into(), "probe".into()]
            },
        ]
    );
}

#[tokio::test]
async fn remove_is_idempotent_and_leaves_compiled_tools_alone() {
    let registry = registry();
    registry
        .register(spec("weather", None, city()), None)
        .unwrap();
    let mut changes = registry.subscribe();
    let removed = registry.remove("weather").unwrap().unwrap();
    assert_eq!(removed.tool.name(), "weather");
    assert!(registry.remove("weather").unwrap().is_none());
    assert!(registry.remove("never-there").unwrap().is_none());
    assert_eq!(
        drain(&mut changes),
        [RegistryChange::Removed {
            tool: "weather".into()
        }]
    );
    assert!(registry.get("weather", Listing::every()).is_none());
    let error = registry
        .call("weather", r#"{"city": "Oslo"}"#, &Ctx::new())
        .await
        .unwrap_err();
    assert_eq!(error.code(), "unknown_tool");

    for name in ["util.ping", "ping"] {
        let error = registry.remove(name).unwrap_err();
        assert!(matches!(error, RegisterError::Compiled { .. }), "{error}");
        assert!(error.to_string().contains("Registry::disable"), "{error}");
    }
    assert!(registry.get("util.ping", Listing::every()).is_some());
}

#[test]
fn a_run_time_spec_cannot_take_a_compiled_name_or_alias() {
    let registry = registry();
    for name in ["util.ping", "ping", "math.add"] {
        let error = registry
            .register(spec(name, Some("9.0.0"), city()), None)
            .unwrap_err();
        let RegisterError::Compiled { name: taken, at } = &error else {
            panic!("{error}");
        };
        assert_eq!(taken, name);
        assert!(
            at.as_deref()
                .is_some_and(|at| at.contains("core/tests/lifecycle.rs")),
            "{at:?}"
        );
        assert!(error.to_string().contains("choose another name"), "{error}");
    }
    assert!(
        registry
            .get("util.ping", Listing::every())
            .unwrap()
            .is_linked()
    );
}

#[tokio::test]
async fn a_spec_without_a_handler_is_listed_and_answers_with_a_typed_error() {
    let registry = registry();
    registry
        .register(spec("weather", None, city()), None)
        .unwrap();
    assert!(names(&registry, false).contains(&"weather".to_owned()));
    let error = registry
        .call("weather", r#"{"city": "Oslo"}"#, &Ctx::new())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::NoHandler {
            tool: "weather".into()
        }
    );
    assert!(error.to_string().contains("has no handler"), "{error}");
}

#[tokio::test]
async fn run_time_arguments_are_validated_by_their_schema_with_a_json_path() {
    let registry = registry();
    let schema = json!({
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": { "name": { "type": "string" } },
                    "required": ["name"]
                }
            }
        },
        "required": ["items"],
        "additionalProperties": false
    });
    registry
        .register(
            spec("basket", None, schema),
            ToolHandler::new(|args, _ctx| async move {
                Ok::<_, String>(args["items"].as_array().map_or(0, Vec::len))
            }),
        )
        .unwrap();
    let ctx = Ctx::new();
    let ok = registry
        .call(
            "basket",
            r#"{"items": [{"name": "a"}, {"name": "b"}]}"#,
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(ok.content, 2);
    assert_eq!(ok.audit.tool.as_deref(), Some("basket"));

    let bad = registry
        .call("basket", r#"{"items": [{"name": "a"}, {"name": 7}]}"#, &ctx)
        .await
        .unwrap_err();
    let ToolError::InvalidArguments {
        tool,
        path,
        message,
    } = &bad
    else {
        panic!("{bad}");
    };
    assert_eq!((tool.as_str(), path.as_str()), ("basket", "items[1].name"));
    assert!(message.contains("string"), "{message}");
    assert!(
        bad.to_string().contains("at `items[1].name`") || bad.to_string().contains("items[1].name")
    );

    for (args, code) in [
        (r#"{"items": [], "extra": 1}"#, "invalid_arguments"),
        (r#"{"items": "#, "invalid_arguments"),
        (r#"[1, 2]"#, "invalid_arguments"),
        (r#"{}"#, "invalid_arguments"),
    ] {
        let error = registry.call("basket", args, &ctx).await.unwrap_err();
        assert_eq!(error.code(), code, "{args}: {error}");
    }
    // Values go through the same checks.
    let error = registry
        .call("basket", json!({ "items": [{ "name": false }] }), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(&error, ToolError::InvalidArguments { path, .. } if path == "items[0].name"));
}

/// Every audit record.
#[derive(Clone, Default)]
struct Records(Arc<Mutex<Vec<(String, String)>>>);

impl AuditSink for Records {
    fn record(&self, record: &AuditRecord<'_>) {
        self.0
            .lock()
            .unwrap()
            .push((record.tool.to_string(), record.outcome.to_string()));
    }
}

/// Denies every call.
struct DenyAll;

#[async_trait]
impl Gate for DenyAll {
    async fn check(&self, tool: &Tool, _ctx: &Ctx) -> Result<Decision, String> {
        Ok(Decision::deny(format!("no calls of {} today", tool.name())))
    }
}

#[tokio::test]
async fn run_time_tools_go_through_every_gate() {
    let records = Records::default();
    let registry = Registry::builder()
        .without_linked()
        .log_annotations(false)
        .audit_sink(records.clone())
        .gate(DenyAll)
        .build()
        .unwrap();
    let echo = |args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) };
    let spec_with = |name: &str,
                     edit: fn(
        tool_registry::spec::ToolSpecBuilder,
    ) -> tool_registry::spec::ToolSpecBuilder| {
        edit(ToolSpec::builder(name).input_schema(object(json!({}), &[])))
            .build()
            .unwrap()
    };
    registry
        .register(
            spec_with("admin.only", |b| b.permission(Permission::Admin)),
            ToolHandler::new(echo),
        )
        .unwrap();
    registry
        .register(
            spec_with("once", |b| b.daily_limit(1)),
            ToolHandler::new(echo),
        )
        .unwrap();
    registry
        .register(
            spec_with("gated", |b| b.requires_gate(true)),
            ToolHandler::new(echo),
        )
        .unwrap();
    registry
        .register(
            spec_with("confirm", |b| b.requires_confirmation(true)),
            ToolHandler::new(echo),
        )
        .unwrap();
    registry
        .register(
            spec_with("slow", |b| b.timeout(Duration::from_millis(30))),
            ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok::<_, String>("late")
            }),
        )
        .unwrap();
    registry
        .register(
            spec_with("boom", |b| b),
            ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
                if true {
                    panic!("the handler broke");
                }
                Ok::<_, String>(())
            }),
        )
        .unwrap();
    registry
        .register(
            spec_with("fails", |b| b),
            ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
                Err::<(), _>("the service is down")
            }),
        )
        .unwrap();

    let guest = Ctx::new().with_scope(Scope::guest());
    let user = Ctx::new().with_user("ann");
    let admin = Ctx::new().with_scope(Scope::user("root").with_level(Permission::Admin));

    // Scope: hidden from a guest exactly like an unknown tool.
    let hidden = registry.call("admin.only", "{}", &guest).await.unwrap_err();
    assert_eq!(hidden.code(), "unknown_tool");
    assert!(registry.get("admin.only", guest.scope()).is_none());
    assert!(
        registry
            .call("admin.only", "{}", &admin)
            .await
            .unwrap()
            .success
    );
    // Rate limit.
    assert!(registry.call("once", "{}", &user).await.is_ok());
    assert_eq!(
        registry.call("once", "{}", &user).await.unwrap_err().code(),
        "rate_limited"
    );
    // Evaluation gate.
    let denied = registry.call("gated", "{}", &user).await.unwrap();
    assert!(!denied.success);
    assert_eq!(denied.audit.outcome.as_deref(), Some("denied_by_gate"));
    // Confirmation, then approval.
    let ToolError::NeedsApproval { token, .. } = registry
        .call("confirm", r#"{"x": 1}"#, &user)
        .await
        .unwrap_err()
    else {
        panic!("confirmation expected");
    };
    let approved = registry.approve(&token, &user).await.unwrap();
    assert_eq!(approved.content, json!({ "x": 1 }));
    // Timeout, panic and a handler's error.
    assert_eq!(
        registry.call("slow", "{}", &user).await.unwrap_err().code(),
        "timed_out"
    );
    let panicked = registry.call("boom", "{}", &user).await.unwrap_err();
    assert_eq!(panicked.code(), "panicked");
    assert!(
        panicked.to_string().contains("the handler broke"),
        "{panicked}"
    );
    let failed = registry.call("fails", "{}", &user).await.unwrap_err();
    assert_eq!(
        failed,
        ToolError::Handler {
            tool: "fails".into(),
            message: "the service is down".into()
        }
    );
    // Audit: one record per call, named.
    let records = records.0.lock().unwrap().clone();
    let outcomes: Vec<(&str, &str)> = records
        .iter()
        .map(|(t, o)| (t.as_str(), o.as_str()))
        .collect();
    for expected in [
        ("admin.only", "unknown_tool"),
        ("admin.only", "ok"),
        ("once", "ok"),
        ("once", "rate_limited"),
        ("gated", "denied_by_gate"),
        ("confirm", "needs_approval"),
        ("confirm", "ok"),
        ("slow", "timed_out"),
        ("boom", "panicked"),
        ("fails", "handler_error"),
    ] {
        assert!(
            outcomes.contains(&expected),
            "{expected:?} not in {outcomes:?}"
        );
    }
}

#[test]
fn formats_and_the_catalog_show_compiled_and_run_time_tools_together() {
    let registry = registry();
    registry
        .register(
            ToolSpec::builder("math.mul")
                .version("1.2.0")
                .description("Multiply two numbers. Exactly.")
                .input_schema(object(
                    json!({ "a": { "type": "number" }, "b": { "type": "number" } }),
                    &["a", "b"],
                ))
                .output_schema(json!({ "type": "number" }))
                .tags(["arith"])
                .build()
                .unwrap(),
            None,
        )
        .unwrap();
    let openai = registry.provider_tools(Provider::OpenAi, &Scope::trusted());
    let listed: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed,
        ["math__add", "math__mul", "util__ping"],
        "OpenAI wire names"
    );
    let mul = &openai[1]["function"];
    assert_eq!(mul["description"], "Multiply two numbers. Exactly.");
    assert_eq!(mul["parameters"]["required"], json!(["a", "b"]));
    assert_eq!(
        registry
            .provider_tools(Provider::OpenAi, tool_registry::Listing::every())
            .as_array()
            .unwrap()
            .len(),
        3
    );

    let catalog = registry.catalog(Listing::every()).json();
    let docs = catalog["tools"].as_array().unwrap();
    let names: Vec<&str> = docs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["math.add", "math.mul", "util.ping"]);
    let mul = &docs[1];
    assert_eq!(mul["short_description"], "Multiply two numbers.");
    assert_eq!(mul["metadata"]["module"], "math");
    assert_eq!(mul["metadata"]["version"], "1.2.0");
    assert_eq!(mul["metadata"]["tags"], json!(["arith"]));
    assert_eq!(mul["output_schema"], json!({ "type": "number" }));
    assert!(mul.get("source").is_none() && mul["registered_at"].is_string());
    assert_eq!(docs[0]["source"]["file"], "core/tests/lifecycle.rs");
    let markdown = registry.catalog(Listing::every()).markdown();
    assert!(markdown.contains("## `math.mul`"), "{markdown}");
    assert!(markdown.contains("registered at run time"), "{markdown}");

    // The parser knows the run-time tool through the registry and through a scope.
    let output = r#"<tool_call>{"name": "math.mul", "arguments": {"a": 2, "b": 3}}</tool_call>"#;
    let parsed = tool_registry::parse::any(output, &registry.scoped(&Scope::trusted()));
    assert_eq!(parsed.calls[0].name, "math.mul");
    let parsed = tool_registry::parse::any(output, &registry);
    assert_eq!(parsed.calls[0].name, "math.mul");
    let guest = Scope::guest();
    let as_guest = registry.scoped(&guest);
    registry.disable(Selector::name("math.mul"));
    let parsed = tool_registry::parse::any(output, &registry.scoped(&Scope::guest()));
    assert!(parsed.calls.is_empty() && parsed.unknown.len() == 1);
    // A scoped view keeps the tools it was made with.
    assert_eq!(tool_registry::parse::any(output, &as_guest).calls.len(), 1);
}

#[tokio::test]
async fn a_snapshot_round_trips_through_json_and_handlers_are_reattached_by_name() {
    let first = registry();
    first
        .register(
            spec("weather", Some("1.0.0"), city()),
            ToolHandler::new(|args: Value, _ctx: Ctx| async move {
                Ok::<_, String>(json!({ "city": args["city"], "temp": 21 }))
            }),
        )
        .unwrap();
    first.register(spec("orphan", None, city()), None).unwrap();
    first
        .register(
            ToolSpec::builder("gated.thing")
                .permission(Permission::Admin)
                .cooldown(Duration::from_secs(30))
                .requires_gate(true)
                .tags(["x"])
                .build()
                .unwrap(),
            None,
        )
        .unwrap();
    first.disable(Selector::name("gated.thing"));
    first.disable(Selector::name("util.ping"));
    let snapshot = first.snapshot();
    let text = serde_json::to_string_pretty(&snapshot).unwrap();
    let read: tool_registry::spec::RegistrySnapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(read, snapshot);
    // A compiled tool's version, as `#[tool]` checked it, is read back as a spec's.
    let origins: Vec<(&str, Option<&str>, Origin, bool)> = read
        .tools
        .iter()
        .map(|e| (e.spec.tool_name(), e.spec.version(), e.origin, e.enabled))
        .collect();
    assert_eq!(
        origins,
        [
            ("gated.thing", None, Origin::RunTime, false),
            ("math.add", Some("1.2.0-rc.1+build.7"), Origin::Linked, true),
            ("orphan", None, Origin::RunTime, true),
            ("util.ping", None, Origin::Linked, false),
            ("weather", Some("1.0.0"), Origin::RunTime, true),
        ]
    );

    // A second registry with a handler for `weather` given up front, and a run-time tool the
    // snapshot does not have.
    let second = Registry::builder()
        .log_annotations(false)
        .handler(
            "weather",
            ToolHandler::new(|args: Value, _ctx: Ctx| async move {
                Ok::<_, String>(json!({ "city": args["city"], "temp": 5 }))
            }),
        )
        .build()
        .unwrap();
    second
        .register(spec("leftover", None, city()), None)
        .unwrap();
    let mut changes = second.subscribe();
    second.restore(&read).unwrap();
    assert_eq!(second.snapshot(), snapshot, "the round trip is exact");
    assert!(second.get("leftover", Listing::every()).is_none());
    let published = drain(&mut changes);
    assert!(published.contains(&RegistryChange::Removed {
        tool: "leftover".into()
    }));
    assert!(published.contains(&RegistryChange::Registered {
        tool: "weather".into(),
        version: Some("1.0.0".into())
    }));
    let weather = second
        .call("weather", r#"{"city": "Oslo"}"#, &Ctx::new())
        .await
        .unwrap();
    assert_eq!(weather.content["temp"], 5, "the handler found by name");
    let orphan = second
        .call("orphan", r#"{"city": "Oslo"}"#, &Ctx::new())
        .await
        .unwrap_err();
    assert_eq!(orphan.code(), "no_handler");

    // Restoring into the registry it came from keeps its handlers.
    first.remove("weather").unwrap();
    first
        .register(
            spec("weather", Some("0.9.0"), city()),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("older") }),
        )
        .unwrap();
    first.restore(&read).unwrap();
    assert_eq!(first.snapshot(), snapshot);
    let again = first
        .call("weather", r#"{"city": "Oslo"}"#, &Ctx::new())
        .await
        .unwrap();
    assert_eq!(again.content, "older", "the handler the name has now");
}

#[test]
fn a_snapshot_that_does_not_fit_changes_nothing() {
    let registry = registry();
    registry.register(spec("kept", None, city()), None).unwrap();
    let mut snapshot = registry.snapshot();
    // A run-time spec under a compiled name.
    let mut shadow = snapshot.tools[0].clone();
    shadow.spec = ToolSpec::builder("util.ping").build().unwrap();
    shadow.origin = Origin::RunTime;
    snapshot.tools.push(shadow);
    assert!(matches!(
        registry.restore(&snapshot),
        Err(RegisterError::Compiled { .. })
    ));
    // A compiled tool this program does not have.
    let mut snapshot = registry.snapshot();
    snapshot.tools[0].spec = ToolSpec::builder("gone.tool").build().unwrap();
    snapshot.tools[0].origin = Origin::Linked;
    assert!(matches!(
        registry.restore(&snapshot),
        Err(RegisterError::UnknownTool { .. })
    ));
    assert_eq!(names(&registry, true), ["kept", "math.add", "util.ping"]);
    // Unknown keys are refused when reading.
    let text = r#"{"tools": [], "extra": true}"#;
    assert!(serde_json::from_str::<tool_registry::spec::RegistrySnapshot>(text).is_err());
}

#[tokio::test]
async fn hostile_calls_of_run_time_tools_meet_the_same_limits() {
    let registry = registry();
    registry
        .register(
            spec("any.value", None, object(json!({}), &[])),
            ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
        )
        .unwrap();
    registry
        .register(
            spec("sync.panic", None, object(json!({}), &[])),
            ToolHandler::new(|_args: Value, _ctx: Ctx| {
                panic!("before any future");
                #[allow(unreachable_code)]
                async move {
                    Ok::<_, String>(())
                }
            }),
        )
        .unwrap();
    let ctx = Ctx::new();
    let big = format!(r#"{{"text": "{}"}}"#, "x".repeat(2 << 20));
    let error = registry
        .call("any.value", big.as_str(), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "arguments_too_large");
    let deep = format!("{{\"v\": {}{}}}", "[".repeat(200), "]".repeat(200));
    let error = registry
        .call("any.value", deep.as_str(), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "arguments_too_deep");
    // Built and handed over without recursion (`json!` would serialize it recursively).
    let mut value = Value::from(0);
    for _ in 0..100_000 {
        value = Value::Array(vec![value]);
    }
    let mut args = serde_json::Map::new();
    args.insert("v".into(), value);
    let error = registry
        .call("any.value", Value::Object(args), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "arguments_too_deep");
    let error = registry.call("sync.panic", "{}", &ctx).await.unwrap_err();
    assert_eq!(error.code(), "panicked");
    assert!(error.to_string().contains("before any future"), "{error}");
    // The registry goes on.
    assert!(
        registry
            .call("any.value", "{}", &ctx)
            .await
            .unwrap()
            .success
    );
}

#[tokio::test]
async fn the_module_rule_applies_to_run_time_tools() {
    let registry = registry();
    for name in ["geo.nearby", "shop.buy"] {
        registry
            .register(
                spec(name, None, object(json!({}), &[])),
                ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ok") }),
            )
            .unwrap();
    }
    let geo_only = Ctx::for_scope(Scope::user("u").with_modules(["geo"]));
    let visible: Vec<String> = registry
        .tools(geo_only.scope())
        .iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(visible, ["geo.nearby"]);
    assert!(registry.call("geo.nearby", "{}", &geo_only).await.is_ok());
    let error = registry
        .call("shop.buy", "{}", &geo_only)
        .await
        .unwrap_err();
    assert_eq!(
        error,
        ToolError::UnknownTool {
            name: "shop.buy".into(),
            suggestion: None,
            // A module outside the caller's list reads as one that does not exist.
            module: Some("shop".into()),
        }
    );
}

#[test]
fn a_version_must_be_a_semantic_version() {
    let huge = "1".repeat(1 << 20);
    for bad in [
        "", " ", "1", "1.0", "v1.0.0", "1.0.0\n", "1.0.0 ", "01.0.0", &huge,
    ] {
        let error = ToolSpec::builder("weather")
            .version(bad)
            .build()
            .unwrap_err();
        let SpecError::Version { tool, version, .. } = &error else {
            panic!("{bad:?}: {error}");
        };
        assert_eq!((tool.as_str(), version.as_str()), ("weather", bad));
        let message = error.to_string();
        assert!(message.contains("MAJOR.MINOR.PATCH"), "{message}");
        assert!(
            message.len() < 400 && !message.contains('\n'),
            "one short line: {message}"
        );
        // Read from JSON too.
        let json =
            json!({ "tool_name": "weather", "version": bad, "input_schema": { "type": "object" } });
        assert!(serde_json::from_value::<ToolSpec>(json).is_err(), "{bad:?}");
    }
    for good in ["0.0.1", "1.0.0", "2.10.3-beta.1", "1.0.0+build.7"] {
        let spec = ToolSpec::builder("weather").version(good).build().unwrap();
        assert_eq!(spec.version(), Some(good));
    }
}

#[test]
fn only_a_greater_version_replaces_a_spec() {
    let registry = registry();
    let schema = |key: &str| object(json!({ key: { "type": "string" } }), &[]);
    registry
        .register(spec("weather", Some("9.0.0"), schema("a")), None)
        .unwrap();
    // Compared as versions, not as text: 10 > 9.
    registry
        .register(spec("weather", Some("10.0.0"), schema("b")), None)
        .unwrap();
    for (older, given) in [
        (Some("9.9.9"), Some("9.9.9")),
        (Some("10.0.0-rc.1"), Some("10.0.0-rc.1")),
        (None, None),
    ] {
        let error = registry
            .register(spec("weather", older, schema("c")), None)
            .unwrap_err();
        assert_eq!(
            error,
            RegisterError::Downgrade {
                tool: "weather".into(),
                registered: "10.0.0".into(),
                given: given.map(str::to_owned),
            }
        );
        let message = error.to_string();
        assert!(
            message.contains("`10.0.0`") && message.contains("remove the tool first"),
            "{message}"
        );
    }
    // Build metadata is not compared: the same version.
    let error = registry
        .register(spec("weather", Some("10.0.0+other"), schema("c")), None)
        .unwrap_err();
    assert!(
        matches!(error, RegisterError::SameVersion { .. }),
        "{error}"
    );
    let registered = registry.get("weather", Listing::every()).unwrap();
    assert_eq!(registered.version(), Some("10.0.0"), "unchanged");
    assert!(
        registered.input_schema().as_value()["properties"]
            .get("b")
            .is_some()
    );
    // Going back on purpose: remove, then register the older spec.
    registry.remove("weather").unwrap();
    registry
        .register(spec("weather", Some("9.0.0"), schema("a")), None)
        .unwrap();
    assert_eq!(
        registry.get("weather", Listing::every()).unwrap().version(),
        Some("9.0.0")
    );
}

#[test]
fn a_name_that_differs_only_in_case_is_refused() {
    let registry = registry();
    // From a compiled tool's name, alias and wire name.
    for (name, other) in [
        ("Math.Add", "math.add"),
        ("PING", "ping"),
        ("util__PING", "util__ping"),
    ] {
        let error = registry
            .register(spec(name, None, city()), None)
            .unwrap_err();
        assert_eq!(
            error,
            RegisterError::CaseClash {
                name: name.into(),
                other: other.into(),
                compiled: true
            }
        );
        let message = error.to_string();
        assert!(
            message.contains(&format!("`{name}`")) && message.contains(&format!("`{other}`")),
            "{message}"
        );
    }
    // The same name exactly is still the compiled tool's.
    assert!(matches!(
        registry.register(spec("math.add", None, city()), None),
        Err(RegisterError::Compiled { .. })
    ));
    // From another run-time tool, by name or by wire name.
    registry
        .register(spec("weather.now", None, city()), None)
        .unwrap();
    for name in ["Weather.Now", "WEATHER__now"] {
        let error = registry
            .register(spec(name, None, city()), None)
            .unwrap_err();
        assert!(
            matches!(&error, RegisterError::CaseClash { other, compiled: false, .. }
                if other.eq_ignore_ascii_case(name)),
            "{error}"
        );
    }
    assert_eq!(
        names(&registry, true),
        ["math.add", "util.ping", "weather.now"]
    );
}

#[test]
fn restore_refuses_names_that_differ_only_in_case_and_may_roll_versions_back() {
    let registry = registry();
    registry
        .register(spec("weather", Some("1.0.0"), city()), None)
        .unwrap();
    let older = registry.snapshot();
    registry
        .register(spec("weather", Some("2.0.0"), object(json!({}), &[])), None)
        .unwrap();

    // Two run-time tools whose names differ only in case.
    let mut snapshot = registry.snapshot();
    let mut twin = snapshot
        .tools
        .iter()
        .find(|e| e.spec.tool_name() == "weather")
        .unwrap()
        .clone();
    twin.spec = ToolSpec::builder("Weather").build().unwrap();
    snapshot.tools.push(twin.clone());
    assert!(matches!(
        registry.restore(&snapshot),
        Err(RegisterError::CaseClash {
            compiled: false,
            ..
        })
    ));
    // A run-time tool whose name differs from a compiled one's only in case.
    let mut snapshot = registry.snapshot();
    twin.spec = ToolSpec::builder("UTIL.PING").build().unwrap();
    snapshot.tools.push(twin);
    assert!(matches!(
        registry.restore(&snapshot),
        Err(RegisterError::CaseClash { compiled: true, .. })
    ));
    assert_eq!(
        registry.get("weather", Listing::every()).unwrap().version(),
        Some("2.0.0")
    );

    // A restore sets the whole state: an older snapshot rolls the version back.
    registry.restore(&older).unwrap();
    assert_eq!(
        registry.get("weather", Listing::every()).unwrap().version(),
        Some("1.0.0")
    );
}
