//! `toolreg mcp` driven by the official MCP Python SDK (`mcp` 2.3.0), over stdio and streamable
//! HTTP, in both protocol eras: listing per scope and per token, calls, refusals, progress,
//! cancellation, `list_changed` after a `toolreg disable`, and confirmation (`input_required`
//! in 2026-07-28, the approval token before). `tests/mcp_py/check.py` does the checks. `scripts/test` makes the
//! virtualenv it runs in (`target/py-mcp`).

use std::path::PathBuf;
use std::process::Command;

mod common;
#[path = "common/mcp_http.rs"]
mod mcp_http;
#[path = "common/venv.rs"]
mod venv;

/// The virtualenv's Python: `$TOOLREG_MCP_PYTHON`, else `target/py-mcp/bin/python` at the
/// workspace's root.
fn python() -> PathBuf {
    venv::python(&venv::Venv {
        var: "TOOLREG_MCP_PYTHON",
        dir: "py-mcp",
        imports: "mcp",
        install: "mcp==2.3.0",
        what: "the MCP Python SDK is",
    })
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
