//! The test kit on the reference tools: every tool called with arguments from its schema, a
//! scripted model in every provider's shape and in text formats, the in-process MCP client on
//! both revisions, and a planted panic found with the arguments that caused it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_registry::format::Provider;
use tool_registry::mcp::McpServer;
use tool_registry::spec::ToolHandler;
use tool_registry::testing::{McpClient, Outcome, Revision, ScriptedModel, call_every_tool};
use tool_registry::{Ctx, Registry, Scope, ToolSpec};
use tool_registry_tools::Config;

/// The reference tools on folders of their own.
fn reference(root: &std::path::Path) -> Registry {
    let config = Config::under(root);
    for dir in [&config.kb_dir, &config.inbox_dir, &config.sandbox_root] {
        std::fs::create_dir_all(dir).unwrap();
    }
    Registry::builder()
        .state(config)
        .allow_lists(tool_registry_tools::allow_lists())
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reference_tool_survives_its_edge_and_drawn_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let registry = reference(dir.path());
    let report = call_every_tool(&registry)
        // It waits up to its `timeout_seconds` for a file no one writes: its high edge is 300 s.
        .skip(["file_manager.wait_for"])
        .timeout(Duration::from_secs(20))
        .await;
    report.assert_healthy();
    let called: std::collections::BTreeSet<&str> =
        report.calls.iter().map(|call| call.tool.as_str()).collect();
    assert_eq!(
        called.len(),
        registry.tools(&Scope::trusted()).len() - 1,
        "{report}"
    );
    // Each tool: the three edge cases and drawn values (one for a tool without arguments).
    for tool in &called {
        let least = if *tool == "scheduler.list_jobs" { 1 } else { 5 };
        assert!(report.of(tool).count() >= least, "{tool}: {report}");
    }
    // The tools' own rules that their schemas do not state (a name's characters, a chart's
    // 1 to 64 values) are refusals, reported per tool; most calls get through.
    assert!(report.count("ok") >= 40, "{report}");
    let text = report.to_string();
    assert!(
        text.contains("chart.export") && text.contains("calls refused]"),
        "{text}"
    );
    // An empty string reached a tool that reads one.
    assert!(
        report
            .of("file_manager.read")
            .any(|call| call.arguments["path"] == ""),
        "{report}"
    );
    // Tools that ask for a person's approval were held, not run.
    let delete: Vec<_> = report.of("file_manager.delete_file").collect();
    assert!(!delete.is_empty());
    assert!(
        delete.iter().all(
            |call| matches!(&call.outcome, Outcome::Held { code, .. } if code == "needs_approval")
        ),
        "{delete:?}"
    );
    // The same seed draws the same arguments.
    let mut runs = Vec::new();
    for _ in 0..2 {
        let run = call_every_tool(&registry)
            .skip([
                "file_manager.wait_for",
                "scheduler.add_job",
                "scheduler.remove_job",
            ])
            .drawn(3)
            .seed(9)
            .await;
        let args: Vec<Value> = run.calls.into_iter().map(|call| call.arguments).collect();
        runs.push(args);
    }
    assert!(runs[0].len() > 20);
    assert_eq!(runs[0], runs[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planted_panic_a_hang_and_a_lying_schema_are_reported_with_their_arguments() {
    let registry = Registry::builder()
        .without_linked()
        .default_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "count": {"type": "integer", "minimum": 0, "maximum": 3}},
        "required": ["text"]
    });
    let spec = |name: &str| {
        ToolSpec::builder(name)
            .description("Planted.")
            .input_schema(schema.clone())
            .build()
            .unwrap()
    };
    let first_char = ToolHandler::new(|args: Value, _ctx| async move {
        let text = args["text"].as_str().unwrap_or_default().to_owned();
        // Panics on the empty string, as `&text[..1]` would.
        let first = text.chars().next().expect("a first character");
        Ok::<_, String>(json!(first.to_string()))
    });
    registry.register(spec("first_char"), first_char).unwrap();
    let hangs = ToolHandler::new(|args: Value, _ctx| async move {
        if args["count"] == 3 {
            std::future::pending::<()>().await;
        }
        Ok::<_, String>(json!("done"))
    });
    registry.register(spec("hangs_on_three"), hangs).unwrap();
    let lies = ToolSpec::builder("lies")
        .description("Says it returns a number.")
        .input_schema(schema.clone())
        .output_schema(json!({"type": "integer"}))
        .build()
        .unwrap();
    let lies_handler =
        ToolHandler::new(
            |_args: Value, _ctx| async move { Ok::<_, String>(json!("not a number")) },
        );
    registry.register(lies, lies_handler).unwrap();
    let fine =
        ToolHandler::new(
            |_args: Value, _ctx| async move { Err::<Value, _>("no such text".to_owned()) },
        );
    registry.register(spec("fails_politely"), fine).unwrap();

    let report = call_every_tool(&registry)
        .timeout(Duration::from_millis(300))
        .drawn(4)
        .await;
    let text = report.to_string();

    let panic = report
        .of("first_char")
        .find(|call| matches!(call.outcome, Outcome::Panicked { .. }))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(panic.arguments["text"], "", "{text}");
    assert!(
        panic.outcome.message().contains("a first character"),
        "{text}"
    );
    assert!(text.contains(r#"first_char {"text":""}"#), "{text}");

    let hang = report
        .of("hangs_on_three")
        .find(|call| matches!(call.outcome, Outcome::TimedOut { .. }))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(hang.arguments["count"], 3);

    assert!(
        report
            .of("lies")
            .all(|call| matches!(call.outcome, Outcome::InvalidOutput { .. })),
        "{text}"
    );
    assert!(
        report
            .of("fails_politely")
            .all(|call| matches!(&call.outcome, Outcome::Failed { .. })),
        "{text}"
    );
    assert!(
        report
            .of("fails_politely")
            .all(|call| !call.outcome.is_problem())
    );

    let failed = std::panic::catch_unwind(|| report.assert_healthy()).unwrap_err();
    let message = failed.downcast_ref::<String>().unwrap();
    assert!(
        message.contains("panicked") && message.contains("first_char"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_model_runs_every_providers_shape_and_text_formats_through_the_gates() {
    let dir = tempfile::tempdir().unwrap();
    let registry = reference(dir.path());
    let create = json!({"path": "notes/a.md", "content": "# A\nfirst"});
    let ctx = Ctx::for_scope(Scope::trusted().with_user("ana"));

    // OpenAI Chat Completions: a native message with its tool_calls.
    let openai = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_abc", "type": "function", "function": {
            "name": "file_manager.create_document", "arguments": create.to_string()}}]});
    // A local model's Hermes text, with a thought and prose around the call.
    let hermes = "<think>Now read it back.</think>Reading.\n<tool_call>{\"name\": \"file_manager.read\", \"arguments\": {\"path\": \"notes/a.md\"}}</tool_call>";
    // Gemini: a functionCall part; and a call of a tool that does not exist.
    let gemini = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "file_manager.list", "args": {"path": "notes"}}},
        {"functionCall": {"name": "file_manager.shred", "args": {}}}]}}]});
    // Mistral's text format, a destructive call held for approval.
    let mistral = "[TOOL_CALLS]file_manager.delete_file[ARGS]{\"path\": \"notes/a.md\"}";

    for provider in [
        Provider::OpenAi,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Responses,
    ] {
        let transcript = ScriptedModel::new(provider)
            .turn(openai.clone())
            .turn(hermes)
            .turn(gemini.clone())
            .turn(mistral)
            .run(&registry, &ctx)
            .await;
        let names: Vec<&str> = transcript.calls().map(|call| call.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "file_manager.create_document",
                "file_manager.read",
                "file_manager.list",
                "file_manager.delete_file"
            ]
        );
        let read = transcript.result_of("file_manager.read").unwrap();
        assert!(
            read.success && read.content.to_string().contains("first"),
            "{read:?}"
        );
        assert_eq!(transcript.turns[1].parsed.reasoning, "Now read it back.");
        assert_eq!(transcript.turns[1].parsed.content, "Reading.");
        assert_eq!(
            transcript.turns[2].parsed.unknown[0].name,
            "file_manager.shred"
        );
        let held = transcript.result_of("file_manager.delete_file").unwrap();
        assert!(!held.success);
        assert_eq!(held.audit.outcome.as_deref(), Some("needs_approval"));
        // The file is still there: the held call did not run.
        assert!(
            dir.path().join("sandbox/notes/a.md").exists()
                || transcript.turns[1].results[0].success
        );

        // Each result answered in the provider's shape, under the call's id.
        let first = &transcript.turns[0].messages[0];
        let second = &transcript.turns[1].messages[0];
        match provider {
            Provider::OpenAi => {
                assert_eq!(first["role"], "tool");
                assert_eq!(first["tool_call_id"], "call_abc");
                assert_eq!(second["tool_call_id"], "call_2_1");
            }
            Provider::Anthropic => {
                assert_eq!(first["type"], "tool_result");
                assert_eq!(first["tool_use_id"], "call_abc");
            }
            Provider::Gemini => {
                assert_eq!(
                    first["functionResponse"]["name"],
                    "file_manager.create_document"
                );
            }
            Provider::Responses => {
                assert_eq!(first["type"], "function_call_output");
                assert_eq!(first["call_id"], "call_abc");
            }
            _ => unreachable!(),
        }
        std::fs::remove_dir_all(dir.path().join("sandbox")).unwrap();
        std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
    }

    // A guest's model: a tool outside its scope reads as unknown and never runs.
    let guest = ScriptedModel::new(Provider::OpenAi)
        .turn("<tool_call>{\"name\": \"scheduler.add_job\", \"arguments\": {\"name\": \"x\", \"schedule\": \"daily\", \"command\": \"ls\"}}</tool_call>")
        .run(&registry, &Ctx::for_scope(Scope::guest()))
        .await;
    assert_eq!(guest.calls().count(), 0);
    assert_eq!(guest.turns[0].parsed.unknown.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_in_process_mcp_client_lists_and_calls_on_both_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let registry = Arc::new(reference(dir.path()));
    for revision in [Revision::Current, Revision::Sessions] {
        let server = McpServer::new(Arc::clone(&registry), Scope::trusted());
        let client = McpClient::connect_with(server, (), revision).await.unwrap();
        let names = client.tool_names().await.unwrap();
        assert_eq!(
            names.len(),
            registry.tools(&Scope::trusted()).len(),
            "{names:?}"
        );
        let created = client
            .call(
                "file_manager.create_document",
                json!({"path": "m.md", "content": "hello"}),
            )
            .await
            .unwrap();
        assert_ne!(created.is_error, Some(true), "{created:?}");
        let read = client
            .call("file_manager.read", json!({"path": "m.md"}))
            .await
            .unwrap();
        assert!(
            serde_json::to_string(&read).unwrap().contains("hello"),
            "{read:?}"
        );
        // A tool's failure is a result, not a protocol error.
        let missing = client
            .call("file_manager.read", json!({"path": "nope.md"}))
            .await
            .unwrap();
        assert_eq!(missing.is_error, Some(true));
        client.close().await.unwrap();
        std::fs::remove_file(dir.path().join("sandbox/m.md")).unwrap();
    }
    // A guest's server lists only what a guest may see, and refuses the rest as unknown.
    let client = McpClient::connect(McpServer::new(Arc::clone(&registry), Scope::guest()))
        .await
        .unwrap();
    let names = client.tool_names().await.unwrap();
    assert!(
        !names.iter().any(|name| name == "scheduler.add_job"),
        "{names:?}"
    );
    let refused = client
        .call(
            "scheduler.add_job",
            json!({"name": "x", "schedule": "daily", "command": "ls"}),
        )
        .await;
    let text = format!("{refused:?}");
    assert!(refused.is_err() || text.contains("unknown"), "{text}");
    client.close().await.unwrap();
}
