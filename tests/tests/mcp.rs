//! The registry over MCP in one process (an in-memory pipe between rmcp's client and our
//! server): tool-list changes sent only to callers whose list changed, progress, cancellation,
//! pagination; resources, templates and prompts under the caller's scope (a hidden one answered
//! as an unknown one, byte for byte), hostile template variables, a subscription flood, and
//! the notifications of their changes.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, PaginatedRequestParams, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::mcp::{McpServer, PAGE_SIZE};
use tool_registry::registry::Selector;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Permission, Registry, Scope};

/// What a client heard from the server.
#[derive(Clone)]
struct Ears {
    changed: mpsc::UnboundedSender<()>,
    /// `notifications/resources/updated` (its URI), `.../resources/list_changed` and
    /// `.../prompts/list_changed` (as `resources` and `prompts`).
    offers: mpsc::UnboundedSender<String>,
    progress: mpsc::UnboundedSender<String>,
    logs: mpsc::UnboundedSender<(String, Value)>,
}

impl ClientHandler for Ears {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.offers.send(params.uri);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.offers.send("resources".into());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.offers.send("prompts".into());
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params.message.unwrap_or_default());
    }

    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level).unwrap();
        let _ = self
            .logs
            .send((level.as_str().unwrap_or_default().to_owned(), params.data));
    }
}

struct Client {
    session: RunningService<RoleClient, Ears>,
    changed: mpsc::UnboundedReceiver<()>,
    offers: mpsc::UnboundedReceiver<String>,
    progress: mpsc::UnboundedReceiver<String>,
    logs: mpsc::UnboundedReceiver<(String, Value)>,
}

async fn connect(registry: &Arc<Registry>, scope: Scope) -> Client {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(registry.clone(), scope);
    tokio::spawn(async move {
        let running = server.serve(tokio::io::split(server_end)).await.unwrap();
        let _ = running.waiting().await;
    });
    let (changed_tx, changed) = mpsc::unbounded_channel();
    let (progress_tx, progress) = mpsc::unbounded_channel();
    let (logs_tx, logs) = mpsc::unbounded_channel();
    let (offers_tx, offers) = mpsc::unbounded_channel();
    let ears = Ears {
        changed: changed_tx,
        offers: offers_tx,
        progress: progress_tx,
        logs: logs_tx,
    };
    let session = ears.serve(tokio::io::split(client_end)).await.unwrap();
    Client {
        session,
        changed,
        offers,
        progress,
        logs,
    }
}

fn spec(name: &str, permission: Permission) -> ToolSpec {
    ToolSpec::builder(name)
        .description("A tool of the test.")
        .permission(permission)
        .build()
        .unwrap()
}

fn registry() -> Arc<Registry> {
    Arc::new(Registry::builder().without_linked().build().unwrap())
}

fn args(value: Value) -> serde_json::Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_is_told_only_to_callers_whose_list_it_changes() {
    let registry = registry();
    registry
        .register(
            spec("open", Permission::Guest),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ok") }),
        )
        .unwrap();
    let mut guest = connect(&registry, Scope::guest()).await;
    let mut admin = connect(&registry, Scope::user("ann").with_level(Permission::Admin)).await;
    // Each has listed (and so finished its handshake): a change after this is news to it.
    assert_eq!(guest.session.list_all_tools().await.unwrap().len(), 1);
    assert_eq!(admin.session.list_all_tools().await.unwrap().len(), 1);

    // An admin tool: the admin's list changes, the guest's does not.
    registry
        .register(
            spec("admin_only", Permission::Admin),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ok") }),
        )
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), admin.changed.recv())
        .await
        .unwrap();
    // A switch both see: both are told.
    registry.disable(Selector::name("open"));
    tokio::time::timeout(Duration::from_secs(5), guest.changed.recv())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), admin.changed.recv())
        .await
        .unwrap();
    assert!(
        guest.changed.try_recv().is_err(),
        "the guest heard only the change it sees"
    );
    assert!(guest.session.list_all_tools().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_is_sent_and_a_cancelled_call_stops_its_tool() {
    let registry = registry();
    registry
        .register(
            spec("steps", Permission::Guest),
            ToolHandler::new(|_: Value, ctx: Ctx| async move {
                ctx.progress("half way");
                ctx.progress("done");
                Ok::<_, String>("finished")
            }),
        )
        .unwrap();
    let finished = Arc::new(AtomicBool::new(false));
    let dropped = Arc::new(AtomicBool::new(false));
    let (f, d) = (finished.clone(), dropped.clone());
    registry
        .register(
            spec("slow", Permission::Guest),
            ToolHandler::new(move |_: Value, _: Ctx| {
                let (finished, dropped) = (f.clone(), d.clone());
                async move {
                    struct OnDrop(Arc<AtomicBool>);
                    impl Drop for OnDrop {
                        fn drop(&mut self) {
                            self.0.store(true, Ordering::SeqCst);
                        }
                    }
                    let _guard = OnDrop(dropped);
                    tokio::time::sleep(Duration::from_millis(600)).await;
                    finished.store(true, Ordering::SeqCst);
                    Ok::<_, String>("late")
                }
            }),
        )
        .unwrap();
    let mut client = connect(&registry, Scope::guest()).await;

    let result = client
        .session
        .call_tool(CallToolRequestParams::new("steps").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let mut heard = Vec::new();
    while heard.len() < 2 {
        let message = tokio::time::timeout(Duration::from_secs(5), client.progress.recv())
            .await
            .unwrap()
            .unwrap();
        heard.push(message);
    }
    heard.sort();
    assert_eq!(heard, ["done", "half way"]);

    // The client gives up on the call: rmcp sends `notifications/cancelled`, and the tool's
    // future is dropped before it finishes.
    let call = client
        .session
        .call_tool(CallToolRequestParams::new("slow").with_arguments(args(json!({}))));
    assert!(
        tokio::time::timeout(Duration::from_millis(150), call)
            .await
            .is_err()
    );
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(
        dropped.load(Ordering::SeqCst),
        "the tool's future was dropped"
    );
    assert!(
        !finished.load(Ordering::SeqCst),
        "the tool did not run to its end"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_pages_in_a_stable_order_and_refuses_a_forged_cursor() {
    let registry = registry();
    for i in 0..250 {
        registry
            .register(
                spec(&format!("t{i:03}"), Permission::Guest),
                ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ok") }),
            )
            .unwrap();
    }
    let client = connect(&registry, Scope::guest()).await;
    let first = client.session.list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), PAGE_SIZE);
    let all = client.session.list_all_tools().await.unwrap();
    let names: Vec<String> = all.iter().map(|t| t.name.to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names.len(), 250);
    assert_eq!(names, sorted);
    let forged = client
        .session
        .list_tools(Some(
            PaginatedRequestParams::default().with_cursor(Some("p99999".to_owned())),
        ))
        .await;
    assert!(forged.is_err(), "{forged:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_mcp_server_is_followed_when_its_list_changes() {
    use tool_registry::mcp::{Callers, McpModule, router};
    let served = registry();
    served
        .register(
            spec("first", Permission::Guest),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("one") }),
        )
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let app = router(served.clone(), Callers::new(), Vec::new());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let gateway = registry();
    let module = McpModule::connect(gateway.clone(), "m", &url, None)
        .await
        .unwrap();
    assert_eq!(module.tools(), ["m.first"]);
    let answer = gateway
        .call("m.first", json!({}), &Ctx::new())
        .await
        .unwrap();
    assert_eq!(answer.content, json!("one"));

    served
        .register(
            spec("second", Permission::Guest),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("two") }),
        )
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while gateway.get("m.second", Listing::every()).is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the change was not followed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    served.remove("first").unwrap();
    while gateway.get("m.first", Listing::every()).is_some() {
        assert!(
            std::time::Instant::now() < deadline,
            "the removal was not followed"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(module);
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stateless_2026_revision_lists_calls_and_listens_for_changes() {
    use rmcp::model::{ProtocolVersion, SubscriptionFilter};
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    use tool_registry::mcp::{Callers, router};

    let served = registry();
    served
        .register(
            spec("first", Permission::Guest),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("one") }),
        )
        .unwrap();
    served
        .register(
            spec("staff", Permission::User),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("s") }),
        )
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let callers = Callers::new().with("user-token", Scope::user("bob"));
    let app = router(served.clone(), callers, Vec::new());
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });

    let connect = |token: Option<&'static str>| {
        let url = url.clone();
        async move {
            let mut config = StreamableHttpClientTransportConfig::with_uri(url);
            if let Some(token) = token {
                config = config.auth_header(token.to_owned());
            }
            ().serve_with_lifecycle(
                StreamableHttpClientTransport::from_config(config),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .unwrap()
        }
    };
    let guest = connect(None).await;
    let user = connect(Some("user-token")).await;
    let names = |tools: Vec<rmcp::model::Tool>| {
        tools.iter().map(|t| t.name.to_string()).collect::<Vec<_>>()
    };
    assert_eq!(names(guest.list_all_tools().await.unwrap()), ["first"]);
    assert_eq!(
        names(user.list_all_tools().await.unwrap()),
        ["first", "staff"]
    );
    let result = user
        .call_tool(CallToolRequestParams::new("staff").with_arguments(args(json!({}))))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let hidden = guest
        .call_tool(CallToolRequestParams::new("staff").with_arguments(args(json!({}))))
        .await;
    assert!(
        format!("{hidden:?}").contains("Unknown tool: staff"),
        "{hidden:?}"
    );

    // `subscriptions/listen`: the user hears of a change to its list.
    let mut listening = user
        .listen(SubscriptionFilter::builder().tools_list_changed().build())
        .await
        .unwrap();
    served
        .register(
            spec("second", Permission::User),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("two") }),
        )
        .unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(10), listening.next())
        .await
        .unwrap();
    assert!(
        format!("{heard:?}").contains("ToolListChanged"),
        "{heard:?}"
    );
    server.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deferred_tools_are_found_and_run_through_the_discovery_meta_tools() {
    let registry = registry();
    registry
        .register(
            spec("visible", Permission::Guest),
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("seen") }),
        )
        .unwrap();
    let deferred = ToolSpec::builder("archive_search")
        .description("Search the archived tickets by keyword.")
        .permission(Permission::Guest)
        .defer_loading(true)
        .build()
        .unwrap();
    registry
        .register(
            deferred,
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("archived") }),
        )
        .unwrap();
    let client = connect(&registry, Scope::guest()).await;
    let listed: Vec<String> = client
        .session
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| tool.name.to_string())
        .collect();
    assert!(!listed.contains(&"archive_search".to_owned()), "{listed:?}");
    for meta in ["search_tools", "describe_tool", "execute_tool"] {
        assert!(listed.contains(&meta.to_owned()), "{listed:?}");
    }
    let text = |result: rmcp::model::CallToolResult| {
        assert_eq!(result.is_error, Some(false), "{result:?}");
        result.content[0].as_text().unwrap().text.clone()
    };
    let found = client
        .session
        .call_tool(
            CallToolRequestParams::new("search_tools")
                .with_arguments(args(json!({"query": "archived tickets"}))),
        )
        .await
        .unwrap();
    assert!(text(found).contains("archive_search"));
    let ran = client
        .session
        .call_tool(
            CallToolRequestParams::new("execute_tool")
                .with_arguments(args(json!({"name": "archive_search", "arguments": {}}))),
        )
        .await
        .unwrap();
    assert!(text(ran).contains("archived"));
    // Left out of the list, still callable by name.
    let direct = client
        .session
        .call_tool(CallToolRequestParams::new("archive_search"))
        .await
        .unwrap();
    assert!(text(direct).contains("archived"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_client_meets_the_same_hooks_as_a_call() {
    let registry = Arc::new(tool_registry_tests::hooked_registry());
    let client = connect(&registry, Scope::trusted()).await;
    for (mode, code) in tool_registry_tests::HOOK_CASES {
        let result = client
            .session
            .call_tool(
                CallToolRequestParams::new("echo").with_arguments(args(json!({"mode": mode}))),
            )
            .await
            .unwrap();
        let text = result.content[0].as_text().unwrap().text.clone();
        if code == "ok" {
            assert_ne!(result.is_error, Some(true), "{mode}: {text}");
            assert!(!text.contains("secret"), "{mode}: {text}");
        } else {
            assert_eq!(result.is_error, Some(true), "{mode}: {text}");
            let structured = result.structured_content.clone().unwrap_or_default();
            let named = structured["error"]["code"] == code || text.contains(code);
            assert!(named, "{mode}: {code} in {text} {structured}");
        }
    }
}

/// A tool's `Ctx::log` reaches the MCP client as `notifications/message` from the level the
/// client set (`info` until it sets one); a call without a client logs into `tracing` instead
/// (`a_tool_without_a_client_logs_into_tracing_inside_its_call`, `core/tests/spans.rs`).
/// rmcp's client hands each notification to its handler on a task of its own, so the messages
/// are compared as sets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(deprecated)]
async fn a_tool_logs_to_the_client_from_the_level_it_set() {
    use tool_registry::call::LogLevel;
    let registry = registry();
    registry
        .register(
            spec("chatty", Permission::Guest),
            ToolHandler::new(|_: Value, ctx: Ctx| async move {
                ctx.log(LogLevel::Debug, "looking");
                ctx.log(LogLevel::Info, "found 3");
                ctx.log(LogLevel::Warning, json!({"slow": true}));
                Ok::<_, String>("done")
            }),
        )
        .unwrap();
    let mut client = connect(&registry, Scope::trusted()).await;
    for (level, expected) in [
        (
            None,
            vec![
                ("info", json!("found 3")),
                ("warning", json!({"slow": true})),
            ],
        ),
        (
            Some("debug"),
            vec![
                ("debug", json!("looking")),
                ("info", json!("found 3")),
                ("warning", json!({"slow": true})),
            ],
        ),
        (Some("warning"), vec![("warning", json!({"slow": true}))]),
    ] {
        if let Some(level) = level {
            let level = serde_json::from_value(json!(level)).unwrap();
            let set = rmcp::model::SetLevelRequestParams::new(level);
            client.session.peer().set_level(set).await.unwrap();
        }
        let call = CallToolRequestParams::new("chatty");
        client.session.call_tool(call).await.unwrap();
        let mut heard = Vec::new();
        while heard.len() < expected.len() {
            let message = tokio::time::timeout(Duration::from_secs(5), client.logs.recv()).await;
            heard.push(message.unwrap().unwrap());
        }
        heard.sort_by(|a, b| a.0.cmp(&b.0));
        let expected: Vec<(String, Value)> = expected
            .into_iter()
            .map(|(level, data)| (level.to_owned(), data))
            .collect();
        assert_eq!(heard, expected, "from {level:?}");
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        client.logs.try_recv().is_err(),
        "nothing below the level was sent"
    );
}

/// The error a request answered, as the client read it.
fn error_of<T: std::fmt::Debug>(outcome: Result<T, rmcp::ServiceError>) -> rmcp::model::ErrorData {
    match outcome {
        Err(rmcp::ServiceError::McpError(error)) => error,
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

fn text_resource(uri: &str, name: &str, text: &'static str) -> tool_registry::offer::ResourceSpec {
    tool_registry::offer::ResourceSpec::new(uri, name, move |request| async move {
        Ok(vec![tool_registry::content::Resource::text(
            request.uri,
            text,
        )])
    })
    .unwrap()
    .with_description("A resource of the test.")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(
    deprecated,
    reason = "the 2025-11-25 revision's subscriptions, which rmcp marks legacy, are what this checks"
)]
async fn offers_follow_the_scope_a_hidden_one_is_unknown_and_hostile_variables_are_refused() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, SubscribeRequestParams};
    use tool_registry::offer::{PromptMessage, PromptSpec, ResourceSpec};

    let registry = registry();
    registry
        .register_resource(text_resource("notes://public", "public", "open"))
        .unwrap();
    registry
        .register_resource(
            text_resource("notes://secret", "secret", "closed").with_permission(Permission::Admin),
        )
        .unwrap();
    let file = ResourceSpec::new("notes://file/{name}", "file", |request| async move {
        let name = request.variable("name").to_owned();
        Ok(vec![tool_registry::content::Resource::text(
            request.uri,
            format!("file {name}"),
        )])
    })
    .unwrap();
    registry.register_resource(file).unwrap();
    let prompt = |name: &str| {
        PromptSpec::new(name, |_request| async move {
            Ok(vec![PromptMessage::user("hi")])
        })
        .with_description("A prompt of the test.")
    };
    registry
        .register_prompt(prompt("ops_review").with_permission(Permission::Admin))
        .unwrap();
    // A URI or a name taken is refused.
    assert!(
        registry
            .register_resource(text_resource("notes://public", "again", "x"))
            .is_err()
    );
    assert!(registry.register_prompt(prompt("ops_review")).is_err());

    let mut guest = connect(&registry, Scope::guest()).await;
    let admin = connect(&registry, Scope::trusted()).await;
    let uris = |list: rmcp::model::ListResourcesResult| -> Vec<String> {
        list.resources.iter().map(|r| r.uri.clone()).collect()
    };
    assert_eq!(
        uris(guest.session.list_resources(None).await.unwrap()),
        ["notes://public"]
    );
    assert_eq!(
        uris(admin.session.list_resources(None).await.unwrap()),
        ["notes://public", "notes://secret"]
    );
    assert!(
        guest
            .session
            .list_prompts(None)
            .await
            .unwrap()
            .prompts
            .is_empty()
    );

    // What a guest may not see is answered exactly as what does not exist.
    let read = |uri: &str| ReadResourceRequestParams::new(uri);
    let hidden = error_of(guest.session.read_resource(read("notes://secret")).await);
    let unknown = error_of(guest.session.read_resource(read("notes://secreT")).await);
    let bytes = |error: &rmcp::model::ErrorData, uri: &str| {
        serde_json::to_string(error).unwrap().replace(uri, "URI")
    };
    assert_eq!(
        bytes(&hidden, "notes://secret"),
        bytes(&unknown, "notes://secreT")
    );
    assert_eq!(hidden.data.as_ref().unwrap()["uri"], "notes://secret");
    let hidden = error_of(
        guest
            .session
            .get_prompt(GetPromptRequestParams::new("ops_review"))
            .await,
    );
    let unknown = error_of(
        guest
            .session
            .get_prompt(GetPromptRequestParams::new("ops_reviex"))
            .await,
    );
    assert_eq!(bytes(&hidden, "ops_review"), bytes(&unknown, "ops_reviex"));
    let read_admin = admin
        .session
        .read_resource(read("notes://secret"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&read_admin.contents[0]).unwrap()["text"],
        "closed"
    );

    // A template variable names one thing, never a way out.
    let file = guest
        .session
        .read_resource(read("notes://file/plan.md"))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&file.contents[0]).unwrap()["text"],
        "file plan.md"
    );
    for hostile in [
        "%2e%2e", "%2E%2E", "a%2Fb", "a%5cb", "a%00b", "%0d%0a", "%zz", "%ff",
    ] {
        let error = error_of(
            guest
                .session
                .read_resource(read(&format!("notes://file/{hostile}")))
                .await,
        );
        assert_eq!(error.code.0, -32602, "{hostile}: {error:?}");
        assert!(error.message.contains("refused"), "{hostile}: {error:?}");
    }
    // A raw `/` makes no instance of the template at all.
    let error = error_of(
        guest
            .session
            .read_resource(read("notes://file/../secret"))
            .await,
    );
    assert!(error.message.contains("Resource not found"), "{error:?}");

    // A subscription flood stops at the session's bound; an unknown URI is no subscription.
    let subscribe = |uri: String| SubscribeRequestParams::new(uri);
    for n in 0..tool_registry::mcp::MAX_SUBSCRIPTIONS {
        guest
            .session
            .subscribe(subscribe(format!("notes://file/{n}")))
            .await
            .unwrap();
    }
    let full = error_of(
        guest
            .session
            .subscribe(subscribe("notes://public".into()))
            .await,
    );
    assert!(full.message.contains("unsubscribe"), "{full:?}");
    error_of(
        admin
            .session
            .subscribe(subscribe("notes://nowhere".into()))
            .await,
    );
    guest
        .session
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new("notes://file/0"))
        .await
        .unwrap();
    guest
        .session
        .subscribe(subscribe("notes://public".into()))
        .await
        .unwrap();

    // A change is heard: an update of a followed resource, and the lists.
    registry.resource_updated("notes://secret");
    registry.resource_updated("notes://public");
    let heard = tokio::time::timeout(Duration::from_secs(5), guest.offers.recv())
        .await
        .unwrap();
    assert_eq!(
        heard.as_deref(),
        Some("notes://public"),
        "only what it follows"
    );
    registry.register_prompt(prompt("welcome")).unwrap();
    let heard = tokio::time::timeout(Duration::from_secs(5), guest.offers.recv())
        .await
        .unwrap();
    assert_eq!(heard.as_deref(), Some("prompts"));
    assert!(registry.remove_resource("notes://file/{name}"));
    let heard = tokio::time::timeout(Duration::from_secs(5), guest.offers.recv())
        .await
        .unwrap();
    assert_eq!(heard.as_deref(), Some("resources"));
}
