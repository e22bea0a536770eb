//! The client a mounted MCP server over streamable HTTP is reached with: rmcp's transport on
//! top, this file's HTTP underneath, so that no answer's `result.content` is built into rmcp's
//! types (about 1.4 KB a block) past the registry's bound on blocks.
//!
//! rmcp's own `reqwest` client reads a JSON answer whole (up to its 16 MiB) and deserializes it
//! before anyone else sees it: 280,000 empty `resource_link` blocks fit in 16 MiB and cost
//! hundreds of MB. Here a POST's answer is read as bytes within the same bound, and its blocks
//! are counted by the scan that builds nothing (`stdio.rs`'s [`blocks_over`]) first:
//!
//! - a JSON answer over the bound on blocks, or longer than rmcp's bound on a JSON answer, is
//!   replaced by the JSON-RPC error for the request it answers, marked as the stdio transport
//!   marks it ([`too_many_blocks_answer`], [`too_long_answer`]), and one that does not read by
//!   [`unreadable_answer`]: the mounted call is `invalid_output` at once;
//! - an SSE answer (a POST's, and a `GET` stream, which may resume the answer of a request
//!   made before it broke) is cut into events here, each held whole only within rmcp's
//!   `max_sse_event_size` (the stream fails at the first event past it, as rmcp's does), and
//!   an event whose data is an answer over the bound on blocks is replaced by the error for
//!   its id (or the POST's request) before the SSE reader copies it.
//!
//! Everything else a POST or a `GET` does is what rmcp's client does, written here for this
//! client (and checked against it by this file's tests): the `Accept` header, the bearer
//! token, custom headers (the reserved ones refused), the session id both ways,
//! `Last-Event-ID`, `202`/`204` as accepted, `404` on a session as an expired one, `401`/`403`
//! with a challenge as rmcp's auth errors, `429` and `5xx` as status errors (with
//! `Retry-After`), a JSON-RPC error in a failure's JSON body passed on, a sessionless
//! `server/discover` refused by a server of the `initialize` era turned into the error rmcp's
//! lifecycle falls back on, `405` on a `GET` as no stream. Deleting a session, which reads no
//! answer, is rmcp's own `reqwest` client's.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use futures::{Stream, TryStreamExt};
use reqwest::StatusCode;
use reqwest::header::{
    ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER, WWW_AUTHENTICATE,
};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};

use super::peek::{blocks_over, too_long_answer, too_many_blocks_answer, unreadable_answer};
use super::sse::{Events, bounded_events, make_room};

/// The session header of streamable HTTP.
const SESSION_ID: &str = "mcp-session-id";

/// The most redirects one request follows.
const MAX_REDIRECTS: usize = 10;

/// Headers a custom header may not set: the transport sets them itself. The protocol version
/// is not among them: rmcp's worker sets it as a custom header once the handshake is done.
const RESERVED: [&str; 3] = ["accept", SESSION_ID, "last-event-id"];

/// The longest `Retry-After` kept from a failure, as rmcp keeps it.
const MAX_RETRY_AFTER: usize = 128;

/// The `Accept` of every POST: either kind of answer.
const ACCEPTS: &str = "text/event-stream, application/json";

/// What a request of this client fails with, to rmcp.
type Failure = StreamableHttpError<reqwest::Error>;

/// rmcp's streamable HTTP client, over `reqwest`, with every answer's blocks counted before
/// rmcp builds them: at most `max_blocks` are read.
#[derive(Clone)]
pub(super) struct BoundedHttpClient {
    http: reqwest::Client,
    max_blocks: usize,
}

impl BoundedHttpClient {
    /// A client that reads answers of at most `max_blocks` blocks; an error when `reqwest`
    /// cannot build one.
    ///
    /// It keeps no idle connection, as rmcp's own client does: a connection whose last answer
    /// was not read to its end (one over a bound is not) would stall the next request on it.
    /// It follows a redirect only as rmcp's does: a `307` or `308` (which keep the POST's
    /// body) to the same origin (which keeps the session id and custom headers from another
    /// host), at most [`MAX_REDIRECTS`] of them; any other is answered as the redirect it is.
    pub(super) fn new(max_blocks: usize) -> Result<Self, reqwest::Error> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
            );
            let first = attempt.previous().first().map(reqwest::Url::origin);
            if !keeps_body || first != Some(attempt.url().origin()) {
                attempt.stop()
            } else if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else {
                attempt.follow()
            }
        });
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()?;
        Ok(Self { http, max_blocks })
    }
}

impl StreamableHttpClient for BoundedHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let limits = StreamableHttpResponseLimits::default();
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        self.post(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Failure> {
        StreamableHttpClient::delete_session(
            &self.http,
            uri,
            session_id,
            auth_header,
            custom_headers,
        )
        .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, Failure> {
        let max = StreamableHttpResponseLimits::default().max_sse_event_size;
        self.get(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, Failure> {
        let max = max_sse_event_size;
        self.get(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            max,
        )
        .await
    }
}

impl BoundedHttpClient {
    /// A request of `method` to `uri` that accepts either kind of answer, with the bearer
    /// token, the custom headers (a reserved one refused) and the session id.
    fn request(
        &self,
        method: reqwest::Method,
        uri: &str,
        session_id: Option<&str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<reqwest::RequestBuilder, Failure> {
        let mut request = self.http.request(method, uri).header(ACCEPT, ACCEPTS);
        if let Some(token) = auth_header {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            if RESERVED
                .iter()
                .any(|r| name.as_str().eq_ignore_ascii_case(r))
            {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.to_string(),
                ));
            }
            request = request.header(name, value);
        }
        if let Some(session) = session_id {
            request = request.header(SESSION_ID, session);
        }
        Ok(request)
    }

    /// A `GET` stream (the server's own messages, or a stream resumed after `last_event_id`,
    /// which may carry the answer of a request made before it broke): its events cut out
    /// within `max` bytes and scanned as a POST's are.
    async fn get(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max: usize,
    ) -> Result<Events, Failure> {
        let session = session_id.as_deref();
        let mut request = self.request(
            reqwest::Method::GET,
            &uri,
            session,
            auth_header,
            custom_headers,
        )?;
        if let Some(last) = last_event_id {
            request = request.header("last-event-id", last);
        }
        let response = request.send().await?;
        let status = response.status();
        if status == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(challenge) = challenge(status, response.headers())? {
            return Err(challenge);
        }
        if let Some(error) = status_error(status, response.headers()) {
            return Err(error.into());
        }
        let response = response.error_for_status()?;
        let content_type = response.headers().get(CONTENT_TYPE);
        let kind = content_type
            .and_then(|value| value.to_str().ok())
            .map(Kind::of);
        if !matches!(kind, Some(Kind::EventStream | Kind::Json)) {
            let content_type =
                content_type.map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            return Err(StreamableHttpError::UnexpectedContentType(content_type));
        }
        Ok(bounded_events(
            response.bytes_stream(),
            max,
            self.max_blocks,
            None,
        ))
    }

    /// One POST of `message`, its answer read within `limits` and the bound on blocks.
    async fn post(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Failure> {
        let session = session_id.as_deref();
        let request = self.request(
            reqwest::Method::POST,
            &uri,
            session,
            auth_header,
            custom_headers,
        )?;
        let attached = session_id.is_some();
        let response = request.json(&message).send().await?;
        let status = response.status();
        if let Some(challenge) = challenge(status, response.headers())? {
            return Err(challenge);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
        let kind = content_type.as_deref().map(Kind::of);
        let status_error = status_error(status, response.headers());
        // A JSON failure is read for the JSON-RPC error it may carry, except a rate limit.
        if status_error.is_some()
            && (kind != Some(Kind::Json) || status == StatusCode::TOO_MANY_REQUESTS)
            && let Some(error) = status_error
        {
            return Err(error.into());
        }
        let session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        // The request this POST carries, when it is one: only a request needs an answer.
        let request_id = match &message {
            ClientJsonRpcMessage::Request(request) => Some(request.id.clone()),
            _ => None,
        };
        if status.is_success() && response.content_length() == Some(0) && request_id.is_none() {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if !status.is_success() {
            return failure(response, &message, attached, status_error, kind, limits).await;
        }
        match kind {
            Some(Kind::EventStream) => {
                let max = limits.max_sse_event_size;
                let events =
                    bounded_events(response.bytes_stream(), max, self.max_blocks, request_id);
                Ok(StreamableHttpPostResponse::Sse(events, session))
            }
            Some(Kind::Json) => {
                let max = limits.max_json_response_size;
                let length = response.content_length();
                let (body, whole) = read_at_most(response.bytes_stream(), length, max).await?;
                let Some(id) = request_id else {
                    // Nothing waits for an answer to a notification: one that does not read
                    // is as good as none.
                    return match serde_json::from_slice(&body) {
                        Ok(message) if whole => {
                            Ok(StreamableHttpPostResponse::Json(message, session))
                        }
                        _ => Ok(StreamableHttpPostResponse::Accepted),
                    };
                };
                Ok(StreamableHttpPostResponse::Json(
                    self.json_answer(&body, whole, max, id),
                    session,
                ))
            }
            _ if request_id.is_none() => Ok(StreamableHttpPostResponse::Accepted),
            _ => Err(StreamableHttpError::UnexpectedContentType(content_type)),
        }
    }

    /// The answer to request `id` read from a JSON `body` (its first `max` bytes when it is
    /// not `whole`): the server's message, or the error that stands for it when it holds more
    /// blocks than the bound, is longer than `max` or does not read.
    fn json_answer(
        &self,
        body: &[u8],
        whole: bool,
        max: usize,
        id: RequestId,
    ) -> ServerJsonRpcMessage {
        // Counted before anything is built; a body cut at `max` is counted as far as it goes.
        if blocks_over(body, self.max_blocks).is_some() {
            tracing::debug!(target: "tool_registry::mcp", max_blocks = self.max_blocks, "an answer of the MCP server with too many blocks was not read");
            return ServerJsonRpcMessage::error(too_many_blocks_answer(self.max_blocks), Some(id));
        }
        if !whole {
            tracing::debug!(target: "tool_registry::mcp", max, "an answer of the MCP server over the bound in bytes was not read");
            return ServerJsonRpcMessage::error(too_long_answer(max), Some(id));
        }
        match serde_json::from_slice(body) {
            Ok(message) => message,
            Err(error) => {
                tracing::debug!(target: "tool_registry::mcp", %error, "an answer of the MCP server does not read; its request fails");
                ServerJsonRpcMessage::error(unreadable_answer(&error), Some(id))
            }
        }
    }
}

/// What an answer's `Content-Type` says it is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `application/json`: one message.
    Json,
    /// `text/event-stream`: a stream of events.
    EventStream,
    /// Anything else.
    Other,
}

impl Kind {
    /// The kind of the media type `value`: its essence compared without case, its parameters
    /// (`; charset=utf-8`) left aside.
    fn of(value: &str) -> Self {
        let essence = value.split(';').next().unwrap_or_default().trim();
        if essence.eq_ignore_ascii_case("application/json") {
            Self::Json
        } else if essence.eq_ignore_ascii_case("text/event-stream") {
            Self::EventStream
        } else {
            Self::Other
        }
    }
}

/// rmcp's auth error for a `401` or `403` that carries a `WWW-Authenticate` challenge: the
/// caller's credentials are missing, or lack a scope.
fn challenge(status: StatusCode, headers: &HeaderMap) -> Result<Option<Failure>, Failure> {
    let Some(header) = headers.get(WWW_AUTHENTICATE) else {
        return Ok(None);
    };
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(None);
    }
    let header = header.to_str().map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(Cow::Borrowed(
            "the server's WWW-Authenticate header is not text",
        ))
    })?;
    Ok(Some(match status {
        StatusCode::UNAUTHORIZED => {
            StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_owned()))
        }
        _ => StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            header.to_owned(),
            scope_of(header),
        )),
    }))
}

/// The `scope` parameter of a `WWW-Authenticate` challenge, quoted or not.
fn scope_of(header: &str) -> Option<String> {
    let at = header.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let rest = &header[at..];
    let scope = match rest.strip_prefix('"') {
        Some(quoted) => &quoted[..quoted.find('"')?],
        None => rest
            .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
            .next()
            .unwrap_or_default(),
    };
    (!scope.is_empty()).then(|| scope.to_owned())
}

/// The status error of a rate limit or a server failure, with its `Retry-After` when short.
fn status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .filter(|value| value.len() <= MAX_RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// What a POST that failed (a status other than success) is: the JSON-RPC error its JSON body
/// carries, the error a refused `server/discover` stands for, its status error, or its status
/// with the first bytes of its body.
async fn failure(
    response: reqwest::Response,
    message: &ClientJsonRpcMessage,
    attached: bool,
    status_error: Option<HttpStatusError>,
    kind: Option<Kind>,
    limits: StreamableHttpResponseLimits,
) -> Result<StreamableHttpPostResponse, Failure> {
    let status = response.status();
    let session = response
        .headers()
        .get(SESSION_ID)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let auth = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
    // A JSON body may be a JSON-RPC error, read whole within the bound of an answer; any
    // other body, and an auth failure's, is a diagnostic of which the first bytes do.
    let body = if kind == Some(Kind::Json) && !auth {
        let length = response.content_length();
        let max = limits.max_json_response_size;
        match read_at_most(response.bytes_stream(), length, max).await {
            Ok((body, true)) => {
                if let Ok(error @ ServerJsonRpcMessage::Error(_)) = serde_json::from_slice(&body) {
                    let text = String::from_utf8_lossy(&body);
                    if let Some(answer) = refused_discover(message, attached, status, &text) {
                        return Ok(answer);
                    }
                    return Ok(StreamableHttpPostResponse::Json(error, session));
                }
                diagnostic(&body, limits.max_error_response_size)
            }
            Ok((_, false)) => {
                return Err(status_error.map_or(
                    StreamableHttpError::ResponseBodyTooLarge { max_size: max },
                    Into::into,
                ));
            }
            Err(_) => diagnostic(
                b"<failed to read response body>",
                limits.max_error_response_size,
            ),
        }
    } else {
        let max = limits.max_error_response_size;
        match read_at_most(response.bytes_stream(), None, max).await {
            Ok((body, _)) => diagnostic(&body, max),
            Err(_) => diagnostic(b"<failed to read response body>", max),
        }
    };
    if let Some(answer) = refused_discover(message, attached, status, &body) {
        return Ok(answer);
    }
    if let Some(error) = status_error {
        return Err(error.into());
    }
    Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
        format!("HTTP {status}: {body}"),
    )))
}

/// At most `max` bytes of `body`, as text.
fn diagnostic(body: &[u8], max: usize) -> String {
    String::from_utf8_lossy(&body[..body.len().min(max)]).into_owned()
}

/// A sessionless `server/discover` that a server refused with a client error (not an auth
/// failure), as the error answer rmcp's lifecycle reads to fall back to `initialize`: the
/// server's own JSON-RPC error when its body is one, else an invalid request. Its id is the
/// request's, since a refusal written by middleware cannot know it.
fn refused_discover(
    message: &ClientJsonRpcMessage,
    attached: bool,
    status: StatusCode,
    body: &str,
) -> Option<StreamableHttpPostResponse> {
    if attached
        || !status.is_client_error()
        || matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN)
    {
        return None;
    }
    let ClientJsonRpcMessage::Request(request) = message else {
        return None;
    };
    if !matches!(request.request, ClientRequest::DiscoverRequest(_)) {
        return None;
    }
    let error = match serde_json::from_str(body) {
        Ok(ServerJsonRpcMessage::Error(error)) => error.error,
        _ => ErrorData::invalid_request(
            format!("server/discover rejected with HTTP {status}: {body}"),
            None,
        ),
    };
    Some(StreamableHttpPostResponse::Json(
        ServerJsonRpcMessage::error(error, Some(request.id.clone())),
        None,
    ))
}

/// The first bytes of `body`, at most `max`, and whether they are the whole of it. Reading
/// stops at the first chunk past `max`, whatever length the server declared.
async fn read_at_most<S>(
    body: S,
    length: Option<u64>,
    max: usize,
) -> Result<(Vec<u8>, bool), Failure>
where
    S: Stream<Item = Result<Bytes, reqwest::Error>>,
{
    let mut read = Vec::new();
    // A body declared longer than `max` is read up to it all the same: its first bytes say
    // whether it holds too many blocks.
    let declared = length.is_some_and(|length| length > max as u64);
    futures::pin_mut!(body);
    while let Some(chunk) = body.try_next().await? {
        let room = max - read.len();
        let taken = chunk.len().min(room);
        make_room(&mut read, taken);
        read.extend_from_slice(&chunk[..taken]);
        if taken < chunk.len() {
            return Ok((read, false));
        }
    }
    Ok((read, !declared))
}

#[cfg(test)]
mod tests {
    use super::{Kind, scope_of};

    /// A server that answers each POST as its `x-case` header says.
    async fn cases() -> String {
        use axum::http::{HeaderMap, StatusCode, header};
        use axum::response::IntoResponse;
        let answer = |headers: HeaderMap| async move {
            let case = headers
                .get("x-case")
                .and_then(|value| value.to_str().ok())
                .unwrap_or_default()
                .to_owned();
            let json = [(header::CONTENT_TYPE, "application/json")];
            let error = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no"}}"#;
            match case.as_str() {
                "challenge" => (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer realm=\"x\"")],
                )
                    .into_response(),
                "scope" => (
                    StatusCode::FORBIDDEN,
                    [(header::WWW_AUTHENTICATE, "Bearer scope=\"a b\"")],
                )
                    .into_response(),
                "unauthorized" => (StatusCode::UNAUTHORIZED, json, error).into_response(),
                "accepted" => StatusCode::ACCEPTED.into_response(),
                "no-content" => StatusCode::NO_CONTENT.into_response(),
                "gone" => (StatusCode::NOT_FOUND, "gone").into_response(),
                "busy" => (
                    StatusCode::SERVICE_UNAVAILABLE,
                    [(header::RETRY_AFTER, "7")],
                    "busy",
                )
                    .into_response(),
                "limited" => (StatusCode::TOO_MANY_REQUESTS, json, error).into_response(),
                "failed-json" => (StatusCode::INTERNAL_SERVER_ERROR, json, error).into_response(),
                "bad-request" => (StatusCode::BAD_REQUEST, "bad").into_response(),
                "text" => ([(header::CONTENT_TYPE, "text/plain")], "hi").into_response(),
                "not-json" => (json, "{").into_response(),
                "no-stream" => StatusCode::METHOD_NOT_ALLOWED.into_response(),
                "events" => (
                    [(header::CONTENT_TYPE, "text/event-stream")],
                    "retry: 5\n\nid: 1\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":1,\"result\":{}}\r\n\r\n: c\n\nevent: x\ndata: y\n\n",
                )
                    .into_response(),
                _ => (
                    [
                        (header::CONTENT_TYPE, "application/json; charset=utf-8"),
                        (header::HeaderName::from_static("mcp-session-id"), "s-1"),
                    ],
                    r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
                )
                    .into_response(),
            }
        };
        let app = axum::Router::new().route("/mcp", axum::routing::post(answer).get(answer));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        url
    }

    /// A POST's outcome as text, an SSE answer's events read to their end.
    async fn events(outcome: Result<super::StreamableHttpPostResponse, super::Failure>) -> String {
        use futures::StreamExt;
        match outcome {
            Ok(super::StreamableHttpPostResponse::Sse(stream, session)) => {
                let events: Vec<_> = stream.collect().await;
                format!("{events:?} {session:?}")
            }
            other => format!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_post_is_answered_as_rmcps_own_client_answers_it() {
        use super::{BoundedHttpClient, StreamableHttpClient};
        use reqwest::header::{HeaderName, HeaderValue};
        let url: std::sync::Arc<str> = cases().await.into();
        let ours = BoundedHttpClient::new(1000).unwrap();
        let theirs = reqwest::Client::new();
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}"#;
        let notification = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        for (case, message, session, header) in [
            ("", ping, None, "x-case"),
            ("challenge", ping, None, "x-case"),
            ("scope", ping, None, "x-case"),
            ("unauthorized", ping, None, "x-case"),
            ("accepted", notification, Some("s-1"), "x-case"),
            ("no-content", ping, None, "x-case"),
            ("gone", ping, Some("s-1"), "x-case"),
            ("gone", ping, None, "x-case"),
            ("gone", discover, None, "x-case"),
            ("bad-request", discover, None, "x-case"),
            ("busy", ping, None, "x-case"),
            ("limited", ping, None, "x-case"),
            ("failed-json", ping, None, "x-case"),
            ("text", ping, None, "x-case"),
            ("text", notification, None, "x-case"),
            ("not-json", notification, None, "x-case"),
            ("", ping, None, "accept"),
            ("", ping, Some("s-1"), "Mcp-Session-Id"),
            ("events", ping, None, "x-case"),
        ] {
            let message: super::ClientJsonRpcMessage = serde_json::from_str(message).unwrap();
            let headers = std::collections::HashMap::from([(
                HeaderName::from_bytes(header.as_bytes()).unwrap(),
                HeaderValue::from_static(if case.is_empty() { "ok" } else { case }),
            )]);
            let session: Option<std::sync::Arc<str>> = session.map(Into::into);
            let token = Some("t".to_owned());
            let (a, b) = (url.clone(), message.clone());
            let (c, d) = (session.clone(), headers.clone());
            let ours = events(ours.post_message(a, b, c, token.clone(), d).await).await;
            let theirs = theirs.post_message(url.clone(), message, session, token, headers);
            let theirs = events(theirs.await).await;
            assert_eq!(ours, theirs, "case {case:?}, header {header}");
        }
    }

    #[tokio::test]
    async fn a_stream_is_opened_as_rmcps_own_client_opens_it() {
        use super::{BoundedHttpClient, StreamableHttpClient};
        use reqwest::header::{HeaderName, HeaderValue};
        let url: std::sync::Arc<str> = cases().await.into();
        let ours = BoundedHttpClient::new(1000).unwrap();
        let theirs = reqwest::Client::new();
        for (case, header) in [
            ("events", "x-case"),
            ("no-stream", "x-case"),
            ("challenge", "x-case"),
            ("scope", "x-case"),
            ("busy", "x-case"),
            ("gone", "x-case"),
            ("text", "x-case"),
            ("accepted", "x-case"),
            ("events", "last-event-id"),
        ] {
            let headers = std::collections::HashMap::from([(
                HeaderName::from_bytes(header.as_bytes()).unwrap(),
                HeaderValue::from_static(case),
            )]);
            let session = Some("s-1".into());
            let (last, token) = (Some("3".to_owned()), Some("t".to_owned()));
            let (a, b, c, d) = (url.clone(), session.clone(), last.clone(), token.clone());
            let ours = ours.get_stream(a, b, c, d, headers.clone()).await;
            let theirs = theirs
                .get_stream(url.clone(), session, last, token, headers)
                .await;
            let read = |outcome: Result<super::Events, super::Failure>| async move {
                use futures::StreamExt;
                match outcome {
                    Ok(stream) => format!("{:?}", stream.collect::<Vec<_>>().await),
                    Err(error) => format!("{error:?}"),
                }
            };
            let (ours, theirs) = (read(ours).await, read(theirs).await);
            assert_eq!(ours, theirs, "case {case:?}, header {header}");
        }
    }

    #[test]
    fn content_types_and_scopes_read_as_rmcp_reads_them() {
        assert!(Kind::of("Application/JSON; charset=utf-8") == Kind::Json);
        assert!(Kind::of(" text/event-stream") == Kind::EventStream);
        assert!(Kind::of("application/jsonl") == Kind::Other);
        assert_eq!(
            scope_of(r#"Bearer error="insufficient_scope", scope="files:read files:write""#),
            Some("files:read files:write".to_owned())
        );
        assert_eq!(
            scope_of("Bearer scope=read:data, x=1"),
            Some("read:data".to_owned())
        );
        assert_eq!(scope_of("Bearer realm=x"), None);
    }
}
