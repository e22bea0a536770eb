//! The stateless revision (2026-07-28) over HTTP, answered here: a `tools/call` or a
//! `tools/list` POST read, checked, run through the registry and answered with one JSON body,
//! with no session, no per-request service and no event stream.
//!
//! A stateless request is one POST, one JSON-RPC message, one answer: nothing needs rmcp's
//! session worker, channel or stream unless the call writes to its client before its answer.
//! This layer takes a request only when every check rmcp would make of it plainly passes, and
//! when nothing can be written before the answer; every other request goes on to rmcp's
//! service untouched, which answers or refuses it as it always did:
//!
//! - a request of a session, of another revision, or another method; a body that does not
//!   read as one JSON-RPC request of that method;
//! - a header rmcp reads with more care than a plain comparison: an `Origin`, an `Accept`
//!   with weights, an `Mcp-Name` in Base64, any `Mcp-Param-*`, a repeated standard header;
//! - a `_meta` that does not name the revision and the client's capabilities, or that asks
//!   for a stream: a `progressToken` or a log level;
//! - a call of a tool the caller does not see (rmcp answers `Unknown tool`), or of one whose
//!   input schema carries `x-mcp-header` annotations.
//!
//! What it answers is what rmcp's service answers for the same request, as JSON rather than
//! an event stream of one event: the same result types, the same caching hints, the same
//! HTTP status for an error.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientCapabilities, ErrorCode, Extensions,
    PaginatedRequestParams, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage,
    ServerResult,
};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio_util::sync::CancellationToken;

use super::layers::read_body;
use super::request::Request as Asked;
use super::server::{Caller, McpServer};

/// The revision this layer answers.
const REVISION: &str = "2026-07-28";

/// The hosts rmcp's service allows by default (its DNS rebinding check), which the server
/// keeps.
const HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The methods this layer answers.
#[derive(Clone, Copy, PartialEq)]
enum Method2026 {
    Call,
    List,
}

/// What the layer answers from: the server, for each request's caller.
pub(super) struct Stateless {
    pub(super) server: McpServer,
}

/// Answers a stateless `tools/call` or `tools/list` here when it can (see the module's
/// documentation); passes every other request on.
pub(super) async fn stateless(
    State(stateless): State<Arc<Stateless>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let Some(method) = method_of(&request) else {
        return next.run(request).await;
    };
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let caller = parts.extensions.get::<Caller>().cloned();
    let answered = match (caller, read(&bytes, method, &parts.headers)) {
        (Some(caller), Some(read)) => answer(&stateless.server, &caller, read).await,
        _ => None,
    };
    match answered {
        Some(response) => response,
        None => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// The method of a POST this layer may answer, from its headers alone: no session, the
/// revision named once, a method it answers named once, a JSON body, both answer forms
/// accepted, an allowed host, and nothing rmcp reads with more care than a comparison.
fn method_of(request: &Request<Body>) -> Option<Method2026> {
    if request.method() != Method::POST {
        return None;
    }
    let headers = request.headers();
    if headers.contains_key("mcp-session-id") || headers.contains_key(header::ORIGIN) {
        return None;
    }
    if only(headers, "mcp-protocol-version")? != REVISION {
        return None;
    }
    let method = match only(headers, "mcp-method")? {
        "tools/call" => Method2026::Call,
        "tools/list" => Method2026::List,
        _ => return None,
    };
    let params = (headers.keys()).any(|name| name.as_str().starts_with("mcp-param-"));
    let json = only(headers, header::CONTENT_TYPE.as_str())
        .map(|value| value.split(';').next().unwrap_or_default().trim())
        .is_some_and(|essence| essence.eq_ignore_ascii_case("application/json"));
    (!params && json && accepts_both(headers) && host_allowed(headers)).then_some(method)
}

/// The one value of the header `name`, as text; `None` when it is absent, repeated or not
/// text.
fn only<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    let mut values = headers.get_all(name).iter();
    let value = values.next()?;
    values.next().is_none().then(|| value.to_str().ok())?
}

/// Whether `Accept` names both JSON and an event stream, with no weights (which rmcp weighs).
fn accepts_both(headers: &HeaderMap) -> bool {
    let (mut json, mut stream) = (false, false);
    for value in headers.get_all(header::ACCEPT) {
        let Ok(value) = value.to_str() else {
            return false;
        };
        for range in value.split(',') {
            if range.contains(';') || range.contains('"') {
                return false;
            }
            let range = range.trim();
            json |= range.eq_ignore_ascii_case("application/json");
            stream |= range.eq_ignore_ascii_case("text/event-stream");
        }
    }
    json && stream
}

/// Whether the `Host` header names a host rmcp's service allows.
fn host_allowed(headers: &HeaderMap) -> bool {
    only(headers, header::HOST.as_str())
        .and_then(|host| axum::http::uri::Authority::try_from(host).ok())
        .is_some_and(|authority| {
            let host = authority.host().trim_matches(['[', ']']);
            HOSTS
                .iter()
                .any(|allowed| host.eq_ignore_ascii_case(allowed))
        })
}

/// A request's message, as far as this layer reads it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Message<'a> {
    jsonrpc: &'a str,
    id: RequestId,
    method: &'a str,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

/// A request this layer answers, read.
enum Read {
    Call(RequestId, CallToolRequestParams, RequestMetaObject),
    List(RequestId, Option<String>),
}

/// `body` read as a request of `method` whose `_meta` names this revision and the client's
/// capabilities and asks for no stream, with its `Mcp-Name` header matching; `None` for
/// anything else, which rmcp reads.
fn read(body: &Bytes, method: Method2026, headers: &HeaderMap) -> Option<Read> {
    let message: Message = serde_json::from_slice(body).ok()?;
    let named = match method {
        Method2026::Call => "tools/call",
        Method2026::List => "tools/list",
    };
    if message.jsonrpc != "2.0" || message.method != named {
        return None;
    }
    let params = message.params?.get();
    match method {
        Method2026::Call => {
            let mut params: CallToolRequestParams = serde_json::from_str(params).ok()?;
            let meta = plain_meta(params.meta.take()?)?;
            (only(headers, "mcp-name")? == params.name).then_some(())?;
            Some(Read::Call(message.id, params, meta))
        }
        Method2026::List => {
            let mut params: PaginatedRequestParams = serde_json::from_str(params).ok()?;
            plain_meta(params.meta.take()?)?;
            Some(Read::List(message.id, params.cursor))
        }
    }
}

/// `meta` when it names this revision and the client's capabilities, and asks for no stream
/// (no `progressToken`, no log level).
fn plain_meta(meta: RequestMetaObject) -> Option<RequestMetaObject> {
    let revision = meta.protocol_version()?;
    let streams =
        meta.contains_key("progressToken") || meta.contains_key("io.modelcontextprotocol/logLevel");
    (revision.as_str() == REVISION && meta.client_capabilities().is_some() && !streams)
        .then_some(meta)
}

/// The answer to `read` for `caller`; `None` when rmcp answers it (a tool the caller does not
/// see, or one with `x-mcp-header` annotations).
async fn answer(server: &McpServer, caller: &Caller, read: Read) -> Option<Response> {
    let this = server.for_caller(caller);
    let (id, result) = match read {
        Read::Call(id, params, meta) => {
            if !server.plain_tool(&this, &params.name) {
                return None;
            }
            let capabilities = meta.client_capabilities();
            let follows_tasks =
                (capabilities.as_ref()).is_some_and(ClientCapabilities::supports_tasks);
            let asked = Asked {
                id: id.clone(),
                meta,
                version: Some(ProtocolVersion::V_2026_07_28),
                capabilities,
                peer: None,
                extensions: Extensions::new(),
                cancelled: CancellationToken::new(),
            };
            let result = match server.call(&this, params, asked).await {
                // rmcp's own guard: no task handle for a client that cannot read one.
                Ok(CallToolResponse::Task(_)) if !follows_tasks => {
                    Err(ErrorData::missing_required_client_capability(
                        ClientCapabilities::builder().enable_tasks().build(),
                    ))
                }
                other => other.map(ServerResult::from),
            };
            (id, result)
        }
        Read::List(id, cursor) => {
            return Some(match server.written_tools_page(&this, cursor.as_deref()) {
                Ok(page) => around(&id, &page),
                Err(error) => written(id, Err(error)),
            });
        }
    };
    Some(written(id, result))
}

/// The JSON answer to request `id` whose result is written already: the result's bytes sent
/// as they are kept, between the message's head and its closing brace, never copied.
fn around(id: &RequestId, result: &Bytes) -> Response {
    let mut head = Vec::with_capacity(48);
    head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    // An id is a number or a string: it always writes.
    let _ = serde_json::to_writer(&mut head, id);
    head.extend_from_slice(br#","result":"#);
    let length = head.len() + result.len() + 1;
    let parts = [Bytes::from(head), result.clone(), Bytes::from_static(b"}")];
    let body = futures::stream::iter(parts.map(Ok::<_, std::convert::Infallible>));
    let mut response = json_response(StatusCode::OK, Body::from_stream(body));
    response
        .headers_mut()
        .insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    response
}

/// `body`, JSON, with `status`.
fn json_response(status: StatusCode, body: impl Into<Body>) -> Response {
    let mut response = (status, body.into()).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// The JSON answer to request `id`: its result with the caching hints the revision asks for,
/// or its error under the HTTP status rmcp gives it.
fn written(id: RequestId, result: Result<ServerResult, ErrorData>) -> Response {
    let (status, message) = match result {
        Ok(mut result) => {
            result.fill_missing_cache_hints();
            (StatusCode::OK, ServerJsonRpcMessage::response(result, id))
        }
        Err(error) => (
            status_of(error.code),
            ServerJsonRpcMessage::error(error, Some(id)),
        ),
    };
    match serde_json::to_vec(&message) {
        Ok(body) => json_response(status, body),
        Err(error) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the answer could not be written: {error}"),
        )
            .into_response(),
    }
}

/// The HTTP status rmcp gives a JSON-RPC error of the stateless revision.
fn status_of(code: ErrorCode) -> StatusCode {
    match code {
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
        | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        | ErrorCode::HEADER_MISMATCH => StatusCode::BAD_REQUEST,
        ErrorCode::METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        _ => StatusCode::OK,
    }
}
