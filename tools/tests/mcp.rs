//! `toolreg mcp` over stdio, driven by the official Rust SDK's client (rmcp) as a child process.

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::common;
#[path = "common/hooks.rs"]
mod hooks;
#[path = "common/mcp_http.rs"]
mod mcp_http;
#[path = "common/redis.rs"]
mod redis;
use common::workspace;

/// An MCP client session with `toolreg [flags] mcp` run in `root`.
async fn connect(root: &Path, flags: &[&str]) -> RunningService<RoleClient, ()> {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolreg")).configure(|c| {
        c.current_dir(root)
            .args(flags)
            .arg("mcp")
            .env_remove("TOOLREG_KB")
            .env_remove("TOOLREG_APPROVALS")
            .env_remove("TOOLREG_LIMITS");
    });
    let transport = TokioChildProcess::new(command).expect("toolreg mcp starts");
    ().serve(transport).await.expect("the MCP handshake")
}

fn names_of(tools: &[rmcp::model::Tool]) -> Vec<String> {
    tools.iter().map(|tool| tool.name.to_string()).collect()
}

fn listed(root: &Path, flags: &[&str]) -> Vec<String> {
    let output = common::toolreg_command(root, &[flags, &["list", "--format", "json"]].concat())
        .output()
        .unwrap();
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

fn call(name: &str, args: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_owned()).with_arguments(args.as_object().unwrap().clone())
}

#[tokio::test]
async fn an_mcp_client_lists_and_calls_within_its_scope() {
    let dir = workspace();
    let guest = connect(dir.path(), &["--level", "guest"]).await;
    let admin = connect(dir.path(), &["--level", "admin", "--user", "ann"]).await;

    // Each caller lists what its scope may see, the same tools `toolreg list` shows it.
    let guest_tools = guest.list_all_tools().await.unwrap();
    let admin_tools = admin.list_all_tools().await.unwrap();
    assert_eq!(
        names_of(&guest_tools),
        listed(dir.path(), &["--level", "guest"])
    );
    assert_eq!(
        names_of(&admin_tools),
        listed(dir.path(), &["--level", "admin", "--user", "ann"])
    );
    assert!(names_of(&admin_tools).contains(&"scheduler.add_job".to_owned()));
    assert!(!names_of(&guest_tools).contains(&"scheduler.add_job".to_owned()));
    let research = guest_tools.iter().find(|t| t.name == "research").unwrap();
    assert!(research.input_schema.contains_key("properties"));
    assert!(research.annotations.as_ref().unwrap().read_only_hint == Some(true));

    // A call runs through the pipeline.
    let result = guest
        .call_tool(call("research", json!({"query": "caching"})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(text.contains("Caching"), "{text}");

    // Bad arguments: a result with isError and the path of the bad field.
    let bad = guest
        .call_tool(call("research", json!({"query": 5})))
        .await
        .unwrap();
    assert_eq!(bad.is_error, Some(true));
    assert!(bad.content[0].as_text().unwrap().text.contains("query"));

    // An unknown tool and one outside the scope: the same JSON-RPC error, -32602.
    let error_of = |outcome: Result<_, ServiceError>| match outcome {
        Err(ServiceError::McpError(error)) => (error.code, error.message.to_string()),
        other => panic!("{other:?}"),
    };
    let (code, unknown) = error_of(guest.call_tool(call("scheduler.add_jobs", json!({}))).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    let (code, hidden) = error_of(guest.call_tool(call("scheduler.add_job", json!({}))).await);
    assert_eq!(code, ErrorCode::INVALID_PARAMS);
    assert_eq!(hidden.replace("add_job", "add_jobs"), unknown);

    guest.cancel().await.unwrap();
    admin.cancel().await.unwrap();
}

async fn connect_http(
    url: &str,
    token: Option<&str>,
) -> Result<RunningService<RoleClient, ()>, String> {
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(token) = token {
        config = config.auth_header(token.to_owned());
    }
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .map_err(|error| error.to_string())
}

#[tokio::test]
async fn over_streamable_http_each_token_is_its_caller_and_no_token_a_guest() {
    let dir = workspace();
    let served = mcp_http::serve_http(dir.path());
    let guest = connect_http(&served.url, None).await.unwrap();
    let admin = connect_http(&served.url, Some(mcp_http::ADMIN_TOKEN))
        .await
        .unwrap();
    let guest_tools = names_of(&guest.list_all_tools().await.unwrap());
    let admin_tools = names_of(&admin.list_all_tools().await.unwrap());
    assert_eq!(guest_tools, listed(dir.path(), &["--level", "guest"]));
    assert_eq!(
        admin_tools,
        listed(dir.path(), &["--level", "admin", "--user", "ann"])
    );
    assert_ne!(guest_tools, admin_tools);

    let result = admin
        .call_tool(call("scheduler.list_jobs", json!({})))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false), "{result:?}");
    let hidden = guest
        .call_tool(call("scheduler.list_jobs", json!({})))
        .await;
    assert!(
        matches!(hidden, Err(ServiceError::McpError(ref e)) if e.code == ErrorCode::INVALID_PARAMS),
        "{hidden:?}"
    );

    // A token the server does not know is refused, not served as a guest.
    assert!(connect_http(&served.url, Some("forged")).await.is_err());
    // A browser page of another origin is refused.
    let host = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{{}}"
    );
    let answer = raw(&host, &request);
    assert!(answer.starts_with("HTTP/1.1 403"), "{answer}");
    guest.cancel().await.unwrap();
    admin.cancel().await.unwrap();
}

fn raw(host: &str, request: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

/// `toolreg --modules MODULES mcp`, run in `root`, mounted as the module `name` of a registry
/// of its own.
async fn mounted(
    root: &Path,
    modules: &str,
    name: &str,
) -> (
    std::sync::Arc<tool_registry::Registry>,
    tool_registry::mcp::McpModule,
) {
    mounted_with(root, &["--modules", modules], name).await
}

/// `toolreg [flags] mcp` mounted as the module `name` of a registry of its own.
async fn mounted_with(
    root: &Path,
    flags: &[&str],
    name: &str,
) -> (
    std::sync::Arc<tool_registry::Registry>,
    tool_registry::mcp::McpModule,
) {
    let registry = std::sync::Arc::new(
        tool_registry::Registry::builder()
            .without_linked()
            .build()
            .unwrap(),
    );
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolreg"));
    command
        .current_dir(root)
        .args(flags)
        .arg("mcp")
        .env_remove("TOOLREG_KB");
    let module = tool_registry::mcp::McpModule::spawn(registry.clone(), name, command)
        .await
        .unwrap();
    (registry, module)
}

#[tokio::test]
async fn toolreg_mcp_mounts_as_a_module_behind_this_registrys_gates() {
    use tool_registry::{Ctx, Scope};

    let dir = workspace();
    let (registry, module) = mounted(dir.path(), "research,file_manager", "kb").await;
    let tools = module.tools();
    assert!(tools.contains(&"kb.research".to_owned()), "{tools:?}");
    assert!(
        tools.contains(&"kb.file_manager.read".to_owned()),
        "{tools:?}"
    );
    assert!(
        !tools.iter().any(|t| t.contains("scheduler")),
        "the server's own scope: {tools:?}"
    );

    // Called through this registry's pipeline: scope, validation, audit.
    let ctx = Ctx::for_scope(Scope::user("bob"));
    let result = registry
        .call("kb.research", json!({"query": "caching"}), &ctx)
        .await
        .unwrap();
    assert_eq!(result.content[0]["title"], "Caching");
    assert_eq!(result.audit.tool.as_deref(), Some("kb.research"));
    let bad = registry
        .call("kb.research", json!({"query": 5}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(bad.code(), "invalid_arguments");
    let limited = Scope::user("bob").with_modules(["other"]);
    let hidden = registry
        .call(
            "kb.research",
            json!({"query": "x"}),
            &Ctx::for_scope(limited),
        )
        .await
        .unwrap_err();
    assert_eq!(hidden.code(), "unknown_tool");
    // A tool failure comes back typed.
    let failed = registry
        .call(
            "kb.file_manager.read",
            json!({"path": "../../etc/passwd"}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert_eq!(failed.code(), "handler_error", "{failed}");

    // The server gone: its tools answer module_unreachable.
    drop(module);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let gone = registry
        .call("kb.research", json!({"query": "x"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(gone.code(), "module_unreachable", "{gone}");
}

#[tokio::test]
async fn blocks_cross_toolreg_mcp_mounted_as_a_module_unchanged() {
    use tool_registry::content::{Block, File, IntoToolResult, ResourceLink};
    use tool_registry::{Ctx, Scope};

    let dir = workspace();
    let (registry, _module) = mounted(dir.path(), "chart", "remote").await;
    let ctx = Ctx::for_scope(Scope::user("bob"));
    let values = vec![3.0, 1.0, 4.0];

    // The image, byte for byte what the tool draws, and the value under its own schema.
    let direct = tool_registry_tools::chart::draw(values.clone())
        .unwrap()
        .into_tool_result()
        .unwrap();
    let drawn = registry
        .call("remote.chart.draw", json!({"values": values}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        (&drawn.content, &drawn.blocks),
        (&direct.content, &direct.blocks)
    );

    // The file comes back a file, with its name and MIME type, and the link a link.
    let exported = registry
        .call(
            "remote.chart.export",
            json!({"name": "q3", "values": values}),
            &ctx,
        )
        .await
        .unwrap();
    let csv = "index,value\n0,3\n1,1\n2,4\n";
    assert_eq!(
        exported.content,
        json!({"file": "q3.csv", "rows": 3, "bytes": csv.len()})
    );
    assert_eq!(
        exported.blocks,
        [
            Block::from(File::new("q3.csv", csv.as_bytes().to_vec())),
            Block::from(
                ResourceLink::new("chart://q3.png", "q3.png")
                    .with_description("the bar chart of these values, as `chart.draw` draws it")
                    .with_mime_type("image/png")
            ),
        ]
    );
    let listed = registry
        .get("remote.chart.export", tool_registry::Listing::every())
        .unwrap();
    assert_eq!(
        listed.output_schema().unwrap()["required"],
        json!(["file", "rows", "bytes"])
    );
}

#[test]
fn a_module_map_mounts_mcp_servers_for_every_command() {
    let dir = workspace();
    let toolreg = env!("CARGO_BIN_EXE_toolreg");
    std::fs::write(
        dir.path().join("map.toml"),
        format!("[mcp.kb]\ncommand = [\"{toolreg}\", \"--modules\", \"research\", \"mcp\"]\n"),
    )
    .unwrap();
    let listed = common::toolreg_command(dir.path(), &["--module-map", "map.toml", "list"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains("kb.research"),
        "{text}\n{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let called = common::toolreg_command(
        dir.path(),
        &[
            "--module-map",
            "map.toml",
            "--user",
            "bob",
            "call",
            "kb.research",
            r#"{"query": "caching"}"#,
        ],
    )
    .output()
    .unwrap();
    assert_eq!(called.status.code(), Some(0), "{called:?}");
    let result: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(result["content"][0]["title"], "Caching");
    assert_eq!(result["audit"]["tool"], "kb.research");

    std::fs::write(
        dir.path().join("bad.toml"),
        "[mcp.kb]\nurl = \"http://h/mcp\"\ncommand = [\"x\"]\n",
    )
    .unwrap();
    let bad = common::toolreg_command(dir.path(), &["--module-map", "bad.toml", "list"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("exactly one of `command` and `url`"));
}

/// A client that declares form elicitation, so that a 2026-07-28 server may ask it to confirm a
/// call; the test answers the questions itself.
#[derive(Clone)]
struct Asking;

impl rmcp::ClientHandler for Asking {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let capabilities = serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("confirm-test", "1.0.0"),
        )
    }
}

/// `toolreg --level user --user ann mcp` in `root`, spoken to by a 2026-07-28 client that
/// can ask its user.
async fn asking_client(root: &Path) -> RunningService<RoleClient, Asking> {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt};

    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolreg")).configure(|c| {
        c.current_dir(root)
            .args(["--level", "user", "--user", "ann", "mcp"])
            .env_remove("TOOLREG_SANDBOX")
            .env_remove("TOOLREG_APPROVALS")
            .env_remove("TOOLREG_SWITCHES");
    });
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    Asking
        .serve_with_lifecycle(TokioChildProcess::new(command).unwrap(), lifecycle)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_confirmation_round_trip_runs_the_call_once_and_only_on_its_own_arguments() {
    use rmcp::model::{CallToolResponse, InputRequest, InputResponses};

    let dir = workspace();
    let sandbox = dir.path().join("sandbox");
    std::fs::create_dir_all(&sandbox).unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        std::fs::write(sandbox.join(name), name).unwrap();
    }
    let client = asking_client(dir.path()).await;
    let delete = |path: &str| call("file_manager.delete_file", json!({ "path": path }));
    let text = |response: CallToolResponse| match response {
        CallToolResponse::Complete(result) => (
            result.is_error == Some(true),
            result.content[0].as_text().unwrap().text.clone(),
        ),
        other => panic!("{other:?}"),
    };

    // The first call asks the user about that exact call; nothing is deleted yet.
    let CallToolResponse::InputRequired(asked) =
        client.call_tool_once(delete("a.txt")).await.unwrap()
    else {
        panic!("no input_required");
    };
    let question = &asked.input_requests.as_ref().unwrap()["confirm"];
    let InputRequest::Elicitation(question) = question else {
        panic!("{question:?}")
    };
    assert!(
        serde_json::to_string(&question.params)
            .unwrap()
            .contains("a.txt"),
        "{question:?}"
    );
    assert!(sandbox.join("a.txt").exists());
    let state = asked.request_state.clone().unwrap();
    let yes = InputResponses::from([(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"approve": true}}),
    )]);
    let answered = |path: &str, answer: &InputResponses| {
        delete(path)
            .with_input_responses(answer.clone())
            .with_request_state(state.clone())
    };

    // The answer moved to other arguments is refused, and uses nothing up.
    let (failed, moved) = text(
        client
            .call_tool_once(answered("b.txt", &yes))
            .await
            .unwrap(),
    );
    assert!(failed && moved.contains("different arguments"), "{moved}");
    assert!(sandbox.join("b.txt").exists());
    // On its own call it runs, once.
    let (failed, done) = text(
        client
            .call_tool_once(answered("a.txt", &yes))
            .await
            .unwrap(),
    );
    assert!(!failed, "{done}");
    assert!(!sandbox.join("a.txt").exists());
    let (failed, replay) = text(
        client
            .call_tool_once(answered("a.txt", &yes))
            .await
            .unwrap(),
    );
    assert!(failed && replay.contains("already used"), "{replay}");

    // A made-up state runs nothing: with an answer it is an unknown token; without one, the
    // call is asked about afresh, under a state of its own.
    let made_up = delete("c.txt").with_request_state("approval.made-up");
    let (failed, forged) = text(
        client
            .call_tool_once(made_up.clone().with_input_responses(yes.clone()))
            .await
            .unwrap(),
    );
    assert!(failed && forged.contains("unknown"), "{forged}");
    match client.call_tool_once(made_up).await.unwrap() {
        CallToolResponse::InputRequired(again) => {
            assert_ne!(again.request_state.as_deref(), Some("approval.made-up"));
        }
        other => panic!("{other:?}"),
    }
    let foreign = client
        .call_tool_once(delete("c.txt").with_request_state("not ours"))
        .await;
    assert!(
        matches!(&foreign, Err(ServiceError::McpError(e)) if e.code == ErrorCode::INVALID_PARAMS),
        "{foreign:?}"
    );
    assert!(sandbox.join("c.txt").exists());
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_confirmation_shows_the_whole_call_or_answers_the_token_instead() {
    use rmcp::model::{CallToolResponse, InputRequest};

    let dir = workspace();
    let sandbox = dir.path().join("sandbox");
    std::fs::create_dir_all(&sandbox).unwrap();
    std::fs::write(sandbox.join("important.md"), "keep").unwrap();
    let client = asking_client(dir.path()).await;

    // 2,200 characters of `./` before the name: the person sees all of it.
    let path = format!("{}important.md", "./".repeat(1_100));
    let arguments = json!({ "path": path });
    let CallToolResponse::InputRequired(asked) = client
        .call_tool_once(call("file_manager.delete_file", arguments.clone()))
        .await
        .unwrap()
    else {
        panic!("no input_required");
    };
    let InputRequest::Elicitation(question) = &asked.input_requests.as_ref().unwrap()["confirm"]
    else {
        panic!("{asked:?}")
    };
    let message = serde_json::to_value(&question.params).unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.ends_with(&arguments.to_string()), "{message}");

    // Arguments too long to show whole are not asked about: the token is answered, and
    // nothing runs.
    let long = format!("{}important.md", "./".repeat(10_000));
    let response = client
        .call_tool_once(call("file_manager.delete_file", json!({ "path": long })))
        .await
        .unwrap();
    let CallToolResponse::Complete(result) = response else {
        panic!("asked about a call it could not show: {response:?}");
    };
    assert_eq!(result.is_error, Some(true));
    let text = &result.content[0].as_text().unwrap().text;
    assert!(text.contains("approval"), "{text}");
    assert!(sandbox.join("important.md").exists());
    client.cancel().await.unwrap();
}

/// The texts of an MCP result, in order.
fn texts_of(result: &rmcp::model::CallToolResult) -> Vec<&str> {
    (result.content.iter())
        .filter_map(|content| content.as_text().map(|text| text.text.as_str()))
        .collect()
}

/// `file_manager.read` of the file with a key: redacted in the text and the structured
/// content alike, and the key nowhere in the answer.
fn check_redacted(read: &rmcp::model::CallToolResult) {
    assert_eq!(read.is_error, Some(false), "{read:?}");
    let structured = read.structured_content.as_ref().expect("structuredContent");
    let redacted = "OPENAI_API_KEY=[redacted secret]\nkeep this line\n";
    assert_eq!(structured["content"], redacted);
    let text: Value = serde_json::from_str(texts_of(read)[0]).unwrap();
    assert_eq!(&text, structured);
    let answer = serde_json::to_string(read).unwrap();
    assert!(!answer.contains(&hooks::fake_key()), "{answer}");
}

/// `file_manager.list` of `many`: cut to the limit, with the note as the last text, and the
/// structured content the first text says.
fn check_cut(listed: &rmcp::model::CallToolResult) {
    assert_eq!(listed.is_error, Some(false), "{listed:?}");
    let structured = listed
        .structured_content
        .as_ref()
        .expect("structuredContent");
    let texts = texts_of(listed);
    assert_eq!(texts.len(), 2, "{texts:?}");
    let text: Value = serde_json::from_str(texts[0]).expect("the listing's text is JSON");
    assert_eq!(&text, structured);
    hooks::check_cut_listing(structured, &texts);
}

#[tokio::test]
async fn hooks_act_alike_over_stdio_and_streamable_http() {
    use rmcp::model::{CallToolResponse, InputResponses};

    let dir = workspace();
    hooks::sandbox(dir.path());
    let sandbox = dir.path().join("sandbox");
    let read = || call("file_manager.read", json!({"path": "notes/secret.txt"}));
    let delete = |path: &str| call("file_manager.delete_file", json!({ "path": path }));
    let list = || call("file_manager.list", json!({"dir": "many"}));

    // Over stdio, a 2026-07-28 client that can ask its user.
    let client = asking_client(dir.path()).await;
    let complete = |response: CallToolResponse| match response {
        CallToolResponse::Complete(result) => result,
        other => panic!("{other:?}"),
    };
    check_redacted(&complete(client.call_tool_once(read()).await.unwrap()));
    let scratch = complete(client.call_tool_once(delete("tmp/x.txt")).await.unwrap());
    assert_eq!(scratch.is_error, Some(false), "{scratch:?}");
    assert!(
        !sandbox.join("tmp/x.txt").exists(),
        "deleted without a question"
    );
    let CallToolResponse::InputRequired(asked) =
        client.call_tool_once(delete("notes/y.txt")).await.unwrap()
    else {
        panic!("no input_required");
    };
    let question = serde_json::to_string(&asked.input_requests).unwrap();
    assert!(
        question.contains("notes/y.txt"),
        "the whole call: {question}"
    );
    assert!(sandbox.join("notes/y.txt").exists(), "nothing ran yet");
    let yes = InputResponses::from([(
        "confirm".to_owned(),
        json!({"action": "accept", "content": {"approve": true}}),
    )]);
    let answered = delete("notes/y.txt")
        .with_input_responses(yes)
        .with_request_state(asked.request_state.clone().unwrap());
    let done = complete(client.call_tool_once(answered).await.unwrap());
    assert_eq!(done.is_error, Some(false), "{done:?}");
    assert!(!sandbox.join("notes/y.txt").exists());
    check_cut(&complete(client.call_tool_once(list()).await.unwrap()));
    client.cancel().await.unwrap();

    // Over streamable HTTP, a client of the `initialize` era, with the admin's token: the
    // approval token comes back in the answer and is redeemed in `_meta`.
    std::fs::write(sandbox.join("tmp/x.txt"), "scratch").unwrap();
    std::fs::write(sandbox.join("notes/y.txt"), "keep until approved").unwrap();
    let served = mcp_http::serve_http(dir.path());
    let admin = connect_http(&served.url, Some(mcp_http::ADMIN_TOKEN))
        .await
        .unwrap();
    check_redacted(&admin.call_tool(read()).await.unwrap());
    let scratch = admin.call_tool(delete("tmp/x.txt")).await.unwrap();
    assert_eq!(scratch.is_error, Some(false), "{scratch:?}");
    assert!(!sandbox.join("tmp/x.txt").exists());
    let held = admin.call_tool(delete("notes/y.txt")).await.unwrap();
    let text = texts_of(&held)[0];
    assert!(
        held.is_error == Some(true) && text.contains("approval"),
        "{held:?}"
    );
    assert!(sandbox.join("notes/y.txt").exists(), "nothing ran yet");
    let token = text.split("approval token `").nth(1).unwrap();
    let token = &token[..token.find('`').unwrap()];
    let with_token: CallToolRequestParams = serde_json::from_value(json!({
        "name": "file_manager.delete_file",
        "arguments": {"path": "notes/y.txt"},
        "_meta": {(tool_registry::mcp::APPROVAL_TOKEN_META): token},
    }))
    .unwrap();
    let done = admin.call_tool(with_token).await.unwrap();
    assert_eq!(done.is_error, Some(false), "{done:?}");
    assert!(!sandbox.join("notes/y.txt").exists());
    check_cut(&admin.call_tool(list()).await.unwrap());
    admin.cancel().await.unwrap();
}

/// A child process, killed when dropped, so that a failed assertion leaves no process behind.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The peak resident memory of process `pid`, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn hostile_lines_on_stdio_each_get_their_error_and_the_session_goes_on() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;
    use std::time::Duration;

    let dir = workspace();
    let mut server = Killed(
        common::toolreg_command(dir.path(), &["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("toolreg mcp starts"),
    );
    let mut input = server.0.stdin.take().unwrap();
    let output = std::io::BufReader::new(server.0.stdout.take().unwrap());
    let (lines, answers) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in output.lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    // A liveness bound only: a line that gets no answer fails here instead of hanging.
    let answer = || -> Value {
        let line = answers
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer for every line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    };
    let mut send = |line: &[u8]| {
        input.write_all(line).unwrap();
        input.write_all(b"\n").unwrap();
        input.flush().unwrap();
    };
    let error = |answer: &Value| (answer["id"].clone(), answer["error"]["code"].clone());

    send(b"hello");
    assert_eq!(error(&answer()), (Value::Null, json!(-32700)));

    // 50 MB on one line is skipped as it arrives: the server's peak memory does not grow by it.
    let before = peak_kib(server.0.id());
    let pad = "x".repeat(50 << 20);
    send(
        format!(r#"{{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {{"pad": "{pad}"}}}}"#)
            .as_bytes(),
    );
    drop(pad);
    let too_long = answer();
    assert_eq!(error(&too_long), (Value::Null, json!(-32600)), "{too_long}");
    let grown = peak_kib(server.0.id()) - before;
    assert!(
        grown < 16 << 10,
        "peak memory grew by {grown} KiB for a skipped line"
    );

    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    send(deep.as_bytes());
    assert_eq!(error(&answer()), (Value::Null, json!(-32700)));
    send(br#"[{"jsonrpc": "2.0", "id": 2, "method": "ping"}]"#);
    assert_eq!(error(&answer()), (Value::Null, json!(-32600)));
    send(br#"{"jsonrpc": "2.0", "id": 3}"#);
    assert_eq!(error(&answer()), (json!(3), json!(-32600)));

    // The session is whole: the handshake and a listing, answered in order.
    send(br#"{"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}}}"#);
    let initialized = answer();
    assert_eq!(initialized["id"], 10, "{initialized}");
    assert_eq!(initialized["result"]["serverInfo"]["name"], "tool-registry");
    send(br#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#);
    send(br#"{"jsonrpc": "2.0", "id": 11, "method": "tools/list"}"#);
    let listed = answer();
    assert_eq!(listed["id"], 11, "{listed}");
    let tools = listed["result"]["tools"].as_array().expect("a tool list");
    assert!(
        tools.iter().any(|tool| tool["name"] == "research"),
        "{listed}"
    );

    // The end of the input ends the server.
    drop(input);
    let status = server.0.wait().expect("toolreg mcp ends");
    assert!(status.success(), "{status:?}");
}

/// `toolreg mcp` (stdio) mounted with `McpModule`: a long call of a tool the server runs as a
/// task is followed to its result; one dropped before its end (its caller gone) is cancelled at
/// the server. The server keeps its tasks in Redis, where `toolreg tasks list` reads them.
#[tokio::test]
async fn a_mounted_server_answers_a_long_call_with_a_task_which_the_module_follows_or_cancels() {
    let redis = redis::Redis::start();
    let dir = workspace();
    let flags = as_ann(&redis);
    let mounted_flags = [&flags[..], &["--modules", "file_manager"]].concat();
    let (registry, _module) = mounted_with(dir.path(), &mounted_flags, "m").await;
    follows_and_cancels(&registry, dir.path(), &flags).await;
}

/// The same over streamable HTTP: `toolreg mcp --http`, the admin's token.
#[tokio::test]
async fn a_mounted_http_server_answers_a_long_call_with_a_task_too() {
    let redis = redis::Redis::start();
    let dir = workspace();
    let flags = as_ann(&redis);
    let served = mcp_http::serve_http_with(dir.path(), &flags[..2]);
    let registry = std::sync::Arc::new(
        tool_registry::Registry::builder()
            .without_linked()
            .build()
            .unwrap(),
    );
    let token = Some(mcp_http::ADMIN_TOKEN);
    let _module = tool_registry::mcp::McpModule::connect(registry.clone(), "m", &served.url, token)
        .await
        .unwrap();
    follows_and_cancels(&registry, dir.path(), &flags).await;
}

/// The flags of a `toolreg` on `redis`, as ann at the admin level.
fn as_ann(redis: &redis::Redis) -> [&str; 6] {
    ["--redis", &redis.url, "--user", "ann", "--level", "admin"]
}

/// Through `registry`, where `toolreg mcp` is mounted as `m`: a 2-second wait followed to its
/// result, then a 60-second one dropped after 1.5 s; `toolreg [flags] tasks list` then shows one
/// task completed and one cancelled.
async fn follows_and_cancels(registry: &tool_registry::Registry, root: &Path, flags: &[&str]) {
    use tool_registry::{Ctx, Scope};

    let ctx = Ctx::for_scope(Scope::trusted());
    let wait = json!({"path": "never.txt", "timeout_seconds": 2});
    let result = registry
        .call("m.file_manager.wait_for", wait, &ctx)
        .await
        .unwrap();
    assert_eq!(result.content["waited_seconds"], 2, "{result:?}");

    let dropped = tokio::time::timeout(
        std::time::Duration::from_millis(1500),
        registry.call(
            "m.file_manager.wait_for",
            json!({"path": "never.txt", "timeout_seconds": 60}),
            &ctx,
        ),
    )
    .await;
    assert!(dropped.is_err(), "the call was still running");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let listed = common::toolreg_command(root, &[flags, &["tasks", "list"]].concat())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&listed.stdout).into_owned();
        let mut statuses: Vec<&str> = text
            .lines()
            .filter_map(|line| line.split_whitespace().nth(1))
            .collect();
        statuses.sort_unstable();
        if statuses == ["cancelled", "completed"] {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{text}\n{listed:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[test]
fn a_client_that_leaves_before_initialize_ends_the_stdio_server_cleanly() {
    let dir = workspace();
    let left = common::toolreg_command(dir.path(), &["mcp"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(left.status.code(), Some(0), "{left:?}");
    assert!(
        left.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&left.stderr)
    );
}
