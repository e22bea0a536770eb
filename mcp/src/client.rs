//! An MCP server mounted as a module: its tools join the registry as run-time tools named
//! `module.tool`, with the registry's scopes, limits and gates in front of them, and follow its
//! `list_changed` notifications.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, ErrorCode, ProtocolVersion, SubscriptionFilter, Tool};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RoleClient, RunningService,
    ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::Value;
use tokio::sync::mpsc;

use super::answer::{Mounted, answer};
use super::http_client::BoundedHttpClient;
use super::peek::refused_answer;
use super::stdio::StdioTransport;
use tool_registry_core::ToolError;
use tool_registry_core::ToolSpec;
use tool_registry_core::content::ContentLimits;
use tool_registry_core::def::Annotations;
use tool_registry_core::format::mcp::unwrap_output_schema;
use tool_registry_core::registry::Shared;
use tool_registry_core::spec::ToolHandler;
use tool_registry_http::{MODULE_TIMEOUT, ModuleError};

use super::mounted::{self, Offered};
use super::relay;

/// An MCP server whose tools are tools of a registry, as `module.tool`. Dropping it ends the
/// session; its tools stay listed and answer `module_unreachable` until removed
/// ([`McpModule::remove_tools`]).
pub struct McpModule {
    inner: Arc<Inner>,
    session: RunningService<RoleClient, Follower>,
    /// The server's process, for a server on stdio: killed when the module is dropped.
    _process: Option<tokio::process::Child>,
}

struct Inner {
    registry: Shared,
    name: String,
    /// The gateway names of its tools in the registry, each with whether its server wraps its
    /// values (`structuredContent` `{"result": ...}`, see [`tool_registry_core::format::mcp`]).
    tools: Mutex<BTreeMap<String, bool>>,
    /// Its server's resources, templates and prompts, as registered here.
    offered: Mutex<Offered>,
    /// What asks for a new token when the server refuses the one it has (a server reached
    /// with `McpModule::connect_oauth`).
    authorizer: Option<Arc<dyn Reauthorize>>,
}

/// Why an MCP server cannot be mounted.
#[derive(Debug, thiserror::Error)]
#[error("cannot mount the MCP server `{module}`: {reason}")]
pub struct McpModuleError {
    /// The module.
    pub module: String,
    /// What went wrong.
    pub reason: String,
}

/// What asks for a new token when a mounted server refuses the one it has (`oauth.rs`'s
/// authorizer): after the server's challenge, and told when a call succeeded.
pub(super) trait Reauthorize: Send + Sync {
    /// Asks for a new token after `challenge` (the refusal's `WWW-Authenticate`); why not.
    fn after<'a>(
        &'a self,
        challenge: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), String>>;
    /// A call succeeded.
    fn succeeded(&self);
}

/// The client side's handler: it hears `list_changed` and asks for the list again.
#[derive(Clone)]
pub(super) struct Follower {
    changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Follower {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(());
    }

    /// The client follows tasks (the 2026-07-28 extension): a mounted server may answer a
    /// long call with a task, which the call then follows to its end. It takes form questions:
    /// on the 2026-07-28 revision, an `input_required` result's questions are put to the
    /// caller of the tool (`relay.rs`); a server of the `initialize` era that asks on its own
    /// is declined, as no call of the caller's is known to be waiting on the answer.
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut config = rmcp::model::ClientConfig::default();
        config.capabilities = rmcp::model::ClientCapabilities::builder()
            .enable_tasks()
            .enable_elicitation()
            .build();
        config
    }
}

impl McpModule {
    /// Starts `command` (an MCP server on stdio) and mounts its tools as `name.tool`. The
    /// process is killed when the module is dropped.
    ///
    /// Its output is read one message a line, each line bounded by what the registry's
    /// [`ContentLimits`] let a result hold in base64 and [`MCP_ANSWER_ROOM`] more: an answer
    /// past that is skipped as it arrives, never held whole, and its call is `invalid_output`
    /// at once. So is an answer of more blocks than `max_blocks` (counted before any is
    /// built), and one that does not read (nested deeper than 128 levels), when its id comes
    /// before its result, as every SDK writes it.
    pub async fn spawn(
        registry: impl Into<Shared>,
        name: &str,
        mut command: tokio::process::Command,
    ) -> Result<Self, McpModuleError> {
        let registry = registry.into();
        let limits = registry.content_limits();
        command
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut process = command
            .spawn()
            .map_err(|error| failed(name, error.to_string()))?;
        let (Some(output), Some(input)) = (process.stdout.take(), process.stdin.take()) else {
            return Err(failed(name, "its standard streams are not pipes".into()));
        };
        let transport = StdioTransport::<_, RoleClient>::new(output, input, answer_bound(&limits))
            .with_max_blocks(limits.max_blocks);
        let opened = open(transport)
            .await
            .map_err(|error| failed(name, error.to_string()))?;
        let mut module = Self::mount(registry, name, opened, None).await?;
        module._process = Some(process);
        Ok(module)
    }

    /// Connects to the MCP server at `url` (streamable HTTP), with its bearer `token` if any,
    /// and mounts its tools as `name.tool`.
    ///
    /// Each answer (a JSON body, or one SSE event) is read as bytes, at most what the
    /// registry's [`ContentLimits`] let a result hold in base64 and [`MCP_ANSWER_ROOM`] more,
    /// or rmcp's own 16 MiB where that is smaller, and its blocks are counted before rmcp
    /// builds any. A JSON answer of more blocks than `max_blocks`, or longer than the bound,
    /// and an SSE event of more blocks, make the call `invalid_output` at once; an SSE event
    /// longer than the bound ends its stream.
    pub async fn connect(
        registry: impl Into<Shared>,
        name: &str,
        url: &str,
        token: Option<&str>,
    ) -> Result<Self, McpModuleError> {
        let registry = registry.into();
        let (mut config, client) = http_parts(&registry, name, url)?;
        if let Some(token) = token {
            config = config.auth_header(token.to_owned());
        }
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let opened = open(transport)
            .await
            .map_err(|error| failed(name, error.to_string()))?;
        Self::mount(registry, name, opened, None).await
    }

    pub(super) async fn mount(
        registry: Shared,
        name: &str,
        (session, changed, mut changes): Opened,
        authorizer: Option<Arc<dyn Reauthorize>>,
    ) -> Result<Self, McpModuleError> {
        // Without a session, changes are heard on a subscription of their own.
        let modern = session
            .peer()
            .peer_info()
            .is_some_and(|info| !info.protocol_version.has_initialize());
        if modern {
            let filter = SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .build();
            match session.peer().listen(filter).await {
                Ok(mut subscription) => {
                    tokio::spawn(async move {
                        while let Ok(Some(_)) = subscription.next().await {
                            if changed.send(()).is_err() {
                                return;
                            }
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(target: "tool_registry::mcp", module = %name, %error, "the MCP server's changes cannot be followed");
                }
            }
        }
        let inner = Arc::new(Inner {
            registry,
            name: name.to_owned(),
            tools: Mutex::new(BTreeMap::new()),
            offered: Mutex::new(Offered::default()),
            authorizer,
        });
        let module = Self {
            inner,
            session,
            _process: None,
        };
        module.refresh().await?;
        // Follow the server's changes while the session lasts.
        let inner = Arc::clone(&module.inner);
        let peer = module.session.peer().clone();
        tokio::spawn(async move {
            while changes.recv().await.is_some() {
                if let Err(error) = refresh(&inner, &peer).await {
                    tracing::warn!(target: "tool_registry::mcp", module = %inner.name, %error, "cannot list the MCP server's tools again");
                }
            }
        });
        Ok(module)
    }

    /// Lists the server's tools again and brings the registry in line: new ones registered,
    /// changed ones replaced, gone ones removed. Returns how many it has.
    pub async fn refresh(&self) -> Result<usize, McpModuleError> {
        refresh(&self.inner, self.session.peer()).await
    }

    /// The registry names of its tools.
    pub fn tools(&self) -> Vec<String> {
        self.inner
            .tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// The URIs of its server's resources and resource templates, as registered here.
    pub fn resources(&self) -> Vec<String> {
        lock(&self.inner.offered).resources.clone()
    }

    /// The registry names of its server's prompts (`module.prompt`).
    pub fn prompts(&self) -> Vec<String> {
        lock(&self.inner.offered).prompts.clone()
    }

    /// Removes its tools, resources and prompts from the registry.
    pub fn remove_tools(&self) {
        let mut offered = std::mem::take(&mut *lock(&self.inner.offered));
        offered.remove(&self.inner.registry);
        let tools =
            std::mem::take(&mut *self.inner.tools.lock().unwrap_or_else(|p| p.into_inner()));
        for tool in tools.into_keys() {
            let _ = self.inner.registry.remove(&tool);
        }
    }
}

async fn refresh(
    inner: &Arc<Inner>,
    peer: &rmcp::Peer<RoleClient>,
) -> Result<usize, McpModuleError> {
    let listed = reauthorized(inner.authorizer.as_ref(), || peer.list_all_tools())
        .await
        .map_err(|reason| failed(&inner.name, reason))?
        .map_err(|error| failed(&inner.name, error.to_string()))?;
    let mut registered = BTreeMap::new();
    let previous = inner
        .tools
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    for tool in listed {
        let local = format!("{}.{}", inner.name, tool.name);
        let Some((spec, wrapped)) = spec_of(&tool, &local) else {
            tracing::warn!(target: "tool_registry::mcp", module = %inner.name, tool = %tool.name, "a tool of the MCP server cannot be a tool here (its name or schema); it is left out");
            continue;
        };
        let unchanged = previous.get(&local) == Some(&wrapped)
            && inner
                .registry
                .registration(&local)
                .is_some_and(|registration| registration.tool.spec() == spec);
        if !unchanged {
            if previous.contains_key(&local) {
                let _ = inner.registry.remove(&local);
            }
            let handler = handler(
                peer.clone(),
                inner.authorizer.clone(),
                Mounted {
                    module: inner.name.clone(),
                    remote: tool.name.to_string(),
                    local: local.clone(),
                    wrapped,
                    limits: inner.registry.content_limits(),
                },
            );
            if let Err(error) = inner.registry.register(spec, handler) {
                tracing::warn!(target: "tool_registry::mcp", module = %inner.name, %error, "a tool of the MCP server cannot be registered; it is left out");
                continue;
            }
        }
        registered.insert(local, wrapped);
    }
    for gone in previous
        .keys()
        .filter(|name| !registered.contains_key(*name))
    {
        let _ = inner.registry.remove(gone);
    }
    let count = registered.len();
    *inner.tools.lock().unwrap_or_else(|p| p.into_inner()) = registered;
    // Its resources and prompts, listed again in place of the ones before.
    let mut before = std::mem::take(&mut *lock(&inner.offered));
    before.remove(&inner.registry);
    let offered = mounted::mount(&inner.registry, &inner.name, peer).await;
    *lock(&inner.offered) = offered;
    Ok(count)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The spec of an MCP tool under the name `local` and whether its values come wrapped, or
/// `None` when it cannot be one. Its output schema is the tool's own (unwrapped), which the
/// registry checks every answer against.
fn spec_of(tool: &Tool, local: &str) -> Option<(ToolSpec, bool)> {
    let mut builder = ToolSpec::builder(local)
        .description(tool.description.as_deref().unwrap_or_default())
        .input_schema(Value::Object((*tool.input_schema).clone()))
        .timeout(MODULE_TIMEOUT);
    let mut wrapped = false;
    if let Some(output) = &tool.output_schema {
        let (schema, was_wrapped) = unwrap_output_schema(Value::Object((**output).clone()));
        wrapped = was_wrapped;
        builder = builder.output_schema(schema);
    }
    if let Some(hints) = &tool.annotations {
        builder = builder.annotations(Annotations {
            read_only: hints.read_only_hint,
            destructive: hints.destructive_hint,
            idempotent: hints.idempotent_hint,
            open_world: hints.open_world_hint,
            requires_confirmation: None,
        });
    }
    builder.build().ok().map(|spec| (spec, wrapped))
}

/// The handler of one mounted tool: `tools/call` on the session, every failure typed. A call
/// the server refuses for its token (`401`, or `403 insufficient_scope`) is sent once more
/// after the module's authorizer, if any, got a new one.
fn handler(
    peer: rmcp::Peer<RoleClient>,
    authorizer: Option<Arc<dyn Reauthorize>>,
    mounted: Mounted,
) -> ToolHandler {
    ToolHandler::from_results(move |arguments, ctx| {
        let (peer, authorizer, mounted) = (peer.clone(), authorizer.clone(), mounted.clone());
        async move {
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let mut request =
                CallToolRequestParams::new(mounted.remote.clone()).with_arguments(arguments);
            // The call's span goes on in the server, when it belongs to an exported trace.
            if let Some(traceparent) = tool_registry_http::current_traceparent() {
                let mut meta = rmcp::model::RequestMetaObject::default();
                meta.set_traceparent(traceparent);
                request.meta = Some(meta);
            }
            let local = mounted.local.clone();
            let max_blocks = mounted.limits.max_blocks;
            let attempt = || call_following_tasks(&peer, request.clone(), max_blocks, &ctx);
            let called = match reauthorized(authorizer.as_ref(), attempt).await {
                Ok(called) => called,
                Err(reason) => {
                    return Err(ModuleError::Unreachable {
                        tool: local,
                        module: mounted.module,
                        reason,
                    }
                    .into());
                }
            };
            if let (Ok(_), Some(authorizer)) = (&called, &authorizer) {
                authorizer.succeeded();
            }
            match called {
                Ok(result) => answer(result, &mounted),
                // An answer the transport did not read: too long, too many blocks, unreadable.
                Err(ServiceError::McpError(error)) if refused_answer(error.data.as_ref()) => {
                    Err(ToolError::InvalidOutput {
                        tool: local,
                        path: String::new(),
                        message: error.message.to_string(),
                    })
                }
                Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                    Err(ToolError::InvalidArguments {
                        tool: local,
                        path: String::new(),
                        message: error.message.to_string(),
                    })
                }
                Err(ServiceError::McpError(error)) => Err(ToolError::Handler {
                    tool: local,
                    message: error.message.to_string(),
                }),
                Err(ServiceError::Timeout { timeout }) => Err(ToolError::TimedOut {
                    tool: local,
                    after: timeout,
                }),
                Err(error) => Err(ModuleError::Unreachable {
                    tool: local,
                    module: mounted.module,
                    reason: error.to_string(),
                }
                .into()),
            }
        }
    })
}

/// One `tools/call` on `peer`, its questions (`input_required`) put to the caller of `ctx` and
/// answered over at most [`relay::MAX_ROUNDS`] rounds, and when the server answers with a task, the task followed to
/// its end (polled at the interval it asks, within 50 ms and 2 s) and cancelled at the server
/// when this call is dropped first (its deadline, its caller gone). A task that failed is the
/// JSON-RPC error it carries; one cancelled at the server, an error saying so. A task's result
/// of more than `max_blocks` blocks is not read into rmcp's types.
async fn call_following_tasks(
    peer: &rmcp::Peer<RoleClient>,
    mut request: CallToolRequestParams,
    max_blocks: usize,
    ctx: &tool_registry_core::Ctx,
) -> Result<rmcp::model::CallToolResult, ServiceError> {
    use rmcp::ErrorData;
    use rmcp::model::{CallToolResponse, CancelTaskParams, GetTaskParams, TaskPayload};
    let mut rounds = 0;
    let task = loop {
        match peer.call_tool_once(request.clone()).await? {
            CallToolResponse::Complete(result) => return Ok(result),
            CallToolResponse::Task(created) => break created.task,
            CallToolResponse::InputRequired(asked) if rounds < relay::MAX_ROUNDS => {
                rounds += 1;
                let answers = match asked.input_requests {
                    Some(requests) => relay::answers(requests, ctx).await.map_err(|why| {
                        ServiceError::McpError(ErrorData::internal_error(why, None))
                    })?,
                    None => Default::default(),
                };
                request.input_responses = (!answers.is_empty()).then_some(answers);
                request.request_state = asked.request_state;
            }
            CallToolResponse::InputRequired(_) => {
                return Err(ServiceError::InputRequiredRoundsExceeded {
                    max_rounds: relay::MAX_ROUNDS,
                });
            }
            _ => return Err(ServiceError::UnexpectedResponse),
        }
    };
    /// Cancels the task at the server when dropped before its end.
    struct Cancel<'p> {
        peer: &'p rmcp::Peer<RoleClient>,
        id: Option<String>,
    }
    impl Drop for Cancel<'_> {
        fn drop(&mut self) {
            if let (Some(id), Ok(runtime)) = (self.id.take(), tokio::runtime::Handle::try_current())
            {
                let peer = self.peer.clone();
                runtime.spawn(async move {
                    let _ = peer.cancel_task(CancelTaskParams::new(id)).await;
                });
            }
        }
    }
    let mut cancel = Cancel {
        peer,
        id: Some(task.task_id.clone()),
    };
    let mut poll = task.poll_interval_ms;
    loop {
        let wait = std::time::Duration::from_millis(poll.unwrap_or(500)).clamp(
            std::time::Duration::from_millis(50),
            std::time::Duration::from_secs(2),
        );
        tokio::time::sleep(wait).await;
        let now = peer
            .get_task(GetTaskParams::new(task.task_id.clone()))
            .await?
            .task;
        poll = now.task.poll_interval_ms;
        let ended = |cancel: &mut Cancel<'_>| cancel.id = None;
        match now.payload {
            TaskPayload::Completed { result } => {
                ended(&mut cancel);
                let blocks = result
                    .get("content")
                    .and_then(Value::as_array)
                    .map(Vec::len);
                if blocks.is_some_and(|blocks| blocks > max_blocks) {
                    return Err(ServiceError::McpError(super::peek::too_many_blocks_answer(
                        max_blocks,
                    )));
                }
                return serde_json::from_value(Value::Object(result))
                    .map_err(|_| ServiceError::UnexpectedResponse);
            }
            TaskPayload::Failed { error } => {
                ended(&mut cancel);
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the server's task failed")
                    .to_owned();
                return Err(ServiceError::McpError(ErrorData::internal_error(
                    message, None,
                )));
            }
            TaskPayload::Cancelled => {
                ended(&mut cancel);
                return Err(ServiceError::McpError(ErrorData::internal_error(
                    "the server cancelled the task",
                    None,
                )));
            }
            _ => {}
        }
    }
}

/// `attempt`, and once more after a new token when the server refused the one sent (its
/// challenge) and the module has an authorizer; `Err` when no new token could be had.
async fn reauthorized<T, F>(
    authorizer: Option<&Arc<dyn Reauthorize>>,
    attempt: impl Fn() -> F,
) -> Result<Result<T, ServiceError>, String>
where
    F: Future<Output = Result<T, ServiceError>>,
{
    let first = attempt().await;
    match (&first, authorizer) {
        (Err(error), Some(authorizer)) if error.auth_challenge().is_some() => {
            let challenge = error.auth_challenge().unwrap_or_default().to_owned();
            authorizer.after(&challenge).await?;
            Ok(attempt().await)
        }
        _ => Ok(first),
    }
}

/// A session just opened, with the sender and receiver of its changes.
pub(super) type Opened = (
    RunningService<RoleClient, Follower>,
    mpsc::UnboundedSender<()>,
    mpsc::UnboundedReceiver<()>,
);

/// Opens a session on `transport`: the 2026-07-28 revision when the server speaks it (its
/// tasks extension, above all), the `initialize` handshake otherwise.
pub(super) async fn open<T, E, A>(
    transport: T,
) -> Result<Opened, rmcp::service::ClientInitializeError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let (changed, changes) = mpsc::unbounded_channel();
    let lifecycle = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: None,
    };
    let session = Follower {
        changed: changed.clone(),
    }
    .serve_with_lifecycle(transport, lifecycle)
    .await?;
    Ok((session, changed, changes))
}

/// The transport's configuration and HTTP client for the server at `url`: each answer (a JSON
/// body, or one SSE event) bounded by what the registry's [`ContentLimits`] let a result hold
/// in base64 and [`MCP_ANSWER_ROOM`] more, or rmcp's own 16 MiB where that is smaller.
pub(super) fn http_parts(
    registry: &Shared,
    name: &str,
    url: &str,
) -> Result<(StreamableHttpClientTransportConfig, BoundedHttpClient), McpModuleError> {
    let bound = answer_bound(&registry.content_limits());
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let (json, event) = (
        config.max_json_response_size.min(bound),
        config.max_sse_event_size.min(bound),
    );
    let config = config
        .max_json_response_size(json)
        .max_sse_event_size(event);
    let client = BoundedHttpClient::new(registry.content_limits().max_blocks)
        .map_err(|error| failed(name, format!("no HTTP client can be built: {error}")))?;
    Ok((config, client))
}

pub(super) fn failed(module: &str, reason: String) -> McpModuleError {
    McpModuleError {
        module: module.to_owned(),
        reason,
    }
}

/// How long a mounted tool's call may take before it is `timed_out`: the HTTP modules' 30 s.
pub const MCP_MODULE_TIMEOUT: Duration = MODULE_TIMEOUT;

/// What one message from a server on stdio may hold beyond its blocks' base64: its text and
/// value, and the JSON around them. 4 MiB, what this registry's own server reads of a message.
pub const MCP_ANSWER_ROOM: usize = super::MAX_LINE_BYTES;

/// The longest line read from a server on stdio: the most a result's blocks may hold, in
/// base64, and [`MCP_ANSWER_ROOM`].
fn answer_bound(limits: &ContentLimits) -> usize {
    (limits.max_result_bytes.div_ceil(3))
        .saturating_mul(4)
        .saturating_add(MCP_ANSWER_ROOM)
}
