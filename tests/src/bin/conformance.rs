//! The tools of the MCP conformance suite's "everything server", written with the registry as
//! an application would, served over streamable HTTP: `conformance [ADDR]` (default
//! `127.0.0.1:0`, a free port) prints `listening on http://ADDR/mcp` and serves until Ctrl-C or
//! SIGTERM. `tests/tests/conformance.rs` runs the suite (`@modelcontextprotocol/conformance`)
//! against it.

use std::time::Duration;

use serde_json::{Value, json};
use tool_registry::call::{AskError, Form, FormAnswer, LogLevel, Sampling};
use tool_registry::content::{Audio, Content, Image, Resource};
use tool_registry::mcp::{Callers, McpServer};
use tool_registry::offer::PromptMessage;
use tool_registry::spec::ToolHandler;
use tool_registry::task::{InMemoryTaskStore, TaskLimits, Tasks};
use tool_registry::{Ctx, Registry, Scope, ToolError, ToolSpec, prompt, resource, tool};

/// A 1x1 red PNG.
const PNG: &[u8] = b"\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\xda\x63\xfc\xcf\xc0\xf0\x1f\x00\x05\x05\x02\x00\x5f\xc8\xf1\xd2\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82";

/// A WAV of one silent sample, 8 kHz mono 16-bit.
const WAV: &[u8] = b"\x52\x49\x46\x46\x26\x00\x00\x00\x57\x41\x56\x45\x66\x6d\x74\x20\x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00\x64\x61\x74\x61\x02\x00\x00\x00";

/// Answers with a simple text, for testing.
#[tool(read_only)]
async fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// Answers with an image (a 1x1 red PNG), for testing.
#[tool(read_only)]
async fn test_image_content() -> Image {
    Image::png(PNG)
}

/// Answers with audio (a WAV of one sample), for testing.
#[tool(read_only)]
async fn test_audio_content() -> Audio {
    Audio::new("audio/wav", WAV)
}

/// Answers with an embedded text resource, for testing.
#[tool(read_only)]
async fn test_embedded_resource() -> Resource {
    Resource::text(
        "test://embedded-resource",
        "This is an embedded resource content.",
    )
    .with_mime_type("text/plain")
}

/// Answers with text, an image and an embedded resource, for testing.
#[tool(read_only)]
async fn test_multiple_content_types() -> Content<String> {
    Content::value("Multiple content types test:".to_owned())
        .image(Image::png(PNG))
        .resource(
            Resource::text(
                "test://mixed-content-resource",
                r#"{"test":"data","value":123}"#,
            )
            .with_mime_type("application/json"),
        )
}

/// Logs three messages to the client while it runs, for testing.
#[tool(read_only)]
async fn test_tool_with_logging(ctx: &Ctx) -> String {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully".into()
}

/// Reports its progress three times while it runs, for testing.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: &Ctx) -> String {
    for step in [0, 50, 100] {
        ctx.progress(format!("Completed step {step} of 100"));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    "Tool with progress executed successfully".into()
}

/// Always fails, for testing how errors are answered.
#[tool(read_only)]
async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::failed(
        "This tool intentionally returns an error for testing",
    ))
}

/// Asks the client's model to answer a prompt, for testing sampling.
///
/// * `prompt` - What the model is asked.
#[tool(read_only)]
async fn test_sampling(ctx: &Ctx, prompt: String) -> Result<String, ToolError> {
    let sampled = ctx.sample(Sampling::new(prompt).max_tokens(100)).await?;
    Ok(format!(
        "LLM response: {}",
        sampled.text.unwrap_or_default()
    ))
}

/// `answer` as the suite's tools write it: the action and the fields.
fn answered(lead: &str, answer: FormAnswer) -> String {
    let action = answer.action();
    let content = match answer {
        FormAnswer::Accepted(fields) => Value::Object(fields),
        _ => json!({}),
    };
    format!("{lead}: action={action}, content={content}")
}

/// Asks the user for their name and email, for testing elicitation.
///
/// * `message` - What the user is asked.
#[tool(read_only)]
async fn test_elicitation(ctx: &Ctx, message: String) -> Result<String, ToolError> {
    let form = Form::new(
        message,
        json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            },
            "required": ["username", "email"]
        }),
    );
    ask(ctx, form, "User response").await
}

/// Asks the user to review a form whose fields have defaults (SEP-1034), for testing.
#[tool(read_only)]
async fn test_elicitation_sep1034_defaults(ctx: &Ctx) -> Result<String, ToolError> {
    let form = Form::new(
        "Please review and update the form fields with defaults",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active"
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true}
            },
            "required": []
        }),
    );
    ask(ctx, form, "Elicitation completed").await
}

/// Asks the user to choose from each kind of enum field (SEP-1330), for testing.
#[tool(read_only)]
async fn test_elicitation_sep1330_enums(ctx: &Ctx) -> Result<String, ToolError> {
    let form = Form::new(
        "Please select options from the enum fields",
        json!({
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"]
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"}
                    ]
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": [
                        {"const": "value1", "title": "First Choice"},
                        {"const": "value2", "title": "Second Choice"},
                        {"const": "value3", "title": "Third Choice"}
                    ]}
                }
            },
            "required": []
        }),
    );
    ask(ctx, form, "Elicitation completed").await
}

async fn ask(
    ctx: &Ctx,
    form: Result<Form, tool_registry::call::AskError>,
    lead: &str,
) -> Result<String, ToolError> {
    let answer = ctx.ask(form?).await?;
    Ok(answered(lead, answer))
}

/// Ends the stream it answers on before it answers, so the client reconnects (SEP-1699), for
/// testing.
#[tool(read_only)]
async fn test_reconnection(ctx: &Ctx) -> String {
    ctx.release_stream();
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.".into()
}

/// A static text resource, for testing.
#[resource(uri = "test://static-text", mime_type = "text/plain")]
async fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (a 1x1 red PNG), for testing.
#[resource(uri = "test://static-binary", mime_type = "image/png")]
async fn static_binary() -> &'static [u8] {
    PNG
}

/// Data for one id, from a template, for testing.
#[resource(uri = "test://template/{id}/data", mime_type = "application/json", complete(id = ids))]
async fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

fn ids(typed: &str) -> Vec<String> {
    ["123", "124", "200"]
        .into_iter()
        .filter(|id| id.starts_with(typed))
        .map(Into::into)
        .collect()
}

/// A resource a client may subscribe to, for testing.
#[resource(uri = "test://watched-resource", mime_type = "text/plain")]
async fn watched_resource() -> &'static str {
    "Watched resource content."
}

/// A simple prompt without arguments, for testing.
#[prompt]
async fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with two required arguments, for testing.
#[prompt(complete(arg1 = arg_values, arg2 = arg_values))]
async fn test_prompt_with_arguments(
    #[arg(desc = "First test argument")] arg1: String,
    #[arg(desc = "Second test argument")] arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

fn arg_values(typed: &str) -> Vec<String> {
    ["test", "testValue1", "testValue2", "other"]
        .into_iter()
        .filter(|v| v.starts_with(typed))
        .map(Into::into)
        .collect()
}

/// A prompt embedding a resource, for testing.
#[prompt]
async fn test_prompt_with_embedded_resource(
    #[arg(name = "resourceUri", desc = "URI of the resource to embed")] resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(
            Resource::text(resource_uri, "Embedded resource content for testing.")
                .with_mime_type("text/plain"),
        ),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt showing an image, for testing.
#[prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Image::png(PNG)),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// A form of one string field, `field`, for the 2026-07-28 tools.
fn one_field(key: &str, message: &str, field: &str, kind: &str) -> Result<Form, AskError> {
    Ok(Form::new(
        message,
        json!({"type": "object", "properties": {field: {"type": kind}}, "required": [field]}),
    )?
    .named(key))
}

/// The field `field` of an accepted answer, as text.
fn field_of(answer: FormAnswer, field: &str) -> String {
    match answer {
        FormAnswer::Accepted(fields) => match fields.get(field) {
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        },
        other => format!("({})", other.action()),
    }
}

/// Asks the user's name (an `input_required` result on 2026-07-28), then greets them.
#[tool(read_only)]
async fn test_input_required_result_elicitation(ctx: &Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .ask(one_field(
            "user_name",
            "What is your name?",
            "name",
            "string",
        )?)
        .await?;
    Ok(format!("Hello, {}!", field_of(answer, "name")))
}

/// Asks the client's model a question, then answers with its completion.
#[tool(read_only)]
async fn test_input_required_result_sampling(ctx: &Ctx) -> Result<String, ToolError> {
    let asked = Sampling::new("What is the capital of France?")
        .max_tokens(100)
        .named("capital_question");
    Ok(ctx.sample(asked).await?.text.unwrap_or_default())
}

/// Asks the client for its roots, then names them.
#[tool(read_only)]
async fn test_input_required_result_list_roots(ctx: &Ctx) -> Result<String, ToolError> {
    let roots = ctx.roots_named(Some("client_roots")).await?;
    let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
    Ok(format!("Roots: {}", uris.join(", ")))
}

/// Asks for a confirmation carried across rounds in `requestState`.
#[tool(read_only)]
async fn test_input_required_result_request_state(ctx: &Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .ask(one_field("confirm", "Please confirm", "ok", "boolean")?)
        .await?;
    Ok(format!("state-ok: ok={}", field_of(answer, "ok")))
}

/// Asks three things at once: a name, a greeting from the model, the client's roots.
#[tool(read_only)]
async fn test_input_required_result_multiple_inputs(ctx: &Ctx) -> Result<String, ToolError> {
    let name = one_field("user_name", "What is your name?", "name", "string")?;
    let greeting = Sampling::new("Generate a greeting")
        .max_tokens(50)
        .named("greeting");
    let (name, greeting, roots) = tokio::join!(
        ctx.ask(name),
        ctx.sample(greeting),
        ctx.roots_named(Some("client_roots"))
    );
    Ok(format!(
        "name={}, greeting={}, roots={}",
        field_of(name?, "name"),
        greeting?.text.unwrap_or_default(),
        roots?.len()
    ))
}

/// Asks in two rounds: a name, then a colour.
#[tool(read_only)]
async fn test_input_required_result_multi_round(ctx: &Ctx) -> Result<String, ToolError> {
    let name = ctx
        .ask(one_field(
            "step1",
            "Step 1: What is your name?",
            "name",
            "string",
        )?)
        .await?;
    let color = ctx
        .ask(one_field(
            "step2",
            "Step 2: What is your favorite color?",
            "color",
            "string",
        )?)
        .await?;
    Ok(format!(
        "{} likes {}",
        field_of(name, "name"),
        field_of(color, "color")
    ))
}

/// Asks for a confirmation whose `requestState` is sealed: a changed state is refused.
#[tool(read_only)]
async fn test_input_required_result_tampered_state(ctx: &Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .ask(one_field("confirm", "Please confirm", "ok", "boolean")?)
        .await?;
    Ok(format!("ok={}", field_of(answer, "ok")))
}

/// Asks the user and the model, each only where the client declared it can answer.
#[tool(read_only)]
async fn test_input_required_result_capabilities(ctx: &Ctx) -> Result<String, ToolError> {
    let question = one_field("user_name", "What is your name?", "name", "string")?;
    let sampling = Sampling::new("Generate a greeting")
        .max_tokens(50)
        .named("greeting");
    let (name, greeting) = tokio::join!(ctx.ask(question), ctx.sample(sampling));
    let name = name.map_or_else(
        |error| format!("({error})"),
        |answer| field_of(answer, "name"),
    );
    let greeting = greeting.map_or_else(
        |error| format!("({error})"),
        |sampled| sampled.text.unwrap_or_default(),
    );
    Ok(format!("name={name}, greeting={greeting}"))
}

/// Asks the user's context, then writes a prompt with it (an `input_required` result of
/// `prompts/get` on 2026-07-28).
#[prompt]
async fn test_input_required_result_prompt(ctx: &Ctx) -> Result<String, ToolError> {
    let form = one_field(
        "user_context",
        "What context should the prompt use?",
        "context",
        "string",
    )?;
    let answer = ctx.ask(form).await?;
    Ok(format!("Use this context: {}", field_of(answer, "context")))
}

/// Needs the client's model: a client that did not declare sampling gets the missing
/// capability error.
#[tool(read_only)]
async fn test_missing_capability(ctx: &Ctx) -> Result<String, ToolError> {
    let sampled = ctx
        .sample(Sampling::new("Say hello").max_tokens(20))
        .await?;
    Ok(sampled.text.unwrap_or_default())
}

/// Asks the user something: on 2026-07-28 the question is the answer, never a request on the
/// stream.
#[tool(read_only)]
async fn test_streaming_elicitation(ctx: &Ctx) -> Result<String, ToolError> {
    let answer = ctx
        .ask(one_field(
            "user_name",
            "What is your name?",
            "name",
            "string",
        )?)
        .await?;
    Ok(format!("Hello, {}!", field_of(answer, "name")))
}

/// Logs while it runs: the client hears it only at the level its request asks for.
#[tool(read_only)]
async fn test_logging_tool(ctx: &Ctx) -> String {
    ctx.log(LogLevel::Info, "logging tool ran");
    "Logged.".into()
}

/// What this server is: the first tool listed, which any client may call without arguments.
#[tool(read_only)]
async fn about() -> &'static str {
    "The MCP conformance suite's everything server, written with tool-registry."
}

/// Greets someone by name, at once, for testing calls that are no task.
#[tool(read_only)]
async fn greet(#[arg(desc = "Who to greet.")] name: String) -> String {
    format!("Hello, {name}!")
}

/// Computes for `seconds` seconds, as a task when the client follows tasks.
#[tool(read_only, task = "optional")]
async fn slow_compute(
    #[arg(desc = "How long to compute.")] seconds: Option<f64>,
    #[arg(desc = "A label for the result.")] label: Option<String>,
) -> String {
    let seconds = seconds.unwrap_or(1.0).clamp(0.0, 120.0);
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    format!("Computed {} after {seconds}s", label.unwrap_or_default())
}

/// Fails after a second: always a task, and the task ends with an error result.
#[tool(read_only, task = "required")]
async fn failing_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    Err(ToolError::failed("the job failed, as it always does"))
}

/// Ends in a protocol error rather than a tool error: its task fails.
#[tool(read_only, task = "required")]
async fn protocol_error_job() -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(300)).await;
    Err(ToolError::Misconfigured {
        tool: String::new(),
        message: "the job cannot run on this server".into(),
    })
}

/// Deletes a file once the user confirms, as a task.
#[tool(task = "required")]
async fn confirm_delete(
    ctx: &Ctx,
    #[arg(desc = "The file to delete.")] filename: String,
) -> Result<String, ToolError> {
    let form = one_field(
        "confirm",
        &format!("Delete {filename}?"),
        "confirm",
        "boolean",
    )?;
    let answer = ctx.ask(form).await?;
    Ok(format!("{filename}: {}", field_of(answer, "confirm")))
}

/// Asks two things at once, as a task.
#[tool(task = "required")]
async fn multi_input(ctx: &Ctx) -> Result<String, ToolError> {
    let first = one_field("first", "Your name?", "name", "string")?;
    let second = one_field("second", "Confirm?", "confirm", "boolean")?;
    let (first, second) = tokio::join!(ctx.ask(first), ctx.ask(second));
    Ok(format!(
        "{} {}",
        field_of(first?, "name"),
        field_of(second?, "confirm")
    ))
}

/// Asks the user's name within the request, then works on as a task.
#[tool(task = "required")]
async fn test_tool_with_task(ctx: &Ctx) -> Result<String, ToolError> {
    let form = one_field("user_name", "What is your name?", "name", "string")?.in_request();
    let answer = ctx.ask(form).await?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(format!(
        "Hello, {}! The work is done.",
        field_of(answer, "name")
    ))
}

/// Where a trip goes, as the first question asks it.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Destination {
    /// The city.
    city: String,
}

/// Who travels, as the second question asks it.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Party {
    /// How many people travel.
    travellers: u32,
    /// Whether they need a room with a view.
    view: bool,
}

/// Plans a trip: asks where to, then who travels, each answer read into its type.
#[tool(read_only)]
async fn plan_trip(ctx: &Ctx) -> Result<String, ToolError> {
    let Some(to) = ctx
        .ask(Form::of::<Destination>("Where to?")?)
        .await?
        .into_typed::<Destination>()?
    else {
        return Ok("No trip: the destination was not given.".into());
    };
    let Some(party) = ctx
        .ask(Form::of::<Party>("Who travels?")?)
        .await?
        .into_typed::<Party>()?
    else {
        return Ok(format!("No trip to {}: the party was not given.", to.city));
    };
    let view = if party.view {
        "with a view"
    } else {
        "without a view"
    };
    Ok(format!(
        "A trip to {} for {} travellers, {view}.",
        to.city, party.travellers
    ))
}

/// The registry served, for the tools that change it.
static SERVED: std::sync::OnceLock<std::sync::Arc<Registry>> = std::sync::OnceLock::new();

/// Adds a tool to the list, or takes it away again: clients that listen hear the change.
#[tool]
async fn test_trigger_tool_change() -> Result<String, ToolError> {
    let registry = SERVED
        .get()
        .ok_or_else(|| ToolError::failed("not serving yet"))?;
    if registry
        .get("test_dynamic_tool", tool_registry::Listing::every())
        .is_some()
    {
        registry
            .remove("test_dynamic_tool")
            .map_err(|error| ToolError::failed(error.to_string()))?;
        return Ok("removed test_dynamic_tool".into());
    }
    let spec = ToolSpec::builder("test_dynamic_tool")
        .description("A tool added at run time, for testing list changes")
        .input_schema(json!({"type": "object"}))
        .build()
        .map_err(|error| ToolError::failed(error.to_string()))?;
    registry
        .register(
            spec,
            ToolHandler::new(|_arguments, _ctx| async move { Ok::<_, String>(json!("dynamic")) }),
        )
        .map_err(|error| ToolError::failed(error.to_string()))?;
    Ok("added test_dynamic_tool".into())
}

/// Adds a prompt to the list, or takes it away again: clients that listen hear the change.
#[tool]
async fn test_trigger_prompt_change() -> Result<String, ToolError> {
    let registry = SERVED
        .get()
        .ok_or_else(|| ToolError::failed("not serving yet"))?;
    if registry.remove_prompt("test_dynamic_prompt") {
        return Ok("removed test_dynamic_prompt".into());
    }
    let prompt =
        tool_registry::offer::PromptSpec::new("test_dynamic_prompt", |_request| async move {
            Ok(vec![PromptMessage::user("A prompt added at run time.")])
        })
        .with_description("A prompt added at run time, for testing list changes");
    registry
        .register_prompt(prompt)
        .map_err(|error| ToolError::failed(error.to_string()))?;
    Ok("added test_dynamic_prompt".into())
}

/// The JSON Schema 2020-12 tool: its input schema uses `$schema`, `$defs` and
/// `additionalProperties`, written as they are.
fn json_schema_tool() -> ToolSpec {
    ToolSpec::builder("json_schema_2020_12_tool")
        .description("Tool with JSON Schema 2020-12 features")
        .input_schema(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "$anchor": "addressDef",
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
                }
            },
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        }))
        .build()
        .expect("the 2020-12 tool's spec is valid")
}

/// A tool whose `region` argument a client mirrors into the `Mcp-Param-Region` header
/// (SEP-2243): the server refuses a call whose header and argument differ.
fn header_tool() -> ToolSpec {
    ToolSpec::builder("test_header_tool")
        .description("Echoes a value mirrored into the Mcp-Param-Region header")
        .input_schema(json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "description": "Region", "x-mcp-header": "Region"}
            },
            "required": ["region"]
        }))
        .build()
        .expect("the header tool's spec is valid")
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let registry = Registry::builder()
        .build()
        .map_err(|error| std::io::Error::other(error.to_string()))?;
    registry
        .register(
            json_schema_tool(),
            ToolHandler::new(|arguments, _ctx| async move { Ok::<_, String>(arguments) }),
        )
        .map_err(|error| std::io::Error::other(error.to_string()))?;
    registry
        .register(
            header_tool(),
            ToolHandler::new(|arguments, _ctx| async move { Ok::<_, String>(arguments) }),
        )
        .map_err(|error| std::io::Error::other(error.to_string()))?;
    let registry = std::sync::Arc::new(registry);
    let _ = SERVED.set(registry.clone());
    // A call that may become a task does so soon, for a client that follows tasks.
    let limits = TaskLimits {
        after: Duration::from_millis(100),
        ..TaskLimits::default()
    };
    McpServer::new(registry, Scope::trusted())
        .tasks(Tasks::new(
            std::sync::Arc::new(InMemoryTaskStore::new()),
            limits,
        ))
        .serve_http(Callers::new(), addr, |bound| {
            println!("listening on http://{bound}/mcp");
        })
        .await
}
