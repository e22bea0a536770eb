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

use std::borrow::Cow;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ErrorCode, InputResponses, PaginatedRequestParams,
    RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde_json::value::RawValue;

use super::layers::read_body;
use super::request::{Arguments, CallParams, Request as Asked};
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
    if headers.contains_key("mcp-session-id") || only(headers, "mcp-protocol-version")? != REVISION
    {
        return None;
    }
    let method = match only(headers, "mcp-method")? {
        "tools/call" => Method2026::Call,
        "tools/list" => Method2026::List,
        _ => return None,
    };
    let params = (headers.keys()).any(|name| name.as_str().starts_with("mcp-param-"));
    (!params && plain_post(headers)).then_some(method)
}

/// Whether a POST's headers are what rmcp plainly accepts of any request: a JSON body, both
/// answer forms accepted (no weights), an allowed host, no `Origin`.
pub(super) fn plain_post(headers: &HeaderMap) -> bool {
    let json = only(headers, header::CONTENT_TYPE.as_str())
        .map(|value| value.split(';').next().unwrap_or_default().trim())
        .is_some_and(|essence| essence.eq_ignore_ascii_case("application/json"));
    json && !headers.contains_key(header::ORIGIN) && accepts_both(headers) && host_allowed(headers)
}

/// The one value of the header `name`, as text; `None` when it is absent, repeated or not
/// text.
pub(super) fn only<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
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

/// A request's message, as far as the lanes read it: what else it holds is rmcp's to read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Message<'a> {
    pub(super) jsonrpc: &'a str,
    pub(super) id: RequestId,
    pub(super) method: &'a str,
    #[serde(borrow)]
    pub(super) params: Option<&'a RawValue>,
}

/// A `tools/call`'s parameters as this layer reads them: the arguments left as the text the
/// body holds, for the tool's shim to read once.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallParams2026<'a> {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    #[serde(default)]
    input_responses: Option<InputResponses>,
    #[serde(default)]
    request_state: Option<String>,
}

/// A request this layer answers, read.
enum Read<'a> {
    Call(RequestId, CallParams<'a>, RequestMetaObject),
    List(RequestId, Option<String>),
}

/// `body` read as a request of `method` whose `_meta` names this revision and the client's
/// capabilities and asks for no stream, with its `Mcp-Name` header matching; `None` for
/// anything else, which rmcp reads.
fn read<'b>(body: &'b Bytes, method: Method2026, headers: &HeaderMap) -> Option<Read<'b>> {
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
            let params: CallParams2026 = serde_json::from_str(params).ok()?;
            let meta = plain_meta(params.meta?)?;
            (only(headers, "mcp-name")? == params.name).then_some(())?;
            let params = CallParams {
                name: params.name,
                arguments: Arguments::of_raw(params.arguments)?,
                request_state: params.request_state,
                input_responses: params.input_responses,
            };
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
async fn answer(server: &McpServer, caller: &Caller, read: Read<'_>) -> Option<Response> {
    let this = server.for_caller(caller);
    let (id, result) = match read {
        Read::Call(id, params, meta) => {
            if !server.plain_tool(&this, &params.name) {
                return None;
            }
            let asked = Asked::answered_here(id.clone(), meta, None);
            let follows_tasks = (asked.capabilities()).is_some_and(|caps| caps.supports_tasks());
            let result = match server.call(this, params, asked).await {
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
pub(super) fn json_response(status: StatusCode, body: impl Into<Body>) -> Response {
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

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::middleware::from_fn_with_state;
    use axum::routing::post;
    use serde_json::{Value, json};
    use tool_registry_core::spec::ToolHandler;
    use tool_registry_core::{Ctx, Permission, Registry, Scope, ToolSpec};
    use tower::ServiceExt;

    use super::*;

    /// What answers a request the layer passes on: a status no answer of the layer has.
    const PASSED: StatusCode = StatusCode::IM_A_TEAPOT;

    /// The layer over a registry of `say` (hands its text back) and `hidden` (guests do not
    /// see it), in front of a stand-in for rmcp that answers [`PASSED`].
    fn router() -> Router {
        let registry = Registry::builder().without_linked().build().unwrap();
        let say = ToolSpec::builder("say")
            .description("Say the text back.")
            .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
            .build()
            .unwrap();
        let handler = ToolHandler::new(|args: Value, _ctx: Ctx| async move {
            Ok::<_, String>(args["text"].clone())
        });
        registry.register(say, handler).unwrap();
        let hidden = ToolSpec::builder("hidden")
            .description("Not for guests.")
            .permission(Permission::Admin)
            .build()
            .unwrap();
        registry.register(hidden, None).unwrap();
        let server = McpServer::new(Arc::new(registry), Scope::guest());
        let guest = |mut request: Request<Body>, next: Next| async move {
            request
                .extensions_mut()
                .insert(Caller(Scope::network_guest(), None));
            next.run(request).await
        };
        Router::new()
            .route("/mcp", post(|| async { PASSED }))
            .layer(from_fn_with_state(
                Arc::new(Stateless { server }),
                stateless,
            ))
            .layer(axum::middleware::from_fn(guest))
    }

    fn meta() -> Value {
        json!({
            "io.modelcontextprotocol/protocolVersion": REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
        })
    }

    /// A POST as a client of the revision writes it, with `headers` added or replacing.
    fn post_of(method: &str, params: Value, headers: &[(&str, &str)]) -> Request<Body> {
        let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params});
        let mut request = Request::post("/mcp")
            .header("host", "127.0.0.1:9")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", REVISION)
            .header("mcp-method", method);
        if method == "tools/call" {
            request = request.header("mcp-name", params["name"].as_str().unwrap_or_default());
        }
        let mut request = request.body(Body::from(body.to_string())).unwrap();
        for (name, value) in headers {
            let name = axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap();
            request
                .headers_mut()
                .insert(name, HeaderValue::from_str(value).unwrap());
        }
        request
    }

    async fn send(request: Request<Body>) -> (StatusCode, Bytes) {
        let response = router().oneshot(request).await.unwrap();
        let status = response.status();
        (
            status,
            axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap(),
        )
    }

    fn call(arguments: &str) -> Value {
        let arguments: Value = serde_json::from_str(arguments).unwrap();
        json!({"name": "say", "arguments": arguments, "_meta": meta()})
    }

    #[tokio::test]
    async fn a_plain_call_and_a_list_are_answered_here_as_json() {
        let (status, body) = send(post_of("tools/call", call(r#"{"text": "hi"}"#), &[])).await;
        assert_eq!(status, StatusCode::OK);
        let answer: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
        assert_eq!(answer["result"]["isError"], false);
        let list = || post_of("tools/list", json!({"_meta": meta()}), &[]);
        let (status, first) = send(list()).await;
        assert_eq!(status, StatusCode::OK);
        let page: Value = serde_json::from_slice(&first).unwrap();
        let names: Vec<&str> = (page["result"]["tools"].as_array().unwrap().iter())
            .map(|tool| tool["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["say"], "a guest does not see `hidden`");
        assert_eq!(page["result"]["cacheScope"], "private");
        assert_eq!(page["result"]["ttlMs"], 0);
        // An unknown cursor is the same error rmcp's handler gives, under HTTP 200.
        let cursor = json!({"_meta": meta(), "cursor": "zz"});
        let (status, refused) = send(post_of("tools/list", cursor, &[])).await;
        let refused: Value = serde_json::from_slice(&refused).unwrap();
        assert_eq!(
            (status, refused["error"]["code"].clone()),
            (StatusCode::OK, json!(-32602))
        );
    }

    #[tokio::test]
    async fn what_rmcp_reads_with_more_care_or_streams_is_passed_on() {
        let origin = [("origin", "http://127.0.0.1:9")];
        let session = [("mcp-session-id", "abc")];
        let other_name = [("mcp-name", "other")];
        let base64_name = [("mcp-name", "=?base64?c2F5?=")];
        let param = [("mcp-param-text", "hi")];
        let weighted = [("accept", "application/json;q=0.5, text/event-stream")];
        let old = [("mcp-protocol-version", "2025-11-25")];
        let foreign_host = [("host", "evil.example")];
        let plain = call(r#"{"text": "hi"}"#);
        for headers in [
            &origin[..],
            &session,
            &other_name,
            &base64_name,
            &param,
            &weighted,
            &old,
            &foreign_host,
        ] {
            let (status, _) = send(post_of("tools/call", plain.clone(), headers)).await;
            assert_eq!(status, PASSED, "{headers:?}");
        }
        let mut progress = plain.clone();
        progress["_meta"]["progressToken"] = json!(1);
        let mut logs = plain.clone();
        logs["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
        let mut no_capabilities = plain.clone();
        no_capabilities["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": REVISION});
        let hidden = json!({"name": "hidden", "_meta": meta()});
        let unknown = json!({"name": "nope", "_meta": meta()});
        let list_args = json!({"name": "say", "arguments": [1], "_meta": meta()});
        for params in [progress, logs, no_capabilities, hidden, unknown, list_args] {
            let (status, _) = send(post_of("tools/call", params.clone(), &[])).await;
            assert_eq!(status, PASSED, "{params}");
        }
        let (status, _) = send(post_of("ping", json!({"_meta": meta()}), &[])).await;
        assert_eq!(status, PASSED);
    }

    #[tokio::test]
    async fn arguments_are_read_once_from_the_body_and_a_repeated_key_is_refused() {
        let request = |arguments: &str| {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"say","arguments":{arguments},"_meta":{}}}}}"#,
                meta()
            );
            let mut request = post_of("tools/call", call("{}"), &[]);
            *request.body_mut() = Body::from(body);
            request
        };
        let (_, body) = send(request(r#"{"text": "once"}"#)).await;
        let answer: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], "once");
        let (status, body) = send(request(r#"{"text": "a", "text": "b"}"#)).await;
        let answer: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("duplicate field `text`"), "{text}");
    }

    #[tokio::test]
    async fn a_body_longer_than_rmcp_reads_is_refused() {
        let long = "x".repeat(super::super::layers::body_limit() + 1);
        let (status, _) = send(post_of(
            "tools/call",
            call(&format!(r#"{{"text": "{long}"}}"#)),
            &[],
        ))
        .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    }
}
