//! `toolreg mcp` driven by the official MCP Python SDK (`mcp` 2.3.0), over stdio and streamable
//! HTTP, in both protocol eras: `tests/mcp_py/check.py` does the checks. `scripts/test` makes the
//! virtualenv it runs in (`target/py-mcp`).

use std::io::BufRead;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

mod common;

/// The virtualenv's Python: `$TOOLREG_MCP_PYTHON`, else `target/py-mcp/bin/python` at the
/// workspace's root.
fn python() -> PathBuf {
    if let Some(path) = std::env::var_os("TOOLREG_MCP_PYTHON") {
        return path.into();
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/py-mcp/bin/python");
    let ready = Command::new(&path)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        ready,
        "the MCP Python SDK is missing: run scripts/test, which installs it, or \
         `python3 -m venv target/py-mcp && target/py-mcp/bin/pip install mcp==2.3.0`"
    );
    path
}

/// `toolreg mcp --http`, killed when dropped.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_official_python_sdk_lists_and_calls_in_both_eras_over_stdio_and_http() {
    let python = python();
    let dir = common::workspace();
    let kb = dir.path().join("kb");
    let mut child = common::toolreg_command(dir.path(), &["mcp", "--http", "127.0.0.1:0"])
        .env("TOOLREG_KB", &kb)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let _served = Served(child);
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("{line:?}"))
        .to_owned();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_py/check.py");
    let output = Command::new(python)
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_toolreg"))
        .arg(&kb)
        .arg(&url)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(stdout.contains("2026-07-28: streamable HTTP"), "{stdout}");
    assert!(stdout.contains("legacy: stdio call"), "{stdout}");
}
