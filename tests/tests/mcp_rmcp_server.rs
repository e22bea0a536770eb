//! An MCP server written with rmcp's own tool macros (`#[tool_router]`, `#[tool]`,
//! `#[tool_handler]`), served over streamable HTTP on a loopback port and mounted into another
//! registry as the module `m`: its tools listed with their schemas, and called through this
//! registry's gates (scope, validation, audit) before they reach it.
//!
//! Mounted tools carry no `cooldown` or `daily_limit` (an MCP tool declares none, and
//! [`McpModule`] sets none), so no rate limit is tried here.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_registry::format::Provider;
use tool_registry::mcp::McpModule;
use tool_registry::{Ctx, Registry, Scope};

/// The arguments of `add`.
#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    /// The first addend.
    a: i64,
    /// The second addend.
    b: i64,
}

/// What `add` answers.
#[derive(Serialize, JsonSchema)]
struct Sum {
    /// `a + b`, saturated.
    sum: i64,
}

/// The arguments of `echo`.
#[derive(Deserialize, JsonSchema)]
struct EchoArgs {
    /// The text to say back.
    text: String,
}

/// The arguments of `divide`.
#[derive(Deserialize, JsonSchema)]
struct DivideArgs {
    /// The dividend.
    dividend: i64,
    /// The divisor; zero is a tool error.
    divisor: i64,
}

/// The server: three tools, and a count of the calls that reached it.
#[derive(Clone, Default)]
struct Calculator {
    calls: Arc<AtomicUsize>,
}

#[tool_router]
impl Calculator {
    /// Add two integers.
    #[tool]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Json<Sum> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Json(Sum {
            sum: a.saturating_add(b),
        })
    }

    /// Say the text back.
    #[tool]
    async fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        self.calls.fetch_add(1, Ordering::SeqCst);
        text
    }

    /// Divide two integers; dividing by zero is a tool error.
    #[tool]
    async fn divide(
        &self,
        Parameters(DivideArgs { dividend, divisor }): Parameters<DivideArgs>,
    ) -> Result<String, String> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        dividend
            .checked_div(divisor)
            .map(|quotient| quotient.to_string())
            .ok_or_else(|| format!("cannot divide {dividend} by {divisor}"))
    }
}

#[tool_handler(name = "calculator", version = "1.0.0")]
impl ServerHandler for Calculator {}

/// The server on a loopback port; dropping it stops it, also when a test fails.
struct Served {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(calculator: Calculator) -> Served {
    let service: StreamableHttpService<Calculator, LocalSessionManager> =
        StreamableHttpService::new(
            move || Ok(calculator.clone()),
            Default::default(),
            StreamableHttpServerConfig::default(),
        );
    let app = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Served { url, task }
}

/// A registry with no tools of its own, whose guests may use only the module `public`.
fn gateway() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_linked()
            .guest_modules(["public"])
            .build()
            .unwrap(),
    )
}

/// The server's calculator, the server, and a gateway with the server mounted as `m`.
async fn mounted() -> (Calculator, Served, Arc<Registry>, McpModule) {
    let calculator = Calculator::default();
    let served = serve(calculator.clone()).await;
    let registry = gateway();
    let module = McpModule::connect(registry.clone(), "m", &served.url, None)
        .await
        .unwrap();
    (calculator, served, registry, module)
}

fn user() -> Ctx {
    Ctx::for_scope(Scope::user("bob"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_tools_are_listed_as_the_server_lists_them() {
    let (_calculator, served, registry, module) = mounted().await;
    assert_eq!(module.tools(), ["m.add", "m.divide", "m.echo"]);

    // What the server itself lists, asked by a plain rmcp client.
    let direct = ()
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            served.url.clone(),
        ))
        .await
        .unwrap();
    let theirs = direct.list_all_tools().await.unwrap();
    direct.cancel().await.unwrap();
    assert_eq!(theirs.len(), 3);

    // What this registry lists over MCP: the same tools under `m.`, each with the server's
    // description and input schema as the server wrote it (its `$schema` too, which MCP reads;
    // the other providers' lists leave it out), and `add`'s output schema.
    let ours = registry.provider_tools(Provider::Mcp, &Scope::user("bob"));
    let ours = ours.as_array().unwrap();
    assert_eq!(ours.len(), 3);
    for tool in &theirs {
        let name = format!("m.{}", tool.name);
        let listed = ours.iter().find(|t| t["name"] == name).unwrap();
        assert_eq!(
            listed["description"],
            tool.description.as_deref().unwrap(),
            "{name}"
        );
        let schema = (*tool.input_schema).clone();
        assert!(schema.contains_key("$schema"), "{name}");
        assert_eq!(listed["inputSchema"], Value::Object(schema), "{name}");
        let openai = registry.provider_tools(Provider::OpenAi, &Scope::user("bob"));
        let wire = Provider::OpenAi.wire_name(&name);
        let function = (openai.as_array().unwrap().iter())
            .find(|t| t["function"]["name"] == wire.as_ref())
            .unwrap_or_else(|| panic!("{wire} in {openai:?}"));
        let parameters = &function["function"]["parameters"];
        assert!(parameters.get("$schema").is_none(), "{name}: {parameters}");
    }
    let add = ours.iter().find(|t| t["name"] == "m.add").unwrap();
    assert_eq!(add["description"], "Add two integers.");
    assert_eq!(add["inputSchema"]["properties"]["a"]["type"], "integer");
    assert_eq!(add["inputSchema"]["properties"]["b"]["type"], "integer");
    assert_eq!(add["inputSchema"]["required"], json!(["a", "b"]));
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], "integer");
    let echo = ours.iter().find(|t| t["name"] == "m.echo").unwrap();
    assert_eq!(echo["inputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));
    assert!(
        ours.iter()
            .all(|t| t.get("outputSchema").is_none() || t["name"] == "m.add")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_tools_answer_through_this_registrys_pipeline() {
    let (calculator, _served, registry, _module) = mounted().await;
    let ctx = user();

    // A typed answer: `structuredContent` becomes the content; the call is audited here.
    let sum = registry
        .call("m.add", json!({"a": 2, "b": 40}), &ctx)
        .await
        .unwrap();
    assert_eq!(sum.content, json!({"sum": 42}));
    assert_eq!(sum.audit.tool.as_deref(), Some("m.add"));
    let echoed = registry
        .call("m.echo", json!({"text": "hello"}), &ctx)
        .for_model()
        .await;
    assert!(echoed.success, "{echoed:?}");
    assert_eq!(echoed.content, json!("hello"));
    let quotient = registry
        .call("m.divide", json!({"dividend": 7, "divisor": 2}), &ctx)
        .await
        .unwrap();
    assert_eq!(quotient.content, json!(3));

    // A tool error (`isError: true`) is a failed result with the server's text.
    let failed = registry
        .call("m.divide", json!({"dividend": 7, "divisor": 0}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(failed.code(), "handler_error");
    assert!(
        failed.to_string().contains("cannot divide 7 by 0"),
        "{failed}"
    );
    let for_model = registry
        .call("m.divide", json!({"dividend": 7, "divisor": 0}), &ctx)
        .for_model()
        .await;
    assert!(!for_model.success);
    assert!(
        for_model
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("cannot divide 7 by 0"),
        "{for_model:?}"
    );
    assert_eq!(calculator.calls.load(Ordering::SeqCst), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_and_hidden_tools_never_reach_the_server() {
    let (calculator, _served, registry, _module) = mounted().await;
    let ctx = user();

    // Refused by this registry's validation against the listed input schema.
    for (tool, arguments, said) in [
        (
            "m.add",
            json!({"a": "two", "b": 3}),
            "at `a`: \"two\" is not of type \"integer\"",
        ),
        ("m.add", json!({"a": 1}), "\"b\" is a required property"),
        (
            "m.echo",
            json!({"text": 5}),
            "at `text`: 5 is not of type \"string\"",
        ),
    ] {
        let refused = registry.call(tool, arguments, &ctx).await.unwrap_err();
        assert_eq!(refused.code(), "invalid_arguments", "{tool}: {refused}");
        assert!(refused.to_string().contains(said), "{tool}: {refused}");
    }
    let for_model = registry
        .call("m.add", json!({"a": "two", "b": 3}), &ctx)
        .for_model()
        .await;
    assert!(!for_model.success);

    // A guest may use only the module `public`: `m` is neither listed nor callable for it.
    let guest = Scope::guest();
    assert!(registry.tools(&guest).is_empty());
    let hidden = registry
        .call(
            "m.echo",
            json!({"text": "hi"}),
            &Ctx::for_scope(guest.clone()),
        )
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), "unknown_tool");
    // Nor for a user whose scope names other modules.
    let elsewhere = Ctx::for_scope(Scope::user("bob").with_modules(["other"]));
    let hidden = registry
        .call("m.echo", json!({"text": "hi"}), &elsewhere)
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), "unknown_tool");
    assert_eq!(registry.tools(&Scope::user("bob")).len(), 3);

    assert_eq!(
        calculator.calls.load(Ordering::SeqCst),
        0,
        "no refused call reached the server"
    );
    let allowed = registry
        .call("m.echo", json!({"text": "hi"}), &ctx)
        .await
        .unwrap();
    assert_eq!(allowed.content, json!("hi"));
    assert_eq!(calculator.calls.load(Ordering::SeqCst), 1);
}
