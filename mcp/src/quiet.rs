//! A session's quiet call, answered without rmcp: a `tools/call` in a session of the
//! `initialize` era, of a tool that cannot write to its client before its answer
//! ([`Registry::may_write_to_client`](tool_registry_core::Registry::may_write_to_client) is
//! `false`: its function takes no `Ctx`, no hook or evaluation gate sees the call, it never
//! runs as a task), read, run and answered as one JSON body.
//!
//! Such a call needs nothing of rmcp's session: no stream for notifications, no route for a
//! question, no cancellation that could stop anything before the answer. Everything else of a
//! session (its `initialize`, its other requests, its streams, its end) stays rmcp's, and the
//! session is told of the call so that it does not expire while it is used. A request is taken
//! only when every check rmcp would make of it plainly passes; any other goes on untouched:
//! a session that is not the caller's or does not exist (rmcp answers `404`), a revision named
//! in the request's `_meta` or not named plainly in its header, a task (`params.task`), an
//! `Origin` or a weighted `Accept`, a body that does not read as one `tools/call`.

use std::borrow::Cow;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::model::{
    ErrorCode, ProtocolVersion, RequestId, RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::layers::{owner_of, read_body};
use super::request::{Arguments, CallParams, Request as Asked};
use super::server::{Caller, McpServer};
use super::sessions::Sessions;
use super::stateless::{Message, json_response, only, plain_post};

/// The revisions of the `initialize` era a session's header may name, as rmcp knows them.
const REVISIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// What the layer answers from: the server, and the sessions.
pub(super) struct Quiet {
    pub(super) server: McpServer,
    pub(super) sessions: Arc<Sessions>,
}

/// Answers a session's `tools/call` of a quiet tool here (see the module's documentation);
/// passes every other request on.
pub(super) async fn quiet(
    State(quiet): State<Arc<Quiet>>,
    request: Request<Body>,
    next: Next,
) -> Response {
    let Some((session, revision)) = session_of(request.method(), request.headers()) else {
        return next.run(request).await;
    };
    if !quiet.sessions.is_of(&session, owner_of(&request)) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match read_body(body).await {
        Ok(bytes) => bytes,
        Err(refused) => return refused,
    };
    let answered = match (parts.extensions.get::<Caller>(), read(&bytes)) {
        (Some(caller), Some((id, params, meta))) => {
            answer(&quiet.server, caller, (id, params, meta), revision).await
        }
        _ => None,
    };
    match answered {
        Some(response) => {
            quiet.sessions.touch(&session).await;
            response
        }
        None => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// The session and revision of a POST this layer may answer, from its headers alone: one
/// session, a revision of the `initialize` era named once, a JSON body, both answer forms
/// accepted, an allowed host, and no `Origin`.
fn session_of(method: &Method, headers: &HeaderMap) -> Option<(String, &'static str)> {
    if method != Method::POST {
        return None;
    }
    let session = only(headers, "mcp-session-id")?;
    let named = only(headers, "mcp-protocol-version")?;
    let revision = *REVISIONS.iter().find(|revision| **revision == named)?;
    plain_post(headers).then(|| (session.to_owned(), revision))
}

/// A `tools/call`'s parameters in a session: the arguments left as the text the body holds.
/// What only the stateless revision sends (`requestState`, `inputResponses`) and a task
/// (`task`) are noted, to leave the request to rmcp and the tasks layer.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionCall<'a> {
    #[serde(rename = "_meta")]
    meta: Option<RequestMetaObject>,
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(borrow, default)]
    arguments: Option<&'a RawValue>,
    task: Option<IgnoredAny>,
    input_responses: Option<IgnoredAny>,
    request_state: Option<IgnoredAny>,
}

/// `body` read as a plain `tools/call` of a session; `None` for anything else.
fn read(body: &Bytes) -> Option<(RequestId, CallParams<'_>, RequestMetaObject)> {
    let message: Message = serde_json::from_slice(body).ok()?;
    if message.jsonrpc != "2.0" || message.method != "tools/call" {
        return None;
    }
    let call: SessionCall = serde_json::from_str(message.params?.get()).ok()?;
    if call.task.is_some() || call.input_responses.is_some() || call.request_state.is_some() {
        return None;
    }
    let meta = call.meta.unwrap_or_default();
    // A revision in `_meta` is rmcp's to check against the header.
    if meta.contains_key("io.modelcontextprotocol/protocolVersion") {
        return None;
    }
    let params = CallParams {
        name: call.name,
        arguments: Arguments::of_raw(call.arguments)?,
        request_state: None,
        input_responses: None,
    };
    Some((message.id, params, meta))
}

/// The answer to the call for `caller`; `None` when its tool may write to the client (or the
/// caller does not see it), which rmcp's session answers.
async fn answer(
    server: &McpServer,
    caller: &Caller,
    (id, params, meta): (RequestId, CallParams<'_>, RequestMetaObject),
    revision: &str,
) -> Option<Response> {
    let this = server.for_caller(caller);
    if server.may_write_to_client(&this, &params.name) {
        return None;
    }
    let revision = serde_json::from_value::<ProtocolVersion>(revision.into()).ok();
    let asked = Asked::answered_here(id.clone(), meta, revision);
    let message = match server.call(this, params, asked).await {
        Ok(response) => {
            // What rmcp's handler does to a result for a client of this era.
            let mut result = ServerResult::from(response);
            result.strip_result_type_for_legacy_peer();
            result.strip_non_object_output_for_legacy_peer();
            ServerJsonRpcMessage::response(result, id)
        }
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    };
    // The `initialize` era answers a JSON-RPC error with HTTP 200, as rmcp does.
    Some(match serde_json::to_vec(&message) {
        Ok(body) => json_response(StatusCode::OK, body),
        Err(error) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            super::stdio::error_answer(
                serde_json::Value::Null,
                ErrorCode::INTERNAL_ERROR,
                &format!("the answer could not be written: {error}"),
            )
            .to_string(),
        ),
    })
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::middleware::from_fn_with_state;
    use axum::routing::post;
    use rmcp::transport::streamable_http_server::SessionManager;
    use serde_json::{Value, json};
    use tool_registry_core::spec::ToolHandler;
    use tool_registry_core::{Ctx, Registry, Scope, ToolSpec};
    use tower::ServiceExt;

    use super::super::SessionLimits;
    use super::super::sessions::Owner;
    use super::*;

    /// Says the text back, taking no `Ctx`: it cannot write to its client.
    #[tool_registry::tool(name = "quiet_say")]
    fn quiet_say(text: String) -> String {
        text
    }

    /// Says the text back, and may log on the way.
    #[tool_registry::tool(name = "loud_say")]
    fn loud_say(ctx: &Ctx, text: String) -> String {
        ctx.log(tool_registry_core::call::LogLevel::Info, "saying");
        text
    }

    /// What answers a request the layer passes on: a status no answer of the layer has.
    const PASSED: StatusCode = StatusCode::IM_A_TEAPOT;

    /// The layer in front of a stand-in for rmcp, every request a guest's; the id of a session
    /// a guest opened, and one a token opened.
    async fn router() -> (Router, String, String) {
        let registry = Registry::builder().build().unwrap();
        let spec = ToolSpec::builder("runtime_say")
            .description("Say the text back.")
            .build()
            .unwrap();
        let handler = ToolHandler::new(|args: Value, _ctx: Ctx| async move {
            Ok::<_, String>(args["text"].clone())
        });
        registry.register(spec, handler).unwrap();
        let sessions = Arc::new(Sessions::new(SessionLimits::default()));
        let open = |owner| {
            let sessions = Arc::clone(&sessions);
            async move {
                let (id, transport) = Sessions::scope_request(owner, sessions.create_session())
                    .await
                    .0
                    .unwrap();
                std::mem::forget(transport);
                id.to_string()
            }
        };
        let (mine, theirs) = (open(Owner::Guest).await, open(Owner::Token(0)).await);
        let quiet = Quiet {
            server: McpServer::new(Arc::new(registry), Scope::guest()),
            sessions,
        };
        let guest = |mut request: Request<Body>, next: Next| async move {
            let extensions = request.extensions_mut();
            extensions.insert(Caller(Scope::network_guest(), None));
            extensions.insert(Owner::Guest);
            next.run(request).await
        };
        let router = Router::new()
            .route("/mcp", post(|| async { PASSED }))
            .layer(from_fn_with_state(Arc::new(quiet), super::quiet))
            .layer(axum::middleware::from_fn(guest));
        (router, mine, theirs)
    }

    /// A call of `params` in `session`, as a client of 2025-11-25 writes it, with `headers`
    /// added.
    fn call_in(session: &str, params: Value, headers: &[(&str, &str)]) -> Request<Body> {
        let body = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params});
        let mut request = Request::post("/mcp")
            .header("host", "localhost:9")
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(Body::from(body.to_string())).unwrap()
    }

    async fn send(router: &Router, request: Request<Body>) -> (StatusCode, Value) {
        let response = router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    #[tokio::test]
    async fn a_quiet_call_in_the_callers_session_is_answered_here() {
        let (router, mine, _) = router().await;
        let params = json!({"name": "quiet_say", "arguments": {"text": "hi"}});
        let (status, answer) = send(&router, call_in(&mine, params, &[])).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(answer["id"], 3);
        assert_eq!(answer["result"]["content"][0]["text"], "hi", "{answer}");
        // The 2025-11-25 shape: no `resultType`.
        assert!(answer["result"].get("resultType").is_none(), "{answer}");
        // A tool's failure is its result, as in rmcp's answer.
        let wrong = json!({"name": "quiet_say", "arguments": {"text": 5}});
        let (status, answer) = send(&router, call_in(&mine, wrong, &[])).await;
        assert_eq!(
            (status, answer["result"]["isError"].clone()),
            (StatusCode::OK, json!(true))
        );
    }

    #[tokio::test]
    async fn a_call_that_may_write_or_is_not_plainly_the_callers_is_passed_on() {
        let (router, mine, theirs) = router().await;
        let quiet = json!({"name": "quiet_say", "arguments": {"text": "hi"}});
        // Tools that may write to the client: one taking `Ctx`, a run-time one; one unknown.
        for name in ["loud_say", "runtime_say", "nope"] {
            let params = json!({"name": name, "arguments": {"text": "hi"}});
            let (status, _) = send(&router, call_in(&mine, params, &[])).await;
            assert_eq!(status, PASSED, "{name}");
        }
        // Another caller's session, or none that exists: rmcp's `404`.
        for session in [theirs.as_str(), "no-such-session"] {
            let (status, _) = send(&router, call_in(session, quiet.clone(), &[])).await;
            assert_eq!(status, PASSED, "{session}");
        }
        let origin = [("origin", "http://localhost:9")];
        let stateless = [("mcp-protocol-version", "2026-07-28")];
        for headers in [&origin[..], &stateless] {
            let (status, _) = send(&router, call_in(&mine, quiet.clone(), headers)).await;
            assert_eq!(status, PASSED, "{headers:?}");
        }
        let mut task = quiet.clone();
        task["task"] = json!({"ttl": 1000});
        let mut revision = quiet.clone();
        revision["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25"});
        for params in [task, revision] {
            let (status, _) = send(&router, call_in(&mine, params.clone(), &[])).await;
            assert_eq!(status, PASSED, "{params}");
        }
    }
}
