//! [`McpServer`]: rmcp's `ServerHandler`, answered by the registry for one caller.

use std::sync::Arc;
use std::sync::atomic::AtomicU8;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, InputRequiredResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::watch;

use super::answer::{call_tool_result, typed_answer};
use super::confirm::{self, Answer};
use super::link;
use super::offers::{self, Subscriptions};
use super::pages::TypedLists;
use super::request::{CallParams, Request};
use super::rounds::{self, Binding, Rounds, Sealer};
use super::sessions::SessionLimits;
use super::tasks;
use super::watch::{Watcher, tell_listener, tell_session};
use tool_registry_core::Scope;
use tool_registry_core::call::LogLevel;
use tool_registry_core::format::Provider;
use tool_registry_core::registry::Shared;
use tool_registry_core::task::{Started, TaskCall, TaskError, TaskInputs, TaskOwner, Tasks};
use tool_registry_core::{Ctx, ToolResult};
use tool_registry_http::ConnectionLimits;

/// How many tools one `tools/list` page holds.
pub const PAGE_SIZE: usize = 100;

/// The registry as an MCP server for one caller: what [`Scope`] it may see and run.
///
/// Cheap to clone (a registry handle and a scope): a transport that makes one handler per
/// session or request clones it.
#[derive(Clone)]
pub struct McpServer {
    registry: Shared,
    scope: Scope,
    /// The address the request came from, over HTTP: what a guest's tasks count under.
    peer: Option<std::net::IpAddr>,
    page_size: usize,
    pub(super) session_limits: SessionLimits,
    pub(super) connection_limits: ConnectionLimits,
    /// Where the calls that became tasks are kept, and their bounds.
    tasks: Tasks,
    /// The least level this session's client wants its tools' logs at (`logging/setLevel`;
    /// `info` until it says), as a [`LogLevel`]'s place.
    log_level: Arc<AtomicU8>,
    /// Dropped with the last handle of a session's handler: the tasks the session started
    /// hear it and end.
    alive: Arc<watch::Sender<()>>,
    /// The registry's MCP lists as rmcp's `Tool`s, each converted once, shared by every
    /// session.
    typed: Arc<TypedLists>,
    /// The resources this session subscribed to (`resources/subscribe`).
    subscriptions: Subscriptions,
    /// What seals the answers of a call's earlier rounds (`requestState`), shared by every
    /// session of the server.
    sealer: Sealer,
}

/// The scope the bearer check of the HTTP transport found for a request (the caller served
/// instead of the server's own scope), and the address the request came from.
#[derive(Clone)]
pub(super) struct Caller(pub(super) Scope, pub(super) Option<std::net::IpAddr>);

impl McpServer {
    /// Serves `registry` (a `&'static Registry` or an `Arc<Registry>`) to a caller with
    /// `scope`.
    pub fn new(registry: impl Into<Shared>, scope: Scope) -> Self {
        Self {
            registry: registry.into(),
            scope,
            peer: None,
            page_size: PAGE_SIZE,
            session_limits: SessionLimits::default(),
            connection_limits: ConnectionLimits::default(),
            tasks: Tasks::default(),
            log_level: Arc::new(AtomicU8::new(LogLevel::Info as u8)),
            alive: Arc::new(watch::Sender::new(())),
            typed: Arc::default(),
            subscriptions: Subscriptions::default(),
            sealer: Sealer::default(),
        }
    }

    /// Where this server keeps the calls that became tasks (MCP's tasks extension), and their
    /// bounds: in this process's memory unless set ([`Tasks::default`]); a store shared by a
    /// fleet (`redis::RedisTaskStore`) lets any instance answer for a task another started.
    #[must_use]
    pub fn tasks(mut self, tasks: Tasks) -> Self {
        self.tasks = tasks;
        self
    }

    /// How long a `requestState` this server hands a client of the stateless revision stays
    /// good ([`STATE_TTL`](super::STATE_TTL) unless set): a question answered later is asked
    /// again from the start.
    #[must_use]
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.sealer.ttl = ttl;
        self
    }

    /// The bounds on sessions over streamable HTTP: how many at once for the server, for each
    /// token, for guests together, and how long one may idle ([`SessionLimits::default`]
    /// unless set).
    #[must_use]
    pub fn session_limits(mut self, limits: SessionLimits) -> Self {
        self.session_limits = limits;
        self
    }

    /// The bounds on connections over streamable HTTP ([`ConnectionLimits::default`] unless
    /// set).
    #[must_use]
    pub fn connection_limits(mut self, limits: ConnectionLimits) -> Self {
        self.connection_limits = limits;
        self
    }

    /// The registry served.
    pub(super) fn registry_of(&self) -> Shared {
        self.registry.clone()
    }

    /// Where the calls that became tasks are kept.
    pub(super) fn tasks_of(&self) -> &Tasks {
        &self.tasks
    }

    /// A handler for one session (or one stateless request): this server with a life of its
    /// own.
    pub(super) fn for_session(&self) -> Self {
        Self {
            alive: Arc::new(watch::Sender::new(())),
            log_level: Arc::new(AtomicU8::new(LogLevel::Info as u8)),
            subscriptions: Subscriptions::default(),
            ..self.clone()
        }
    }

    /// How many tools one `tools/list` page holds ([`PAGE_SIZE`] unless set; at least one).
    #[must_use]
    pub fn with_page_size(mut self, tools: usize) -> Self {
        self.page_size = tools.max(1);
        self
    }

    /// Runs this server on standard input and output until the client closes the stream. A
    /// line over [`MAX_LINE_BYTES`](super::MAX_LINE_BYTES), or one that is not a JSON-RPC
    /// message, gets a JSON-RPC error and the next line is served. A client that closes its end
    /// before `initialize` ends the server with `Ok`, as one that closes it later does.
    pub async fn serve_stdio(self) -> std::io::Result<()> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Runs this server on `input` and `output` as [`serve_stdio`](Self::serve_stdio) does on
    /// standard input and output (one JSON-RPC message per line, the same bounds), until the
    /// client closes `input`: a pipe to a child process, a socket, or an in-process pipe
    /// (`tokio::io::duplex`) to a client in the same process, as the test kit's does.
    pub async fn serve_io<R, W>(self, input: R, output: W) -> std::io::Result<()>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let running = match self
            .serve(super::stdio::StdioTransport::<R>::new(
                input,
                output,
                super::MAX_LINE_BYTES,
            ))
            .await
        {
            Ok(running) => running,
            // A client that went away before `initialize` ended nothing that had begun.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
            Err(error) => return Err(std::io::Error::other(error.to_string())),
        };
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|error| std::io::Error::other(error.to_string()))
    }

    /// The caller of a request or session: the one the bearer check found over HTTP, else the
    /// server's own scope (stdio).
    fn caller(&self, extensions: &rmcp::model::Extensions) -> Self {
        let found = extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Caller>());
        match found {
            Some(caller) => self.for_caller(caller),
            None => self.clone(),
        }
    }

    /// This server for `caller`, the one the bearer check found for an HTTP request.
    pub(super) fn for_caller(&self, caller: &Caller) -> Self {
        Self {
            scope: caller.0.clone(),
            peer: caller.1,
            ..self.clone()
        }
    }

    /// The page of `tools/list` that `cursor` names, of what `this` caller sees.
    pub(super) fn tools_page(
        &self,
        this: &Self,
        cursor: Option<&str>,
    ) -> Result<ListToolsResult, ErrorData> {
        let list = this.registry.provider_tools(Provider::Mcp, &this.scope);
        self.typed.of(&list)?.page(cursor, this.page_size)
    }

    /// [`tools_page`](Self::tools_page) as the JSON of the stateless revision's result,
    /// written once for every caller who sees the same list.
    pub(super) fn written_tools_page(
        &self,
        this: &Self,
        cursor: Option<&str>,
    ) -> Result<bytes::Bytes, ErrorData> {
        let list = this.registry.provider_tools(Provider::Mcp, &this.scope);
        self.typed.of(&list)?.written_page(cursor, this.page_size)
    }

    /// Whether a call of `name` by `this` caller may write to its client before its answer
    /// (see [`Registry::may_write_to_client`](tool_registry_core::Registry::may_write_to_client)):
    /// `true` for a tool it does not see.
    pub(super) fn may_write_to_client(&self, this: &Self, name: &str) -> bool {
        this.registry.may_write_to_client(name, &this.scope)
    }

    /// Whether `this` caller may run `name` here without rmcp: a tool it sees that carries no
    /// `x-mcp-header` annotations, whose `Mcp-Param-*` headers rmcp would check.
    pub(super) fn plain_tool(&self, this: &Self, name: &str) -> bool {
        this.registry.get(name, &this.scope).is_some() && self.get_tool(name).is_none()
    }

    /// A read or a prompt of `this` caller (`work`, given the call's context): its answer, or
    /// on the stateless revision the questions it raised (`rounds.rs`), bound to `method`, its
    /// `target` and `arguments`.
    async fn asking<T, Fut>(
        &self,
        this: &Self,
        request: &Request,
        (method, target, arguments): (&str, &str, &Value),
        (state, responses): (Option<&str>, Option<&rmcp::model::InputResponses>),
        work: impl FnOnce(Ctx) -> Fut,
    ) -> Result<Result<T, InputRequiredResult>, ErrorData>
    where
        Fut: Future<Output = Result<T, ErrorData>>,
    {
        let ctx = Ctx::for_scope(this.scope.clone()).with_call_id(request.id.to_string());
        if !request.stateless() {
            return work(ctx).await.map(Ok);
        }
        let written = || arguments.to_string();
        let bound = Binding::new(&this.scope, method, target, &written);
        let rounds = Rounds::of(
            &self.sealer,
            &this.registry,
            state,
            responses,
            &bound,
            request.capabilities(),
        );
        let rounds = Arc::new(rounds.await?);
        let link = link::McpClient::new(
            request.peer.clone(),
            link::request_level(&self.log_level, request),
            request.meta.protocol_version(),
        )
        .with_rounds(Arc::clone(&rounds));
        let work = work(ctx.with_client(Arc::new(link)));
        rounds::or_raised(work, Some(&rounds), &self.sealer, &this.registry, &bound).await
    }

    /// A `tools/call` of `this` caller, with `params`, as `request` carries it: through the
    /// registry's whole pipeline, for rmcp's handler and the stateless transport alike.
    pub(super) async fn call(
        &self,
        this: Self,
        request: CallParams<'_>,
        at: Request,
    ) -> Result<CallToolResponse, ErrorData> {
        let this = &this;
        let (registry, scope) = (&this.registry, &this.scope);
        let name: &str = &request.name;
        // Hidden is unknown: the same error, from the same check, for both.
        let Some(tool) = registry.get(name, scope) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        };
        let name = tool.name();
        let become_task = tasks::when(name, tool.task_support(), &at)?;
        let state = request.request_state.as_deref();
        let asked_before = state.filter(|state| state.starts_with(rounds::STATE_PREFIX));
        let answer = match asked_before {
            Some(_) => Answer::None,
            None => confirm::answer_of(state, request.input_responses.as_ref(), &at)?,
        };
        let arguments = request.arguments;
        // Kept for the question to the user, only where there may be one: where the
        // confirmation stage applies (a tool that always asks, a `confirm_if`, a hook that may
        // ask), as the pipeline decides it.
        let shown = registry
            .may_ask_approval(name, scope)
            .then(|| arguments.to_value());
        // The stateless revision's questions: answered from the request, or raised as an
        // `input_required` result; once the call became a task, asked through the task.
        // What binds a `requestState` to this call, written only when a state is opened or
        // sealed.
        let stateless = at.stateless();
        let source = arguments.for_binding(stateless);
        let written = || source.written();
        let bound = Binding::new(scope, "tools/call", name, &written);
        let rounds = if stateless {
            Some(Arc::new(
                Rounds::of(
                    &self.sealer,
                    registry,
                    asked_before,
                    request.input_responses.as_ref(),
                    &bound,
                    at.capabilities(),
                )
                .await?,
            ))
        } else {
            None
        };
        let mut link = link::McpClient::new(
            at.peer.clone(),
            link::request_level(&self.log_level, &at),
            at.meta.protocol_version(),
        )
        .over_http(at.extensions.get(), &at.id);
        if let Some(rounds) = &rounds {
            link = link.with_rounds(Arc::clone(rounds));
        }
        // A call that may become a task of the stateless revision asks through the task.
        let task_inputs = (stateless && become_task.is_some()).then(TaskInputs::new);
        if let Some(inputs) = &task_inputs {
            link = link.with_task_inputs(inputs.clone(), at.capabilities());
        }
        let client = Arc::new(link);
        let mut ctx = Ctx::for_scope(scope.clone())
            .with_call_id(at.id.to_string())
            .with_client(client.clone());
        if let Some(token) = at.meta.get_progress_token() {
            let client = Arc::clone(&client);
            ctx = ctx.with_progress(move |message| client.progress(token.clone(), message));
        }
        if let (Some(when), Answer::None) = (become_task, &answer) {
            let call = TaskCall {
                tool: name.to_owned(),
                arguments: arguments.into_value(),
                ctx,
                // A request of the stateless revision has no session: a guest's task is reached
                // by its id alone, and counts against its address's share and every guest's.
                owner: TaskOwner::of_caller(scope, None, this.peer, &this.tasks.limits().guests),
                asks: true,
                inputs: task_inputs,
            };
            // Boxed: the future of a call that is no task stays as small as it was. A question
            // raised before the call became a task is the request's answer, and drops the call.
            let run = Box::pin(this.tasks.run(registry.clone(), call, when));
            let started = match rounds::or_raised(
                async { Ok(run.await) },
                rounds.as_deref(),
                &self.sealer,
                registry,
                &bound,
            )
            .await?
            {
                Ok(started) => started,
                Err(question) => return Ok(question.into()),
            };
            let result = match started {
                Ok(Started::Task(task)) => {
                    return Ok(CallToolResponse::Task(tasks::created(
                        &task,
                        this.tasks.limits(),
                    )));
                }
                Ok(Started::Ended(result)) => {
                    client.flush().await;
                    result
                }
                Err(error @ TaskError::TooMany { .. }) => ToolResult::failure(error.to_string()),
                Err(error) => return Err(tasks::error(error)),
            };
            return call_tool_result(registry, name, &result).map(Into::into);
        }
        let run = async {
            match &answer {
                Answer::None => {
                    (registry.call(name, arguments.into_args(), &ctx))
                        .for_model()
                        .await
                }
                Answer::Approve(token) => {
                    (registry.call(name, arguments.into_args(), &ctx))
                        .approved(token)
                        .for_model()
                        .await
                }
                Answer::Decline(token) => registry
                    .deny(token, "the user declined the call", &ctx)
                    .await
                    .unwrap_or_else(ToolResult::from),
                Answer::Cancel => ToolResult::failure(
                    "the user closed the confirmation without choosing; nothing ran",
                ),
            }
        };
        // A cancellation drops the call's future, and with it an async tool; so does a
        // question raised on the stateless revision, whose answer reruns the call.
        let raised = async {
            match &rounds {
                Some(rounds) => rounds.raised().await,
                None => std::future::pending().await,
            }
        };
        // The request's span, continuing the trace its `_meta.traceparent` names: the call's
        // `execute_tool` span is its child.
        let span = tracing::info_span!(
            target: "tool_registry::mcp",
            "mcp_request",
            otel.name = format!("tools/call {name}"),
            otel.kind = "server",
            mcp.method.name = "tools/call",
        );
        if let Some(traceparent) = at.meta.get_traceparent() {
            tool_registry_http::continue_traceparent(&span, traceparent);
        }
        let run = tracing::Instrument::instrument(run, span);
        let result = tokio::select! {
            biased;
            result = run => result,
            () = raised => {
                client.flush().await;
                // A person's approval is taken once, by this run: a question round after it
                // would need another, and so on without end. Refused, saying so.
                if let Answer::Approve(_) = answer {
                    let refused = ToolResult::failure(format!(
                        "`{name}` needs a person's approval and asks its client questions after it: \
                         on the 2026-07-28 revision one call cannot do both; it stopped at its first question"
                    ));
                    return typed_answer(tool.output_schema(), &refused).map(Into::into);
                }
                let rounds = rounds.as_ref().expect("raised only with rounds");
                let (requests, state) = rounds.next_round(&self.sealer, registry, &bound).await?;
                return Ok(InputRequiredResult::new(Some(requests), Some(state)).into());
            }
            () = at.cancelled.cancelled() => {
                tracing::info!(tool = name, request = %at.id, "tools/call cancelled by the client");
                return Err(ErrorData::internal_error("the call was cancelled", None));
            }
        };
        // The call's progress and log messages go out before its answer.
        client.flush().await;
        // A call that failed after asking for what the client did not declare is the
        // revision's missing-capability error.
        if !result.success
            && let Some(missing) = rounds.as_ref().and_then(|rounds| rounds.missing_error())
        {
            return Err(missing);
        }
        if let Some(token) = confirm::waiting_token(&result)
            && confirm::can_ask(&at)
            && let Some(question) = confirm::ask(name, &shown.unwrap_or_default(), token)?
        {
            return Ok(question.into());
        }
        typed_answer(tool.output_schema(), &result).map(Into::into)
    }

    /// What a task that follows the registry for this caller needs, without the session's
    /// life: holding it does not keep the session's handler alive.
    fn watcher(&self) -> Watcher {
        Watcher {
            registry: self.registry.clone(),
            scope: self.scope.clone(),
        }
    }
}

/// Runs `registry`'s tools as an MCP server on standard input and output for a caller with
/// `scope`, until the client closes the stream.
pub async fn serve_stdio(registry: impl Into<Shared>, scope: Scope) -> std::io::Result<()> {
    McpServer::new(registry, scope).serve_stdio().await
}

impl ServerHandler for McpServer {
    // Logging is declared for the clients of the `initialize` era, which still use it.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_completions()
                .enable_tasks()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new(
            "tool-registry",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_instructions(
            "Tools from a tool registry; each call runs through its scopes, limits and gates.",
        )
    }

    /// The tool `name` when it carries `x-mcp-header` annotations, for rmcp's check of a
    /// call's `Mcp-Param-*` headers (SEP-2243); `None` for every other tool, which has no
    /// such headers to check. Only tools the server's own scope sees are checked.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        let list = self.registry.provider_tools(Provider::Mcp, &self.scope);
        self.typed.of(&list).ok()?.headed(name)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let this = self.caller(&context.extensions);
        let cursor = request.and_then(|params| params.cursor);
        self.tools_page(&this, cursor.as_deref())
    }

    // The call's own future, with no `async` layer around it: a call's state is large, and a
    // layer would move it once more.
    fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResponse, ErrorData>> + Send + '_ {
        let this = self.caller(&context.extensions);
        self.call(this, request.into(), Request::of(context))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let this = self.caller(&context.extensions);
        offers::list_resources(&this.registry, &this.scope)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let this = self.caller(&context.extensions);
        offers::list_templates(&this.registry, &this.scope)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let this = self.caller(&context.extensions);
        let (uri, asked) = (&request.uri, request.request_state.as_deref());
        let registry = &this.registry;
        let read = |ctx: Ctx| async move { offers::read(registry, uri, &ctx).await };
        let target = ("resources/read", uri.as_str(), &Value::Null);
        let responses = (asked, request.input_responses.as_ref());
        Ok(
            match self
                .asking(&this, &Request::of(context), target, responses, read)
                .await?
            {
                Ok(result) => result.into(),
                Err(question) => ReadResourceResponse::InputRequired(question),
            },
        )
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let this = self.caller(&context.extensions);
        offers::list_prompts(&this.registry, &this.scope)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let this = self.caller(&context.extensions);
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let (name, given) = (&request.name, request.arguments);
        let registry = &this.registry;
        let get = |ctx: Ctx| async move { offers::get(registry, name, given, &ctx).await };
        let target = ("prompts/get", name.as_str(), &arguments);
        let responses = (
            request.request_state.as_deref(),
            request.input_responses.as_ref(),
        );
        Ok(
            match (self.asking(&this, &Request::of(context), target, responses, get)).await? {
                Ok(result) => result.into(),
                Err(question) => GetPromptResponse::InputRequired(question),
            },
        )
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let this = self.caller(&context.extensions);
        offers::complete(&this.registry, request, &this.scope)
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let this = self.caller(&context.extensions);
        self.subscriptions
            .add(&this.registry, &request.uri, &this.scope)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    // Deprecated by SEP-2577 (2026-07-28); clients of the `initialize` era still use it.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        link::set_level(&self.log_level, request.level);
        Ok(())
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let this = self.caller(&context.extensions);
        tasks::get(&this.registry, &this.tasks, &this.scope, &request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let this = self.caller(&context.extensions);
        tasks::update(&this.tasks, &this.scope, request).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let this = self.caller(&context.extensions);
        tasks::cancel(&this.tasks, &this.scope, &request.task_id).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // A session that began with `initialize` is told of changes on its own stream, for as
        // long as the session lasts: its handler's end (a `DELETE`, its expiry, the stream's
        // close) ends the task.
        let peer = context.peer.clone();
        let watcher = self.caller(&context.extensions).watcher();
        let ended = self.alive.subscribe();
        let changes = self.registry.subscribe();
        let subscriptions = self.subscriptions.clone();
        tokio::spawn(tell_session(watcher, peer, ended, changes, subscriptions));
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        // The 2026-07-28 revision: a client asks for changes with `subscriptions/listen`.
        let watcher = self.caller(&context.request_context().extensions).watcher();
        let changes = self.registry.subscribe();
        tell_listener(watcher, changes, context).await;
        Ok(())
    }
}
