//! The Python of a virtualenv that `scripts/test` makes, for the tests that check the registry
//! against official Python SDKs.

#![allow(
    dead_code,
    reason = "each test crate that includes this file uses what it needs"
)]

use std::path::PathBuf;
use std::process::Command;

/// A virtualenv under `target/` and what it holds.
pub struct Venv {
    /// The variable that names another Python to use instead.
    pub var: &'static str,
    /// Its folder under `target/`.
    pub dir: &'static str,
    /// The modules it must import, comma-separated as in Python's `import`.
    pub imports: &'static str,
    /// What `pip install` takes to fill it by hand.
    pub install: &'static str,
    /// What it holds, for the message when it is missing.
    pub what: &'static str,
}

/// The official MCP Python SDK's virtualenv (`target/py-mcp`, or `$TOOLREG_MCP_PYTHON`).
pub const MCP_SDK: Venv = Venv {
    var: "TOOLREG_MCP_PYTHON",
    dir: "py-mcp",
    imports: "mcp",
    install: "mcp==2.3.0",
    what: "the MCP Python SDK is",
};

/// Python's Prometheus client, whose parser reads `/metrics` (`target/py-prometheus`, or
/// `$TOOLREG_PROMETHEUS_PYTHON`).
pub const PROMETHEUS: Venv = Venv {
    var: "TOOLREG_PROMETHEUS_PYTHON",
    dir: "py-prometheus",
    imports: "prometheus_client",
    install: "prometheus_client==0.21.1",
    what: "Python's prometheus_client is",
};

/// Python's `tiktoken`, whose counts the token counts are checked against (`target/py-tiktoken`,
/// or `$TOOLREG_TIKTOKEN_PYTHON`).
pub const TIKTOKEN: Venv = Venv {
    var: "TOOLREG_TIKTOKEN_PYTHON",
    dir: "py-tiktoken",
    imports: "tiktoken",
    install: "tiktoken==0.14.0",
    what: "Python's tiktoken is",
};

/// Runs `script` with the virtualenv's Python, `input` on its standard input and `envs` set:
/// its standard output. Fails with its standard error when it fails.
pub fn run(venv: &Venv, script: &str, input: &str, envs: &[(&str, &std::path::Path)]) -> String {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut command = Command::new(python(venv));
    command
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in envs {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// `$var` when set, else the virtualenv's Python at the workspace's root, once it imports what
/// it must; fails naming the commands that make it when it does not.
pub fn python(venv: &Venv) -> PathBuf {
    if let Some(path) = std::env::var_os(venv.var) {
        return path.into();
    }
    let dir = venv.dir;
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../target/{dir}/bin/python"));
    let ready = Command::new(&path)
        .args(["-c", &format!("import {}", venv.imports)])
        .output()
        .is_ok_and(|output| output.status.success());
    assert!(
        ready,
        "{} missing: run scripts/test, which installs it, or \
         `python3 -m venv target/{dir} && target/{dir}/bin/pip install {}`",
        venv.what, venv.install
    );
    path
}
