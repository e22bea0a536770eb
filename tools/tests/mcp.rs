//! `toolreg mcp` over stdio, driven by the official Rust SDK's client (rmcp) as a child process.

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, ErrorCode};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

mod common;
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
