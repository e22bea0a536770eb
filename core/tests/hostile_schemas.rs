//! Hostile schemas through every public path that reads one: a run-time registration, every
//! provider's tool list (plain and strict), a call with lenient and with strict decoding, the
//! parser with a tool list, and `toolreg parse --tools`. Each answers with a bounded result or a
//! typed error naming the tool and the place; none expands the schema's `$ref`s path by path.
//!
//! A run-time spec with the worst shapes is refused when it is built (what validating one value
//! against it would cost is measured then); compiled tools, whose schemas are the program's own,
//! carry every shape here through the listings and calls.

use std::borrow::Cow;
use std::path::PathBuf;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_registry::ToolSpec;
use tool_registry::format::Provider;
use tool_registry::parse::{self, Options, ToolList};
use tool_registry::spec::ToolHandler;
use tool_registry::spec::{MAX_SCHEMA_NODES, SpecError};
use tool_registry::{Ctx, Registry, Scope, tool};
use tool_registry_json::testing;

/// `depth` definitions, each an `anyOf` of `k` `$ref`s to the next, the last a string; the
/// arguments `value` (the chain) and `count`.
fn chain(depth: usize, k: usize) -> Value {
    with_count(testing::chain(depth, k))
}

/// One definition whose `anyOf` is a string and `k` `$ref`s to itself; the arguments `value`
/// and `count`.
fn self_referring(k: usize) -> Value {
    with_count(testing::self_referring(k))
}

/// The schema with an integer argument `count` beside `value`.
fn with_count(mut schema: Value) -> Value {
    schema["properties"]["count"] = json!({ "type": "integer" });
    schema
}

/// `n` definitions; `value` refers to the last.
fn many_definitions(n: usize) -> Value {
    let defs: Map<String, Value> = (0..n)
        .map(|i| {
            (
                format!("D{i}"),
                json!({ "type": "string", "maxLength": i + 1 }),
            )
        })
        .collect();
    json!({
        "type": "object",
        "properties": { "value": { "$ref": format!("#/$defs/D{}", n - 1) }, "count": { "type": "integer" } },
        "$defs": defs,
    })
}

fn shapes() -> Vec<(String, Value)> {
    let mut shapes: Vec<(String, Value)> = (1..=10)
        .map(|k| (format!("chain_{k}"), chain(10, k)))
        .collect();
    shapes.extend((1..=8).map(|k| (format!("self_{k}"), self_referring(k))));
    shapes
}

/// Arguments of a compiled tool whose schema is one of the shapes.
macro_rules! hostile_args {
    ($($ty:ident = $schema:expr;)*) => {$(
        #[derive(Deserialize)]
        struct $ty {
            value: String,
            count: Option<i64>,
        }
        impl JsonSchema for $ty {
            fn schema_name() -> Cow<'static, str> {
                stringify!($ty).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                Schema::try_from($schema).unwrap()
            }
        }
    )*};
}

hostile_args! {
    Chain3 = chain(10, 3);
    Chain10 = chain(10, 10);
    SelfReferring8 = self_referring(8);
    ManyDefinitions = many_definitions(10_000);
}

/// Echo the value.
#[tool(name = "compiled.chain_3")]
fn chain_3(#[args] args: Chain3) -> Value {
    json!({ "value": args.value, "count": args.count })
}

/// Echo the value.
#[tool(name = "compiled.chain_10")]
fn chain_10(#[args] args: Chain10) -> Value {
    json!({ "value": args.value, "count": args.count })
}

/// Echo the value.
#[tool(name = "compiled.self_8")]
fn self_8(#[args] args: SelfReferring8) -> Value {
    json!({ "value": args.value, "count": args.count })
}

/// Echo the value.
#[tool(name = "compiled.many")]
fn many(#[args] args: ManyDefinitions) -> Value {
    json!({ "value": args.value, "count": args.count })
}

/// The compiled tools, whose schemas are every shape.
fn compiled(strict: bool) -> Registry {
    Registry::builder()
        .strict_arguments(strict)
        .build()
        .unwrap()
}

/// The run-time tools whose specs are accepted (the chain with one or two options per level).
fn registered(strict: bool) -> Registry {
    let registry = Registry::builder()
        .without_linked()
        .strict_arguments(strict)
        .build()
        .unwrap();
    for k in 1..=2 {
        let spec = ToolSpec::builder(format!("hostile.chain_{k}"))
            .description("Echo the value.")
            .input_schema(chain(10, k))
            .build()
            .unwrap();
        registry
            .register(
                spec,
                ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
            )
            .unwrap();
    }
    registry
}

/// The schemas in a value, as the walk counts what it writes.
fn size(value: &Value) -> usize {
    match value {
        Value::Object(map) => 1 + map.values().map(size).sum::<usize>(),
        Value::Array(items) => items.iter().map(size).sum(),
        _ => 0,
    }
}

#[test]
fn ten_thousand_definitions_are_refused_when_the_spec_is_built() {
    let error = ToolSpec::builder("hostile.many")
        .input_schema(many_definitions(10_000))
        .build()
        .unwrap_err();
    let SpecError::Schema { tool, problem, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(tool, "hostile.many");
    assert!(problem.contains("at `/$defs/D"), "{problem}");
    assert!(
        problem.contains(&format!("more than {MAX_SCHEMA_NODES} schemas")),
        "{problem}"
    );
    // The same schema read from JSON is refused the same way.
    let spec = json!({ "tool_name": "hostile.many", "input_schema": many_definitions(10_000) });
    let error = serde_json::from_value::<ToolSpec>(spec).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("cannot be read within the budget"),
        "{error}"
    );
    // A thousand are fine.
    ToolSpec::builder("hostile.some")
        .input_schema(many_definitions(1_000))
        .build()
        .unwrap();
}

#[test]
fn a_schema_nested_too_deep_through_its_refs_is_refused_with_the_place() {
    let defs: Map<String, Value> = (0..40)
        .map(|i| {
            let next = json!({ "$ref": format!("#/$defs/N{}", i + 1) });
            (
                format!("N{i}"),
                json!({ "type": "object", "properties": { "next": next } }),
            )
        })
        .chain([("N40".to_owned(), json!({ "type": "string" }))])
        .collect();
    let schema = json!({ "type": "object", "properties": { "top": { "$ref": "#/$defs/N0" } }, "$defs": defs });
    let error = ToolSpec::builder("hostile.deep")
        .input_schema(schema)
        .build()
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("tool `hostile.deep`"), "{text}");
    assert!(
        text.contains("at `/properties/top/$ref/properties/next"),
        "{text}"
    );
    assert!(text.contains("more than 64 levels"), "{text}");
}

#[test]
fn run_time_specs_of_the_costly_shapes_are_refused_with_the_place() {
    for (name, schema) in shapes() {
        let built = ToolSpec::builder(format!("hostile.{name}"))
            .input_schema(schema)
            .build();
        match name.as_str() {
            "chain_1" | "chain_2" => assert!(built.is_ok(), "{name}"),
            _ => {
                let text = built.unwrap_err().to_string();
                assert!(text.contains(&format!("tool `hostile.{name}`")), "{text}");
                let why = if name.starts_with("self") {
                    "`#/$defs/S` applies the schema to the same value again"
                } else {
                    "validating one value could apply more than 10000 schemas at one place"
                };
                assert!(text.contains(why), "{text}");
                assert!(text.contains("at `/$defs/"), "{text}");
            }
        }
    }
}

#[test]
fn every_provider_lists_the_hostile_shapes_with_a_bounded_definition() {
    let scope = Scope::trusted();
    for registry in [compiled(false), registered(false)] {
        for provider in Provider::ALL {
            let list = registry.provider_tools(provider, &scope).to_value();
            let bytes = list.to_string().len();
            assert!(bytes < 1 << 20, "{provider:?}: {bytes} bytes");
            if provider == Provider::Gemini {
                for declaration in list[0]["functionDeclarations"].as_array().unwrap() {
                    let name = declaration["name"].as_str().unwrap();
                    match declaration.get("parameters") {
                        // Inlined within the budget: of 10,000 definitions, the one used.
                        Some(parameters) => {
                            assert!(size(parameters) <= MAX_SCHEMA_NODES, "{name}");
                            let inlined = ["chain_1", "chain_2", "many"];
                            assert!(inlined.iter().any(|n| name.ends_with(n)), "{name}");
                        }
                        // Past the budget, or recursive: the JSON Schema as given.
                        None => assert!(declaration["parametersJsonSchema"]["$defs"].is_object()),
                    }
                }
            }
            // Strict mode: OpenAI's keeps `$ref`s as they are; Anthropic's refuses recursion or
            // a schema past the budget, and names the tool and the place.
            match (provider, registry.provider_tools(provider.strict(), &scope)) {
                (Provider::Anthropic, Err(error)) => {
                    assert!(error.tool.starts_with("compiled."), "{error}");
                    assert!(error.path.starts_with("/$defs/"), "{error}");
                }
                (_, Ok(list)) => assert!(list.to_value().to_string().len() < 1 << 22),
                (Provider::OpenAi | Provider::Responses, Err(error)) => {
                    // 10,000 definitions are more than a transform writes.
                    assert_eq!(error.tool, "compiled.many", "{error}");
                    assert!(
                        error.construct.contains("more than 10000 schemas"),
                        "{error}"
                    );
                }
                (provider, Err(error)) => panic!("{provider:?}: {error}"),
            }
        }
    }
}

#[tokio::test]
async fn calls_decode_the_hostile_shapes_leniently_and_strictly() {
    let ctx = Ctx::new();
    for strict in [false, true] {
        for registry in [compiled(strict), registered(strict)] {
            for tool in registry.tools(&Scope::trusted()) {
                let name = tool.name();
                let result = registry
                    .call(name, r#"{"value": "text", "count": "7"}"#, &ctx)
                    .await;
                if strict {
                    let error = result.unwrap_err();
                    assert_eq!(error.code(), "invalid_arguments", "{name}: {error}");
                } else {
                    let result = result.unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(result.content, json!({"value": "text", "count": 7}));
                }
                // A number where the definitions end in a string stays wrong.
                let error = registry
                    .call(name, r#"{"value": 5}"#, &ctx)
                    .await
                    .unwrap_err();
                assert_eq!(error.code(), "invalid_arguments", "{name}");
            }
        }
    }
}

#[test]
fn the_parser_types_values_by_the_hostile_shapes() {
    let mut tools = ToolList::default();
    for (name, schema) in shapes() {
        tools.add(name, schema);
    }
    tools.add("many", many_definitions(10_000));
    for name in tools.names().map(str::to_owned).collect::<Vec<_>>() {
        let text = format!(
            "<tool_call>\n<function={name}>\n<parameter=value>\n42\n</parameter>\n<parameter=count>\n3\n</parameter>\n</function>\n</tool_call>"
        );
        let parsed = parse::any_with(&text, &tools, Options::default());
        assert_eq!(parsed.calls.len(), 1, "{name}: {:?}", parsed.errors);
        // Declared a string (at the end of the chain): the text as written.
        assert_eq!(
            parsed.calls[0].arguments,
            json!({"value": "42", "count": 3}),
            "{name}"
        );
    }
}

#[test]
fn toolreg_parse_reads_a_tool_file_of_hostile_shapes() {
    let dir = tempfile::tempdir().unwrap();
    let file: PathBuf = dir.path().join("tools.json");
    let tools: Vec<Value> = [("self_8", self_referring(8)), ("chain_10", chain(10, 10))]
        .into_iter()
        .map(|(name, schema)| json!({"type": "function", "function": {"name": name, "parameters": schema}}))
        .collect();
    std::fs::write(&file, serde_json::to_string(&tools).unwrap()).unwrap();
    let input = dir.path().join("output.txt");
    std::fs::write(
        &input,
        "<function=self_8>\n<parameter=value>\n1\n</parameter>\n</function>\n<function=chain_10>\n<parameter=value>\ntrue\n</parameter>\n</function>",
    )
    .unwrap();
    let argv = [
        "toolreg",
        "parse",
        "--tools",
        file.to_str().unwrap(),
        "--input",
        input.to_str().unwrap(),
    ];
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = tool_registry::cli::run(argv, Registry::builder(), &mut out, &mut err);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    let value: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(
        value["calls"],
        json!([
            {"name": "self_8", "arguments": {"value": "1"}},
            {"name": "chain_10", "arguments": {"value": "true"}},
        ])
    );
}
