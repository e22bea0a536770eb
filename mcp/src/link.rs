//! A call's link to its MCP client ([`ClientLink`]), what [`Ctx::log`](tool_registry_core::Ctx::log),
//! [`Ctx::progress`](tool_registry_core::Ctx::progress), [`Ctx::ask`](tool_registry_core::Ctx::ask) and
//! [`Ctx::sample`](tool_registry_core::Ctx::sample) reach the client through: logging (`logging/setLevel`,
//! `notifications/message`), progress (`notifications/progress`), form elicitation
//! (`elicitation/create`) and sampling (`sampling/createMessage`), all of the `initialize` era
//! and deprecated by the 2026-07-28 revision's SEP-2577, hence the `allow`.
//!
//! A call's notifications go out through one queue of their own, in order, never making the
//! tool wait; the answer to the call waits for the queue to be written ([`McpClient::flush`]),
//! so a client reads every progress notification before the answer. Requests to the client
//! ride the stream of the request that made the call (rmcp's SEP-2260 routing).
#![allow(deprecated)]

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, CreateMessageRequest,
    CreateMessageRequestParams, CreateMessageResult, ElicitRequest, ElicitRequestParams,
    ElicitResult, ElicitationAction, InputRequest, ListRootsRequest,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    RequestId, ServerRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

use super::request::Request;
use super::resume::Resumable;
use super::rounds::{Asked, Rounds};
use tool_registry_core::task::TaskInputs;

use tool_registry_core::call::{
    AskError, Asking, ClientLink, Form, FormAnswer, LogLevel, Role, Root, Sampled, Sampling,
};

/// The least level a request's client hears its call's logs at: the session's (`session`, as
/// `logging/setLevel` set it) in the `initialize` era; on the stateless revision the one the
/// request's `_meta` names (`io.modelcontextprotocol/logLevel`), and none without it.
pub(super) fn request_level(session: &Arc<AtomicU8>, request: &Request) -> Arc<AtomicU8> {
    if !request.stateless() {
        return Arc::clone(session);
    }
    let level = Arc::new(AtomicU8::new(u8::MAX));
    if let Some(asked) = request.meta.log_level() {
        set_level(&level, asked);
    }
    level
}

/// Stores the least level the session's client wants, as `logging/setLevel` asked.
pub(super) fn set_level(store: &AtomicU8, level: rmcp::model::LoggingLevel) {
    store.store(level_of(level) as u8, Ordering::Relaxed);
}

/// How many notifications of one call wait for the client at most; more are dropped (counted
/// in `tracing`), so that a tool that logs in a loop never waits and never fills memory.
const QUEUE: usize = 1024;

/// How long the answer to a call waits for the call's notifications to be written.
const FLUSH: Duration = Duration::from_secs(2);

/// What a call's queue carries.
enum Outgoing {
    Log(LoggingMessageNotificationParam),
    Progress(ProgressNotificationParam),
    /// Answered once everything before it is written.
    Flush(oneshot::Sender<()>),
}

/// A call's client over MCP.
pub(super) struct McpClient {
    /// The client, where the call may write to it (see [`Request::peer`]).
    peer: Option<Peer<RoleServer>>,
    level: Arc<AtomicU8>,
    /// The revision the request that made the call names, when it names one (2026-07-28
    /// requests do); otherwise the session's.
    version: Option<ProtocolVersion>,
    queue: OnceLock<mpsc::Sender<Outgoing>>,
    /// Progress notifications sent, for the next one's `progress`.
    steps: AtomicU64,
    /// Where the call's answer stream can be released: the HTTP sessions' streams, the
    /// session and the request.
    stream: Option<(Arc<Resumable>, axum::http::HeaderValue, RequestId)>,
    /// On the stateless revision: the call's questions, answered from the request or raised
    /// as an `input_required` result (`rounds.rs`).
    rounds: Option<Arc<Rounds>>,
    /// In a task of the stateless revision: where the call asks its questions, and the
    /// capabilities the request that made it declared.
    task: Option<(TaskInputs, Option<ClientCapabilities>)>,
    /// How many questions the call asked by name: the next default name.
    asked: AtomicU64,
}

impl McpClient {
    pub(super) fn new(
        peer: Option<Peer<RoleServer>>,
        level: Arc<AtomicU8>,
        version: Option<ProtocolVersion>,
    ) -> Self {
        Self {
            peer,
            level,
            version,
            queue: OnceLock::new(),
            steps: AtomicU64::new(0),
            stream: None,
            rounds: None,
            task: None,
            asked: AtomicU64::new(0),
        }
    }

    /// The call runs as a task of the stateless revision: it asks its questions through the
    /// task (`input_required` on `tasks/get`, answered with `tasks/update`).
    pub(super) fn with_task_inputs(
        mut self,
        inputs: TaskInputs,
        capabilities: Option<ClientCapabilities>,
    ) -> Self {
        self.task = Some((inputs, capabilities));
        self
    }

    /// A question asked by name (the stateless revision): answered from the request, raised as
    /// an `input_required` result, or posed through the call's task; `None` when the call
    /// asks its client by request instead (the `initialize` era).
    fn by_name<T: Send + 'static>(
        &self,
        capability: &'static str,
        key: Option<&str>,
        in_request: bool,
        request: InputRequest,
        read: fn(Value) -> Result<T, AskError>,
    ) -> Option<Asking<T>> {
        let capabilities = match (&self.rounds, &self.task) {
            (Some(rounds), _) => rounds.capabilities(),
            (None, Some((_, capabilities))) => capabilities.as_ref(),
            (None, None) => return None,
        };
        if !declares(capabilities, capability) {
            if let Some(rounds) = &self.rounds {
                rounds.lacks(capability);
            }
            return Some(refused(&format!("it did not declare `{capability}`")));
        }
        let n = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let key = key.map_or_else(|| format!("q{n}"), str::to_owned);
        // Answered in the request; else asked through the task once the call is one; else
        // raised with the request.
        // A question the call asks within its request is raised with it until the call is a
        // task; any other goes to the task when there may be one.
        let in_task =
            (self.task.as_ref()).is_some_and(|(inputs, _)| inputs.is_task() || !in_request);
        if let Some(rounds) = &self.rounds {
            if let Some(answer) = rounds.answer(&key) {
                return Some(Box::pin(std::future::ready(read(answer))));
            }
            if !in_task {
                return Some(match rounds.ask(key, || request) {
                    Asked::Answered(answer) => Box::pin(std::future::ready(read(answer))),
                    Asked::Raised => Box::pin(std::future::pending()),
                });
            }
        }
        let (inputs, _) = self.task.as_ref()?;
        let inputs = inputs.clone();
        let request = serde_json::to_value(&request).unwrap_or(Value::Null);
        Some(Box::pin(
            async move { read(inputs.ask(key, request).await?) },
        ))
    }

    /// The call asks its questions through `rounds`: the 2026-07-28 revision's
    /// `input_required` results.
    pub(super) fn with_rounds(mut self, rounds: Arc<Rounds>) -> Self {
        self.rounds = Some(rounds);
        self
    }

    /// The call of request `request`, whose request came over HTTP with `parts`: its answer
    /// stream may be released when it is in a session.
    pub(super) fn over_http(
        mut self,
        parts: Option<&axum::http::request::Parts>,
        request: &RequestId,
    ) -> Self {
        self.stream = parts.and_then(|parts| {
            let resumable = parts.extensions.get::<Arc<Resumable>>()?;
            // The header kept as it came (a reference count), read as text only on release.
            let session = parts.headers.get("mcp-session-id")?.clone();
            Some((Arc::clone(resumable), session, request.clone()))
        });
        self
    }

    /// Sends `message` as the next step of the call's progress under `token`.
    pub(super) fn progress(&self, token: ProgressToken, message: String) {
        let step = self.steps.fetch_add(1, Ordering::Relaxed) + 1;
        let param = ProgressNotificationParam::new(token, step as f64).with_message(message);
        self.push(Outgoing::Progress(param), || {
            tracing::debug!(target: "tool_registry::mcp", "a tool's progress was not sent: it reported from outside the runtime");
        });
    }

    /// Waits until every notification of the call so far is written (at most [`FLUSH`]).
    pub(super) async fn flush(&self) {
        let Some(queue) = self.queue.get() else {
            return;
        };
        let (done, written) = oneshot::channel();
        if queue.send(Outgoing::Flush(done)).await.is_ok() {
            let _ = tokio::time::timeout(FLUSH, written).await;
        }
    }

    /// Queues `item`; `outside` runs when the queue cannot be started (a tool's own thread,
    /// outside the runtime, before the call's first notification).
    fn push(&self, item: Outgoing, outside: impl FnOnce()) {
        let queue = match self.queue.get() {
            Some(queue) => queue,
            None => {
                let Ok(runtime) = tokio::runtime::Handle::try_current() else {
                    outside();
                    return;
                };
                // Nowhere to write: the transport took the request only if nothing would be.
                let Some(peer) = &self.peer else {
                    return;
                };
                self.queue.get_or_init(|| {
                    let (sender, items) = mpsc::channel(QUEUE);
                    runtime.spawn(write(peer.clone(), items));
                    sender
                })
            }
        };
        if queue.try_send(item).is_err() {
            tracing::debug!(target: "tool_registry::mcp", "a tool's notification was dropped: the client is behind");
        }
    }

    /// Why this client cannot be sent requests during a call, if it cannot: its revision
    /// forbids them (2026-07-28), or it did not declare `capability`.
    fn unreachable(&self, capability: &str, declared: bool) -> Option<AskError> {
        let version = self.version.clone().or_else(|| {
            (self.peer.as_ref()?.peer_info()).map(|info| info.protocol_version.clone())
        });
        if version.is_some_and(|version| !version.has_initialize()) {
            return Some(AskError::Unsupported(
                "it speaks the 2026-07-28 revision, where a server sends no requests during a call"
                    .into(),
            ));
        }
        (!declared).then(|| AskError::Unsupported(format!("it did not declare `{capability}`")))
    }
}

/// Writes a call's notifications in order.
async fn write(peer: Peer<RoleServer>, mut items: mpsc::Receiver<Outgoing>) {
    while let Some(item) = items.recv().await {
        let sent = match item {
            Outgoing::Log(message) => peer.notify_logging_message(message).await,
            Outgoing::Progress(progress) => peer.notify_progress(progress).await,
            Outgoing::Flush(done) => {
                let _ = done.send(());
                Ok(())
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

impl ClientLink for McpClient {
    fn release_stream(&self) -> bool {
        self.stream
            .as_ref()
            .is_some_and(|(streams, session, request)| {
                session
                    .to_str()
                    .is_ok_and(|session| streams.release(session, request))
            })
    }

    fn log(&self, level: LogLevel, logger: Option<&str>, data: Value) {
        if (level as u8) < self.level.load(Ordering::Relaxed) {
            return;
        }
        let mut message = LoggingMessageNotificationParam::new(wire_level(level), data);
        if let Some(logger) = logger {
            message = message.with_logger(logger);
        }
        let logged = message.clone();
        self.push(Outgoing::Log(message), move || {
            tool_registry_core::call::log_locally(
                level,
                logged.logger.as_deref(),
                &logged.data,
                None,
            );
        });
    }

    fn ask(&self, form: Form) -> Asking<FormAnswer> {
        let params = serde_json::from_value::<ElicitRequestParams>(json!({
            "mode": "form",
            "message": form.message(),
            "requestedSchema": form.schema(),
        }));
        if self.rounds.is_some() || self.task.is_some() {
            let params = match params {
                Ok(params) => params,
                Err(error) => {
                    return Box::pin(std::future::ready(Err(AskError::BadForm(
                        error.to_string(),
                    ))));
                }
            };
            let request = InputRequest::Elicitation(ElicitRequest::new(params));
            return self
                .by_name(
                    "elicitation",
                    form.key(),
                    form.is_in_request(),
                    request,
                    read_form,
                )
                .unwrap_or_else(|| refused("the call asks by name but has nowhere to"));
        }
        let declared = (self.peer.as_ref())
            .and_then(Peer::peer_info)
            .and_then(|info| {
                let elicitation = info.capabilities.elicitation.as_ref()?;
                Some(elicitation.form.is_some() || elicitation.url.is_none())
            })
            .unwrap_or(false);
        if let Some(refused) = self.unreachable("elicitation", declared) {
            return Box::pin(std::future::ready(Err(refused)));
        }
        let Some(peer) = self.peer.clone() else {
            return refused("the request has no stream to ask on");
        };
        Box::pin(async move {
            let params = params.map_err(|error| AskError::BadForm(error.to_string()))?;
            let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
            let ClientResult::ElicitResult(answer) = send(peer, request).await? else {
                return Err(asked(ServiceError::UnexpectedResponse));
            };
            form_answer(answer)
        })
    }

    fn roots(&self, key: Option<&str>) -> Asking<Vec<Root>> {
        let request = InputRequest::ListRoots(ListRootsRequest::default());
        if let Some(asking) = self.by_name("roots", key, false, request, roots_of) {
            return asking;
        }
        let declared = (self.peer.as_ref().and_then(Peer::peer_info))
            .is_some_and(|info| info.capabilities.roots.is_some());
        if let Some(refused) = self.unreachable("roots", declared) {
            return Box::pin(std::future::ready(Err(refused)));
        }
        let Some(peer) = self.peer.clone() else {
            return refused("the request has no stream to ask on");
        };
        Box::pin(async move {
            let request = ServerRequest::ListRootsRequest(ListRootsRequest::default());
            let ClientResult::ListRootsResult(answer) = send(peer, request).await? else {
                return Err(asked(ServiceError::UnexpectedResponse));
            };
            roots_of(serde_json::to_value(answer).unwrap_or(Value::Null))
        })
    }

    fn sample(&self, sampling: Sampling) -> Asking<Sampled> {
        let messages: Vec<Value> = sampling
            .messages()
            .iter()
            .map(|(role, text)| {
                let role = match role {
                    Role::User => "user",
                    Role::Assistant => "assistant",
                };
                json!({"role": role, "content": {"type": "text", "text": text}})
            })
            .collect();
        let mut params = json!({"messages": messages, "maxTokens": sampling.token_limit()});
        if let Some(system) = sampling.system_prompt() {
            params["systemPrompt"] = json!(system);
        }
        if let Some(temperature) = sampling.sampling_temperature() {
            params["temperature"] = json!(temperature);
        }
        let params = serde_json::from_value::<CreateMessageRequestParams>(params);
        if self.rounds.is_some() || self.task.is_some() {
            let params = match params {
                Ok(params) => params,
                Err(error) => {
                    return Box::pin(std::future::ready(Err(AskError::Client(error.to_string()))));
                }
            };
            let request = InputRequest::CreateMessage(CreateMessageRequest::new(params));
            return self
                .by_name("sampling", sampling.key(), false, request, read_sampled)
                .unwrap_or_else(|| refused("the call asks by name but has nowhere to"));
        }
        let declared = (self.peer.as_ref().and_then(Peer::peer_info))
            .is_some_and(|info| info.capabilities.sampling.is_some());
        if let Some(refused) = self.unreachable("sampling", declared) {
            return Box::pin(std::future::ready(Err(refused)));
        }
        let Some(peer) = self.peer.clone() else {
            return refused("the request has no stream to ask on");
        };
        Box::pin(async move {
            let params = params.map_err(|error| AskError::Client(error.to_string()))?;
            let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
            let ClientResult::CreateMessageResult(answer) = send(peer, request).await? else {
                return Err(asked(ServiceError::UnexpectedResponse));
            };
            Ok(sampled(&answer))
        })
    }
}

/// A question refused at once: `why` the client cannot be asked.
fn refused<T: Send + 'static>(why: &str) -> Asking<T> {
    Box::pin(std::future::ready(Err(AskError::Unsupported(
        why.to_owned(),
    ))))
}

/// Whether `capabilities` declare `capability` (an empty `elicitation` means forms).
fn declares(capabilities: Option<&ClientCapabilities>, capability: &str) -> bool {
    let Some(capabilities) = capabilities else {
        return false;
    };
    match capability {
        "elicitation" => (capabilities.elicitation.as_ref())
            .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none()),
        "sampling" => capabilities.sampling.is_some(),
        "roots" => capabilities.roots.is_some(),
        _ => false,
    }
}

/// An answer to a form, as the client sent it.
fn read_form(answer: Value) -> Result<FormAnswer, AskError> {
    serde_json::from_value::<ElicitResult>(answer)
        .map_err(|error| {
            AskError::Mismatch(format!("the answer is not an elicitation result: {error}"))
        })
        .and_then(form_answer)
}

/// A completion, as the client sent it.
fn read_sampled(answer: Value) -> Result<Sampled, AskError> {
    serde_json::from_value::<CreateMessageResult>(answer)
        .map(|answer| sampled(&answer))
        .map_err(|error| {
            AskError::Mismatch(format!("the answer is not a sampling result: {error}"))
        })
}

/// A client's elicitation result as the tool reads it.
fn form_answer(answer: ElicitResult) -> Result<FormAnswer, AskError> {
    Ok(match answer.action {
        ElicitationAction::Accept => match answer.content {
            Some(Value::Object(fields)) => FormAnswer::Accepted(fields),
            None => FormAnswer::Accepted(serde_json::Map::new()),
            Some(other) => {
                let kind = match other {
                    Value::Array(_) => "an array",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "a boolean",
                    _ => "null",
                };
                return Err(AskError::Mismatch(format!(
                    "an accepted answer's content is an object of fields, not {kind}"
                )));
            }
        },
        ElicitationAction::Decline => FormAnswer::Declined,
        _ => FormAnswer::Cancelled,
    })
}

/// A client's sampling result as the tool reads it.
fn sampled(answer: &CreateMessageResult) -> Sampled {
    let content = serde_json::to_value(&answer.message.content).unwrap_or(Value::Null);
    Sampled::new(content, answer.model.clone(), answer.stop_reason.clone())
}

/// A client's `roots/list` result as the tool reads it, at most 1,000 roots.
fn roots_of(answer: Value) -> Result<Vec<Root>, AskError> {
    #[derive(serde::Deserialize)]
    struct Listed {
        roots: Vec<Root>,
    }
    let listed: Listed = serde_json::from_value(answer)
        .map_err(|error| AskError::Mismatch(format!("the answer is not a roots list: {error}")))?;
    if listed.roots.len() > 1000 {
        return Err(AskError::Mismatch(format!(
            "the client listed {} roots, more than the 1000 read",
            listed.roots.len()
        )));
    }
    Ok(listed.roots)
}

/// Sends `request` to the client and waits for its answer. A wait given up (the call ended at
/// its timeout, was cancelled, or the question's own timeout passed) tells the client with
/// `notifications/cancelled`, so it stops asking its user.
async fn send(peer: Peer<RoleServer>, request: ServerRequest) -> Result<ClientResult, AskError> {
    /// Cancels the request unless disarmed.
    struct Abandon(Option<(Peer<RoleServer>, RequestId)>);

    impl Drop for Abandon {
        fn drop(&mut self) {
            let Some((peer, id)) = self.0.take() else {
                return;
            };
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    let reason = "the tool stopped waiting for the answer".to_owned();
                    let cancelled = CancelledNotificationParam::new(Some(id), Some(reason));
                    let _ = peer.notify_cancelled(cancelled).await;
                });
            }
        }
    }

    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(asked)?;
    let mut abandon = Abandon(Some((peer, handle.id.clone())));
    let answer = handle.await_response().await;
    abandon.0 = None;
    answer.map_err(asked)
}

/// What a failed request to the client means for the tool that asked.
fn asked(error: ServiceError) -> AskError {
    match error {
        ServiceError::McpError(error) => {
            let too_long = error
                .data
                .as_ref()
                .and_then(|data| data.get(super::peek::TOO_LONG))
                .and_then(Value::as_u64);
            match too_long {
                Some(limit) => AskError::TooLarge {
                    bytes: None,
                    limit: usize::try_from(limit).unwrap_or(usize::MAX),
                },
                None => AskError::Client(format!("{} ({})", error.message, error.code.0)),
            }
        }
        ServiceError::Timeout { timeout } => AskError::Timeout(timeout),
        ServiceError::UnexpectedResponse => {
            AskError::Client("the answer is not one to this request".into())
        }
        _ => AskError::Gone,
    }
}

fn wire_level(level: LogLevel) -> rmcp::model::LoggingLevel {
    use rmcp::model::LoggingLevel as Wire;
    match level {
        LogLevel::Debug => Wire::Debug,
        LogLevel::Info => Wire::Info,
        LogLevel::Notice => Wire::Notice,
        LogLevel::Warning => Wire::Warning,
        LogLevel::Error => Wire::Error,
        LogLevel::Critical => Wire::Critical,
        LogLevel::Alert => Wire::Alert,
        LogLevel::Emergency => Wire::Emergency,
    }
}

fn level_of(level: rmcp::model::LoggingLevel) -> LogLevel {
    use rmcp::model::LoggingLevel as Wire;
    match level {
        Wire::Debug => LogLevel::Debug,
        Wire::Info => LogLevel::Info,
        Wire::Notice => LogLevel::Notice,
        Wire::Warning => LogLevel::Warning,
        Wire::Error => LogLevel::Error,
        Wire::Critical => LogLevel::Critical,
        Wire::Alert => LogLevel::Alert,
        Wire::Emergency => LogLevel::Emergency,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forms of the conformance suite's SEP-1034 and SEP-1330 scenarios go out as written:
    /// rmcp's typed schema keeps every keyword they use.
    #[test]
    fn forms_reach_the_wire_as_written() {
        let schemas = [
            json!({"type": "object", "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Verification status", "default": true}
            }, "required": []}),
            json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "description": "Select one option", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "description": "Select one option with titles", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}]},
                "legacyEnum": {"type": "string", "description": "Select one option (legacy)", "enum": ["opt1", "opt2"], "enumNames": ["Option One", "Option Two"]},
                "untitledMulti": {"type": "array", "description": "Select multiple options", "minItems": 1, "maxItems": 3, "items": {"type": "string", "enum": ["option1", "option2"]}},
                "titledMulti": {"type": "array", "description": "Select multiple options with titles", "minItems": 1, "maxItems": 3, "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}]}}
            }, "required": []}),
        ];
        for schema in schemas {
            let form = Form::new("?", schema.clone()).unwrap();
            let params: ElicitRequestParams = serde_json::from_value(json!({
                "mode": "form", "message": form.message(), "requestedSchema": form.schema()
            }))
            .unwrap();
            let wire = serde_json::to_value(&params).unwrap();
            assert_eq!(wire["requestedSchema"], schema, "{wire:#}");
        }
    }
}
