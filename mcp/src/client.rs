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
use super::oauth::{Authorizer, OAuth};
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
    /// with [`McpModule::connect_oauth`]).
    authorizer: Option<Arc<Authorizer>>,
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

/// The client side's handler: it hears `list_changed` and asks for the list again.
#[derive(Clone)]
struct Follower {
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

    /// Connects to the MCP server at `url` (streamable HTTP) as an OAuth client, as the MCP
    /// specification has it ([`OAuth`]), and mounts its tools as `name.tool`: the server's
    /// `401` leads to its authorization server and a token for it; a `403
    /// insufficient_scope` on a call asks for the scopes it names and sends the call again
    /// once; an expired token is refreshed. Answers are bounded as with
    /// [`McpModule::connect`].
    pub async fn connect_oauth(
        registry: impl Into<Shared>,
        name: &str,
        url: &str,
        oauth: OAuth,
    ) -> Result<Self, McpModuleError> {
        let registry = registry.into();
        let (config, client) = http_parts(&registry, name, url)?;
        let authorizer = Arc::new(
            Authorizer::new(url, oauth, client)
                .await
                .map_err(|reason| failed(name, reason))?,
        );
        let mut authorized = false;
        let opened = loop {
            let transport =
                StreamableHttpClientTransport::with_client(authorizer.client(), config.clone());
            match open(transport).await {
                Ok(opened) => break opened,
                Err(error) => match error.auth_challenge() {
                    Some(challenge) if !authorized => {
                        let challenge = challenge.to_owned();
                        authorizer
                            .authorize(Some(&challenge))
                            .await
                            .map_err(|reason| failed(name, reason))?;
                        authorized = true;
                    }
                    _ => return Err(failed(name, error.to_string())),
                },
            }
        };
        Self::mount(registry, name, opened, Some(authorizer)).await
    }

    async fn mount(
        registry: Shared,
        name: &str,
        (session, changed, mut changes): Opened,
        authorizer: Option<Arc<Authorizer>>,
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
    let mut listed = peer.list_all_tools().await;
    if let (Err(error), Some(authorizer)) = (&listed, &inner.authorizer)
        && let Some(challenge) = error.auth_challenge()
    {
        let challenge = challenge.to_owned();
        authorizer
            .authorize_after(&challenge)
            .await
            .map_err(|reason| failed(&inner.name, reason))?;
        listed = peer.list_all_tools().await;
    }
    let listed = listed.map_err(|error| failed(&inner.name, error.to_string()))?;
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
    authorizer: Option<Arc<Authorizer>>,
    mounted: Mounted,
) -> ToolHandler {
    ToolHandler::from_results(move |arguments, ctx| {
        let (peer, authorizer, mounted) = (peer.clone(), authorizer.clone(), mounted.clone());
        async move {
            let arguments = match arguments {
                Value::Object(map) => map,
                _ => serde_json::Map::new(),
            };
            let request =
                CallToolRequestParams::new(mounted.remote.clone()).with_arguments(arguments);
            let local = mounted.local.clone();
            let max_blocks = mounted.limits.max_blocks;
            let mut called = call_following_tasks(&peer, request.clone(), max_blocks, &ctx).await;
            if let (Err(error), Some(authorizer)) = (&called, &authorizer)
                && let Some(challenge) = error.auth_challenge()
            {
                let challenge = challenge.to_owned();
                if let Err(reason) = authorizer.authorize_after(&challenge).await {
                    return Err(ModuleError::Unreachable {
                        tool: local,
                        module: mounted.module,
                        reason,
                    }
                    .into());
                }
                called = call_following_tasks(&peer, request, max_blocks, &ctx).await;
            }
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

/// A session just opened, with the sender and receiver of its changes.
type Opened = (
    RunningService<RoleClient, Follower>,
    mpsc::UnboundedSender<()>,
    mpsc::UnboundedReceiver<()>,
);

/// Opens a session on `transport`: the 2026-07-28 revision when the server speaks it (its
/// tasks extension, above all), the `initialize` handshake otherwise.
async fn open<T, E, A>(transport: T) -> Result<Opened, rmcp::service::ClientInitializeError>
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
fn http_parts(
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

fn failed(module: &str, reason: String) -> McpModuleError {
    McpModuleError {
        module: module.to_owned(),
        reason,
    }
}

/// How to reach one MCP server of a module map: `[mcp.NAME]` with `command = ["prog", "arg"]`
/// (a stdio server) or `url = "http://host:port/mcp"` (streamable HTTP), and for a URL
/// optionally `token` or `token_env`, or an `[mcp.NAME.oauth]` table ([`McpOAuthConfig`]).
///
/// ```toml
/// [mcp.files]
/// command = ["toolreg", "--modules", "file_manager", "mcp"]
///
/// [mcp.remote]
/// url = "http://127.0.0.1:8002/mcp"
/// token_env = "REMOTE_MCP_TOKEN"
///
/// [mcp.hosted]
/// url = "https://mcp.example.com/mcp"
/// [mcp.hosted.oauth]
/// grant = "client_credentials"
/// client_id = "gateway"
/// client_secret_env = "HOSTED_SECRET"
/// token_file = ".toolreg/hosted.tokens.json"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
    #[serde(default)]
    oauth: Option<McpOAuthConfig>,
}

/// How `toolreg` authorizes against a protected MCP server ([`OAuth`]): `[mcp.NAME.oauth]`.
///
/// ```toml
/// [mcp.hosted.oauth]
/// grant = "authorization_code"       # or "client_credentials" (the default)
/// client_id = "…"                    # pre-registered; else a metadata document or registration
/// client_secret_env = "HOSTED_SECRET"
/// private_key_file = "gateway.pem"   # client credentials by private_key_jwt, with `algorithm`
/// algorithm = "ES256"
/// metadata_document = "https://gateway.example.com/client.json"
/// redirect_uri = "http://127.0.0.1:8914/callback"
/// open_browser = true
/// scopes = ["tools"]
/// token_file = ".toolreg/hosted.tokens.json"   # owner-only; in memory without it
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpOAuthConfig {
    #[serde(default)]
    grant: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    client_secret_env: Option<String>,
    #[serde(default)]
    private_key_file: Option<std::path::PathBuf>,
    #[serde(default)]
    algorithm: Option<String>,
    #[serde(default)]
    metadata_document: Option<String>,
    #[serde(default)]
    redirect_uri: Option<String>,
    #[serde(default)]
    open_browser: bool,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    token_file: Option<std::path::PathBuf>,
}

impl McpOAuthConfig {
    /// Where its tokens are kept, when it names a file.
    pub fn token_file(&self) -> Option<&std::path::Path> {
        self.token_file.as_deref()
    }

    /// What the table must hold whatever the environment: a grant toolreg asks for, and for
    /// client credentials a client id with a secret or a key named.
    fn check(&self) -> Result<(), String> {
        match self.grant.as_deref().unwrap_or("client_credentials") {
            "client_credentials" => {
                let proof = self.client_secret.is_some()
                    || self.client_secret_env.is_some()
                    || self.private_key_file.is_some();
                if self.client_id.is_none() || !proof {
                    return Err("client credentials need `client_id`, and `client_secret_env` or `private_key_file`".into());
                }
                Ok(())
            }
            "authorization_code" => Ok(()),
            other => Err(format!(
                "grant `{other}` is not one toolreg asks for; use \"client_credentials\" or \"authorization_code\""
            )),
        }
    }

    /// The [`OAuth`] this table describes; an error names what is missing (a secret's variable
    /// unset, a key file that cannot be read).
    pub fn oauth(&self) -> Result<OAuth, String> {
        let secret = self.client_secret.clone().or_else(|| {
            (self.client_secret_env.as_deref()).and_then(|var| std::env::var(var).ok())
        });
        self.check()?;
        let oauth = match self.grant.as_deref().unwrap_or("client_credentials") {
            "client_credentials" => {
                let id = self.client_id.clone().unwrap_or_default();
                match (&self.private_key_file, secret) {
                    (Some(file), _) => {
                        let pem = std::fs::read(file).map_err(|error| {
                            format!("cannot read the private key {}: {error}", file.display())
                        })?;
                        OAuth::private_key_jwt(
                            id,
                            pem,
                            self.algorithm.as_deref().unwrap_or("ES256"),
                        )?
                    }
                    (None, Some(secret)) => OAuth::client_credentials(id, secret),
                    (None, None) => {
                        return Err(format!(
                            "the client secret's variable `{}` is unset",
                            self.client_secret_env.as_deref().unwrap_or_default()
                        ));
                    }
                }
            }
            "authorization_code" => {
                let redirect = (self.redirect_uri.clone())
                    .unwrap_or_else(|| "http://127.0.0.1:8914/callback".into());
                let browser = if self.open_browser {
                    super::oauth::LoopbackBrowser::new().opening()
                } else {
                    super::oauth::LoopbackBrowser::new()
                };
                let mut oauth = OAuth::authorization_code(redirect, browser);
                if let Some(id) = &self.client_id {
                    oauth = oauth.client_id(id.clone());
                }
                if let Some(secret) = secret {
                    oauth = oauth.client_secret(secret);
                }
                if let Some(url) = &self.metadata_document {
                    oauth = oauth.metadata_document(url.clone());
                }
                oauth
            }
            other => {
                return Err(format!(
                    "grant `{other}` is not one toolreg asks for; use \"client_credentials\" or \"authorization_code\""
                ));
            }
        };
        let mut oauth = oauth.scopes(self.scopes.clone());
        if let Some(file) = &self.token_file {
            oauth = oauth.store(super::oauth::TokenFile::new(file));
        }
        Ok(oauth)
    }
}

#[derive(serde::Deserialize)]
struct McpTables {
    #[serde(default)]
    mcp: std::collections::BTreeMap<String, McpServerConfig>,
}

impl McpServerConfig {
    /// Its URL, for a server over streamable HTTP.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// Its `oauth` table, for a protected server.
    pub fn oauth(&self) -> Option<&McpOAuthConfig> {
        self.oauth.as_ref()
    }

    /// The `[mcp.NAME]` tables of a module map's TOML text (other tables are left to their
    /// readers).
    pub fn from_toml(text: &str) -> Result<std::collections::BTreeMap<String, Self>, String> {
        let tables: McpTables = toml::from_str(text).map_err(|error| {
            format!("the MCP servers of the module map are not valid: {error}; write `[mcp.NAME]` with `command = [\"prog\", \"arg\"]` or `url = \"http://host:port/mcp\"`")
        })?;
        for (name, config) in &tables.mcp {
            if config.command.is_some() == config.url.is_some() {
                return Err(format!(
                    "MCP server `{name}`: give exactly one of `command` and `url`"
                ));
            }
            if config.oauth.is_some()
                && (config.url.is_none() || config.token.is_some() || config.token_env.is_some())
            {
                return Err(format!(
                    "MCP server `{name}`: an `oauth` table goes with `url`, and instead of `token` or `token_env`"
                ));
            }
            if let Some(oauth) = &config.oauth {
                oauth
                    .oauth()
                    .map_err(|why| format!("MCP server `{name}`: {why}"))?;
            }
            if config.command.as_ref().is_some_and(Vec::is_empty) {
                return Err(format!("MCP server `{name}`: `command` names no program"));
            }
        }
        Ok(tables.mcp)
    }
}

impl McpModule {
    /// Mounts the server `config` describes as the module `name`.
    pub async fn mount_config(
        registry: impl Into<Shared>,
        name: &str,
        config: &McpServerConfig,
    ) -> Result<Self, McpModuleError> {
        match (&config.command, &config.url) {
            (Some(command), _) => {
                let mut process = tokio::process::Command::new(&command[0]);
                process.args(&command[1..]);
                Self::spawn(registry, name, process).await
            }
            (None, Some(url)) if config.oauth.is_some() => {
                let oauth = (config.oauth.as_ref())
                    .map(McpOAuthConfig::oauth)
                    .transpose()
                    .map_err(|why| failed(name, why))?
                    .ok_or_else(|| failed(name, "no oauth table".into()))?;
                Self::connect_oauth(registry, name, url, oauth).await
            }
            (None, Some(url)) => {
                let token = config.token.clone().or_else(|| {
                    config
                        .token_env
                        .as_deref()
                        .and_then(|var| std::env::var(var).ok())
                });
                Self::connect(registry, name, url, token.as_deref()).await
            }
            (None, None) => Err(failed(name, "give `command` or `url`".to_owned())),
        }
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

#[cfg(test)]
mod tests {
    use super::McpServerConfig;

    #[test]
    fn an_oauth_table_goes_with_a_url_and_names_its_grant() {
        let read = |text: &str| McpServerConfig::from_toml(text);
        let servers = read(
            "[mcp.a]\nurl = \"http://127.0.0.1:1/mcp\"\n[mcp.a.oauth]\nclient_id = \"gw\"\nclient_secret = \"s\"\nscopes = [\"tools\"]",
        )
        .unwrap();
        let oauth = servers["a"].oauth.as_ref().unwrap().oauth().unwrap();
        assert!(format!("{oauth:?}").contains("client_credentials (client_secret) as gw"));
        assert!(
            !format!("{oauth:?}").contains("\"s\""),
            "the secret is not shown"
        );
        let code = read(
            "[mcp.a]\nurl = \"http://127.0.0.1:1/mcp\"\n[mcp.a.oauth]\ngrant = \"authorization_code\"",
        )
        .unwrap();
        let oauth = code["a"].oauth.as_ref().unwrap().oauth().unwrap();
        assert!(
            format!("{oauth:?}")
                .contains("authorization_code back to http://127.0.0.1:8914/callback")
        );
        for (wrong, says) in [
            (
                "[mcp.a]\ncommand = [\"x\"]\n[mcp.a.oauth]\nclient_id = \"gw\"\nclient_secret = \"s\"",
                "goes with `url`",
            ),
            (
                "[mcp.a]\nurl = \"http://x/mcp\"\ntoken = \"t\"\n[mcp.a.oauth]\nclient_id = \"gw\"\nclient_secret = \"s\"",
                "instead of `token`",
            ),
            (
                "[mcp.a]\nurl = \"http://x/mcp\"\n[mcp.a.oauth]\nclient_id = \"gw\"",
                "client_secret_env",
            ),
            (
                "[mcp.a]\nurl = \"http://x/mcp\"\n[mcp.a.oauth]\ngrant = \"password\"",
                "not one toolreg asks for",
            ),
        ] {
            let error = read(wrong).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }
}
