//! `mcp_http`: the bodies a client (or anyone on the network) POSTs to the MCP server's
//! streamable HTTP endpoint (`mcp::router`), where the server's own lanes read a stateless
//! `tools/call` or `tools/list` (2026-07-28), or a call in a session of the `initialize` era,
//! before rmcp does. The first byte picks the request's headers: the stateless revision's for a
//! call (its `Mcp-Name` taken from the body when it names one), for a list, or a session's
//! (opened once, with `initialize`); the rest is the body.
//!
//! - Never a server error.
//! - An answer as JSON (what the lanes write, and rmcp's refusals) reads as one JSON-RPC 2.0
//!   message, and an answer to a request that carried an id carries that id or none.

use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Request, header};
use serde_json::Value;
use tool_registry::Registry;
use tool_registry::mcp::Callers;
use tower::ServiceExt;

/// The endpoint, over the program's tools, and the id of a session opened on it.
fn endpoint() -> &'static (Router, String) {
    static ENDPOINT: OnceLock<(Router, String)> = OnceLock::new();
    ENDPOINT.get_or_init(|| {
        let router = tool_registry::mcp::router(Registry::global(), Callers::new(), Vec::new());
        let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
        let opened = super::block_on(router.clone().oneshot(post(&[], initialize.into())))
            .expect("the router answers");
        let session = (opened.headers().get("mcp-session-id"))
            .and_then(|id| id.to_str().ok())
            .expect("initialize opens a session")
            .to_owned();
        let headers = [
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        super::block_on(router.clone().oneshot(post(&headers, initialized.into())))
            .expect("the router answers");
        (router, session)
    })
}

/// A POST to `/mcp` with `body`, the headers every client sends and `headers`.
fn post(headers: &[(&str, &str)], body: Vec<u8>) -> Request<Body> {
    let mut request = Request::post("/mcp")
        .header(header::HOST, "localhost")
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCEPT, "application/json, text/event-stream")
        .body(Body::from(body))
        .expect("a request");
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            request.headers_mut().insert(name, value);
        }
    }
    request
}

pub fn check(data: &[u8]) {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let (router, session) = endpoint();
    let asked: Option<Value> = serde_json::from_slice(body).ok();
    let name = (asked.as_ref())
        .and_then(|asked| asked.pointer("/params/name")?.as_str())
        .unwrap_or("search")
        .to_owned();
    let headers: Vec<(&str, &str)> = match first % 3 {
        0 => vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", name.as_str()),
        ],
        1 => vec![
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/list"),
        ],
        _ => vec![
            ("mcp-session-id", session.as_str()),
            ("mcp-protocol-version", "2025-11-25"),
        ],
    };
    let request = post(&headers, body.to_vec());
    let (status, json, answer) = super::block_on(async {
        let response = router
            .clone()
            .oneshot(request)
            .await
            .expect("the router answers");
        let status = response.status();
        let json = (response.headers().get(header::CONTENT_TYPE))
            .is_some_and(|kind| kind.as_bytes().starts_with(b"application/json"));
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the answer's body reads");
        (status, json, bytes)
    });
    let text = String::from_utf8_lossy(&answer);
    assert!(!status.is_server_error(), "answered {status}: {text}");
    if !json {
        return;
    }
    let message: Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|error| panic!("a JSON answer that is not JSON: {error}: {text}"));
    assert_eq!(message["jsonrpc"], "2.0", "{text}");
    let answered = message.get("result").is_some() ^ message.get("error").is_some();
    assert!(answered, "neither a result nor an error: {text}");
    let asked_id = asked.as_ref().and_then(|asked| asked.get("id"));
    if let (Some(asked), Some(id)) = (asked_id, message.get("id"))
        && !id.is_null()
    {
        assert_eq!(asked, id, "an answer to another request: {text}");
    }
}
