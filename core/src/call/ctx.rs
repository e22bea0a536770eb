//! [`Ctx`]: the request a call belongs to, which a tool can take as `&Ctx`.

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::ToolEvent;
use super::TypeMap;
use super::ask::{AskError, Form, FormAnswer, Sampled, Sampling};
use super::client::{Asking, ClientLink, LogLevel};
#[cfg(doc)]
use crate::meta::Permission;
use crate::scope::Scope;

/// The request a tool call belongs to. Take `ctx: &Ctx` as a parameter of a `#[tool]` function
/// to receive it; it never appears in the schema the model sees.
///
/// ```
/// use tool_registry::Ctx;
///
/// struct Tenant(&'static str);
///
/// let ctx = Ctx::new()
///     .with_user("alice")
///     .with_chat_id(42)
///     .with_user_message("what did we decide about caching?")
///     .with_metadata("request_id", "r-17")
///     .with(Tenant("acme"));
/// assert_eq!(ctx.user(), Some("alice"));
/// assert_eq!(ctx.get::<Tenant>().map(|t| t.0), Some("acme"));
/// ```
///
/// # Who is trusted
///
/// [`Ctx::new`] is the application calling its own tools: it sees and runs every tool. Naming a
/// user with [`Ctx::with_user`] turns it into that user's context at [`Permission::User`]
/// level, so a context built for a user is never trusted by accident. Trust is asked for by
/// name: [`Ctx::trusted`] keeps owner rights whoever the user is, and [`Ctx::for_scope`] takes
/// the exact [`Scope`] the caller has.
///
/// ```
/// use tool_registry::{Ctx, Permission, Scope};
///
/// assert_eq!(Ctx::new().scope().level(), Permission::Owner);
/// assert_eq!(Ctx::new().with_user("alice").scope().level(), Permission::User);
/// assert_eq!(Ctx::trusted().with_user("ops").scope().level(), Permission::Owner);
/// let admin = Ctx::for_scope(Scope::user("root").with_level(Permission::Admin));
/// assert_eq!(admin.scope().level(), Permission::Admin);
/// ```
#[derive(Debug, Clone, Default)]
pub struct Ctx {
    scope: Scope,
    /// The scope was chosen by name (`trusted`, `for_scope`, `with_scope`), not left as the
    /// default: naming a user then keeps it.
    scope_chosen: bool,
    user_message: Option<String>,
    kb_context: Option<String>,
    confidence: Option<f64>,
    metadata: Map<String, Value>,
    extensions: TypeMap,
    call_id: Option<String>,
    progress: Option<ProgressHook>,
    client: Option<super::client::Link>,
    /// Whether this request's calls log their tools' annotations; `None`: as the registry
    /// says ([`RegistryBuilder::log_annotations`](crate::RegistryBuilder::log_annotations)).
    log_annotations: Option<bool>,
}

impl Ctx {
    /// The application's own context: no user, no metadata, every tool visible. Naming a user
    /// with [`Ctx::with_user`] lowers it to that user's rights; see [Who is
    /// trusted](Ctx#who-is-trusted).
    pub fn new() -> Self {
        Self::default()
    }

    /// A context with owner rights that it keeps when a user is named: for operators and
    /// internal jobs acting on a user's behalf.
    pub fn trusted() -> Self {
        Self::for_scope(Scope::trusted())
    }

    /// A context for `scope`: who is asking decides what they may list and run.
    pub fn for_scope(scope: Scope) -> Self {
        Self {
            scope,
            scope_chosen: true,
            ..Self::default()
        }
    }
    /// Replaces the scope (the user and chat ids are part of it).
    pub fn with_scope(mut self, scope: Scope) -> Self {
        self.scope = scope;
        self.scope_chosen = true;
        self
    }
    /// Sets the user id the call is made for. On a context whose scope was not chosen by name
    /// ([`Ctx::new`]), the scope becomes [`Scope::user`]: that user's rights, not the
    /// application's. A scope given with [`Ctx::trusted`], [`Ctx::for_scope`] or
    /// [`Ctx::with_scope`] keeps its level.
    pub fn with_user(mut self, user: impl Into<String>) -> Self {
        if !self.scope_chosen {
            let chat_id = self.scope.chat_id;
            self.scope = Scope::user(user);
            self.scope.chat_id = chat_id;
            self.scope_chosen = true;
        } else {
            self.scope.user = Some(Arc::from(user.into()));
        }
        self
    }
    /// Sets the chat the call came from.
    pub fn with_chat_id(mut self, chat_id: i64) -> Self {
        self.scope.chat_id = Some(chat_id);
        self
    }
    /// Sets the user's message that led to the call.
    pub fn with_user_message(mut self, message: impl Into<String>) -> Self {
        self.user_message = Some(message.into());
        self
    }
    /// Sets the knowledge-base context the model answered with.
    pub fn with_kb_context(mut self, context: impl Into<String>) -> Self {
        self.kb_context = Some(context.into());
        self
    }
    /// Sets the model's self-rated confidence.
    pub fn with_confidence(mut self, confidence: f64) -> Self {
        self.confidence = Some(confidence);
        self
    }
    /// Sets the provider's id of the call (`call_...`, `toolu_...`): the call's span carries it
    /// as `gen_ai.tool.call.id`. [`Registry::execute`](crate::Registry::execute) sets it
    /// for each call from [`ToolCall::id`](crate::ToolCall::id).
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        self.call_id = Some(id.into());
        self
    }
    /// Whether the calls made with this context log their tool's annotations (a `tracing`
    /// event, target `tool_registry::annotations`), whatever the registry's own setting
    /// ([`RegistryBuilder::log_annotations`](crate::RegistryBuilder::log_annotations)): on
    /// for one request being looked into, off for a noisy one.
    pub fn with_annotation_log(mut self, on: bool) -> Self {
        self.log_annotations = Some(on);
        self
    }
    /// This context's own say on logging annotations, if it has one
    /// ([`with_annotation_log`](Self::with_annotation_log)).
    pub fn annotation_log(&self) -> Option<bool> {
        self.log_annotations
    }
    /// Adds one request metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }
    /// Adds a typed extension, read back with [`Ctx::get`]. One value per type.
    pub fn with<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.extensions.insert(value);
        self
    }
    /// Adds a typed extension in place.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.extensions.insert(value);
    }

    /// Who is asking. [`Scope::trusted`] unless set.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }
    /// The user id, if known.
    pub fn user(&self) -> Option<&str> {
        self.scope.user.as_deref()
    }
    /// The chat id, if known.
    pub fn chat_id(&self) -> Option<i64> {
        self.scope.chat_id
    }
    /// The user's message that led to the call.
    pub fn user_message(&self) -> Option<&str> {
        self.user_message.as_deref()
    }
    /// The knowledge-base context the model answered with.
    pub fn kb_context(&self) -> Option<&str> {
        self.kb_context.as_deref()
    }
    /// The model's self-rated confidence.
    pub fn confidence(&self) -> Option<f64> {
        self.confidence
    }
    /// All request metadata.
    pub fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }
    /// A typed extension added with [`Ctx::with`].
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get()
    }
    /// The provider's id of the call, when it has one (see [`Ctx::with_call_id`]).
    pub fn call_id(&self) -> Option<&str> {
        self.call_id.as_deref()
    }

    /// Reports progress of the running call to the status callback of
    /// [`Batch::on_event`](crate::exec::Batch::on_event), as a
    /// [`ToolEvent::Progress`]. Does nothing outside such a batch.
    pub fn progress(&self, message: impl Into<String>) {
        if let Some(hook) = &self.progress {
            (hook.sink)(ToolEvent::Progress {
                index: hook.index,
                tool: hook.tool.to_string(),
                message: message.into(),
            });
        }
    }

    /// Logs `message` (text, or any JSON) at `level` to the client the caller reaches the tool
    /// through, when it has one and its filter lets the level through (MCP's
    /// `notifications/message`, after `logging/setLevel`); into `tracing` otherwise (target
    /// `tool_registry::tool_log`). Never waits.
    ///
    /// ```
    /// use tool_registry::call::LogLevel;
    /// use tool_registry::{Ctx, tool};
    ///
    /// /// Index the notes.
    /// #[tool]
    /// async fn reindex(ctx: &Ctx) -> u32 {
    ///     ctx.log(LogLevel::Info, "reading the notes");
    ///     ctx.log(LogLevel::Debug, serde_json::json!({"notes": 12}));
    ///     12
    /// }
    /// # fn main() {}
    /// ```
    pub fn log(&self, level: LogLevel, message: impl Into<Value>) {
        self.log_as(level, None, message);
    }

    /// [`Ctx::log`], naming the `logger` (a part of the tool) the message comes from.
    pub fn log_as(&self, level: LogLevel, logger: Option<&str>, message: impl Into<Value>) {
        let data = message.into();
        match &self.client {
            Some(link) => link.0.log(level, logger, data),
            None => super::client::log_locally(level, logger, &data, self.call_id.as_deref()),
        }
    }

    /// Asks the person behind the caller's client the question of `form` and waits for the
    /// answer: the fields they sent, checked against the form ([`FormAnswer::Accepted`]), or
    /// that they declined or cancelled. MCP's form elicitation.
    ///
    /// A call that cannot ask gets an error at once, never a wait: [`AskError::NoClient`] for
    /// a call made in the process or through HTTP modules, [`AskError::Unsupported`] for an MCP
    /// client that did not declare elicitation or whose revision (2026-07-28) forbids a
    /// server's requests during a call. An answer that does not match the form is
    /// [`AskError::Mismatch`]; one over [`Form::max_answer_bytes`] is [`AskError::TooLarge`].
    /// A person who never answers holds the call until [`Form::timeout`], or its tool's
    /// timeout ends it.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_registry::call::{AskError, Form, FormAnswer};
    /// use tool_registry::{Ctx, ToolError, tool};
    ///
    /// /// Rename the branch, asking for the new name.
    /// #[tool(timeout = "2m")]
    /// async fn rename_branch(ctx: &Ctx) -> Result<String, ToolError> {
    ///     let form = Form::new(
    ///         "What should the branch be called?",
    ///         json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
    ///     )?;
    ///     match ctx.ask(form).await {
    ///         Ok(FormAnswer::Accepted(fields)) => Ok(format!("renamed to {}", fields["name"])),
    ///         Ok(_) => Ok("left as it was".into()),
    ///         Err(AskError::NoClient) => Err(ToolError::failed("run me from an MCP client")),
    ///         // Any other `AskError` is a `ToolError` saying what stopped the question.
    ///         Err(e) => Err(e.into()),
    ///     }
    /// }
    /// # fn main() {}
    /// ```
    pub async fn ask(&self, form: Form) -> Result<FormAnswer, AskError> {
        let Some(link) = &self.client else {
            return Err(AskError::NoClient);
        };
        let wait = form.wait();
        let answer = within(wait, link.0.ask(form.clone())).await?;
        if let FormAnswer::Accepted(fields) = &answer {
            form.check_answer(fields)?;
        }
        Ok(answer)
    }

    /// Asks the caller's client's model for a completion (MCP's sampling) and waits for it.
    /// The same errors as [`Ctx::ask`] where the call cannot ask; a completion over
    /// [`Sampling::max_answer_bytes`] is [`AskError::TooLarge`].
    ///
    /// ```
    /// use tool_registry::call::Sampling;
    /// use tool_registry::{Ctx, ToolError, tool};
    ///
    /// /// Name the commit from its diff.
    /// #[tool]
    /// async fn name_commit(ctx: &Ctx, diff: String) -> Result<String, ToolError> {
    ///     let asked = Sampling::new(format!("A one-line commit message for:\n{diff}")).max_tokens(40);
    ///     // An `AskError` is a `ToolError` with what stopped the question.
    ///     Ok(ctx.sample(asked).await?.text.unwrap_or_default())
    /// }
    /// # fn main() {}
    /// ```
    pub async fn sample(&self, sampling: Sampling) -> Result<Sampled, AskError> {
        let Some(link) = &self.client else {
            return Err(AskError::NoClient);
        };
        let (wait, limit) = (sampling.wait(), sampling.answer_limit());
        let sampled = within(wait, link.0.sample(sampling)).await?;
        let bytes = tool_registry_json::depth::written_len(&sampled.content);
        if bytes > limit {
            return Err(AskError::TooLarge {
                bytes: Some(bytes),
                limit,
            });
        }
        Ok(sampled)
    }

    /// The roots the caller's client exposes (MCP's `roots/list`): the directories its user
    /// lets the server work in. The same errors as [`Ctx::ask`] where the call cannot ask.
    pub async fn roots(&self) -> Result<Vec<crate::call::Root>, AskError> {
        self.roots_named(None).await
    }

    /// [`Ctx::roots`] under a name, where a client answers by name (see
    /// [`Form::named`](crate::call::Form::named)).
    pub async fn roots_named(&self, key: Option<&str>) -> Result<Vec<crate::call::Root>, AskError> {
        let Some(link) = &self.client else {
            return Err(AskError::NoClient);
        };
        link.0.roots(key).await
    }

    /// Lets go of the connection the call's answer would come on, for a call that runs long:
    /// over MCP's streamable HTTP in a session (SEP-1699) the stream ends now, and the client
    /// reconnects with `Last-Event-ID` to read what the call sends after, its answer included.
    /// Whether there was such a stream; elsewhere (a local call, stdio, HTTP modules) nothing
    /// happens and the answer comes as it would.
    pub fn release_stream(&self) -> bool {
        self.client
            .as_ref()
            .is_some_and(|link| link.0.release_stream())
    }

    /// The call's client, as a front end that has one sets it: what [`Ctx::log`] uses.
    pub fn with_client(mut self, link: Arc<dyn ClientLink>) -> Self {
        self.client = Some(super::client::Link(link));
        self
    }

    /// Sends what the tool reports through [`Ctx::progress`] to `hook` (for a server that
    /// passes progress on to its client, as MCP's progress notifications do).
    pub fn with_progress(mut self, hook: impl Fn(String) + Send + Sync + 'static) -> Self {
        let sink: EventSink = Arc::new(move |event| {
            if let ToolEvent::Progress { message, .. } = event {
                hook(message);
            }
        });
        self.progress = Some(ProgressHook {
            index: 0,
            tool: Arc::from(""),
            sink,
        });
        self
    }

    /// This context for one call of a batch, with the call's id and the batch's progress hook
    /// (call `index` of `tool`); `None` when the call has neither, and the context serves as it is.
    pub(crate) fn for_call(
        &self,
        id: Option<String>,
        progress: Option<(usize, Arc<str>, EventSink)>,
    ) -> Option<Self> {
        if id.is_none() && progress.is_none() {
            return None;
        }
        let mut ctx = self.clone();
        ctx.call_id = id.or(ctx.call_id);
        if let Some((index, tool, sink)) = progress {
            ctx.progress = Some(ProgressHook { index, tool, sink });
        }
        Some(ctx)
    }
}

/// `asking`, bounded by `wait` when there is one.
async fn within<T>(wait: Option<std::time::Duration>, asking: Asking<T>) -> Result<T, AskError> {
    match wait {
        Some(wait) => tokio::time::timeout(wait, asking)
            .await
            .unwrap_or(Err(AskError::Timeout(wait))),
        None => asking.await,
    }
}

/// A status callback for a batch of calls.
pub(crate) type EventSink = Arc<dyn Fn(ToolEvent) + Send + Sync>;

#[derive(Clone)]
struct ProgressHook {
    index: usize,
    tool: Arc<str>,
    sink: EventSink,
}

impl fmt::Debug for ProgressHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ProgressHook({}, {})", self.index, self.tool)
    }
}
