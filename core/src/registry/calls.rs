//! Calling tools: one call through every stage, a batch of a model's calls, and the calls that
//! come back with an approval token. The stages themselves are the pipeline's
//! ([`exec`](crate::exec)); the registry is its one [`Host`].

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::Value;

use super::{Listing, Registry};
use crate::audit::Tick;
use crate::call::{Ctx, Handler, ToolArgs, ToolError, ToolResult, TypeMap};
use crate::def::Tool;
use crate::discovery::Meta;
use crate::exec::{
    Answer, Batch, CallFuture, Confirmation, ForModel, Host, Plain, Policy, execute_batch, run_as,
    take_pending,
};
use crate::media::ContentLimits;
use crate::scope::Scope;

impl Registry {
    /// Calls a tool by name or alias, through every stage of the pipeline (see the
    /// [`exec`](crate::exec) module).
    ///
    /// `args` is JSON text (`&str`) or a [`Value`](serde_json::Value). Text is deserialized
    /// straight into the tool's argument type. A tool outside `ctx`'s scope is reported as
    /// unknown. A tool that panics becomes [`ToolError::Panicked`]; the caller goes on. Every
    /// call, successful or not, is audited; a result carries `tool`, `duration_ms`, `ts`,
    /// `user`, `outcome` and `risk` in its `audit`. Every call is one `execute_tool` span (see
    /// [Spans](crate::exec#spans)), current while the tool runs.
    ///
    /// The call is a [`Call`], a future that answers `Result<ToolResult, ToolError>`; its
    /// methods change it before it starts: [`for_model`](Call::for_model) answers as a model
    /// should read it, [`approved`](Call::approved) comes back with an approval token,
    /// [`confirmed`](Call::confirmed) is for a trusted caller that asked the person itself.
    ///
    /// Like any future, the call does nothing until it is awaited: a call that is created and
    /// dropped is neither validated, run nor audited. Dropping it while the tool runs cancels
    /// the tool.
    pub fn call<'r, 'a: 'r>(
        &'r self,
        name: &'r str,
        args: impl Into<ToolArgs<'a>>,
        ctx: &'r Ctx,
    ) -> Call<'r> {
        Call(run_as::<Plain, _>(
            self,
            name,
            args.into(),
            ctx,
            Confirmation::Required,
        ))
    }

    /// Runs a call that waited for approval: the token must exist, not be expired, belong to
    /// `ctx`'s user, name a tool `ctx`'s scope may use, and carry the registry's MAC over its
    /// content ([`ToolError::ApprovalAltered`] if not). A token that passes is used up either
    /// way the call ends; one that does not is left for its owner.
    pub async fn approve(&self, token: &str, ctx: &Ctx) -> Result<ToolResult, ToolError> {
        let pending = take_pending(self, token, ctx, |_| Ok(())).await?;
        let args: Value =
            serde_json::from_str(&pending.arguments).map_err(|e| ToolError::ApprovalRefused {
                reason: format!("the stored arguments are unreadable: {e}"),
            })?;
        run_as::<Plain, _>(
            self,
            &pending.tool,
            ToolArgs::Value(args),
            ctx,
            Confirmation::Approved(token),
        )
        .await
    }

    /// Refuses a call that waited for approval, with the checks of [`approve`](Self::approve);
    /// the token is used up. Returns the result to hand back to the model (unsuccessful, with
    /// the reason); audited with outcome `denied`.
    pub async fn deny(
        &self,
        token: &str,
        reason: &str,
        ctx: &Ctx,
    ) -> Result<ToolResult, ToolError> {
        let pending = take_pending(self, token, ctx, |_| Ok(())).await?;
        let denied = ToolError::Denied {
            tool: pending.tool.clone(),
            reason: reason.to_owned(),
        };
        let def = self.lookup(&pending.tool);
        Ok(self
            .policy
            .stamped_error(&pending.tool, def.as_ref(), Tick::now(), ctx, denied))
    }

    /// Runs the calls of one model output (a [`Batch`]: a `Vec<ToolCall>`, a parse, ...)
    /// through the pipeline: up to the concurrency cap at once (8 by default), each
    /// `sequential` tool alone (after the calls before it finish, before the ones after it
    /// start). Returns one result per call, in call order, answered as for a model
    /// ([`ForModel`]: errors become unsuccessful results carrying the registry's audit).
    ///
    /// A batch is one model output: at most [`RegistryBuilder::max_calls`](crate::RegistryBuilder::max_calls)
    /// of its calls run (32 by default). The calls after those do not run, nor do those a
    /// parse counted past its own cap ([`Parsed::left_out`](crate::parse::Parsed::left_out));
    /// one more result, after the others, reports them all ([`ToolError::TooManyCalls`] with
    /// how many), so a batch of 400,000 calls answers with 33 results.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use tool_registry::exec::Batch;
    /// use tool_registry::parse::{self, Options};
    /// use tool_registry::{Ctx, Registry};
    ///
    /// let registry = Registry::builder().max_calls(2).build()?;
    /// let ctx = Ctx::new();
    /// let output = "<tool_call>{\"name\": \"nothing\", \"arguments\": {}}</tool_call>\n".repeat(1000);
    /// let tools = registry.scoped(ctx.scope());
    /// let parsed = parse::any_with(&output, &tools, Options::new().max_calls(registry.max_calls()));
    /// assert_eq!((parsed.unknown.len(), parsed.left_out.unknown), (2, 998));
    /// let results = registry.execute(&parsed, &ctx).await;
    /// assert!(results.is_empty(), "calls of unknown tools do not run");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
    /// ```
    pub async fn execute(&self, batch: impl Into<Batch>, ctx: &Ctx) -> Vec<ToolResult> {
        execute_batch(self, batch.into(), ctx).await
    }

    /// The most calls one model output runs ([`RegistryBuilder::max_calls`](crate::RegistryBuilder::max_calls)):
    /// the cap to read an output with ([`Options::max_calls`](crate::parse::Options::max_calls)).
    pub fn max_calls(&self) -> usize {
        self.policy.max_calls
    }

    /// The bounds on what a tool returns ([`RegistryBuilder::content_limits`](crate::RegistryBuilder::content_limits)):
    /// what a front end reads another process's results within (a gateway's modules, a mounted
    /// MCP server), so that a remote result is held to the bounds of a local one.
    ///
    /// ```
    /// use tool_registry::Registry;
    /// use tool_registry::content::ContentLimits;
    /// let limits = ContentLimits::default().with_max_blocks(8);
    /// let registry = Registry::builder().without_linked().content_limits(limits).build().unwrap();
    /// assert_eq!(registry.content_limits().max_blocks, 8);
    /// ```
    pub fn content_limits(&self) -> ContentLimits {
        self.policy.content_limits
    }

    /// A secret of its own for `purpose`, derived from the registry's approval key (the one
    /// given to [`RegistryBuilder::approval_key`](crate::RegistryBuilder::approval_key), the
    /// approvals store's, shared by a fleet, or one drawn for this process): what a front end
    /// signs its own state with, the same on every instance that shares the key. An error when
    /// the store cannot give its key.
    pub async fn derived_key(&self, purpose: &str) -> Result<[u8; 32], String> {
        Ok(self.policy.gates.approval_key().await?.derive(purpose))
    }

    /// Whether a call of `name` by the caller of `listing` may write to the caller's client
    /// before its answer (a log message, progress, a question): the tool takes its
    /// [`Ctx`](crate::Ctx) (every run-time tool does), an evaluation gate or a hook of the
    /// registry that applies to it sees the call's context, or it may run as a task. `true`
    /// for a tool `listing` does not keep. A transport answers a call of which this is `false`
    /// with its result alone, with no stream to the client.
    ///
    /// ```
    /// # use tool_registry::{tool, Ctx, Registry, Scope};
    /// /// Add two numbers.
    /// #[tool]
    /// fn add_quietly(a: i64, b: i64) -> i64 { a + b }
    /// /// Add two numbers, and say so.
    /// #[tool]
    /// fn add_and_log(ctx: &Ctx, a: i64, b: i64) -> i64 {
    ///     ctx.log(tool_registry::call::LogLevel::Info, "adding");
    ///     a + b
    /// }
    ///
    /// let registry = Registry::global();
    /// assert!(!registry.may_write_to_client("add_quietly", &Scope::trusted()));
    /// assert!(registry.may_write_to_client("add_and_log", &Scope::trusted()));
    /// ```
    pub fn may_write_to_client<'a>(&self, name: &str, listing: impl Into<Listing<'a>>) -> bool {
        self.resolve_in(name, listing.into())
            .is_none_or(|(tool, hooks)| {
                tool.takes_ctx()
                    || hooks != 0
                    || tool.requires_gate()
                    || tool.task_support() != crate::meta::TaskSupport::Forbidden
            })
    }

    /// Whether a call of `name` by the caller of `listing` may wait for a person's approval:
    /// the tool always asks, asks by its `confirm_if`, or a hook of the registry that applies
    /// to it may ask. A front end that shows the person the call keeps its arguments only then.
    /// `false` for a tool `listing` does not keep. With [`Listing::every`], the tool as a
    /// trusted caller would call it.
    pub fn may_ask_approval<'a>(&self, name: &str, listing: impl Into<Listing<'a>>) -> bool {
        self.resolve_in(name, listing.into())
            .is_some_and(|(tool, hooks)| {
                crate::gate::Stage::Confirmation.applies(tool.entry(), hooks != 0)
            })
    }

    /// The tool `name` names for `listing`'s caller, with the mask of the hooks that apply.
    fn resolve_in(&self, name: &str, mut listing: Listing<'_>) -> Option<(Tool, u64)> {
        let trusted;
        let scope = match listing.scope {
            Some(scope) => scope,
            None => {
                trusted = Scope::trusted();
                &trusted
            }
        };
        let (tool, _, hooks) = self.resolve(name, scope)?;
        listing.keeps(&tool).then_some((tool, hooks))
    }

    /// What a call of `name` by the caller of `listing` goes through, in order: the stages of
    /// the pipeline that apply to the tool (see [`exec`](crate::exec)), with each hook named
    /// where it runs (`before hook inside_folder`, `after hook redact_keys`). `None` for a tool
    /// `listing` does not keep; with [`Listing::every`], the tool as a trusted caller would
    /// call it. The one place that shows every policy around a tool.
    ///
    /// ```
    /// # use tool_registry::{Registry, Scope, ToolSpec, hook};
    /// # use tool_registry::hook::Before;
    /// let registry = Registry::builder()
    ///     .without_linked()
    ///     .hook(hook::before("no_secrets", |_call| Before::Continue))
    ///     .build()?;
    /// let spec = ToolSpec::builder("notes").max_result_bytes(4096).build()?;
    /// registry.register(spec, None)?;
    /// assert_eq!(
    ///     registry.stages("notes", &Scope::trusted()).unwrap(),
    ///     ["scope", "validate", "before hook no_secrets", "confirmation", "handler",
    ///      "after hook no_secrets", "result cap", "audit"],
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stages<'a>(&self, name: &str, listing: impl Into<Listing<'a>>) -> Option<Vec<String>> {
        let (tool, mask) = self.resolve_in(name, listing.into())?;
        let hooks = &self.policy.hooks;
        let mut stages = Vec::new();
        for stage in crate::gate::STAGES {
            if !stage.applies(tool.entry(), mask != 0) {
                continue;
            }
            match stage {
                crate::gate::Stage::BeforeHooks => {
                    stages.extend(hooks.names(mask).map(|hook| format!("before hook {hook}")))
                }
                crate::gate::Stage::AfterHooks => {
                    let names: Vec<&str> = hooks.names(mask).collect();
                    stages.extend(names.iter().rev().map(|hook| format!("after hook {hook}")));
                }
                stage => stages.push(stage.name().to_owned()),
            }
        }
        Some(stages)
    }
}

/// One call of a tool, as [`Registry::call`] makes it: a future that does nothing until
/// polled, answering `A::Output` ([`Plain`]: `Result<ToolResult, ToolError>`; [`ForModel`]: a
/// stamped [`ToolResult`]). Its methods change the call before it starts, in any order (on a
/// call already polled, `approved` and `confirmed` change nothing):
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use tool_registry::{Ctx, Registry};
///
/// let registry = Registry::builder().without_linked().build()?;
/// let ctx = Ctx::new();
/// let error = registry.call("nope", "{}", &ctx).await.unwrap_err();
/// assert_eq!(error.code(), "unknown_tool");
/// let result = registry.call("nope", "{}", &ctx).for_model().await;
/// assert!(!result.success);
/// assert_eq!(result.audit.outcome.as_deref(), Some("unknown_tool"));
/// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
/// ```
#[must_use = "a call does nothing until it is awaited"]
pub struct Call<'r, A: Answer = Plain>(CallFuture<'r, A, Registry>);

impl<'r, A: Answer> Call<'r, A> {
    /// The same call, answered as a model should read it ([`ForModel`]): an error becomes an
    /// unsuccessful [`ToolResult`] (see [`ToolResult::from`]) that carries the same audit
    /// stamps as a success (`tool`, `duration_ms`, `ts`, `user`, `outcome`, `risk`), taken
    /// from the same clock reading as the record sent to the audit sink.
    pub fn for_model(self) -> Call<'r, ForModel> {
        Call(self.0.answer_as())
    }

    /// The same call, made with the approval token an earlier call of it got
    /// ([`ToolError::NeedsApproval`]): the token must be for this tool, this user and exactly
    /// these arguments (after validation; key order and whitespace do not matter), with the
    /// checks of [`Registry::approve`]. Every stage then applies except confirmation. A
    /// mismatch does not use the token up: its owner can still approve it. A refused token
    /// is not audited (the tool did not run).
    pub fn approved(self, token: &'r str) -> Self {
        Call(self.0.approved(token))
    }

    /// The same call, with its confirmation already obtained by a trusted caller: every stage
    /// applies except confirmation (stage 7). For a caller that asked the person itself, as
    /// the gateway of an HTTP tool module does before it forwards a call that needed
    /// approval; never for input a model or an untrusted client controls.
    pub fn confirmed(self) -> Self {
        Call(self.0.confirmed())
    }
}

impl<A: Answer> Future for Call<'_, A> {
    type Output = A::Output;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<A: Answer> std::fmt::Debug for Call<'_, A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call").finish_non_exhaustive()
    }
}

impl Host for Registry {
    #[inline]
    fn resolve(&self, name: &str, scope: &Scope) -> Option<(Tool, Duration, u64)> {
        Registry::resolve(self, name, scope)
    }

    fn suggest(&self, name: &str, scope: &Scope) -> Option<String> {
        Registry::suggest(self, name, scope)
    }

    fn unknown_module(&self, name: &str, scope: &Scope) -> Option<String> {
        Registry::unknown_module(self, name, scope)
    }

    #[inline]
    fn policy(&self) -> &Policy {
        &self.policy
    }

    #[inline]
    fn state(&self) -> &TypeMap {
        &self.state
    }

    fn prepare_meta<'a>(
        &'a self,
        meta: Meta,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
    ) -> Result<Handler<'a>, ToolError> {
        Registry::prepare_meta(self, meta, args, ctx)
    }
}
