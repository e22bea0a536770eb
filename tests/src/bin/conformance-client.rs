//! The MCP client of the official conformance suite's client scenarios
//! (`conformance-client URL`, the scenario in `MCP_CONFORMANCE_SCENARIO`, its credentials in
//! `MCP_CONFORMANCE_CONTEXT`), written as an application would write it: the server at `URL`
//! mounted with [`McpModule`] into a registry of its own, authorized with
//! [`tool_registry::mcp::oauth`] where the scenario protects it, and every tool it lists called
//! through the registry with arguments its schema asks for.
//!
//! The person who would approve in a browser is [`Headless`]: it asks for the authorization
//! URL and takes the redirect's `Location` without following it, as the suite's authorization
//! server approves at once.

use std::process::ExitCode;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tool_registry::call::{Asking, ClientLink, Form, FormAnswer, LogLevel};
use tool_registry::mcp::McpModule;
use tool_registry::mcp::oauth::{Browser, OAuth};
use tool_registry::{Ctx, Registry, Scope};

/// The client's metadata document, its id where the authorization server takes such ids.
const METADATA_DOCUMENT: &str = "https://conformance-test.local/client-metadata.json";

/// Where the authorization server sends the person back.
const REDIRECT: &str = "http://localhost:3000/callback";

/// A browser that follows no redirect: the authorization server's answer names the callback.
struct Headless;

impl Browser for Headless {
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, String>> {
        Box::pin(async move {
            let http = reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|error| error.to_string())?;
            let answer = http
                .get(&url)
                .send()
                .await
                .map_err(|error| error.to_string())?;
            answer
                .headers()
                .get("location")
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned)
                .ok_or_else(|| format!("the authorization server answered {}", answer.status()))
        })
    }
}

/// The person behind the client, who accepts every question a mounted server asks with a
/// value of its type for each field the form requires.
struct Person;

impl ClientLink for Person {
    fn log(&self, level: LogLevel, _logger: Option<&str>, data: Value) {
        eprintln!("{level}: {data}");
    }

    fn ask(&self, form: Form) -> Asking<FormAnswer> {
        let Value::Object(content) = arguments_for(&Value::Object(form.schema().clone())) else {
            unreachable!("arguments are an object")
        };
        Box::pin(std::future::ready(Ok(FormAnswer::Accepted(content))))
    }
}

/// The scenario's context: credentials the suite registered beforehand, the calls to make.
fn context() -> Map<String, Value> {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn field(context: &Map<String, Value>, key: &str) -> Result<String, String> {
    context
        .get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("the scenario's context has no `{key}`"))
}

/// How the scenario's server is authorized, if it is protected.
fn authorization(scenario: &str) -> Result<Option<OAuth>, String> {
    let context = context();
    let code = || OAuth::authorization_code(REDIRECT, Headless).client_name("conformance-client");
    Ok(match scenario {
        "auth/client-credentials-basic" => Some(OAuth::client_credentials(
            field(&context, "client_id")?,
            field(&context, "client_secret")?,
        )),
        "auth/client-credentials-jwt" => Some(OAuth::private_key_jwt(
            field(&context, "client_id")?,
            field(&context, "private_key_pem")?,
            context
                .get("signing_algorithm")
                .and_then(Value::as_str)
                .unwrap_or("ES256"),
        )?),
        "auth/pre-registration" => Some(
            code()
                .client_id(field(&context, "client_id")?)
                .client_secret(field(&context, "client_secret")?),
        ),
        auth if auth.starts_with("auth/") => Some(code().metadata_document(METADATA_DOCUMENT)),
        _ => None,
    })
}

/// Arguments for a tool's input schema: each required property a value of its type.
fn arguments_for(schema: &Value) -> Value {
    let mut arguments = Map::new();
    let required = schema["required"].as_array().cloned().unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("number" | "integer") => json!(if arguments.is_empty() { 2 } else { 3 }),
            Some("boolean") => json!(true),
            Some("object") => json!({}),
            Some("array") => json!([]),
            _ => json!("test"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}

async fn run(url: &str, scenario: &str) -> Result<(), String> {
    let registry = Arc::new(
        Registry::builder()
            .without_linked()
            .build()
            .map_err(|error| error.to_string())?,
    );
    let module = match authorization(scenario)? {
        Some(oauth) => McpModule::connect_oauth(registry.clone(), "server", url, oauth).await,
        None => McpModule::connect(registry.clone(), "server", url, None).await,
    }
    .map_err(|error| error.to_string())?;
    // The scenarios whose servers answer `tools/list` alone, or serve tools only to be listed.
    if matches!(
        scenario,
        "json-schema-ref-no-deref"
            | "auth/client-credentials-basic"
            | "auth/client-credentials-jwt"
            | "auth/pre-registration"
    ) {
        return Ok(());
    }
    let ctx = Ctx::for_scope(Scope::trusted()).with_client(Arc::new(Person));
    // The calls the scenario names, else every tool with arguments its schema asks for.
    let named: Vec<(String, Value)> = (context()
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(|call| {
        Some((
            format!("server.{}", call["name"].as_str()?),
            call["arguments"].clone(),
        ))
    })
    .collect();
    let calls = if scenario == "json-schema-2020-12-preservation" {
        // The schema of a mounted tool, as the registry keeps it, echoed back to its server.
        let schema = registry
            .registration("server.json_schema_2020_12_tool")
            .map(|registration| registration.tool.spec().input_schema().clone())
            .ok_or("the server lists no `json_schema_2020_12_tool`")?;
        vec![(
            "server.json_schema_echo".to_owned(),
            json!({ "schema": schema }),
        )]
    } else if named.is_empty() {
        (module.tools().into_iter())
            .map(|name| {
                let schema = registry
                    .registration(&name)
                    .map(|registration| registration.tool.spec().input_schema().clone())
                    .unwrap_or_default();
                (name, arguments_for(&schema))
            })
            .collect()
    } else {
        named
    };
    for (name, arguments) in calls {
        match registry.call(&name, arguments, &ctx).await {
            Ok(result) => eprintln!("{name}: {}", result.content),
            Err(error) => eprintln!("{name}: {error}"),
        }
    }
    // Its resources read and its prompts got, through the registry.
    for uri in module.resources() {
        if let Err(error) = registry.read_resource(&uri, &ctx).await {
            eprintln!("{uri}: {error}");
        }
    }
    for prompt in module.prompts() {
        if let Err(error) = registry.get_prompt(&prompt, Default::default(), &ctx).await {
            eprintln!("{prompt}: {error}");
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    let Some(url) = std::env::args().nth(1) else {
        eprintln!("usage: conformance-client URL (the scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    match run(&url, &scenario).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("{scenario}: {error}");
            ExitCode::FAILURE
        }
    }
}
