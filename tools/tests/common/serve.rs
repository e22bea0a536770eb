//! `toolreg serve --http` for the tests that drive it: the server, the guard that stops it, and
//! a guest's call of it.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};

use serde_json::Value;

use super::common::toolreg_command;

/// `toolreg serve`, killed when dropped.
pub struct Served {
    child: Child,
    /// Where it listens: `http://127.0.0.1:PORT`.
    pub addr: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `toolreg ARGS` (a `serve --http` command) run in `root` with the module token `kb-secret`.
pub fn serve(root: &Path, args: &[&str]) -> Served {
    let mut command = toolreg_command(root, args);
    command
        .env("TOOLREG_MODULE_TOKEN", "kb-secret")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("toolreg serve starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("toolreg serve did not start: {line:?}"))
        .to_owned();
    Served { child, addr }
}

/// `POST /execute` of `tool` with `args` over a plain socket and without a token, as a guest
/// of the module: the call's result.
pub fn guest_call(addr: &str, tool: &str, args: &Value) -> Value {
    use std::io::{Read, Write};
    let host = addr.trim_start_matches("http://");
    let body = serde_json::json!({ "tool_name": tool, "arguments": args }).to_string();
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /execute HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    assert!(head.starts_with("HTTP/1.1 200"), "{answer}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"))
}
