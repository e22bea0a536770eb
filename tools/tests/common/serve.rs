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

/// The module token [`serve`] starts its server with.
pub const MODULE_TOKEN: &str = "kb-secret";

/// `toolreg ARGS` (a `serve --http` command) run in `root` with the module token
/// [`MODULE_TOKEN`].
pub fn serve(root: &Path, args: &[&str]) -> Served {
    let mut command = toolreg_command(root, args);
    command
        .env("TOOLREG_MODULE_TOKEN", MODULE_TOKEN)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("toolreg serve starts");
    let addr = address_of(&mut child);
    Served { child, addr }
}

/// The address a started `toolreg … --http` prints first on its piped standard output.
pub fn address_of(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("toolreg serve did not start: {line:?}"))
        .to_owned()
}

/// `POST /execute` of `tool` with `args` over a plain socket and without a token, as a guest
/// of the module: the call's result.
pub fn guest_call(addr: &str, tool: &str, args: &Value) -> Value {
    let request = serde_json::json!({ "tool_name": tool, "arguments": args });
    execute(addr, None, &request)
}

/// `POST /execute` of `request` over a plain socket, with `Authorization: Bearer token` when
/// given (a trusted client, believed about `user_id` and `level`): the call's result.
pub fn execute(addr: &str, token: Option<&str>, request: &Value) -> Value {
    use std::io::{Read, Write};
    let host = addr.trim_start_matches("http://");
    let body = request.to_string();
    let auth = token.map_or_else(String::new, |token| {
        format!("Authorization: Bearer {token}\r\n")
    });
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    // A liveness bound only: a call that gets no answer fails here instead of hanging.
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST /execute HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    assert!(head.starts_with("HTTP/1.1 200"), "{answer}");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {answer}"))
}
