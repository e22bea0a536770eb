//! `mcp`: the bytes a client writes to the MCP server on stdio (`McpServer::serve_io`), which
//! reads them one line a message. The first byte's low bit puts a client's `initialize` and
//! `notifications/initialized` first, so that the rest reaches the served methods.
//!
//! - The server ends when its input does (within 10 s), without a panic.
//! - Every line it writes is one JSON-RPC 2.0 message, an object.
//! - It answers only what was asked: an answer's id is one a request of the input carried, or
//!   `null` for a line it could not read; an input that begins with `initialize` gets its
//!   result.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::Value;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tool_registry::mcp::McpServer;
use tool_registry::{Registry, Scope};

/// What a client sends before anything else.
const HANDSHAKE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    "\n"
);

pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let mut input = Vec::with_capacity(HANDSHAKE.len() + rest.len());
    if first & 1 == 1 {
        input.extend_from_slice(HANDSHAKE.as_bytes());
    }
    input.extend_from_slice(rest);
    let asked = ids(&input);

    let written = Written::default();
    let output = written.clone();
    let server = McpServer::new(Registry::global(), Scope::trusted());
    let reader = std::io::Cursor::new(input);
    // A runtime of the input's own: whatever the server leaves running ends with it.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let served = runtime.block_on(async {
        tokio::time::timeout(Duration::from_secs(10), server.serve_io(reader, output)).await
    });
    drop(runtime);
    assert!(served.is_ok(), "the server did not end when its input did");
    let out = std::mem::take(&mut *written.0.lock().expect("the output"));
    let mut initialized = false;
    for line in out.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
        let message: Value = serde_json::from_slice(line).unwrap_or_else(|error| {
            panic!(
                "a line out is not JSON: {error}: {}",
                String::from_utf8_lossy(line)
            )
        });
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        if message.get("result").is_some() || message.get("error").is_some() {
            let id = &message["id"];
            assert!(
                id.is_null() || asked.contains(&id.to_string()),
                "an answer to a request nobody sent: {message}"
            );
            initialized |= *id == 0 && message.get("result").is_some();
        }
    }
    assert!(
        initialized || first & 1 == 0,
        "no answer to the `initialize` the input began with"
    );
}

/// The ids of the requests in `input`, as JSON text, of each line that reads as an object
/// (after a byte order mark, which RFC 8259 lets a reader skip, and the server does).
fn ids(input: &[u8]) -> HashSet<String> {
    input
        .split(|&b| b == b'\n')
        .map(|line| line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line))
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
        .filter_map(|message| message.get("id").map(Value::to_string))
        .collect()
}

/// The server's output, kept whole.
#[derive(Clone, Default)]
struct Written(Arc<Mutex<Vec<u8>>>);

impl tokio::io::AsyncWrite for Written {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.0.lock().expect("the output").extend_from_slice(bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
