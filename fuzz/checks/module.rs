//! `module`: the bodies a gateway (or anyone on the network) sends an HTTP module server
//! (`Server::router`): `POST /execute`, `/tasks/get`, `/tasks/cancel`, picked by the first
//! byte, with the rest as the body, from a loopback peer.
//!
//! - Never a server error: a body that does not fit is the caller's error (4xx).
//! - Every answer is JSON; a `200` to `/execute` reads back as a tool result whose blocks keep
//!   to the registry's content bounds.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header};
use serde_json::Value;
use tool_registry::content::{check_blocks, wire};
use tool_registry::http::Server;
use tool_registry::{Registry, ToolResult};
use tower::ServiceExt;

const PATHS: [&str; 3] = ["/execute", "/tasks/get", "/tasks/cancel"];

pub fn check(data: &[u8]) {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let path = PATHS[usize::from(first) % PATHS.len()];
    let registry = Registry::global();
    let router = Server::new(registry).router();
    let request = Request::post(path)
        .header(header::CONTENT_TYPE, "application/json")
        .extension(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40000))))
        .body(Body::from(body.to_vec()))
        .expect("a request");
    let (status, answer) = super::block_on(async {
        let response = router.oneshot(request).await.expect("the router answers");
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .expect("the answer's body reads");
        (status, bytes)
    });
    let text = String::from_utf8_lossy(&answer);
    assert!(
        !status.is_server_error(),
        "{path} answered {status}: {text}"
    );
    let value: Value = serde_json::from_slice(&answer)
        .unwrap_or_else(|error| panic!("{path} answered {status} with no JSON: {error}: {text}"));
    if path == "/execute" && status.is_success() {
        let limits = registry.content_limits();
        let result: ToolResult = wire::bounded(&limits, || serde_json::from_value(value))
            .unwrap_or_else(|(error, _)| panic!("a 200 that is no tool result: {error}: {text}"));
        check_blocks(&result.blocks, &limits)
            .unwrap_or_else(|refused| panic!("blocks past the bounds: {refused:?}: {text}"));
    }
}
