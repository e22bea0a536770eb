//! Every provider's tool list for the reference tools and a run-time tool: snapshots of each
//! format, and a checker of each provider's published rules written apart from the code that
//! writes the formats (names, shapes, JSON Schema validity), and wire names resolving back.

use regex::Regex;
use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::format::Provider;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, Scope};
use tool_registry_tools as _;

#[path = "common/venv.rs"]
mod venv;

/// The reference tools and one run-time tool with an output schema.
fn registry() -> Registry {
    let registry = Registry::builder().build().expect("the reference tools");
    let spec = ToolSpec::builder("weather.now")
        .version("1.0.0")
        .description("The weather in a city now. Temperatures in Celsius.")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "city": { "type": "string", "description": "The city" },
                "units": { "type": "string", "enum": ["c", "f"] }
            },
            "required": ["city"],
        }))
        .output_schema(json!({
            "type": "object",
            "properties": { "celsius": { "type": "number" } },
            "required": ["celsius"],
        }))
        .annotations(tool_registry::def::Annotations {
            read_only: Some(true),
            ..Default::default()
        })
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|args: Value, _ctx: Ctx| async move {
                Ok::<_, String>(json!({ "city": args["city"], "celsius": 21 }))
            }),
        )
        .unwrap();
    registry
}

#[test]
fn every_format_of_every_tool_is_as_reviewed() {
    let registry = registry();
    for provider in Provider::ALL {
        let tools = registry.provider_tools(provider, &Scope::trusted());
        insta::assert_json_snapshot!(format!("tools_{provider}"), tools);
    }
}

/// The name rule each provider publishes (see the links in `format/provider.rs`).
fn name_rule(provider: Provider) -> Regex {
    Regex::new(match provider {
        Provider::OpenAi | Provider::Responses | Provider::Anthropic => r"^[a-zA-Z0-9_-]{1,64}$",
        Provider::Gemini => r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$",
        _ => r"^[A-Za-z0-9_.-]{1,128}$",
    })
    .unwrap()
}

/// The definitions of a tool list, the name of each and its argument schema.
fn definitions(provider: Provider, tools: &Value) -> Vec<(String, Value)> {
    let list = match provider {
        Provider::Gemini => {
            let tools = tools.as_array().unwrap();
            assert_eq!(tools.len(), 1, "one Gemini tool holds every declaration");
            tools[0]["functionDeclarations"].as_array().unwrap().clone()
        }
        _ => tools.as_array().unwrap().clone(),
    };
    list.iter()
        .map(|tool| {
            let (name, schema) = match provider {
                Provider::OpenAi => {
                    assert_eq!(tool["type"], "function");
                    let function = &tool["function"];
                    (&function["name"], &function["parameters"])
                }
                Provider::Responses => {
                    assert_eq!(tool["type"], "function");
                    assert!(tool["strict"].is_boolean(), "Responses: strict is given");
                    (&tool["name"], &tool["parameters"])
                }
                Provider::Anthropic => (&tool["name"], &tool["input_schema"]),
                Provider::Gemini => {
                    let schema = tool
                        .get("parameters")
                        .unwrap_or(&tool["parametersJsonSchema"]);
                    check_gemini_subset(&tool["name"], schema);
                    (&tool["name"], schema)
                }
                _ => {
                    let hints = &tool["annotations"];
                    for hint in [
                        "readOnlyHint",
                        "destructiveHint",
                        "idempotentHint",
                        "openWorldHint",
                    ] {
                        assert!(hints[hint].is_boolean(), "MCP: {hint} in {tool}");
                    }
                    assert!(tool["title"].is_string());
                    if let Some(output) = tool.get("outputSchema") {
                        assert_eq!(
                            output["type"], "object",
                            "MCP: outputSchema is an object schema"
                        );
                    }
                    (&tool["name"], &tool["inputSchema"])
                }
            };
            let description = match provider {
                Provider::OpenAi => &tool["function"]["description"],
                _ => &tool["description"],
            };
            assert!(
                description.as_str().is_some_and(|d| !d.trim().is_empty()),
                "{provider}: a description for {name}"
            );
            (name.as_str().expect("a name").to_owned(), schema.clone())
        })
        .collect()
}

/// Gemini's `Schema` takes an OpenAPI subset: none of these keywords, and string enums.
fn check_gemini_subset(name: &Value, schema: &Value) {
    const REFUSED: &[&str] = &[
        "$ref",
        "$defs",
        "const",
        "oneOf",
        "additionalProperties",
        "$schema",
    ];
    let Some(object) = schema.as_object() else {
        return;
    };
    for key in object.keys() {
        assert!(
            !REFUSED.contains(&key.as_str()),
            "gemini: {name} keeps `{key}` in {schema}"
        );
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        assert!(
            values.iter().all(Value::is_string),
            "gemini: {name}: enums are strings"
        );
    }
    if let Some(Value::Array(types)) = object.get("type") {
        panic!("gemini: {name}: one type, not {types:?}");
    }
    for value in object.values() {
        match value {
            Value::Object(map) => {
                // `properties` holds schemas by name; anything else is a schema.
                if map.values().all(Value::is_object) {
                    map.values().for_each(|v| check_gemini_subset(name, v));
                }
                check_gemini_subset(name, value);
            }
            Value::Array(items) => items.iter().for_each(|i| check_gemini_subset(name, i)),
            _ => {}
        }
    }
}

#[test]
fn every_list_obeys_its_providers_published_rules() {
    let registry = registry();
    for provider in Provider::ALL {
        let tools = registry.provider_tools(provider, &Scope::trusted());
        let definitions = definitions(provider, &tools);
        assert_eq!(definitions.len(), registry.len(), "{provider}");
        let rule = name_rule(provider);
        let mut names: Vec<&str> = definitions.iter().map(|(n, _)| n.as_str()).collect();
        for (name, schema) in &definitions {
            assert!(
                rule.is_match(name),
                "{provider}: `{name}` breaks the name rule"
            );
            assert_eq!(
                schema["type"], "object",
                "{provider}: {name} takes an object"
            );
            assert!(
                schema["properties"].is_object(),
                "{provider}: {name} has properties"
            );
            if let Err(error) = jsonschema::meta::validate(schema) {
                panic!("{provider}: the schema of {name} is not valid JSON Schema: {error}");
            }
        }
        names.sort_unstable();
        names.dedup();
        assert_eq!(
            names.len(),
            definitions.len(),
            "{provider}: wire names are unique"
        );
    }
}

#[test]
fn mcp_schemas_are_json_schema_2020_12() {
    // MCP's default dialect (SEP-1613,
    // https://modelcontextprotocol.io/community/seps/1613-establish-json-schema-2020-12-as-default-dialect-f).
    let registry = registry();
    let tools = registry.provider_tools(Provider::Mcp, &Scope::trusted());
    let mut outputs = 0;
    for tool in tools.as_array().unwrap() {
        let name = &tool["name"];
        let input = &tool["inputSchema"];
        if let Err(error) = jsonschema::draft202012::meta::validate(input) {
            panic!("MCP: the input schema of {name} is not JSON Schema 2020-12: {error}");
        }
        if let Some(output) = tool.get("outputSchema") {
            outputs += 1;
            if let Err(error) = jsonschema::draft202012::meta::validate(output) {
                panic!("MCP: the output schema of {name} is not JSON Schema 2020-12: {error}");
            }
        }
    }
    assert!(outputs > 0, "an output schema is among those checked");
}

#[tokio::test]
async fn wire_names_come_back_to_their_tools() {
    let registry = registry();
    for provider in Provider::ALL {
        let tools = registry.provider_tools(provider, &Scope::trusted());
        for (wire, _) in definitions(provider, &tools) {
            let tool = registry
                .get(&wire, Listing::every())
                .unwrap_or_else(|| panic!("{provider}: {wire}"));
            assert_eq!(provider.wire_name(tool.name()), wire);
        }
    }
    // A native call with a mapped name runs the tool, and the audit names the tool.
    let ctx = Ctx::new();
    let result = registry
        .call("weather__now", r#"{"city": "Oslo"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(result.content["celsius"], 21);
    assert_eq!(result.audit.tool.as_deref(), Some("weather.now"));
    // And a text call with one parses as a known call.
    let output = r#"<tool_call>{"name": "file_manager__list", "arguments": {}}</tool_call>"#;
    let parsed = tool_registry::parse::any(output, &registry.scoped(&Scope::trusted()));
    assert_eq!(parsed.calls.len(), 1, "{parsed:?}");
    assert!(parsed.unknown.is_empty());
    // A guest is told nothing more about a hidden tool through its wire name.
    let guest = Ctx::for_scope(Scope::guest());
    let hidden = registry
        .call("scheduler__add_job", "{}", &guest)
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), "unknown_tool");
    assert!(
        !hidden.to_string().contains("scheduler.add_job"),
        "{hidden}"
    );
}

#[test]
fn names_that_meet_on_the_wire_are_refused() {
    let registry = registry();
    // A run-time name equal to a compiled tool's wire name.
    let error = registry
        .register(
            ToolSpec::builder("file_manager__list").build().unwrap(),
            None,
        )
        .unwrap_err();
    assert!(error.to_string().contains("compiled tool"), "{error}");
    // Two run-time tools that are one name to OpenAI.
    registry
        .register(ToolSpec::builder("geo.near").build().unwrap(), None)
        .unwrap();
    let error = registry
        .register(ToolSpec::builder("geo__near").build().unwrap(), None)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("`geo__near` would name both it and `geo.near`"),
        "{error}"
    );
}

#[tokio::test]
async fn results_answer_each_provider_in_its_shape() {
    let registry = registry();
    let ctx = Ctx::new();
    let mut call = tool_registry::ToolCall::new("weather__now", json!({ "city": "Oslo" }));
    call.id = Some("call_7".into());
    let ok = registry
        .call(&call.name, call.arguments.clone(), &ctx)
        .for_model()
        .await;
    let failed = registry
        .call(&call.name, json!({ "city": 5 }), &ctx)
        .for_model()
        .await;
    assert!(ok.success && !failed.success);
    let text = r#"{"celsius":21,"city":"Oslo"}"#;
    let ok_text = serde_json::to_string(&ok.content).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&ok_text).unwrap(),
        serde_json::from_str::<Value>(text).unwrap()
    );

    let message = |provider, result| registry.result_message(provider, &call, result).message;
    assert_eq!(
        message(Provider::OpenAi, &ok),
        json!({ "role": "tool", "tool_call_id": "call_7", "content": ok_text })
    );
    assert_eq!(
        message(Provider::Responses, &ok),
        json!({ "type": "function_call_output", "call_id": "call_7", "output": ok_text })
    );
    let anthropic = message(Provider::Anthropic, &failed);
    assert_eq!(anthropic["type"], "tool_result");
    assert_eq!(anthropic["tool_use_id"], "call_7");
    assert_eq!(anthropic["is_error"], true);
    let detail: Value = serde_json::from_str(anthropic["content"].as_str().unwrap()).unwrap();
    assert_eq!(detail["error"]["code"], "invalid_arguments");
    assert_eq!(
        detail["error"]["path"], "city",
        "the model learns which field to fix"
    );

    let gemini = message(Provider::Gemini, &ok);
    assert_eq!(
        gemini["functionResponse"]["name"], "weather__now",
        "the name as called"
    );
    assert_eq!(gemini["functionResponse"]["id"], "call_7");
    assert_eq!(
        gemini["functionResponse"]["response"]["output"]["celsius"],
        21
    );
    let gemini = message(Provider::Gemini, &failed);
    assert_eq!(
        gemini["functionResponse"]["response"]["error"]["error"]["code"],
        "invalid_arguments"
    );

    let mcp = message(Provider::Mcp, &ok);
    assert_eq!(mcp["isError"], false);
    assert_eq!(mcp["content"][0]["type"], "text");
    assert_eq!(
        mcp["structuredContent"]["celsius"], 21,
        "the tool declares an output schema"
    );
    let mcp = message(Provider::Mcp, &failed);
    assert_eq!(mcp["isError"], true);
    assert!(mcp.get("structuredContent").is_none());
    // A tool without an output schema answers in text only.
    let create = tool_registry::ToolCall::new("file_manager.create_document", json!({}));
    let tool = registry.get(&create.name, Listing::every()).unwrap();
    assert!(
        tool.output_schema().is_none(),
        "the case needs a tool without one"
    );
    let created = tool_registry::ToolResult::ok(json!({ "created": "notes/a.md" }));
    let mcp = registry
        .result_message(Provider::Mcp, &create, &created)
        .message;
    assert!(mcp.get("structuredContent").is_none() && mcp["content"][0]["text"].is_string());
    // One whose schema is not an object schema answers its value wrapped, as its listed
    // `outputSchema` says.
    let list = tool_registry::ToolCall::new("scheduler.list_jobs", json!({}));
    let listed = tool_registry::ToolResult::ok(json!([]));
    let mcp = registry
        .result_message(Provider::Mcp, &list, &listed)
        .message;
    assert_eq!(mcp["structuredContent"], json!({ "result": [] }));
    assert_eq!(mcp["content"], json!([{ "type": "text", "text": "[]" }]));
}

/// A provider's response holding one call of `name` with `{"path": "."}`.
fn native_response(provider: Provider, name: &str) -> Value {
    let arguments = json!({ "path": "." });
    match provider {
        Provider::OpenAi => json!({ "choices": [{ "message": {
            "role": "assistant",
            "content": null,
            "tool_calls": [{ "id": "call_1", "type": "function",
                "function": { "name": name, "arguments": arguments.to_string() } }]
        } }] }),
        Provider::Responses => json!({ "output": [
            { "type": "function_call", "call_id": "call_1", "name": name,
              "arguments": arguments.to_string() }
        ] }),
        Provider::Anthropic => json!({ "role": "assistant", "content": [
            { "type": "text", "text": "Listing." },
            { "type": "tool_use", "id": "call_1", "name": name, "input": arguments }
        ] }),
        Provider::Gemini => json!({ "candidates": [{ "content": { "role": "model", "parts": [
            { "text": "Listing." },
            { "functionCall": { "id": "call_1", "name": name, "args": arguments } }
        ] } }] }),
        _ => json!({ "type": "tool_use", "id": "call_1", "name": name, "input": arguments }),
    }
}

#[tokio::test]
async fn each_providers_tool_call_with_a_wire_name_runs_the_right_tool() {
    let registry = registry();
    let scoped_scope = Scope::trusted();
    for provider in Provider::ALL {
        let wire = provider.wire_name("file_manager.list");
        let response = native_response(provider, &wire).to_string();
        let parsed = tool_registry::parse::any(&response, &registry.scoped(&scoped_scope));
        assert_eq!(parsed.calls.len(), 1, "{provider}: {parsed:?}");
        let call = &parsed.calls[0];
        assert_eq!(call.name, wire);
        assert_eq!(call.id.as_deref(), Some("call_1"), "{provider}");
        assert_eq!(call.arguments, json!({ "path": "." }));
        let tool = registry
            .get(&call.name, Listing::every())
            .expect("the wire name resolves");
        assert_eq!(tool.name(), "file_manager.list", "{provider}");
    }
    // Gemini parts alone, with a thought.
    let parts = json!([
        { "text": "I should list.", "thought": true },
        { "functionCall": { "name": "file_manager__list", "args": {} } }
    ]);
    let parsed = tool_registry::parse::any(&parts.to_string(), &registry);
    assert_eq!(parsed.calls.len(), 1, "{parsed:?}");
    assert_eq!(parsed.reasoning, "I should list.");
}

/// Checks a strict schema by the published rules: every object closes its keys and requires
/// every property; none of the keywords strict mode refuses appears.
fn check_strict(provider: Provider, name: &str, schema: &Value, path: &str) {
    const REFUSED: &[&str] = &[
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "oneOf",
        "patternProperties",
        "default",
    ];
    let Some(object) = schema.as_object() else {
        return;
    };
    for key in object.keys() {
        assert!(
            !REFUSED.contains(&key.as_str()),
            "{provider}: {name}{path} keeps `{key}`"
        );
    }
    if object.get("type") == Some(&json!("object")) || object.contains_key("properties") {
        assert_eq!(
            object.get("additionalProperties"),
            Some(&json!(false)),
            "{provider}: {name}{path}"
        );
        let properties: Vec<&String> = object["properties"].as_object().unwrap().keys().collect();
        let required: Vec<&str> = object["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        assert_eq!(
            properties, required,
            "{provider}: {name}{path} requires every property"
        );
    }
    for (key, value) in object {
        match value {
            Value::Object(_) => check_strict(provider, name, value, &format!("{path}/{key}")),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    check_strict(provider, name, item, &format!("{path}/{key}/{i}"));
                }
            }
            _ => {}
        }
    }
}

/// Checks a schema for Anthropic's strict tool use by its published limits ("JSON Schema
/// limitations", <https://docs.anthropic.com/en/docs/build-with-claude/structured-outputs>):
/// only the supported keywords, each object closed (`additionalProperties: false`) and
/// requiring only properties it has, `enum`s of primitives, local `$ref`s, no `$ref` under
/// `allOf`, the listed string formats, `minItems` 0 or 1, simple `pattern`s, and no recursion.
fn check_anthropic_strict(name: &str, schema: &Value) {
    const SUPPORTED: &[&str] = &[
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "allOf",
        "$ref",
        "$defs",
        "definitions",
        "default",
        "description",
        "title",
        "format",
        "minItems",
        "pattern",
    ];
    const FORMATS: &[&str] = &[
        "date-time",
        "time",
        "date",
        "duration",
        "email",
        "hostname",
        "uri",
        "ipv4",
        "ipv6",
        "uuid",
    ];
    fn walk(name: &str, schema: &Value, path: &str, under_all_of: bool) {
        let Some(object) = schema.as_object() else {
            panic!("anthropic: {name}{path} is not a schema object");
        };
        let at = |key: &str| format!("anthropic: {name}{path}/{key}");
        for (key, value) in object {
            assert!(
                SUPPORTED.contains(&key.as_str()),
                "{} is not supported",
                at(key)
            );
            match key.as_str() {
                "$ref" => {
                    assert!(!under_all_of, "{}: `$ref` under `allOf`", at(key));
                    assert!(value.as_str().unwrap().starts_with('#'), "{}", at(key));
                }
                "enum" => assert!(
                    value
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|v| !v.is_object() && !v.is_array()),
                    "{}: complex enum value",
                    at(key)
                ),
                "format" => assert!(
                    FORMATS.contains(&value.as_str().unwrap()),
                    "{}: format {value}",
                    at(key)
                ),
                "minItems" => assert!(value.as_u64().unwrap() <= 1, "{}", at(key)),
                "pattern" => {
                    let pattern = value.as_str().unwrap();
                    for refused in ["(?=", "(?!", "(?<=", "(?<!", "\\b", "\\B", "\\1"] {
                        assert!(!pattern.contains(refused), "{}: {pattern}", at(key));
                    }
                }
                "properties" | "$defs" | "definitions" => {
                    for (member, sub) in value.as_object().unwrap() {
                        walk(name, sub, &format!("{path}/{key}/{member}"), under_all_of);
                    }
                }
                "items" => walk(name, value, &format!("{path}/items"), under_all_of),
                "anyOf" | "allOf" => {
                    for (i, option) in value.as_array().unwrap().iter().enumerate() {
                        let inner = under_all_of || key == "allOf";
                        walk(name, option, &format!("{path}/{key}/{i}"), inner);
                    }
                }
                _ => {}
            }
        }
        if object.get("type") == Some(&json!("object")) || object.contains_key("properties") {
            assert_eq!(
                object.get("additionalProperties"),
                Some(&json!(false)),
                "anthropic: {name}{path} must close its keys"
            );
            let properties = object["properties"].as_object().unwrap();
            for required in object
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                assert!(
                    properties.contains_key(required.as_str().unwrap()),
                    "anthropic: {name}{path} requires {required}, which it does not have"
                );
            }
        }
    }
    walk(name, schema, "", false);
    // No recursion: the definitions, by the definitions their schemas name, form no circle.
    // Definitions that name none are taken away until none are left, or a circle is.
    let mut refs: Vec<(String, Vec<String>)> = Vec::new();
    for key in ["$defs", "definitions"] {
        for (def, sub) in schema
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let text = sub.to_string();
            let named = text
                .split("\"$ref\":\"")
                .skip(1)
                .map(|rest| rest.split('"').next().unwrap().to_owned())
                .collect();
            refs.push((format!("#/{key}/{def}"), named));
        }
    }
    assert!(
        !schema.to_string().contains("\"$ref\":\"#\""),
        "anthropic: {name} refers to its root"
    );
    while !refs.is_empty() {
        let before = refs.len();
        let names: Vec<String> = refs.iter().map(|(def, _)| def.clone()).collect();
        refs.retain(|(_, named)| named.iter().any(|n| names.contains(n)));
        assert!(
            refs.len() < before,
            "anthropic: {name} is recursive: {refs:?}"
        );
    }
}

/// Anthropic's limits on one request ("Schema complexity limits", same page): at most 20
/// strict tools, 24 optional parameters and 16 parameters with union types (`anyOf` or a type
/// array) across all of them.
fn check_anthropic_limits(tools: &Value) {
    fn count(schema: &Value, optional: &mut usize, unions: &mut usize) {
        match schema {
            Value::Object(object) => {
                if let Some(Value::Object(properties)) = object.get("properties") {
                    let required = object.get("required").and_then(Value::as_array);
                    for (key, member) in properties {
                        if !required.is_some_and(|r| r.contains(&json!(key))) {
                            *optional += 1;
                        }
                        if member.get("anyOf").is_some() || member["type"].is_array() {
                            *unions += 1;
                        }
                    }
                }
                object.values().for_each(|v| count(v, optional, unions));
            }
            Value::Array(items) => items.iter().for_each(|v| count(v, optional, unions)),
            _ => {}
        }
    }
    let list = tools.as_array().unwrap();
    let (mut optional, mut unions) = (0, 0);
    for tool in list {
        count(&tool["input_schema"], &mut optional, &mut unions);
    }
    assert!(list.len() <= 20, "anthropic: {} strict tools", list.len());
    assert!(optional <= 24, "anthropic: {optional} optional parameters");
    assert!(unions <= 16, "anthropic: {unions} union-typed parameters");
}

#[test]
fn strict_lists_obey_the_strict_rules_or_name_what_they_cannot_express() {
    let registry = registry();
    for provider in [Provider::OpenAi, Provider::Responses, Provider::Anthropic] {
        let tools = registry
            .provider_tools(provider.strict(), &Scope::trusted())
            .unwrap_or_else(|error| panic!("{provider}: {error}"));
        let list = tools.as_array().unwrap();
        assert_eq!(list.len(), registry.len());
        for (tool, (name, schema)) in list.iter().zip(definitions(provider, &tools)) {
            let strict = match provider {
                Provider::OpenAi => &tool["function"]["strict"],
                _ => &tool["strict"],
            };
            assert_eq!(strict, &json!(true), "{provider}: {name}");
            match provider {
                Provider::Anthropic => check_anthropic_strict(&name, &schema),
                _ => check_strict(provider, &name, &schema, ""),
            }
            if let Err(error) = jsonschema::meta::validate(&schema) {
                panic!("{provider}: {name}: {error}");
            }
        }
        if provider == Provider::Anthropic {
            check_anthropic_limits(&tools);
        }
        insta::assert_json_snapshot!(format!("tools_{provider}_strict"), tools);
    }
    // A map argument cannot be strict: the error names the tool and the place.
    let spec = ToolSpec::builder("labels.set")
        .input_schema(json!({
            "type": "object",
            "properties": { "labels": { "type": "object", "additionalProperties": { "type": "string" } } }
        }))
        .build()
        .unwrap();
    registry.register(spec, None).unwrap();
    let error = registry
        .provider_tools(Provider::OpenAi.strict(), &Scope::trusted())
        .unwrap_err();
    assert_eq!(error.tool, "labels.set");
    assert_eq!(error.path, "/properties/labels/additionalProperties");
    // Without strict mode it is listed as it is.
    let plain = registry.provider_tools(Provider::OpenAi, &Scope::trusted());
    assert_eq!(plain.as_array().unwrap().len(), registry.len());
}

#[tokio::test]
async fn arguments_written_under_the_strict_schema_make_the_same_call() {
    let registry = registry();
    let ctx = Ctx::new();
    let strict = registry
        .provider_tools(Provider::OpenAi.strict(), &Scope::trusted())
        .unwrap();
    let weather = strict
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "weather__now")
        .unwrap();
    let parameters = &weather["function"]["parameters"];
    assert_eq!(parameters["required"], json!(["city", "units"]));
    assert_eq!(
        parameters["properties"]["units"]["enum"],
        json!(["c", "f", null])
    );
    // What a strict model sends, with null for the optional argument, and what a plain one
    // sends.
    let strict_call = registry
        .call("weather__now", r#"{"city": "Oslo", "units": null}"#, &ctx)
        .await
        .unwrap();
    let plain_call = registry
        .call("weather.now", r#"{"city": "Oslo"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(strict_call.content, plain_call.content);
}

/// A definition's declarations: Gemini's one tool holds them all.
fn declarations(provider: Provider, tools: &Value) -> Vec<Value> {
    match provider {
        Provider::Gemini => tools[0]["functionDeclarations"].as_array().unwrap().clone(),
        _ => tools.as_array().unwrap().clone(),
    }
}

#[test]
fn every_providers_definitions_read_back_into_specs_that_write_them_again() {
    let registry = registry();
    for provider in [
        Provider::OpenAi,
        Provider::Responses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Mcp,
    ] {
        let written = registry.provider_tools(provider, Listing::every());
        let fresh = Registry::builder().without_linked().build().unwrap();
        for definition in declarations(provider, &written) {
            let imported = ToolSpec::from_provider(&definition)
                .unwrap_or_else(|e| panic!("{provider:?}: {e}: {definition}"));
            assert_eq!(imported.provider, provider, "{definition}");
            if provider == Provider::Responses {
                assert_eq!(imported.kept["strict"], false, "kept, not lost");
            }
            fresh
                .register(
                    imported.spec,
                    ToolHandler::new(|_args: Value, _ctx: Ctx| async move {
                        Ok::<_, String>(Value::Null)
                    }),
                )
                .unwrap();
        }
        let again = fresh.provider_tools(provider, Listing::every());
        assert_eq!(
            declarations(provider, &again),
            declarations(provider, &written),
            "{provider:?}"
        );
    }
}

#[test]
fn a_foreign_definition_is_read_with_its_normalisation_and_its_extra_keys_reported() {
    // Gemini as its SDK writes it: upper-case types, `nullable`.
    let gemini = json!({
        "name": "find_flights",
        "description": "Find flights.",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "from": {"type": "STRING"},
                "stops": {"type": "INTEGER", "nullable": true},
                "legs": {"type": "ARRAY", "items": {"type": "STRING"}}
            },
            "required": ["from"]
        }
    });
    let imported = ToolSpec::from_provider(&gemini).unwrap();
    assert_eq!(imported.provider, Provider::Gemini);
    assert_eq!(
        imported.spec.input_schema(),
        &json!({
            "type": "object",
            "properties": {
                "from": {"type": "string"},
                "stops": {"type": ["integer", "null"]},
                "legs": {"type": "array", "items": {"type": "string"}}
            },
            "required": ["from"]
        })
    );
    // MCP: the hints become annotations, a title and `_meta` are reported as kept.
    let mcp = json!({
        "name": "notes.delete",
        "title": "Delete a note",
        "description": "Delete a note.",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}},
        "annotations": {"destructiveHint": true, "title": "Delete"},
        "execution": {"taskSupport": "optional"},
        "_meta": {"vendor/x": 1}
    });
    let imported = ToolSpec::from_provider(&mcp).unwrap();
    assert_eq!(imported.spec.tool_name(), "notes.delete");
    assert_eq!(imported.spec.annotations().destructive, Some(true));
    assert_eq!(
        imported.spec.annotations().read_only,
        Some(false),
        "MCP's default, written out"
    );
    assert_eq!(
        imported.spec.task_support(),
        tool_registry::def::TaskSupport::Optional
    );
    assert_eq!(imported.kept["title"], "Delete a note");
    assert_eq!(imported.kept["annotations.title"], "Delete");
    assert_eq!(imported.kept["_meta"], json!({"vendor/x": 1}));
    // Anthropic's `defer_loading` is the spec's; `cache_control` is kept.
    let anthropic = json!({
        "name": "search_docs",
        "description": "Search the docs.",
        "input_schema": {"type": "object", "properties": {"q": {"type": "string"}}},
        "defer_loading": true,
        "cache_control": {"type": "ephemeral"}
    });
    let imported = ToolSpec::from_provider(&anthropic).unwrap();
    assert!(imported.spec.defer_loading());
    assert_eq!(imported.kept["cache_control"], json!({"type": "ephemeral"}));
    // What no shape has is an error naming it; so is a schema the registry cannot use, as for
    // any spec.
    let unknown = ToolSpec::from_provider(&json!({
        "type": "function",
        "function": {"name": "a", "parameters": {"type": "object"}, "strictt": true}
    }))
    .unwrap_err();
    assert!(
        unknown.to_string().contains("`function.strictt` is no key"),
        "{unknown}"
    );
    let bad_schema = ToolSpec::from_provider(&json!({
        "name": "a", "input_schema": {"type": "object", "properties": {"x": {"type": 5}}}
    }))
    .unwrap_err();
    assert!(
        matches!(bad_schema, tool_registry::spec::SpecError::Schema { .. }),
        "{bad_schema}"
    );
    let none = ToolSpec::from_provider(&json!({"name": "a"})).unwrap_err();
    assert!(none.to_string().contains("no provider's shape"), "{none}");
}

/// The `o200k_base.tiktoken` file, written back from the vocabulary `tiktoken-rs` carries: each
/// token's bytes in base64 and its rank, a line each (tiktoken checks the file's SHA-256, so a
/// copy that differs in a byte is refused).
fn o200k_base_file() -> String {
    use base64::Engine as _;
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let mut file = String::new();
    for rank in 0..199_998u32 {
        let bytes = bpe.decode_bytes(&[rank]).unwrap();
        file.push_str(&base64::engine::general_purpose::STANDARD.encode(bytes));
        file.push_str(&format!(" {rank}\n"));
    }
    file
}

/// The number of `o200k_base` tokens Python's `tiktoken` gives each of `texts`, reading the
/// vocabulary offline from the copy `tiktoken-rs` carries.
fn tiktoken_counts(texts: &[String]) -> Vec<usize> {
    const COUNT: &str = "import sys, json, tiktoken\n\
        e = tiktoken.get_encoding('o200k_base')\n\
        print(json.dumps([len(e.encode_ordinary(t)) for t in json.load(sys.stdin)]))\n";
    let answer = tiktoken_run(COUNT, &serde_json::to_string(texts).unwrap());
    serde_json::from_str(&answer).unwrap()
}

/// `1,234`, as the catalog writes a count.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// What the OpenAI cookbook's `num_tokens_for_tools` (section 7 of "How to count tokens with
/// tiktoken", the gpt-4o constants) counts for an OpenAI Chat Completions `tools` list, the
/// messages left out; a property without a `type` or `description` counts them as empty.
fn cookbook_count(tools: &Value) -> usize {
    const COOKBOOK: &str = "import sys, json, tiktoken\n\
        encoding = tiktoken.get_encoding('o200k_base')\n\
        functions = json.load(sys.stdin)\n\
        func_init, prop_init, prop_key, enum_init, enum_item, func_end = 7, 3, 3, -3, 3, 12\n\
        n = 0\n\
        for f in functions:\n\
        \x20   n += func_init\n\
        \x20   function = f['function']\n\
        \x20   f_desc = function.get('description', '')\n\
        \x20   if f_desc.endswith('.'):\n\
        \x20       f_desc = f_desc[:-1]\n\
        \x20   n += len(encoding.encode(function['name'] + ':' + f_desc))\n\
        \x20   properties = function.get('parameters', {}).get('properties', {})\n\
        \x20   if len(properties) > 0:\n\
        \x20       n += prop_init\n\
        \x20       for key in list(properties.keys()):\n\
        \x20           n += prop_key\n\
        \x20           p_type = properties[key].get('type', '')\n\
        \x20           p_desc = properties[key].get('description', '')\n\
        \x20           if 'enum' in properties[key].keys():\n\
        \x20               n += enum_init\n\
        \x20               for item in properties[key]['enum']:\n\
        \x20                   n += enum_item\n\
        \x20                   n += len(encoding.encode(str(item)))\n\
        \x20           if p_desc.endswith('.'):\n\
        \x20               p_desc = p_desc[:-1]\n\
        \x20           n += len(encoding.encode(f'{key}:{p_type}:{p_desc}'))\n\
        if len(functions) > 0:\n\
        \x20   n += func_end\n\
        print(n)\n";
    tiktoken_run(COOKBOOK, &tools.to_string())
        .trim()
        .parse()
        .unwrap()
}

/// Runs `script` with Python's `tiktoken`, `input` on its standard input, the `o200k_base`
/// vocabulary read offline from the copy `tiktoken-rs` carries: its output.
fn tiktoken_run(script: &str, input: &str) -> String {
    let cache = tempfile::tempdir().unwrap();
    // tiktoken keeps a downloaded vocabulary under the SHA-1 of its address.
    let name = "fb374d419588a4632f3f557e76b4b70aebbca790";
    std::fs::write(cache.path().join(name), o200k_base_file()).unwrap();
    venv::run(
        &venv::TIKTOKEN,
        script,
        input,
        &[("TIKTOKEN_CACHE_DIR", cache.path())],
    )
}

#[test]
fn openai_token_counts_are_tiktokens_for_the_same_rendered_text() {
    use tool_registry::format::tokens;
    let registry = registry();
    for provider in [Provider::OpenAi, Provider::Responses] {
        let list = registry.provider_tools(provider, Listing::every());
        let text = tokens::rendered(provider, &list).unwrap();
        assert!(
            text.starts_with("# Tools\n\n## functions\n\nnamespace functions {"),
            "{text}"
        );
        let count = registry.token_count(provider, Listing::every());
        assert!(count.exact);
        assert_eq!(count.tools.len(), list.as_array().unwrap().len());
        assert_eq!(tiktoken_counts(&[text]), [count.total], "{provider:?}");
    }
    // The cookbook's Chat Completions count, as its own function gives it: this crate's tools,
    // and a list with an enum, a list of types and a property without a description.
    let list = registry.provider_tools(Provider::OpenAi, Listing::every());
    let count = registry.token_count(Provider::OpenAi, Listing::every());
    assert_eq!(count.chat_completions, Some(cookbook_count(&list)));
    let odd = json!([{"type": "function", "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location.",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit.", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": ["integer", "null"]},
            "level": {"enum": [1, 2, true]}
        }, "required": ["location"]}}}]);
    let counted = tokens::count(Provider::OpenAi, &odd).chat_completions;
    assert_eq!(counted, Some(cookbook_count(&odd)));
    // The cookbook's own example: its weather tool and two messages are 101 prompt tokens for
    // gpt-4o, counted by the API; the messages are its `num_tokens_from_messages` (3 per
    // message, its role and content, 3 for the reply's start).
    let weather = json!([{"type": "function", "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given location",
        "parameters": {"type": "object", "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            "unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}
        }, "required": ["location"]}}}]);
    assert_eq!(
        tokens::count(Provider::OpenAi, &weather).chat_completions,
        Some(cookbook_count(&weather))
    );

    // The estimates say so.
    let anthropic = registry.token_count(Provider::Anthropic, Listing::every());
    assert!(!anthropic.exact && anthropic.method.contains("no tokenizer"));

    // `toolreg tokens` on the reference tools: the same total as tiktoken, and a budget that
    // fails past it.
    let reference = Registry::builder().build().unwrap();
    let list = reference.provider_tools(Provider::OpenAi, &Scope::trusted());
    let expected = tiktoken_counts(&[tokens::rendered(Provider::OpenAi, &list).unwrap()])[0];
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolreg"))
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap()
    };
    let printed = run(&["tokens", "--provider", "openai"]);
    assert!(printed.status.success(), "{printed:?}");
    let text = String::from_utf8_lossy(&printed.stdout);
    let total: usize = text
        .lines()
        .find_map(|line| line.strip_prefix("total"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(total, expected, "{text}");
    let chat = text
        .lines()
        .find_map(|line| line.strip_prefix("chat completions"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(chat, cookbook_count(&list), "{text}");
    // The catalog shows the same counts, each tool's and the list's.
    let catalog = run(&["catalog", "--format", "json"]);
    let catalog: Value = serde_json::from_slice(&catalog.stdout).unwrap();
    assert_eq!(catalog["tokens"][0]["provider"], "openai");
    assert_eq!(catalog["tokens"][0]["total"], expected);
    let markdown = String::from_utf8(run(&["catalog"]).stdout).unwrap();
    assert!(
        markdown.contains(&format!("{} for OpenAI", grouped(expected))),
        "{markdown}"
    );
    assert!(markdown.contains("- **Prompt tokens:** "), "{markdown}");
    let within = run(&["tokens", "--budget", &expected.to_string()]);
    assert_eq!(within.status.code(), Some(0));
    let past = run(&["tokens", "--budget", &(expected - 1).to_string()]);
    assert_eq!(past.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&past.stderr).contains("past the budget"));
}
