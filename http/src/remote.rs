//! One call forwarded to a module: `POST {url}/execute` with the caller's user and level, the
//! trace context and the module's secret; every way it can fail is a typed [`ToolError`].

use std::time::Duration;

use serde_json::{Value, json};

use super::error::ModuleError;
use super::map::Module;
use super::trace::{TRACEPARENT, current_traceparent};
use super::wire::TaskAnswer;
use tool_registry_core::content::{ContentLimits, too_many_blocks, wire};
use tool_registry_core::task::TaskStatus;
use tool_registry_core::{Ctx, ToolError, ToolResult};

/// The largest answer read from a module: 16 MiB.
pub const MAX_RESULT_BYTES: usize = 16 << 20;

/// The most characters of a module's error body a [`ModuleError::Status`] keeps.
const EXCERPT_CHARS: usize = 200;

/// A module's tool, as its gateway's handler calls it.
pub(super) struct Remote {
    pub(super) client: reqwest::Client,
    /// The module's name in the map.
    pub(super) module_name: String,
    pub(super) module: Module,
    /// The tool's name in the module's manifest, which the module is sent.
    pub(super) remote_name: String,
    /// The tool's name in the gateway's registry.
    pub(super) local_name: String,
    /// Annotated idempotent: one retry after a failure that may not have reached it.
    pub(super) idempotent: bool,
    /// Whether the gateway's own confirmation stage decides every call of the tool (it needs
    /// confirmation, or has a `confirm_if` schema): only then is a call that reaches the
    /// handler one the module need not ask about again.
    pub(super) confirms: bool,
    /// The tool may run as a task: the call follows one (`"task": true`), polls it, and
    /// cancels it when dropped.
    pub(super) task: bool,
    /// The gateway's bounds on what a tool answers: its number of blocks is kept to while the
    /// answer is read.
    pub(super) limits: ContentLimits,
}

/// What one attempt gave: an answer, or a failure worth one retry for an idempotent tool.
enum Attempt {
    Done(Result<ToolResult, ToolError>),
    Retry(ToolError),
}

impl Remote {
    pub(super) async fn call(&self, arguments: Value, ctx: Ctx) -> Result<ToolResult, ToolError> {
        let scope = ctx.scope();
        let mut body = json!({
            "tool_name": self.remote_name,
            "arguments": arguments,
            "level": scope.level(),
        });
        if let Some(user) = scope.user_id() {
            body["user_id"] = json!(user);
        }
        if let Some(id) = ctx.call_id() {
            body["call_id"] = json!(id);
        }
        // This handler runs only after the gateway's own confirmation stage let the call
        // through: where that stage decides the tool's calls, a module that trusts this
        // gateway's secret does not ask again. Where it found nothing to decide, the module
        // may still ask: a compiled tool's `confirm_if` is code its manifest cannot carry, and
        // only its own process applies it.
        if self.confirms {
            body["confirmed"] = json!(true);
        }
        if self.task {
            body["task"] = json!(true);
        }
        // Who asks, for a task's later requests.
        let who = json!({"level": scope.level(), "user_id": scope.user_id()});
        let body =
            serde_json::to_vec(&body).map_err(|error| self.unreachable(error.to_string()))?;
        let traceparent = current_traceparent();
        match self.attempt(&body, traceparent.as_deref(), &who).await {
            Attempt::Done(outcome) => outcome,
            Attempt::Retry(error) if self.idempotent => {
                tracing::info!(target: "tool_registry::http", tool = %self.local_name, %error, "retrying an idempotent tool once");
                match self.attempt(&body, traceparent.as_deref(), &who).await {
                    Attempt::Done(outcome) => outcome,
                    Attempt::Retry(error) => Err(error),
                }
            }
            Attempt::Retry(error) => Err(error),
        }
    }

    async fn attempt(&self, body: &[u8], traceparent: Option<&str>, who: &Value) -> Attempt {
        let timeout = self.module.call_timeout();
        let mut request = self
            .client
            .post(self.module.endpoint("execute"))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec())
            // The registry's own timer (the tool's timeout is the module's) answers first; this
            // one only keeps a lost connection from holding the call.
            .timeout(timeout + Duration::from_secs(1));
        match self.module.bearer(&self.client).await {
            Ok(Some(token)) => request = request.bearer_auth(token),
            Ok(None) => {}
            Err(why) => return Attempt::Done(Err(self.unreachable(why))),
        }
        if let Some(traceparent) = traceparent {
            request = request.header(TRACEPARENT, traceparent);
        }
        let response = match request.send().await {
            Ok(response) => response,
            Err(error) if error.is_timeout() => {
                return Attempt::Done(Err(ToolError::TimedOut {
                    tool: self.local_name.clone(),
                    after: timeout,
                }));
            }
            Err(error) => return Attempt::Retry(self.unreachable(describe(&error))),
        };
        let status = response.status();
        if status == reqwest::StatusCode::UNAUTHORIZED {
            self.module.refused_token();
        }
        // Blocks are counted as the answer arrives: one of more blocks than the gateway reads
        // is refused once the first block past the bound comes, and the rest is never read.
        let mut blocks = wire::CountBlocks::new(wire::CountBlocks::RESULT, self.limits.max_blocks);
        let read = read_capped(response, MAX_RESULT_BYTES, |piece| blocks.feed(piece)).await;
        if blocks.over() {
            let refused = too_many_blocks(None, self.limits.max_blocks);
            return Attempt::Done(Err(ToolError::InvalidOutput {
                tool: self.local_name.clone(),
                path: format!("blocks[{}]", refused.index),
                message: refused.message,
            }));
        }
        let body = match read {
            Ok(body) => body,
            Err(error) => {
                return Attempt::Retry(
                    self.unreachable(format!("the answer cannot be read: {error}")),
                );
            }
        };
        if status == reqwest::StatusCode::ACCEPTED && self.task {
            return Attempt::Done(self.follow(&body, who).await);
        }
        if status.is_success() {
            return Attempt::Done(self.result(&body));
        }
        // A refusal the module explains with a typed error is that error.
        if let Some(error) = serde_json::from_slice::<Value>(&body)
            .ok()
            .and_then(|value| {
                value
                    .get("error")
                    .filter(|e| e.get("code").is_some())
                    .cloned()
            })
        {
            return Attempt::Done(Err(ToolError::from_json(&error, &self.local_name)));
        }
        let error = ToolError::from(ModuleError::Status {
            tool: self.local_name.clone(),
            module: self.module_name.clone(),
            status: status.as_u16(),
            body: excerpt(&body),
        });
        if matches!(status.as_u16(), 502..=504) {
            Attempt::Retry(error)
        } else {
            Attempt::Done(Err(error))
        }
    }

    /// The task the module answered `202` with, followed to its end: read again every poll
    /// interval it asks for (within 50 ms and 2 s), its result once it completed; cancelled at
    /// the module when this call is dropped first (its deadline, its caller gone).
    async fn follow(&self, body: &[u8], who: &Value) -> Result<ToolResult, ToolError> {
        let answer: TaskAnswer = self.read(body, "the task answered is not one")?;
        let mut task = answer.task;
        let mut cancel = CancelOnDrop {
            remote: self,
            id: Some(task.id.clone()),
            who,
        };
        loop {
            match task.status {
                TaskStatus::Completed => {
                    cancel.id = None;
                    let result = task.result.ok_or_else(|| {
                        self.unreachable("a completed task came without its result".to_owned())
                    })?;
                    let body = serde_json::to_vec(&result)
                        .map_err(|error| self.unreachable(error.to_string()))?;
                    return self.result(&body);
                }
                TaskStatus::Failed | TaskStatus::Cancelled => {
                    cancel.id = None;
                    let why = task
                        .message
                        .unwrap_or_else(|| task.status.as_str().to_owned());
                    return Err(self.unreachable(format!(
                        "the module's task ended {}: {why}",
                        task.status.as_str()
                    )));
                }
                TaskStatus::Working | TaskStatus::InputRequired => {}
            }
            let wait = Duration::from_millis(task.poll_interval_ms)
                .clamp(Duration::from_millis(50), Duration::from_secs(2));
            tokio::time::sleep(wait).await;
            task = self.task_request("tasks/get", &task.id, who).await?.task;
        }
    }

    /// `POST {url}/{path}` for the task `id` of this call's caller.
    async fn task_request(
        &self,
        path: &str,
        id: &str,
        who: &Value,
    ) -> Result<TaskAnswer, ToolError> {
        let mut request = self
            .client
            .post(self.module.endpoint(path))
            .json(&task_body(id, who))
            .timeout(self.module.call_timeout().min(Duration::from_secs(30)));
        if let Some(token) =
            (self.module.bearer(&self.client).await).map_err(|why| self.unreachable(why))?
        {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.unreachable(describe(&error)))?;
        let status = response.status();
        let body = read_capped(response, MAX_RESULT_BYTES, |_| true)
            .await
            .map_err(|error| self.unreachable(format!("the answer cannot be read: {error}")))?;
        if !status.is_success() {
            return Err(ModuleError::Status {
                tool: self.local_name.clone(),
                module: self.module_name.clone(),
                status: status.as_u16(),
                body: excerpt(&body),
            }
            .into());
        }
        self.read(&body, "the task answered is not one")
    }

    /// The module's `ToolResult`: a success as it is, an error result as its typed error.
    fn result(&self, body: &[u8]) -> Result<ToolResult, ToolError> {
        let mut result: ToolResult = self.read(body, "the answer is not a tool result")?;
        if !result.success
            && let Some(error) = result
                .content
                .get("error")
                .filter(|e| e.get("code").is_some())
        {
            return Err(ToolError::from_json(error, &self.local_name));
        }
        let module_ms = result.audit.duration_ms;
        result.audit = tool_registry_core::audit::Audit::default();
        result
            .audit
            .extra
            .insert("module".to_owned(), json!(self.module_name));
        if let Some(ms) = module_ms {
            result
                .audit
                .extra
                .insert("module_duration_ms".to_owned(), json!(ms));
        }
        Ok(result)
    }

    /// `body` read as a `T` that holds results, with the gateway's bound on their blocks: a
    /// result whose blocks break it (too many, a kind this version does not know, base64 that
    /// is not) is the tool's invalid output, found as the blocks are read, one at a time; any
    /// other answer that does not read is `not_one`, and the module unreachable.
    fn read<T: serde::de::DeserializeOwned>(
        &self,
        body: &[u8],
        not_one: &str,
    ) -> Result<T, ToolError> {
        let read = wire::bounded(&self.limits, || serde_json::from_slice(body));
        read.map_err(|(error, refused)| match refused {
            // JSON that ends or breaks inside the blocks is no answer, not a bad block.
            Some(refused) if !error.is_syntax() && !error.is_eof() => ToolError::InvalidOutput {
                tool: self.local_name.clone(),
                path: format!("blocks[{}]", refused.index),
                message: refused.message,
            },
            _ => self.unreachable(format!("{not_one}: {error}")),
        })
    }

    fn unreachable(&self, reason: String) -> ToolError {
        ModuleError::Unreachable {
            tool: self.local_name.clone(),
            module: self.module_name.clone(),
            reason,
        }
        .into()
    }
}

/// Cancels a module's task when the call that follows it is dropped before its end.
struct CancelOnDrop<'r> {
    remote: &'r Remote,
    /// The task, until it ended.
    id: Option<String>,
    /// Who asks.
    who: &'r Value,
}

/// The body of a `/tasks/*` request for the task `id` of the caller `who`.
fn task_body(id: &str, who: &Value) -> Value {
    let mut body = who.clone();
    body["task_id"] = json!(id);
    body
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        let mut request = self
            .remote
            .client
            .post(self.remote.module.endpoint("tasks/cancel"))
            .json(&task_body(&id, self.who))
            .timeout(Duration::from_secs(10));
        if let Some(token) = self.remote.module.bearer_held() {
            request = request.bearer_auth(token);
        }
        let tool = self.remote.local_name.clone();
        runtime.spawn(async move {
            if let Err(error) = request.send().await {
                tracing::warn!(target: "tool_registry::http", %tool, error = %describe(&error), "a module's task could not be cancelled");
            }
        });
    }
}

/// What went wrong with a request, without its address.
pub(super) fn describe(error: &reqwest::Error) -> String {
    use std::error::Error as _;
    if error.is_connect() {
        let mut cause = error.source();
        while let Some(inner) = cause {
            if let Some(io) = inner.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::ConnectionRefused {
                    return "connection refused".to_owned();
                }
                return format!("cannot connect: {io}");
            }
            cause = inner.source();
        }
        return "cannot connect".to_owned();
    }
    if error.is_timeout() {
        return "timed out".to_owned();
    }
    let mut text = String::from("the request failed");
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

/// The start of a body, at most [`EXCERPT_CHARS`] characters.
pub(super) fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let mut chars = text.chars();
    let mut shown: String = chars.by_ref().take(EXCERPT_CHARS).collect();
    if chars.next().is_some() {
        shown.push('…');
    }
    shown.trim().to_owned()
}

/// Reads a response's body, refusing one longer than `limit` without reading the rest; each
/// piece is shown to `more` as it arrives, and the body read so far is the answer once `more`
/// says not to read on.
pub(super) async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
    mut more: impl FnMut(&[u8]) -> bool,
) -> Result<Vec<u8>, String> {
    if response
        .content_length()
        .is_some_and(|length| length > limit as u64)
    {
        return Err(format!("it is larger than {limit} bytes"));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| describe(&error))? {
        if body.len() + chunk.len() > limit {
            return Err(format!("it is larger than {limit} bytes"));
        }
        body.extend_from_slice(&chunk);
        if !more(&chunk) {
            break;
        }
    }
    Ok(body)
}
