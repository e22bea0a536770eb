//! An MCP server on stdio that answers what no server should, for the tests of what a mounted
//! server's answer may cost (`tests/result_bounds.rs`). Its tools:
//!
//! - `links`: as many `resource_link` blocks as the first argument says (500,000 unless told),
//!   on one line of about 24 MB;
//! - `deep`: a `structuredContent` nested 140 levels, deeper than serde_json reads;
//! - `small`: one text block, an answer like any other.
//!
//! Written by hand, a line at a time, rather than with an SDK: what it sends is exactly what a
//! hostile server would, and no SDK would send it. It answers `server/discover` as a server of
//! the `initialize` era does (method not found), so a client falls back to `initialize`.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

fn main() {
    let blocks: usize = std::env::args()
        .nth(1)
        .and_then(|count| count.parse().ok())
        .unwrap_or(500_000);
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { return };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        // Notifications and answers need nothing back.
        let (Some(id), Some(method)) = (message.get("id"), message["method"].as_str()) else {
            continue;
        };
        let answer = match method {
            "initialize" => result(
                id,
                json!({
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "hostile", "version": "1.0.0"},
                }),
            ),
            "tools/list" => {
                let tools = ["links", "deep", "small"].map(|name| {
                    json!({
                        "name": name,
                        "description": format!("Answers `{name}`."),
                        "inputSchema": {"type": "object"},
                    })
                });
                result(id, json!({ "tools": tools }))
            }
            "tools/call" => match message["params"]["name"].as_str() {
                Some("links") => links(id, blocks),
                Some("deep") => deep(id),
                _ => result(id, json!({"content": [{"type": "text", "text": "ok"}]})),
            },
            "ping" => result(id, json!({})),
            _ => json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32601, "message": "Method not found"},
            })
            .to_string(),
        };
        let written = stdout
            .write_all(answer.as_bytes())
            .and_then(|()| stdout.write_all(b"\n"))
            .and_then(|()| stdout.flush());
        if written.is_err() {
            return;
        }
    }
}

/// The answer `value` to the request `id`.
fn result(id: &Value, value: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": value}).to_string()
}

/// `count` links, the id first as every SDK writes it.
fn links(id: &Value, count: usize) -> String {
    let link = r#"{"type":"resource_link","uri":"kb:1","name":"x"}"#;
    let mut line = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":["#);
    line.reserve(count * (link.len() + 1) + 32);
    for i in 0..count {
        if i > 0 {
            line.push(',');
        }
        line.push_str(link);
    }
    line.push_str(r#"],"isError":false}}"#);
    line
}

/// A value nested 140 arrays deep as the structured content.
fn deep(id: &Value) -> String {
    let value = format!("{}1{}", "[".repeat(140), "]".repeat(140));
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[],"structuredContent":{{"deep":{value}}},"isError":false}}}}"#
    )
}
