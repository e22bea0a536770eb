//! Deferred tools and discovery: what lists leave out and add, the three meta-tools
//! (`search_tools`, `describe_tool`, `execute_tool`) answering within the caller's scope, and
//! each provider's own tool search.

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::discovery::Discovery;
use tool_registry::format::Provider;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Permission, Registry, Scope, ToolResult, parse, tool};

/// Forecast the weather for a city, day by day.
#[tool(name = "weather.forecast", defer_loading, tags(climate, rain))]
fn forecast(city: String, days: u32) -> Value {
    json!({ "city": city, "days": days, "sky": "clear" })
}

/// Read a file of the workspace.
#[tool(name = "files.read")]
fn read(path: String) -> String {
    format!("contents of {path}")
}

/// Delete a file of the workspace for good.
#[tool(name = "files.delete", defer_loading, permission = "admin")]
fn delete(path: String) -> String {
    format!("deleted {path}")
}

/// Find notes by their words. Every word must appear in a note for it to be found, in any
/// order and any case.
#[tool(
    name = "notes.find",
    defer_loading,
    category = "notes",
    short_description = "Find notes by their words, all of them."
)]
fn find(words: String) -> Vec<String> {
    vec![words]
}

/// The registry of this file's tools, with a run-time deferred tool, and `vault.open` (an
/// admin's deferred tool) when `with_vault`.
fn build(discovery: Discovery, with_vault: bool) -> Registry {
    let registry = Registry::builder()
        .log_annotations(false)
        .discovery(discovery)
        .build()
        .unwrap();
    let spec = ToolSpec::builder("calc.mul")
        .description("Multiply two numbers.")
        .defer_loading(true)
        .input_schema(json!({
            "type": "object",
            "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
            "required": ["a", "b"],
        }))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|args, _ctx| async move {
                let product = args["a"].as_f64().unwrap_or(0.0) * args["b"].as_f64().unwrap_or(0.0);
                Ok::<_, String>(json!(product))
            }),
        )
        .unwrap();
    if with_vault {
        let spec = ToolSpec::builder("vault.open")
            .description("Open the vault of secrets.")
            .permission(Permission::Admin)
            .defer_loading(true)
            .build()
            .unwrap();
        registry
            .register(
                spec,
                ToolHandler::new(|_args, _ctx| async move { Ok::<_, String>(json!("open")) }),
            )
            .unwrap();
    }
    registry
}

fn guest() -> Ctx {
    Ctx::for_scope(Scope::user("guest-user"))
}

fn admin() -> Ctx {
    Ctx::for_scope(Scope::user("root").with_level(Permission::Admin))
}

fn names(list: &Value, provider: Provider) -> Vec<String> {
    let list = match provider {
        Provider::Gemini => &list[0]["functionDeclarations"],
        _ => list,
    };
    (list.as_array().unwrap().iter())
        .map(|tool| {
            let name = match provider {
                Provider::OpenAi => &tool["function"]["name"],
                _ => &tool["name"],
            };
            name.as_str()
                .or_else(|| tool["type"].as_str())
                .unwrap()
                .to_owned()
        })
        .collect()
}

async fn answer(registry: &Registry, name: &str, args: Value, ctx: &Ctx) -> ToolResult {
    let mut result = registry.call(name, args, ctx).for_model().await;
    result.audit = Default::default();
    result
}

fn found(result: &ToolResult) -> Vec<String> {
    (result.content["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn lists_leave_deferred_tools_out_and_end_with_the_meta_tools() {
    let registry = build(Discovery::MetaTools, true);
    let scope = Scope::user("u");
    for provider in Provider::ALL {
        let list = registry.provider_tools(provider, &scope);
        let names = names(&list, provider);
        assert_eq!(
            names,
            [
                "files__read",
                "search_tools",
                "describe_tool",
                "execute_tool"
            ]
            .map(|n| n.replace("__", if provider == Provider::Mcp { "." } else { "__" })),
            "{provider}"
        );
        // Strict mode can say the meta-tools' arguments.
        let strict = registry.provider_tools(provider.strict(), &scope).unwrap();
        assert_eq!(
            strict.as_array().map(Vec::len),
            list.as_array().map(Vec::len)
        );
    }
    // A caller whose scope lists deferred tools gets them, and no meta-tools.
    let all = registry.provider_tools(Provider::Anthropic, &Scope::trusted());
    let all = names(&all, Provider::Anthropic);
    assert!(all.contains(&"weather__forecast".to_owned()) && !all.contains(&"search_tools".into()));
    // Off: nothing added.
    let off = build(Discovery::Off, false);
    assert_eq!(
        names(
            &off.provider_tools(Provider::OpenAi, &scope),
            Provider::OpenAi
        ),
        ["files__read"]
    );
    assert!(off.get("search_tools", Listing::every()).is_none());
}

#[test]
fn native_tool_search_where_the_provider_has_it() {
    let registry = build(Discovery::Native, true);
    let scope = Scope::user("u");
    let anthropic = registry.provider_tools(Provider::Anthropic, &scope);
    let tools = anthropic.as_array().unwrap();
    let deferred: Vec<&str> = (tools.iter())
        .filter(|t| t["defer_loading"] == true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // The admin's deferred tools are not in a user's list, flagged or not.
    assert_eq!(deferred, ["calc__mul", "notes__find", "weather__forecast"]);
    assert!(!anthropic.json().contains("vault") && !anthropic.json().contains("files__delete"));
    assert_eq!(
        tools.last().unwrap(),
        &json!({ "type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25" })
    );
    assert_eq!(tools[0]["name"], "calc__mul");
    assert!(tools.iter().all(|t| t["name"] != "search_tools"));
    let responses = registry.provider_tools(Provider::Responses, &scope);
    let responses = responses.as_array().unwrap();
    assert_eq!(responses.last().unwrap(), &json!({ "type": "tool_search" }));
    assert!(
        responses
            .iter()
            .any(|t| t["name"] == "weather__forecast" && t["defer_loading"] == true)
    );
    // Strict and native together.
    let strict = registry
        .provider_tools(Provider::Anthropic.strict(), &scope)
        .unwrap();
    assert!(
        strict
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["defer_loading"] == true && t["strict"] == true)
    );
    // The others get the meta-tools.
    let openai = names(
        &registry.provider_tools(Provider::OpenAi, &scope),
        Provider::OpenAi,
    );
    assert_eq!(openai.last().unwrap(), "execute_tool");
    // A deferred tool comes back by its wire name, as any other.
    assert!(
        registry
            .get("weather__forecast", Listing::every())
            .is_some()
    );
}

#[tokio::test]
async fn search_ranks_the_callers_tools() {
    let registry = build(Discovery::MetaTools, true);
    let ctx = guest();
    let result = answer(
        &registry,
        "search_tools",
        json!({ "query": "weather forecast for a city" }),
        &ctx,
    )
    .await;
    assert!(result.success, "{result:?}");
    assert_eq!(found(&result)[0], "weather.forecast");
    assert_eq!(
        result.content["tools"][0]["description"],
        "Forecast the weather for a city, day by day."
    );
    // Tags, category, argument names and run-time tools are searched.
    for (query, first) in [
        ("rain", "weather.forecast"),
        ("notes", "notes.find"),
        ("words", "notes.find"),
        ("multiply numbers", "calc.mul"),
        ("files", "files.read"),
    ] {
        let result = answer(&registry, "search_tools", json!({ "query": query }), &ctx).await;
        assert_eq!(
            found(&result).first().map(String::as_str),
            Some(first),
            "{query}"
        );
    }
    // The limit, as a number or a numeric string; bad ones name the argument.
    let result = answer(
        &registry,
        "search_tools",
        json!({ "query": "file weather notes", "limit": "1" }),
        &ctx,
    )
    .await;
    assert_eq!(found(&result).len(), 1);
    let result = answer(
        &registry,
        "search_tools",
        json!({ "query": "x", "limit": 0 }),
        &ctx,
    )
    .await;
    assert_eq!(result.content["error"]["code"], "invalid_arguments");
    assert_eq!(result.content["error"]["path"], "limit");
    let result = answer(
        &registry,
        "search_tools",
        json!({ "query": "x", "other": 1 }),
        &ctx,
    )
    .await;
    assert_eq!(result.content["error"]["path"], "other");
    let result = answer(&registry, "search_tools", json!({}), &ctx).await;
    assert!(result.message.unwrap().contains("missing field `query`"));
    // Nothing matches: an empty answer, not an error.
    let result = answer(&registry, "search_tools", json!({ "query": "zzzz" }), &ctx).await;
    assert!(result.success && found(&result).is_empty());
}

#[tokio::test]
async fn a_given_short_description_is_what_search_results_listings_and_the_catalog_show() {
    let registry = build(Discovery::MetaTools, false);
    let spec = ToolSpec::builder("calc.div")
        .description("Divide two numbers. The divisor must not be zero.")
        .short_description("Divide a by b.")
        .build()
        .unwrap();
    registry.register(spec, None).unwrap();
    let find = registry.get("notes.find", Listing::every()).unwrap();
    assert_eq!(
        find.short_description(),
        "Find notes by their words, all of them."
    );
    assert!(
        find.description()
            .starts_with("Find notes by their words. Every word")
    );
    let div = registry.get("calc.div", Listing::every()).unwrap();
    assert_eq!(div.short_description(), "Divide a by b.");
    // Without one, the first sentence of the description.
    let forecast = registry.get("weather.forecast", Listing::every()).unwrap();
    assert_eq!(
        forecast.short_description(),
        "Forecast the weather for a city, day by day."
    );

    let result = answer(
        &registry,
        "search_tools",
        json!({ "query": "notes words" }),
        &guest(),
    )
    .await;
    assert_eq!(result.content["tools"][0]["name"], "notes.find");
    assert_eq!(
        result.content["tools"][0]["description"],
        "Find notes by their words, all of them."
    );

    let docs = registry.catalog(Listing::every()).tools();
    let doc = |name: &str| {
        docs.iter()
            .find(|doc| doc.name == name)
            .unwrap()
            .short_description
            .clone()
    };
    assert_eq!(doc("notes.find"), "Find notes by their words, all of them.");
    assert_eq!(doc("calc.div"), "Divide a by b.");
    // The spec keeps it, so a snapshot reads it back.
    let snapshot = serde_json::to_value(registry.snapshot()).unwrap();
    let entry = |name: &str| {
        (snapshot["tools"].as_array().unwrap().iter())
            .find(|entry| entry["spec"]["tool_name"] == name)
            .unwrap()["spec"]["short_description"]
            .clone()
    };
    assert_eq!(entry("calc.div"), "Divide a by b.");
    assert_eq!(
        entry("notes.find"),
        "Find notes by their words, all of them."
    );
}

#[tokio::test]
async fn describe_and_execute_a_found_tool() {
    let registry = build(Discovery::MetaTools, true);
    let ctx = guest();
    let described = answer(
        &registry,
        "describe_tool",
        json!({ "name": "weather.forecast" }),
        &ctx,
    )
    .await;
    assert!(described.success);
    assert_eq!(described.content["name"], "weather.forecast");
    assert_eq!(
        described.content["parameters"]["required"],
        json!(["city", "days"])
    );
    // Arguments as text (the meta-tool's schema) or as an object; wire names too.
    for (name, arguments) in [
        ("weather.forecast", json!(r#"{"city": "Oslo", "days": 2}"#)),
        ("weather__forecast", json!({ "city": "Oslo", "days": 2 })),
    ] {
        let result = answer(
            &registry,
            "execute_tool",
            json!({ "name": name, "arguments": arguments }),
            &ctx,
        )
        .await;
        assert!(result.success, "{result:?}");
        assert_eq!(
            result.content,
            json!({ "city": "Oslo", "days": 2, "sky": "clear" })
        );
    }
    let result = answer(
        &registry,
        "execute_tool",
        json!({ "name": "calc.mul", "arguments": "{\"a\": 6, \"b\": 7}" }),
        &ctx,
    )
    .await;
    assert_eq!(result.content, json!(42.0));
    // The tool's own validation, naming the path.
    let result = answer(
        &registry,
        "execute_tool",
        json!({ "name": "weather.forecast", "arguments": { "city": "Oslo", "days": "many" } }),
        &ctx,
    )
    .await;
    assert_eq!(result.content["error"]["code"], "invalid_arguments");
    assert_eq!(result.content["error"]["tool"], "weather.forecast");
    assert_eq!(result.content["error"]["path"], "days");
    let result = answer(
        &registry,
        "execute_tool",
        json!({ "name": "weather.forecast", "arguments": "{not json" }),
        &ctx,
    )
    .await;
    assert_eq!(result.content["error"]["path"], "arguments");
    // The meta-tools are not run through `execute_tool`.
    let result = answer(
        &registry,
        "execute_tool",
        json!({ "name": "search_tools", "arguments": {} }),
        &ctx,
    )
    .await;
    assert_eq!(result.content["error"]["path"], "name");
}

#[tokio::test]
async fn an_out_of_scope_tool_answers_as_an_unknown_one() {
    // The same registry with and without the admin's `vault.open`: a user's every question
    // about it answers the same in both.
    let with = build(Discovery::MetaTools, true);
    let without = build(Discovery::MetaTools, false);
    let ctx = guest();
    for (tool, args) in [
        (
            "search_tools",
            json!({ "query": "open the vault of secrets" }),
        ),
        ("search_tools", json!({ "query": "delete a file" })),
        (
            "search_tools",
            json!({ "query": "vault.open", "limit": 20 }),
        ),
        ("describe_tool", json!({ "name": "vault.open" })),
        ("describe_tool", json!({ "name": "files.delete" })),
        (
            "execute_tool",
            json!({ "name": "vault.open", "arguments": {} }),
        ),
        (
            "execute_tool",
            json!({ "name": "vault__open", "arguments": "{}" }),
        ),
        (
            "execute_tool",
            json!({ "name": "files.delete", "arguments": { "path": "a" } }),
        ),
    ] {
        let hidden = answer(&with, tool, args.clone(), &ctx).await;
        let absent = answer(&without, tool, args.clone(), &ctx).await;
        assert_eq!(hidden, absent, "{tool} {args}");
        let text = serde_json::to_string(&hidden).unwrap();
        assert!(
            !text.contains("Open the vault") && !text.contains("for good"),
            "{text}"
        );
    }
    // An unknown name answers the unknown-tool error.
    let unknown = answer(
        &with,
        "describe_tool",
        json!({ "name": "vault.open" }),
        &ctx,
    )
    .await;
    assert_eq!(unknown.content["error"]["code"], "unknown_tool");
    let direct = answer(&with, "vault.open", json!({}), &ctx).await;
    assert_eq!(direct.content["error"]["code"], "unknown_tool");
    // The admin finds, reads and runs it.
    let admin = admin();
    let result = answer(
        &with,
        "search_tools",
        json!({ "query": "vault secrets" }),
        &admin,
    )
    .await;
    assert_eq!(found(&result)[0], "vault.open");
    let result = answer(
        &with,
        "search_tools",
        json!({ "query": "delete file" }),
        &admin,
    )
    .await;
    assert_eq!(found(&result)[0], "files.delete");
    let result = answer(
        &with,
        "execute_tool",
        json!({ "name": "vault.open", "arguments": {} }),
        &admin,
    )
    .await;
    assert_eq!(result.content, json!("open"));
}

#[test]
fn models_call_the_meta_tools_by_name() {
    let registry = build(Discovery::MetaTools, true);
    let scope = Scope::user("u");
    let text =
        r#"<tool_call>{"name": "search_tools", "arguments": {"query": "weather"}}</tool_call>"#;
    let parsed = parse::any(text, &registry.scoped(&scope));
    assert_eq!(parsed.calls.len(), 1, "{parsed:?}");
    assert_eq!(parsed.calls[0].name, "search_tools");
    // A registry without deferred tools has no meta-tools to call.
    let plain = Registry::builder().without_linked().build().unwrap();
    assert!(plain.get("search_tools", Listing::every()).is_none());
    assert!(parse::any(text, &plain.scoped(&scope)).calls.is_empty());
}

#[tokio::test]
async fn a_request_turns_the_search_flow_off_or_on_for_itself() {
    // The registry's way is the meta-tools; a request says no.
    let registry = build(Discovery::MetaTools, false);
    let quiet = Scope::user("u").with_tool_search(false);
    let listed = names(
        &registry.provider_tools(Provider::OpenAi, &quiet),
        Provider::OpenAi,
    );
    assert_eq!(listed, ["files__read"], "only the listed tools");
    let refused = registry
        .call(
            "search_tools",
            json!({"query": "weather"}),
            &Ctx::for_scope(quiet),
        )
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "unknown_tool");
    // The registry's way is off; a request says yes.
    let off = build(Discovery::Off, false);
    let searching = Scope::user("u").with_tool_search(true);
    let listed = names(
        &off.provider_tools(Provider::OpenAi, &searching),
        Provider::OpenAi,
    );
    assert!(listed.contains(&"search_tools".to_owned()), "{listed:?}");
    let found = off
        .call(
            "search_tools",
            json!({"query": "weather"}),
            &Ctx::for_scope(searching),
        )
        .await
        .unwrap();
    assert!(
        found.content.to_string().contains("weather.forecast"),
        "{}",
        found.content
    );
    // Others on the same registry keep its way.
    let plain = names(
        &off.provider_tools(Provider::OpenAi, &Scope::user("u")),
        Provider::OpenAi,
    );
    assert_eq!(plain, ["files__read"]);
}
