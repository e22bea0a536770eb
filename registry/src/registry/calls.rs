//! Calling tools: one call through every stage, a batch of a model's calls, and the calls that
//! come back with an approval token. The stages themselves are the pipeline's
//! ([`exec`](crate::exec)); the registry is its one [`Host`].

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::Registry;
use crate::audit::Tick;
use crate::call::{
    Ctx, Handler, ToolArgs, ToolCall, ToolError, ToolEvent, ToolResult, TypeMap, dispose_args,
};
use crate::def::Tool;
use crate::discovery::Meta;
use crate::exec::{
    Confirmation, ForModel, Host, Plain, Policy, execute_batch, refused, run_as, take_pending,
};
use crate::gate::canonical_args;
use crate::parse::Parsed;
use crate::scope::Scope;

impl Registry {
    /// Calls a tool by name or alias, through every stage of the pipeline (see the
    /// [`exec`](crate::exec) module).
    ///
    /// `args` is JSON text (`&str`) or a [`Value`](serde_json::Value). Text is deserialized
    /// straight into the tool's argument type. A tool outside `ctx`'s scope is reported as unknown. A tool that
    /// panics becomes [`ToolError::Panicked`]; the caller goes on. Every call, successful or
    /// not, is audited; a result carries `tool`, `duration_ms`, `ts`, `user`, `outcome` and
    /// `risk` in its `audit`. Every call is one `execute_tool` span (see
    /// [Spans](crate::exec#spans)), current while the tool runs.
    ///
    /// Like any future, the call does nothing until it is awaited: a call that is created and
    /// dropped is neither validated, run nor audited. Dropping it while the tool runs cancels
    /// the tool.
    pub fn call<'r, 'a: 'r>(
        &'r self,
        name: &'r str,
        args: impl Into<ToolArgs<'a>>,
        ctx: &'r Ctx,
    ) -> impl Future<Output = Result<ToolResult, ToolError>> + Send + 'r {
        run_as::<Plain, _>(self, name, args.into(), ctx, Confirmation::Required)
    }

    /// Calls a tool whose confirmation a trusted caller has already obtained: every stage
    /// applies except confirmation (stage 5), answered as by
    /// [`call_for_model`](Self::call_for_model). For a caller that asked the person itself, as
    /// the gateway of an HTTP tool module does before it forwards a call that needed approval;
    /// never for input a model or an untrusted client controls.
    pub fn call_confirmed_for_model<'r, 'a: 'r>(
        &'r self,
        name: &'r str,
        args: impl Into<ToolArgs<'a>>,
        ctx: &'r Ctx,
    ) -> impl Future<Output = ToolResult> + Send + 'r {
        run_as::<ForModel, _>(self, name, args.into(), ctx, Confirmation::Given)
    }

    /// Calls a tool like [`call`](Self::call), and answers as a model should read it: an error
    /// becomes an unsuccessful result (see [`ToolResult::from`]) that carries the same audit
    /// stamps as a success (`tool`, `duration_ms`, `ts`, `user`, `outcome`, `risk`), taken from
    /// the same clock reading as the record sent to the audit sink.
    pub fn call_for_model<'r, 'a: 'r>(
        &'r self,
        name: &'r str,
        args: impl Into<ToolArgs<'a>>,
        ctx: &'r Ctx,
    ) -> impl Future<Output = ToolResult> + Send + 'r {
        run_as::<ForModel, _>(self, name, args.into(), ctx, Confirmation::Required)
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
            Confirmation::Given,
        )
        .await
    }

    /// Calls a tool with an approval token from an earlier call: the token must be for this
    /// tool, this user and exactly these arguments (after validation; key order and whitespace
    /// do not matter), with the checks of [`approve`](Self::approve).
    pub async fn call_approved<'a>(
        &self,
        name: &str,
        args: impl Into<ToolArgs<'a>>,
        token: &str,
        ctx: &Ctx,
    ) -> Result<ToolResult, ToolError> {
        let args = args.into();
        let taken = take_pending(self, token, ctx, |pending| {
            let same_tool = self
                .get_for(name, ctx.scope())
                .is_some_and(|def| def.name() == pending.tool);
            let same_args = canonical_args(&args).is_some_and(|text| text == pending.arguments);
            match (same_tool, same_args) {
                (true, true) => Ok(()),
                // A mismatch does not use the token up: its owner can still approve it.
                (true, false) => Err(refused("the token was issued for different arguments")),
                (false, _) => Err(refused("the token was issued for another tool")),
            }
        })
        .await;
        if let Err(error) = taken {
            dispose_args(args);
            return Err(error);
        }
        run_as::<Plain, _>(self, name, args, ctx, Confirmation::Given).await
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
        let def = self.get(&pending.tool);
        Ok(self
            .policy
            .stamped_error(&pending.tool, def.as_ref(), Tick::now(), ctx, denied))
    }

    /// Runs a batch of calls through the pipeline: up to the concurrency cap at once (8 by
    /// default), each `sequential` tool alone (after the calls before it finish, before the
    /// ones after it start). Returns one result per call, in call order; errors become
    /// unsuccessful results (see [`ToolResult::from`]) carrying the registry's audit.
    ///
    /// A batch is one model output: at most [`RegistryBuilder::max_calls`](crate::registry::RegistryBuilder::max_calls)
    /// of its calls run (32 by default). The calls after those do not run; one more result,
    /// after the others, reports them all ([`ToolError::TooManyCalls`] with how many), so a
    /// batch of 400,000 calls answers with 33 results.
    pub async fn execute_all(
        &self,
        calls: impl IntoIterator<Item = ToolCall>,
        ctx: &Ctx,
    ) -> Vec<ToolResult> {
        execute_batch(self, calls.into_iter().collect(), 0, ctx, None).await
    }

    /// Like [`Registry::execute_all`], reporting [`ToolEvent`]s to `on_event`: `Started` when a
    /// call starts, `Progress` when a tool calls [`Ctx::progress`], `Finished` for every call.
    pub async fn execute_all_with(
        &self,
        calls: impl IntoIterator<Item = ToolCall>,
        ctx: &Ctx,
        on_event: impl Fn(ToolEvent) + Send + Sync + 'static,
    ) -> Vec<ToolResult> {
        execute_batch(
            self,
            calls.into_iter().collect(),
            0,
            ctx,
            Some(Arc::new(on_event)),
        )
        .await
    }

    /// Runs the calls a parse found, as [`Registry::execute_all`] does, with the calls the parse
    /// counted past its cap ([`Parsed::left_out`], when it was read with
    /// [`Options::max_calls`](crate::parse::Options::max_calls)) reported with those past
    /// `max_calls`, in the one last result. Calls of unknown tools ([`Parsed::unknown`]) are not
    /// run.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use tool_registry::parse::{self, Options};
    /// use tool_registry::{Ctx, Registry};
    ///
    /// let registry = Registry::builder().max_calls(2).build()?;
    /// let ctx = Ctx::new();
    /// let output = "<tool_call>{\"name\": \"nothing\", \"arguments\": {}}</tool_call>\n".repeat(1000);
    /// let tools = registry.scoped(ctx.scope());
    /// let parsed = parse::any_with(&output, &tools, Options::new().max_calls(registry.max_calls()));
    /// assert_eq!((parsed.unknown.len(), parsed.left_out.unknown), (2, 998));
    /// let results = registry.execute_parsed(&parsed, &ctx).await;
    /// assert!(results.is_empty(), "calls of unknown tools do not run");
    /// # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
    /// ```
    pub async fn execute_parsed(&self, parsed: &Parsed, ctx: &Ctx) -> Vec<ToolResult> {
        let calls = parsed.calls.iter().cloned().map(ToolCall::from).collect();
        execute_batch(self, calls, parsed.left_out.calls, ctx, None).await
    }

    /// The most calls one model output runs ([`RegistryBuilder::max_calls`](crate::registry::RegistryBuilder::max_calls)):
    /// the cap to read an output with ([`Options::max_calls`](crate::parse::Options::max_calls)).
    pub fn max_calls(&self) -> usize {
        self.policy.max_calls
    }
}

impl Host for Registry {
    #[inline]
    fn resolve(&self, name: &str, scope: &Scope) -> Option<(Tool, Duration)> {
        Registry::resolve(self, name, scope)
    }

    fn suggest(&self, name: &str, scope: &Scope) -> Option<String> {
        Registry::suggest(self, name, scope)
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
