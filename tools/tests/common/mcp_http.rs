//! `toolreg mcp --http` for the tests that drive it: the server, and the guard that stops it.

use std::io::BufRead;
use std::path::Path;
use std::process::{Child, Stdio};

/// The admin's bearer token in the callers file [`serve_http`] writes.
pub const ADMIN_TOKEN: &str = "admin-token";

/// `toolreg mcp --http`, killed when dropped.
pub struct Served {
    child: Child,
    /// Where it listens: `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

impl Served {
    /// Kills the server at once, as a crash would.
    #[allow(dead_code)]
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolreg mcp --http 127.0.0.1:0` run in `root`, with a callers file that makes
/// [`ADMIN_TOKEN`] ann at the admin level (no token is a guest).
pub fn serve_http(root: &Path) -> Served {
    serve_http_with(root, &[])
}

/// [`serve_http`] with more flags (`--redis URL`, `--task-lease 1s`, ...).
pub fn serve_http_with(root: &Path, more: &[&str]) -> Served {
    std::fs::write(
        root.join("callers.toml"),
        format!("[[caller]]\ntoken = \"{ADMIN_TOKEN}\"\nuser = \"ann\"\nlevel = \"admin\"\n"),
    )
    .unwrap();
    let mut args = vec!["mcp", "--http", "127.0.0.1:0", "--callers", "callers.toml"];
    args.extend_from_slice(more);
    let mut child = super::common::toolreg_command(root, &args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    // Stopped by its guard even when it did not start as expected.
    let mut served = Served {
        child,
        url: String::new(),
    };
    served.url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("toolreg mcp did not start: {line:?}"))
        .to_owned();
    served
}
