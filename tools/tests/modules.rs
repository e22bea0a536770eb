//! `toolreg serve --http` and `toolreg --module-map`: the reference binary as an HTTP tool
//! module and as the gateway that uses it.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::common;
#[path = "common/hooks.rs"]
mod hooks;
#[path = "common/serve.rs"]
mod serve;
use common::{toolreg_command, workspace};
use serve::{MODULE_TOKEN, execute, guest_call, serve};

/// `GET path` over a plain socket: the whole answer, headers in lower case.
fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let host = addr.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    format!("{}\r\n\r\n{body}", head.to_lowercase())
}

fn run(root: &Path, args: &[&str]) -> Output {
    toolreg_command(root, args).output().expect("toolreg runs")
}

fn json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[test]
fn every_command_sees_the_tools_of_a_module_map() {
    let module_dir = workspace();
    let module = serve(
        module_dir.path(),
        &[
            "--modules",
            "research,file_manager",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--module",
            "kb",
        ],
    );
    // The catalog page of what a guest may see, at `/`.
    let page = get(&module.addr, "/");
    assert!(page.starts_with("http/1.1 200"), "{page}");
    assert!(
        page.contains("content-security-policy: default-src 'none'"),
        "{page}"
    );
    assert!(
        page.contains("<!doctype html>") && page.contains("id=\"tool-research\""),
        "a page of the tools"
    );
    assert!(!page.contains("delete_file"), "a guest's page only");

    let dir = workspace();
    let map = dir.path().join("modules.toml");
    std::fs::write(
        &map,
        format!(
            "[modules.kb]\nurl = \"{}\"\ntoken_env = \"KB_TOKEN\"\n",
            module.addr
        ),
    )
    .unwrap();
    let map = map.to_str().unwrap();
    let with_map = |args: &[&str]| {
        let mut command = toolreg_command(dir.path(), &[&["--module-map", map], args].concat());
        command.env("KB_TOKEN", "kb-secret");
        command.output().expect("toolreg runs")
    };

    let listed = with_map(&["list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("kb.research"), "{text}");
    assert!(text.contains("kb.file_manager.delete_file"), "{text}");
    assert!(
        !text.contains("kb.source"),
        "the module serves only its scope: {text}"
    );

    let called = with_map(&[
        "--user",
        "bob",
        "--level",
        "user",
        "call",
        "kb.research",
        r#"{"query": "caching"}"#,
    ]);
    assert_eq!(called.status.code(), Some(0), "{called:?}");
    let result = json(&called);
    assert_eq!(result["content"][0]["title"], "Caching");
    assert_eq!(result["audit"]["tool"], "kb.research");
    assert_eq!(result["audit"]["user"], "bob");
    assert_eq!(result["audit"]["module"], "kb");

    let tools = json(&with_map(&["tools", "--format", "openai"]));
    let wire: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(wire.contains(&"kb__research"), "{wire:?}");
    let catalog = String::from_utf8(with_map(&["catalog"]).stdout).unwrap();
    assert!(catalog.contains("kb.research"));

    let statuses = json(&with_map(&["modules", "list"]));
    assert_eq!(statuses[0]["name"], "kb");
    assert_eq!(statuses[0]["tools"], 7);
    // The manifest was kept in the cache file, so this run did not fetch it.
    assert_eq!(statuses[0]["source"], "cache");
    let refreshed = with_map(&["modules", "refresh"]);
    assert_eq!(refreshed.status.code(), Some(0));
    assert_eq!(json(&refreshed)[0]["source"], "fetched");

    // Without the secret the gateway is a guest of the module, and `delete_file` (user level)
    // is not listed to it.
    let guest = run(
        dir.path(),
        &["--module-map", map, "--module-cache", "guest.json", "list"],
    );
    let text = String::from_utf8_lossy(&guest.stdout);
    assert!(text.contains("kb.research"), "{text}");
    assert!(!text.contains("kb.file_manager.delete_file"), "{text}");

    drop(module);
    let down = with_map(&["modules", "refresh"]);
    assert_eq!(down.status.code(), Some(1));
    assert!(
        json(&down)[0]["error"]
            .as_str()
            .unwrap()
            .contains("connection refused")
    );
}

#[test]
fn module_commands_without_a_map_or_with_a_bad_one_are_usage_errors() {
    let dir = workspace();
    let output = run(dir.path(), &["modules", "list"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--module-map"));
    std::fs::write(dir.path().join("bad.toml"), "[modules.kb]\nurl = 5\n").unwrap();
    let output = run(dir.path(), &["--module-map", "bad.toml", "list"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("module map"));
    let output = run(dir.path(), &["serve", "--http", "0.0.0.0:0"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not a loopback address"));
}

#[test]
fn guests_of_a_server_and_local_calls_without_a_user_have_daily_limits_of_their_own() {
    let dir = workspace();
    let module = serve(
        dir.path(),
        &["--limits", "limits.json", "serve", "--http", "127.0.0.1:0"],
    );
    let query = |n: usize| serde_json::json!({ "query": format!("caching {n}") });
    let outcome = |result: Value| match result["success"].as_bool() {
        Some(true) => "ok".to_owned(),
        _ => result["content"]["error"]["code"].to_string(),
    };
    let guest = |n| outcome(guest_call(&module.addr, "research", &query(n)));
    let local = |n: usize| {
        let args = query(n).to_string();
        let output = run(
            dir.path(),
            &["--limits", "limits.json", "call", "research", &args],
        );
        outcome(json(&output))
    };
    // `research` has a daily limit of 3; each side uses its own up, and only its own. Each
    // round asks new questions: a question asked before is answered from the server's cache,
    // which spends no quota.
    let used_up = ["ok", "ok", "ok", "\"rate_limited\""];
    let spend = |side: &dyn Fn(usize) -> String, round: usize| {
        (round * 10..round * 10 + 4).map(side).collect::<Vec<_>>()
    };
    assert_eq!(spend(&guest, 0), used_up, "guests first");
    assert_eq!(
        spend(&local, 1),
        used_up,
        "the command line after the guests"
    );
    // And the other way round, from a fresh count.
    std::fs::remove_file(dir.path().join("limits.json")).unwrap();
    assert_eq!(spend(&local, 2), used_up, "the command line first");
    assert_eq!(spend(&guest, 3), used_up, "guests after the command line");
    // A question asked before: answered from the cache, past the limit.
    assert_eq!(guest(30), "ok", "a cached answer spends no quota");
}

/// The hooks of a front end's calls, for alice: `call(tool, args)` answers the result of a
/// call of the module `kb`'s `tool`, and `approve(tool, args, token)` of the call the token
/// holds. `sandbox` is the module's. A key in a file is redacted, `delete_file` runs at once
/// under `tmp/` and waits for approval elsewhere, and a long listing is cut to its limit.
fn hooks_act_on(
    call: &dyn Fn(&str, Value) -> Value,
    approve: &dyn Fn(&str, Value, &str) -> Value,
    sandbox: &Path,
) {
    use serde_json::json;

    let read = call("kb.file_manager.read", json!({"path": "notes/secret.txt"}));
    assert_eq!(read["success"], true, "{read}");
    assert_eq!(
        read["content"]["content"],
        "OPENAI_API_KEY=[redacted secret]\nkeep this line\n"
    );
    assert!(!read.to_string().contains(&hooks::fake_key()), "{read}");

    let scratch = call("kb.file_manager.delete_file", json!({"path": "tmp/x.txt"}));
    assert_eq!(scratch["success"], true, "{scratch}");
    assert!(!sandbox.join("tmp/x.txt").exists());

    let kept = json!({"path": "notes/y.txt"});
    let held = call("kb.file_manager.delete_file", kept.clone());
    let error = &held["content"]["error"];
    assert_eq!(error["code"], "needs_approval", "{held}");
    assert!(sandbox.join("notes/y.txt").exists(), "nothing ran yet");
    let token = error["token"].as_str().unwrap();
    let approved = approve("kb.file_manager.delete_file", kept, token);
    assert_eq!(approved["success"], true, "{approved}");
    assert!(!sandbox.join("notes/y.txt").exists());

    let listed = call("kb.file_manager.list", json!({"dir": "many"}));
    assert_eq!(listed["success"], true, "{listed}");
    let listing = serde_json::to_string(&listed["content"]).unwrap();
    let note = listed["blocks"][0]["text"].as_str().unwrap();
    assert_eq!(
        listed["blocks"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    hooks::check_cut_listing(&listed["content"], &[&listing, note]);
}

#[test]
fn hooks_act_alike_on_serve_and_through_the_gateway() {
    use serde_json::json;

    let module_dir = workspace();
    hooks::sandbox(module_dir.path());
    let sandbox = module_dir.path().join("sandbox");
    let module = serve(
        module_dir.path(),
        &[
            "--modules",
            "file_manager",
            "serve",
            "--http",
            "127.0.0.1:0",
            "--module",
            "kb",
        ],
    );
    // `POST /execute` as a trusted client (a gateway) calls for alice, with the approval token
    // of an earlier answer when it has one.
    let execute_as_alice = |tool: &str, args: Value, token: Option<&str>| {
        let mut request = json!({
            "tool_name": tool, "arguments": args, "user_id": "alice", "level": "user",
        });
        if let Some(token) = token {
            request["approval_token"] = json!(token);
        }
        execute(&module.addr, Some(MODULE_TOKEN), &request)
    };
    let approve_at_module =
        |tool: &str, args: Value, token: &str| execute_as_alice(tool, args, Some(token));

    // `toolreg serve`: the module's own `/execute`.
    hooks_act_on(
        &|tool, args| execute_as_alice(tool, args, None),
        &approve_at_module,
        &sandbox,
    );
    // A guest of the module reads through the same hook.
    let read = guest_call(
        &module.addr,
        "kb.file_manager.read",
        &json!({"path": "notes/secret.txt"}),
    );
    assert!(
        read["content"]["content"]
            .as_str()
            .unwrap()
            .contains("[redacted secret]"),
        "{read}"
    );

    // The gateway, `toolreg --module-map`, calling the module's tools for alice. A compiled
    // tool's `confirm_if` is the module's to apply: the gateway forwards the call unconfirmed
    // and hands on the module's answer, whose token the module redeems.
    std::fs::write(sandbox.join("tmp/x.txt"), "scratch").unwrap();
    std::fs::write(sandbox.join("notes/y.txt"), "keep until approved").unwrap();
    let gateway_dir = workspace();
    let map = gateway_dir.path().join("modules.toml");
    std::fs::write(
        &map,
        format!(
            "[modules.kb]\nurl = \"{}\"\ntoken_env = \"KB_TOKEN\"\n",
            module.addr
        ),
    )
    .unwrap();
    let map = map.to_str().unwrap();
    let gateway_call = |tool: &str, args: Value| {
        let args = args.to_string();
        let output = toolreg_command(
            gateway_dir.path(),
            &[
                "--module-map",
                map,
                "--user",
                "alice",
                "--level",
                "user",
                "call",
                tool,
                &args,
            ],
        )
        .env("KB_TOKEN", MODULE_TOKEN)
        .output()
        .expect("toolreg runs");
        let result = json(&output);
        let success = result["success"] == true;
        assert_eq!(output.status.code(), Some(i32::from(!success)), "{result}");
        result
    };
    hooks_act_on(&gateway_call, &approve_at_module, &sandbox);
    assert!(
        !gateway_dir.path().join("sandbox").exists(),
        "the gateway's own file tools were not used"
    );
}

/// `toolreg ARGS` serving until it is sent SIGTERM, with `RUST_LOG` set to `filter` (or unset):
/// what it wrote on standard error.
fn served_logs(root: &Path, filter: Option<&str>, args: &[&str]) -> String {
    use std::io::Read;
    use std::process::Stdio;
    let mut command = toolreg_command(root, args);
    command.env_remove("RUST_LOG");
    if let Some(filter) = filter {
        command.env("RUST_LOG", filter);
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("toolreg serve starts");
    let addr = serve::address_of(&mut child);
    // Serving (so that its stop signal is heard): a request answered.
    assert!(get(&addr, "/health").contains("200"));
    let stopped = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut logs = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    child.wait().unwrap();
    logs
}

use std::process::Command;

#[test]
fn a_server_logs_its_start_its_tools_and_its_stop_as_text_or_json_lines() {
    let dir = workspace();
    // By default: warnings, errors, the start and the stop; no line per tool.
    let logs = served_logs(dir.path(), None, &["serve", "--http", "127.0.0.1:0"]);
    assert!(logs.contains("serving tools over HTTP"), "{logs}");
    assert!(logs.contains("stopped serving tools over HTTP"), "{logs}");
    assert!(!logs.contains("Loaded tool"), "{logs}");
    // With RUST_LOG=info, as JSON lines: every line reads, and each tool is named with where it
    // comes from.
    let logs = served_logs(
        dir.path(),
        Some("info"),
        &["--log-format", "json", "serve", "--http", "127.0.0.1:0"],
    );
    let lines: Vec<Value> = logs
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let research = lines
        .iter()
        .find(|line| {
            line["fields"]["message"] == "Loaded tool" && line["fields"]["tool"] == "research"
        })
        .unwrap_or_else(|| panic!("no line for `research`: {logs}"));
    assert_eq!(research["fields"]["origin"], "compiled");
    assert_eq!(research["target"], "tool_registry::tools");
    let start = lines
        .iter()
        .find(|line| line["target"] == "tool_registry::serve")
        .unwrap();
    assert!(
        start["fields"]["address"]
            .as_str()
            .unwrap()
            .starts_with("http://127.0.0.1:")
    );
}
