//! `toolreg mcp` driven by the official MCP Python SDK (`mcp` 2.3.0), over stdio and streamable
//! HTTP, in both protocol eras: listing per scope and per token, calls, refusals, progress,
//! cancellation, `list_changed` after a `toolreg disable`, confirmation (`input_required`
//! in 2026-07-28, the approval token before; none for a delete under `tmp/`), media
//! (`chart.draw`'s image and `chart.export`'s file and link, byte for byte, with
//! `structuredContent` that fits the listed `outputSchema`), and the hooks (a key redacted, a
//! long listing cut to its limit). `tests/mcp_py/check.py` does the checks. `scripts/test` makes the
//! virtualenv it runs in (`target/py-mcp`).
//!
//! The other way round, a server written with the SDK's `MCPServer` (`tests/mcp_py/server.py`)
//! mounted with `McpModule`: its image, link and value arrive whole, through the registry, the
//! `toolreg` gateway and `toolreg mcp` alike, and its lies are typed errors.

use std::path::PathBuf;
use std::process::Command;

use crate::common;
#[path = "common/mcp_http.rs"]
mod mcp_http;
#[path = "common/redis.rs"]
mod redis;
#[path = "common/serve.rs"]
mod serve;
#[path = "common/venv.rs"]
mod venv;

/// The virtualenv's Python: `$TOOLREG_MCP_PYTHON`, else `target/py-mcp/bin/python` at the
/// workspace's root.
fn python() -> PathBuf {
    venv::python(&venv::MCP_SDK)
}

/// The virtualenv with FastMCP's client and its tasks extension: `$TOOLREG_TASKS_PYTHON`,
/// else `target/py-tasks/bin/python`.
fn tasks_python() -> PathBuf {
    venv::python(&venv::Venv {
        var: "TOOLREG_TASKS_PYTHON",
        dir: "py-tasks",
        imports: "fastmcp_tasks",
        install: "fastmcp-tasks==4.1.4",
        what: "FastMCP's client with fastmcp-tasks is",
    })
}

/// FastMCP's client with `fastmcp-tasks` (the 2026-07-28 tasks extension) against `toolreg
/// mcp --http`: a 3-second `file_manager.wait_for` as a task (handle, polls, progress,
/// result), another cancelled, another caller's task answered as an unknown one, `call_tool`
/// following a task, a legacy client answered within its request.
#[test]
fn fastmcp_tasks_runs_a_task_and_cancels_another() {
    let python = tasks_python();
    let dir = common::workspace();
    let served = mcp_http::serve_http(dir.path());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_py/tasks.py");
    passes(
        Command::new(python).arg(script),
        dir.path(),
        &served.url,
        &[
            "a 3-second task: handle, polls, progress, result",
            "a task cancelled",
            "another caller's task is an unknown one",
            "call_tool follows a task; a short call answers at once",
            "a legacy client gets its answer within the request",
        ],
    );
}

/// Runs `command URL ADMIN_TOKEN` in `dir`: it must succeed and print each of `checks`, then
/// "all checks passed".
fn passes(command: &mut Command, dir: &std::path::Path, url: &str, checks: &[&str]) {
    let output = command
        .arg(url)
        .arg(mcp_http::ADMIN_TOKEN)
        .current_dir(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for check in checks.iter().chain(&["all checks passed"]) {
        assert!(stdout.contains(check), "{check}\n{stdout}");
    }
}

/// Two `toolreg mcp --http --redis` instances on one Redis, driven by FastMCP's tasks client: a
/// task started on one is polled, answered and cancelled through the other; killing the
/// instance that runs a task fails it within the lease (`--task-lease 1s`).
#[test]
fn two_instances_on_one_redis_answer_for_each_others_tasks() {
    use std::io::{BufRead, Write};
    let python = tasks_python();
    let redis = redis::Redis::start();
    let dir = common::workspace();
    let junk = dir.path().join("sandbox/junk");
    std::fs::create_dir_all(junk.join("keep")).unwrap();
    std::fs::write(junk.join("a.txt"), "a").unwrap();
    std::fs::write(junk.join("b.txt"), "b").unwrap();
    let flags = ["--redis", redis.url.as_str(), "--task-lease", "1s"];
    let mut first = mcp_http::serve_http_with(dir.path(), &flags);
    let second = mcp_http::serve_http_with(dir.path(), &flags);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_py/fleet_tasks.py");
    let mut child = Command::new(python)
        .arg(script)
        .args([&first.url, &second.url, mcp_http::ADMIN_TOKEN, "1"])
        .current_dir(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        let running = line.starts_with("TASK ");
        seen.push(line);
        if running {
            first.kill();
            writeln!(child.stdin.as_mut().unwrap(), "killed").unwrap();
            break;
        }
    }
    seen.extend(lines.map(Result::unwrap));
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let stdout = seen.join("\n");
    assert!(status.success(), "{stdout}\n{stderr}");
    for check in [
        "a task started on one instance is polled and answered through the other",
        "a task started on one instance is cancelled through the other",
        "killing the running instance fails its task within the lease",
        "all checks passed",
    ] {
        assert!(stdout.contains(check), "{check}\n{stdout}");
    }
    assert!(!junk.join("a.txt").exists() && !junk.join("b.txt").exists());
    assert!(junk.join("keep").is_dir(), "a folder inside is kept");
    drop(second);

    // The command line reads the same tasks from Redis, as their caller only.
    let toolreg = |args: &[&str]| {
        let mut all = vec!["--redis", redis.url.as_str()];
        all.extend_from_slice(args);
        common::toolreg_command(dir.path(), &all).output().unwrap()
    };
    let listed = toolreg(&["--user", "ann", "--level", "admin", "tasks", "list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.status.success(), "{listed:?}");
    let statuses: Vec<&str> = text
        .lines()
        .filter_map(|line| line.split_whitespace().nth(1))
        .collect();
    let mut sorted = statuses.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, ["cancelled", "completed", "failed"], "{text}");
    let id = text
        .lines()
        .next()
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap();
    let got = toolreg(&["--user", "ann", "--level", "admin", "tasks", "get", id]);
    let record: serde_json::Value = serde_json::from_slice(&got.stdout).unwrap();
    assert_eq!(record["id"], id);
    for who in [
        &["--user", "bob", "--level", "admin"][..],
        &["--user", "ann"][..],
    ] {
        let theirs = toolreg(&[who, &["tasks", "get", id]].concat());
        let forged = toolreg(&[who, &["tasks", "get", "0123abcd"]].concat());
        assert_eq!(theirs.status.code(), Some(1), "{theirs:?}");
        assert_eq!(
            theirs.stderr, forged.stderr,
            "another caller's task is an unknown one"
        );
        assert!(String::from_utf8_lossy(&theirs.stderr).contains("task not found"));
        let listed = toolreg(&[who, &["tasks", "list"]].concat());
        assert_eq!(
            String::from_utf8_lossy(&listed.stdout).trim(),
            "no tasks",
            "{listed:?}"
        );
    }
    let ended = toolreg(&["--user", "ann", "--level", "admin", "tasks", "cancel", id]);
    assert!(
        String::from_utf8_lossy(&ended.stderr).contains("has ended"),
        "{ended:?}"
    );
    let alone = common::toolreg_command(dir.path(), &["tasks", "list"])
        .output()
        .unwrap();
    assert_eq!(alone.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&alone.stderr).contains("--redis"),
        "{alone:?}"
    );
}

/// The official TypeScript SDK's client (the 2025-11-25 revision's tasks) against `toolreg mcp
/// --http`: `execution.taskSupport` in `tools/list`, a 3-second task (handle, polls, progress,
/// result), another cancelled, the caller's tasks listed, another caller's refused, a plain
/// call of a tool that is always a task refused. Run with Node.js and the SDK `scripts/test`
/// installs in `target/ts-mcp` (or `$TOOLREG_TS_MCP`).
#[test]
fn the_typescript_sdk_runs_a_task_of_the_2025_11_25_revision_and_cancels_another() {
    let sdk = std::env::var_os("TOOLREG_TS_MCP").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/ts-mcp"),
        PathBuf::from,
    );
    let modules = sdk.join("node_modules");
    let node_ok = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        node_ok
            && modules
                .join("@modelcontextprotocol/sdk/package.json")
                .is_file(),
        "Node.js or the MCP TypeScript SDK is missing: run scripts/test, which installs them, or \
         `apt-get install -y nodejs npm && npm install --prefix target/ts-mcp @modelcontextprotocol/sdk@1.32.2`"
    );
    let dir = common::workspace();
    // The script beside the SDK's modules, where Node's import finds them.
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("tasks.mjs");
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_ts/tasks.mjs"),
        &script,
    )
    .unwrap();
    std::os::unix::fs::symlink(
        modules.canonicalize().unwrap(),
        scripts.path().join("node_modules"),
    )
    .unwrap();
    let served = mcp_http::serve_http(dir.path());
    passes(
        Command::new("node").arg(&script),
        dir.path(),
        &served.url,
        &[
            "tools/list says which tools are tasks",
            "a 3-second task: handle, polls, progress, result",
            "a task cancelled",
            "another caller's task is an unknown one",
            "a tool that is always a task refuses a plain call",
        ],
    );
}

#[test]
fn the_official_python_sdk_lists_and_calls_in_both_eras_over_stdio_and_http() {
    let python = python();
    let dir = common::workspace();
    let kb = dir.path().join("kb");
    let served = mcp_http::serve_http(dir.path());
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_py/check.py");
    let output = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_toolreg"))
        .arg(&kb)
        .arg(&served.url)
        .arg(mcp_http::ADMIN_TOKEN)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    for mode in ["legacy", "2026-07-28"] {
        for check in [
            "stdio lists per scope",
            "stdio call",
            "stdio media",
            "stdio hooks",
            "HTTP hooks",
            "a delete under tmp/ runs at once",
            "a list answers structuredContent {result}",
            "HTTP media",
            "stdio progress notifications",
            "list_changed",
            "confirmation",
            "streamable HTTP: no token is a guest",
            "HTTP progress notifications",
        ] {
            assert!(
                stdout.contains(&format!("{mode}: {check}")),
                "{mode}: {check}\n{stdout}"
            );
        }
    }
}

/// `tests/mcp_py/server.py` (the Python SDK's `MCPServer`) as a command that serves `picture`.
fn python_server(picture: &std::path::Path) -> Vec<String> {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_py/server.py");
    [python(), script, picture.to_owned()]
        .iter()
        .map(|path| path.to_str().unwrap().to_owned())
        .collect()
}

/// A real PNG, as `chart.draw` draws it, written to `dir/picture.png`.
fn picture(dir: &std::path::Path) -> (PathBuf, Vec<u8>) {
    use tool_registry::content::{Block, IntoToolResult};
    let drawn = tool_registry_tools::chart::draw(vec![2.0, 7.0, 1.0, 8.0])
        .unwrap()
        .into_tool_result()
        .unwrap();
    let Block::Image(image) = &drawn.blocks[0] else {
        panic!("{drawn:?}")
    };
    let path = dir.join("picture.png");
    std::fs::write(&path, image.data()).unwrap();
    (path, image.data().to_vec())
}

/// What `picture` answers besides the image, for `name`, of a picture of `bytes` bytes.
fn picture_value(name: &str, bytes: usize) -> serde_json::Value {
    serde_json::json!({
        "name": name,
        "bytes": bytes,
        "source": format!("https://example.com/pictures/{name}.png"),
    })
}

#[tokio::test]
async fn a_python_sdk_server_mounted_keeps_every_block_and_its_lies_are_invalid_output() {
    use serde_json::json;
    use tool_registry::content::{Block, ContentLimits, Image, ResourceLink};
    use tool_registry::mcp::McpModule;
    use tool_registry::{Ctx, Listing, Registry, Scope, ToolError};

    let dir = common::workspace();
    let (path, png) = picture(dir.path());
    // A block may hold 64 KiB here, a result 128 KiB.
    let registry = std::sync::Arc::new(
        Registry::builder()
            .without_linked()
            .content_limits(ContentLimits::new(64 << 10, 128 << 10))
            .build()
            .unwrap(),
    );
    let command = python_server(&path);
    let mut process = tokio::process::Command::new(&command[0]);
    process.args(&command[1..]);
    let module = McpModule::spawn(registry.clone(), "py", process)
        .await
        .unwrap();
    assert_eq!(module.tools(), ["py.liar", "py.numbers", "py.picture"]);
    let listed = registry.get("py.picture", Listing::every()).unwrap();
    assert_eq!(
        listed.output_schema().unwrap()["required"],
        json!(["name", "bytes", "source"]),
        "the server's output schema is this registry's"
    );
    let ctx = Ctx::for_scope(Scope::user("bob"));

    // The value, the image byte for byte and the link, in order; the text that repeats the
    // value is not kept twice.
    let cat = registry
        .call("py.picture", json!({"name": "cat"}), &ctx)
        .await
        .unwrap();
    assert_eq!(cat.content, picture_value("cat", png.len()));
    let source = "https://example.com/pictures/cat.png";
    assert_eq!(
        cat.blocks,
        [
            Block::from(Image::png(png.clone())),
            Block::from(
                ResourceLink::new(source, "cat.png")
                    .with_mime_type("image/png")
                    .with_size(png.len() as u64)
            ),
        ]
    );
    // The SDK's own wrapper (no marker of ours) stays, and its text blocks with it.
    let numbers = registry
        .call("py.numbers", json!({"n": 3}), &ctx)
        .await
        .unwrap();
    assert_eq!(numbers.content, json!({"result": [0, 1, 2]}));

    // What the liar answers is checked here, whatever its server says of it, and each lie is
    // a typed error naming the block or the field.
    // A 1 MiB image is refused before it is decoded; one of 8 MiB is past the longest answer
    // read from the server (what a result may hold in base64, and 4 MiB), skipped as it
    // arrives, and its call answered at once.
    for (case, size, path, says) in [
        ("bad_base64", 0, "blocks[0]", "invalid base64"),
        ("not_png", 0, "blocks[0]", "not image/png"),
        ("file_link", 0, "blocks[0]", "`file:` scheme"),
        ("javascript_link", 0, "blocks[0]", "`javascript:` scheme"),
        ("wrong_value", 0, "n", "`type` rule"),
        (
            "big",
            1 << 20,
            "blocks[0]",
            "more than the limit of 65536 bytes a block",
        ),
        ("huge", 8 << 20, "", "longer than 4369068 bytes"),
    ] {
        let started = std::time::Instant::now();
        let error = registry
            .call("py.liar", json!({"case": case, "size": size}), &ctx)
            .await
            .unwrap_err();
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{case}: answered, not timed out"
        );
        let ToolError::InvalidOutput {
            tool,
            path: at,
            message,
        } = &error
        else {
            panic!("{case}: {error:?}")
        };
        let said = (tool.as_str(), at.as_str(), message.contains(says));
        assert_eq!(said, ("py.liar", path, true), "{case}: {message}");
    }
    // And the module goes on: an honest answer, another tool.
    let fine = registry
        .call("py.liar", json!({"case": "fine"}), &ctx)
        .await
        .unwrap();
    assert_eq!(fine.content, json!({"n": 1}));
    assert!(fine.blocks.is_empty());
    let again = registry
        .call("py.picture", json!({"name": "dog"}), &ctx)
        .await
        .unwrap();
    assert_eq!(again.blocks[0], Block::from(Image::png(png)));
}

#[tokio::test]
async fn a_mounted_python_sdk_server_answers_the_same_bytes_through_toolreg() {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequestParams, ContentBlock};
    use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
    use serde_json::{Value, json};

    let dir = common::workspace();
    let (path, png) = picture(dir.path());
    // A JSON list of strings is a TOML array too.
    let map = serde_json::to_string(&python_server(&path)).unwrap();
    std::fs::write(
        dir.path().join("map.toml"),
        format!("[mcp.py]\ncommand = {map}\n"),
    )
    .unwrap();
    let value = picture_value("cat", png.len());

    // `toolreg call`, the registry with the module mounted: the image saved is the picture.
    let called = common::toolreg_command(
        dir.path(),
        &[
            "--module-map",
            "map.toml",
            "--user",
            "bob",
            "call",
            "py.picture",
            r#"{"name": "cat"}"#,
            "--save",
            "out",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(called.status.code(), Some(0), "{called:?}");
    let printed: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(printed["content"], value);
    let saved = printed["blocks"][0]["saved"].as_str().unwrap();
    assert_eq!(std::fs::read(dir.path().join(saved)).unwrap(), png);
    assert_eq!(printed["blocks"][1]["uri"], value["source"]);

    // Through `toolreg serve --http`, the gateway: `/execute` answers the same blocks.
    let served = serve::serve(
        dir.path(),
        &["--module-map", "map.toml", "serve", "--http", "127.0.0.1:0"],
    );
    let executed = serve::guest_call(&served.addr, "py.picture", &json!({"name": "cat"}));
    drop(served);
    assert_eq!(executed["content"], value);
    let blocks = &executed["blocks"];
    assert_eq!(
        (&blocks[0]["type"], &blocks[0]["mimeType"]),
        (&json!("image"), &json!("image/png"))
    );
    assert_eq!(
        BASE64.decode(blocks[0]["data"].as_str().unwrap()).unwrap(),
        png
    );
    assert_eq!(
        blocks[1],
        json!({"type": "resource_link", "uri": value["source"], "name": "cat.png",
               "mimeType": "image/png", "size": png.len()})
    );

    // Served again from `toolreg mcp`: an MCP client gets the same image, link and value.
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolreg")).configure(|c| {
        c.current_dir(dir.path()).args([
            "--module-map",
            "map.toml",
            "--level",
            "user",
            "--user",
            "bob",
            "mcp",
        ]);
    });
    let client = ().serve(TokioChildProcess::new(command).unwrap()).await.unwrap();
    let tools = client.list_all_tools().await.unwrap();
    let listed = tools.iter().find(|t| t.name == "py.picture").unwrap();
    assert_eq!(
        listed.output_schema.as_ref().unwrap()["required"],
        json!(["name", "bytes", "source"])
    );
    let arguments = json!({"name": "cat"}).as_object().unwrap().clone();
    let answer = client
        .call_tool(CallToolRequestParams::new("py.picture").with_arguments(arguments))
        .await
        .unwrap();
    assert_eq!(answer.structured_content, Some(value.clone()));
    let [
        ContentBlock::Text(text),
        ContentBlock::Image(image),
        ContentBlock::ResourceLink(link),
    ] = answer.content.as_slice()
    else {
        panic!("{answer:?}")
    };
    assert_eq!(serde_json::from_str::<Value>(&text.text).unwrap(), value);
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(BASE64.decode(&image.data).unwrap(), png);
    assert_eq!(
        (link.uri.as_str(), link.name.as_str()),
        (value["source"].as_str().unwrap(), "cat.png")
    );
    client.cancel().await.unwrap();
}
