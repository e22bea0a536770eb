//! The execution pipeline. Every call takes these stages, in this order, and only these:
//!
//! 1. **resolve** the name or alias;
//! 2. **scope**: out of scope or switched off answers exactly like an unknown tool;
//! 3. **validate** the arguments into the tool's argument type (the handler is not started);
//! 4. **rate limit**: per user and tool, `cooldown` and `daily_limit`;
//! 5. **eval gate**, for `requires_gate` tools;
//! 6. **confirmation**, for tools that need a person's approval;
//! 7. **handler**, under its timeout, with panics caught;
//! 8. **audit**: the registry stamps the result and sends one record to the audit sink.
//!
//! A stage that refuses the call gives back what earlier stages took (a rate-limit permit).
//!
//! # Limits
//!
//! Before stage 3 reads the arguments, they are measured: the argument text may be at most the
//! tool's [`max_args_bytes`](crate::ToolDef::max_args_bytes) long
//! ([`ToolError::ArgumentsTooLarge`]), and arrays and objects may nest at most
//! [`MAX_ARGS_DEPTH`](crate::MAX_ARGS_DEPTH) levels ([`ToolError::ArgumentsTooDeep`]). A
//! [`Value`](serde_json::Value) is measured without recursion, so a value of any depth gets
//! the error rather than overflowing the stack.
//!
//! The tool's timeout counts from the moment the call is first polled and covers every stage.
//! What it can stop depends on how the handler runs:
//!
//! - an `async` handler is dropped at its first `.await` after the deadline; code between two
//!   `.await`s (or before the first) cannot be interrupted, and a handler that finishes without
//!   ever waiting keeps its result (the audit's `duration_ms` shows how long it took, and a
//!   warning names the tool);
//! - a `#[tool(blocking)]` handler runs on Tokio's blocking pool: the caller gets
//!   [`ToolError::TimedOut`] at the deadline however busy the handler is, but the thread cannot
//!   be stopped from outside, so the handler runs on until it returns and its result is thrown
//!   away. Whatever it changed before then stays changed.

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use futures::FutureExt;

use crate::approval::{PendingCall, new_token, to_millis};
use crate::audit::AuditRecord;
use crate::call::{BoxFuture, admit_args, dispose_args};
use crate::clock::Tick;
use crate::limits::{Limits, Permit};
use crate::{Audit, Ctx, Registry, Risk, Tool, ToolArgs, ToolError, ToolResult};

mod approve;
mod guard;

use approve::canonical_args;
pub(crate) use guard::panicked;
use guard::{Guarded, with_timeout};

/// Whether the confirmation stage already happened for this call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Confirmation {
    Required,
    Given,
}

type Handler<'a> = BoxFuture<'a, Result<ToolResult, ToolError>>;

impl Registry {
    /// Calls a tool by name or alias, through every stage of the pipeline (see the
    /// [`pipeline`](crate::pipeline) module).
    ///
    /// `args` is JSON text (`&str`) or a [`Value`](serde_json::Value). Text is deserialized
    /// straight into the tool's argument type. A tool outside `ctx`'s scope is reported as unknown. A tool that
    /// panics becomes [`ToolError::Panicked`]; the caller goes on. Every call, successful or
    /// not, is audited; a result carries `tool`, `duration_ms`, `ts`, `user`, `outcome` and
    /// `risk` in its `audit`.
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
        self.run(name, args.into(), ctx, Confirmation::Required)
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
        self.run_as::<ForModel>(name, args.into(), ctx, Confirmation::Required)
    }

    /// The call as a future that does nothing until polled; see [`CallFuture`].
    fn run<'a>(
        &'a self,
        name: &'a str,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation,
    ) -> CallFuture<'a, Plain> {
        self.run_as::<Plain>(name, args, ctx, confirmation)
    }

    fn run_as<'a, A: Answer>(
        &'a self,
        name: &'a str,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation,
    ) -> CallFuture<'a, A> {
        CallFuture {
            answer: std::marker::PhantomData,
            state: State::Start {
                registry: self,
                name,
                args,
                ctx,
                confirmation,
            },
        }
    }

    /// 3. validate, 4. rate limit, 5. eval gate, 6. confirmation, 7. handler.
    async fn stages(
        &self,
        tool: Tool,
        args: ToolArgs<'_>,
        ctx: &Ctx,
        confirmation: Confirmation,
        started: Tick,
        limit: Duration,
    ) -> Result<ToolResult, ToolError> {
        let confirm = confirmation == Confirmation::Required && tool.needs_confirmation();
        let arguments = if confirm { canonical_args(&args) } else { None };
        // 3. validate
        let handler = self.validate(&tool, args, ctx)?;
        // 4. rate limit
        let mut permit = self.admit(&tool, ctx).await?;
        // 5. eval gate
        let verdict = self.gate(&tool, ctx).await;
        if !matches!(verdict, Ok(None)) {
            self.release(permit.take()).await;
        }
        if let Some(denied) = verdict? {
            return Ok(denied);
        }
        // 6. confirmation
        if confirm {
            self.release(permit).await;
            let arguments = arguments.unwrap_or_else(|| "{}".to_owned());
            return Err(self.hold(&tool, ctx, arguments)?);
        }
        // 7. handler (an admitted call keeps its permit: it counts)
        drop((permit, arguments));
        Guarded::new(handler, started, limit).await
    }

    /// The audit stage: one record to the sink, and the registry's part of a successful
    /// result's audit; the stamp is returned for an error's result.
    fn finish(
        &self,
        tool: &Tool,
        started: Tick,
        limit: Duration,
        ctx: &Ctx,
        outcome: &mut Result<ToolResult, ToolError>,
    ) -> Stamp {
        let code: Cow<'static, str> = match outcome {
            Ok(result) => result
                .audit
                .outcome
                .take()
                .unwrap_or(Cow::Borrowed(if result.success { "ok" } else { "failed" })),
            Err(error) => {
                error.set_tool(tool.name());
                Cow::Borrowed(error.code())
            }
        };
        let stamp = Stamp::now(started);
        if stamp.duration_ms > limit.as_secs_f64() * 1000.0 && outcome.is_ok() {
            tracing::warn!(target: "tool_registry", tool = tool.name(), duration_ms = stamp.duration_ms, "the tool ran past its timeout without waiting, where the timeout cannot stop it; mark it `#[tool(blocking)]`");
        }
        self.policy.audit.record(&AuditRecord {
            tool: Cow::Borrowed(tool.name()),
            user: ctx.user().map(Cow::Borrowed),
            chat_id: ctx.chat_id(),
            ts: stamp.ts,
            duration_ms: stamp.duration_ms,
            outcome: Cow::Borrowed(&code),
            risk: Some(tool.risk()),
        });
        if let Ok(result) = outcome {
            stamp.put(
                &mut result.audit,
                tool_name(tool),
                ctx,
                code,
                Some(tool.risk()),
            );
        }
        stamp
    }

    /// Validation: the shim deserializes the arguments and returns the handler, not yet
    /// started.
    fn validate<'a>(
        &'a self,
        tool: &Tool,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
    ) -> Result<Handler<'a>, ToolError> {
        match std::panic::catch_unwind(AssertUnwindSafe(|| tool.prepare(args, ctx, &self.state))) {
            Err(payload) => Err(panicked(payload)),
            Ok(result) => result,
        }
    }

    async fn admit(&self, def: &Tool, ctx: &Ctx) -> Result<Option<Permit>, ToolError> {
        let limits = Limits {
            cooldown: def.cooldown(),
            daily_limit: def.daily_limit(),
        };
        if limits.cooldown.is_none() && limits.daily_limit.is_none() {
            return Ok(None);
        }
        let user = ctx.user().unwrap_or("anonymous");
        match self
            .policy
            .rate_limits
            .acquire(user, def.name(), limits, Tick::now().wall_time())
            .await
        {
            Ok(permit) => Ok(Some(permit)),
            Err(refusal) => Err(ToolError::RateLimited {
                tool: def.name().to_owned(),
                limit: refusal.limit,
                retry_after: refusal.retry_after,
            }),
        }
    }

    async fn release(&self, permit: Option<Permit>) {
        if let Some(permit) = permit {
            self.policy.rate_limits.release(permit).await;
        }
    }

    /// `Ok(Some(result))` when the gate blocks the call.
    async fn gate(&self, def: &Tool, ctx: &Ctx) -> Result<Option<ToolResult>, ToolError> {
        let Some(gate) = self.policy.gate.as_ref().filter(|_| def.requires_gate()) else {
            return Ok(None);
        };
        let verdict = match with_timeout(self.policy.gate_timeout, gate.check(def, ctx)).await {
            Some(Ok(decision)) => Ok(decision),
            Some(Err(error)) => Err(format!("the gate failed: {error}")),
            None => Err(format!(
                "the gate took longer than {}",
                humantime::format_duration(self.policy.gate_timeout)
            )),
        };
        match verdict {
            Ok(decision) if decision.approved => Ok(None),
            Ok(decision) => {
                let mut result = ToolResult::failure(decision.reason);
                result.audit.outcome = Some(Cow::Borrowed("denied_by_gate"));
                Ok(Some(result))
            }
            Err(reason) if def.gate_fail_closed() => Err(ToolError::GateUnavailable {
                tool: def.name().to_owned(),
                reason,
            }),
            Err(reason) => {
                tracing::warn!(target: "tool_registry::gate", tool = def.name(), %reason, "evaluation gate unavailable; the call runs (fail-open)");
                Ok(None)
            }
        }
    }

    fn hold(&self, def: &Tool, ctx: &Ctx, arguments: String) -> Result<ToolError, ToolError> {
        let misconfigured = |message: String| ToolError::Misconfigured {
            tool: def.name().to_owned(),
            message,
        };
        let token = new_token().map_err(misconfigured)?;
        let mut pending = PendingCall {
            tool: def.name().to_owned(),
            user: ctx.user().map(str::to_owned),
            arguments,
            expires_at: to_millis(SystemTime::now() + self.policy.approval_ttl),
            mac: String::new(),
        };
        pending.mac = self
            .approval_key()
            .map_err(misconfigured)?
            .sign(&token, &pending);
        self.policy
            .approvals
            .put(&token, pending)
            .map_err(misconfigured)?;
        Ok(ToolError::NeedsApproval {
            tool: def.name().to_owned(),
            token,
        })
    }

    /// The answer to a call of a batch that is not run at all (over the batch's `max_calls`):
    /// [`ToolError::TooManyCalls`] as a result, audited and stamped like any other call.
    pub(crate) fn not_run(&self, name: &str, ctx: &Ctx) -> ToolResult {
        let started = Tick::now();
        let tool = self.get_for(name, ctx.scope());
        let error = ToolError::TooManyCalls {
            tool: tool.as_ref().map_or(name, Tool::name).to_owned(),
            limit: self.policy.max_calls,
        };
        self.stamped_error(name, tool.as_ref(), started, ctx, error)
    }

    /// An error that ends a call without running its tool, as a result: audited and stamped
    /// like any other call.
    fn stamped_error(
        &self,
        name: &str,
        tool: Option<&Tool>,
        started: Tick,
        ctx: &Ctx,
        error: ToolError,
    ) -> ToolResult {
        let code = Cow::Borrowed(error.code());
        let stamp = self.record(name, tool, started, ctx, code.clone());
        let shown = tool.map_or_else(|| Cow::Owned(name.to_owned()), tool_name);
        let mut result = ToolResult::from(error);
        stamp.put(&mut result.audit, shown, ctx, code, tool.map(Tool::risk));
        result
    }

    /// The audit record of a call that ended before a tool was found, or without running it.
    fn record(
        &self,
        tool: &str,
        def: Option<&Tool>,
        started: Tick,
        ctx: &Ctx,
        outcome: Cow<'static, str>,
    ) -> Stamp {
        let risk = def.map(Tool::risk);
        let stamp = Stamp::now(started);
        self.policy.audit.record(&AuditRecord {
            tool: Cow::Borrowed(tool),
            user: ctx.user().map(Cow::Borrowed),
            chat_id: ctx.chat_id(),
            ts: stamp.ts,
            duration_ms: stamp.duration_ms,
            outcome,
            risk,
        });
        stamp
    }

    /// Runs a tool with none of the pipeline's checks: no scope, limits, gate, confirmation,
    /// timeout or audit; panics are still caught. For benchmarks and trusted internal use.
    #[doc(hidden)]
    pub async fn __dispatch<'a>(
        &self,
        name: &str,
        args: impl Into<ToolArgs<'a>>,
        ctx: &Ctx,
    ) -> Result<ToolResult, ToolError> {
        let tool = self.get(name).ok_or_else(|| ToolError::UnknownTool {
            name: name.to_owned(),
            suggestion: None,
        })?;
        let handler = self.validate(&tool, args.into(), ctx)?;
        match AssertUnwindSafe(handler).catch_unwind().await {
            Err(payload) => Err(panicked(payload)),
            Ok(result) => result,
        }
    }

    /// The call as the core defined it: [`__dispatch`](Self::__dispatch) plus the audit stamp
    /// every result got before the gates existed (`tool`, `duration_ms`, `ts`); no scope,
    /// limits, gate, confirmation, timeout, user, outcome or sink. The baseline of the gates
    /// benchmark. (It repeats `__dispatch` rather than awaiting it or a shared `async fn`: the
    /// extra future layer costs ~200 instructions a call and would weigh down both baselines.)
    #[doc(hidden)]
    pub async fn __dispatch_stamped<'a>(
        &self,
        name: &str,
        args: impl Into<ToolArgs<'a>>,
        ctx: &Ctx,
    ) -> Result<ToolResult, ToolError> {
        let started = Tick::now();
        let tool = self.get(name).ok_or_else(|| ToolError::UnknownTool {
            name: name.to_owned(),
            suggestion: None,
        })?;
        let handler = self.validate(&tool, args.into(), ctx)?;
        let mut result = match AssertUnwindSafe(handler).catch_unwind().await {
            Err(payload) => Err(panicked(payload)),
            Ok(result) => result,
        }?;
        let stamp = Stamp::now(started);
        let audit = &mut result.audit;
        audit.tool = Some(tool_name(&tool));
        audit.duration_ms = Some(stamp.duration_ms);
        audit.ts = Some(stamp.ts);
        Ok(result)
    }
}

/// The time a call took and when it ended, from one clock reading: what the registry stamps on
/// every result and audit record.
#[derive(Clone, Copy)]
struct Stamp {
    /// Milliseconds, rounded to the microsecond: the counter's nanoseconds carry no meaning
    /// past that, and a rounded figure prints without float noise (`0.005`, not
    /// `0.005366999999999999`).
    duration_ms: f64,
    ts: SystemTime,
}

impl Stamp {
    #[inline]
    fn now(started: Tick) -> Self {
        let now = Tick::now();
        // Rounded by the conversion to an integer (a duration is never negative): one
        // instruction, where `f64::round` is a call into libm.
        let micros = (now.millis_since(started) * 1000.0 + 0.5) as u64;
        Self {
            duration_ms: micros as f64 / 1000.0,
            ts: now.wall_time(),
        }
    }

    /// The registry's part of a result's audit.
    #[inline]
    fn put(
        self,
        audit: &mut Audit,
        tool: Cow<'static, str>,
        ctx: &Ctx,
        outcome: Cow<'static, str>,
        risk: Option<Risk>,
    ) {
        audit.tool = Some(tool);
        audit.duration_ms = Some(self.duration_ms);
        audit.ts = Some(self.ts);
        audit.user = ctx.scope().user_arc();
        audit.outcome = Some(outcome);
        audit.risk = risk;
    }
}

/// What a call answers: the outcome as it is ([`Plain`], for [`Registry::call`]) or as a
/// stamped result ([`ForModel`], for [`Registry::call_for_model`]). Chosen at compile time, so
/// `call` pays nothing for the other: its outcome, stamped in place, moves as before.
trait Answer {
    type Output;
    /// `stamp_error` puts the registry's stamps on the audit of an error's result.
    fn answer(
        outcome: Result<ToolResult, ToolError>,
        stamp_error: impl FnOnce(&mut Audit),
    ) -> Self::Output;
}

enum Plain {}

impl Answer for Plain {
    type Output = Result<ToolResult, ToolError>;

    #[inline(always)]
    fn answer(outcome: Result<ToolResult, ToolError>, _: impl FnOnce(&mut Audit)) -> Self::Output {
        outcome
    }
}

enum ForModel {}

impl Answer for ForModel {
    type Output = ToolResult;

    fn answer(
        outcome: Result<ToolResult, ToolError>,
        stamp_error: impl FnOnce(&mut Audit),
    ) -> Self::Output {
        outcome.unwrap_or_else(|error| {
            let mut result = ToolResult::from(error);
            stamp_error(&mut result.audit);
            result
        })
    }
}

/// One call through the pipeline, written out by hand so that the common case (a tool with no
/// limits, gate or confirmation) is one future around the handler: its result moves once
/// instead of once per stage, and nothing is allocated besides the handler's own future.
struct CallFuture<'a, A> {
    answer: std::marker::PhantomData<fn() -> A>,
    state: State<'a>,
}

enum State<'a> {
    /// Not polled yet: nothing has happened.
    Start {
        registry: &'a Registry,
        name: &'a str,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation,
    },
    /// 7. the handler of a tool with nothing to check before it.
    Direct {
        guarded: Guarded<'a>,
        audit: Finish<'a>,
    },
    /// 3.-7. through the stages that await stores, gates or approvals.
    Staged {
        stages: Handler<'a>,
        audit: Finish<'a>,
    },
    Done,
}

/// What stage 8 (audit) needs once the call has an outcome.
struct Finish<'a> {
    registry: &'a Registry,
    tool: Tool,
    started: Tick,
    limit: Duration,
    ctx: &'a Ctx,
}

impl Finish<'_> {
    fn finish<A: Answer>(self, mut outcome: Result<ToolResult, ToolError>) -> A::Output {
        let stamp =
            self.registry
                .finish(&self.tool, self.started, self.limit, self.ctx, &mut outcome);
        A::answer(outcome, |audit| {
            let code = audit.outcome.take().unwrap_or(Cow::Borrowed("failed"));
            let risk = Some(self.tool.risk());
            stamp.put(audit, tool_name(&self.tool), self.ctx, code, risk);
        })
    }
}

impl<'a> State<'a> {
    /// Stages 1-3 (resolve, scope, validate), then the state that runs the rest; `Err` when the
    /// call ends here.
    fn start<A: Answer>(
        registry: &'a Registry,
        name: &'a str,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation,
    ) -> Result<Self, A::Output> {
        let started = Tick::now();
        // 1. resolve, 2. scope
        let Some((tool, limit)) = registry.resolve(name, ctx.scope()) else {
            dispose_args(args);
            let code = Cow::Borrowed("unknown_tool");
            let stamp = registry.record(name, None, started, ctx, code.clone());
            let error = ToolError::UnknownTool {
                name: name.to_owned(),
                suggestion: registry.suggest(name, ctx.scope()),
            };
            return Err(A::answer(Err(error), |audit| {
                stamp.put(audit, Cow::Owned(name.to_owned()), ctx, code, None);
            }));
        };
        if registry.policy.log_annotations {
            log_annotations(&tool);
        }
        let direct = tool.entry().direct;
        let max_bytes = tool.max_args_bytes();
        let audit = Finish {
            registry,
            tool,
            started,
            limit,
            ctx,
        };
        // The arguments are measured before anything reads them, approvals included.
        let mut args = args;
        if let Err(error) = admit_args(&mut args, max_bytes) {
            return Err(audit.finish::<A>(Err(error)));
        }
        if !direct {
            let tool = audit.tool.clone();
            let stages = Box::pin(registry.stages(tool, args, ctx, confirmation, started, limit));
            return Ok(Self::Staged { stages, audit });
        }
        // A tool without limits, gate or confirmation: stages 4 to 6 have nothing to do.
        // 3. validate
        match registry.validate(&audit.tool, args, ctx) {
            Ok(handler) => Ok(Self::Direct {
                guarded: Guarded::new(handler, started, limit),
                audit,
            }),
            Err(error) => Err(audit.finish::<A>(Err(error))),
        }
    }
}

impl<A: Answer> Future for CallFuture<'_, A> {
    type Output = A::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let state = &mut self.state;
        if matches!(state, State::Start { .. }) {
            let State::Start {
                registry,
                name,
                args,
                ctx,
                confirmation,
            } = std::mem::replace(state, State::Done)
            else {
                unreachable!()
            };
            match State::start::<A>(registry, name, args, ctx, confirmation) {
                Ok(next) => *state = next,
                Err(outcome) => return Poll::Ready(outcome),
            }
        }
        let outcome = match state {
            State::Direct { guarded, .. } => std::task::ready!(Pin::new(guarded).poll(cx)),
            State::Staged { stages, .. } => std::task::ready!(stages.as_mut().poll(cx)),
            State::Start { .. } | State::Done => panic!("a tool call polled after it finished"),
        };
        match std::mem::replace(state, State::Done) {
            State::Direct { audit, .. } | State::Staged { audit, .. } => {
                Poll::Ready(audit.finish::<A>(outcome))
            }
            State::Start { .. } | State::Done => unreachable!(),
        }
    }
}

impl<A> Drop for CallFuture<'_, A> {
    /// A call dropped before it was polled still owns its arguments, which may be too deep for
    /// a recursive drop.
    fn drop(&mut self) {
        if let State::Start { args, .. } = &mut self.state {
            dispose_args(std::mem::replace(args, ToolArgs::Text("")));
        }
    }
}

/// The tool's name for an audit: borrowed for free from a compiled tool.
fn tool_name(tool: &Tool) -> Cow<'static, str> {
    match tool.definition() {
        Some(def) => Cow::Borrowed(def.name()),
        None => Cow::Owned(tool.name().to_owned()),
    }
}

fn log_annotations(def: &Tool) {
    if !tracing::enabled!(target: "tool_registry::annotations", tracing::Level::DEBUG) {
        return;
    }
    let a = def.effective_annotations();
    tracing::debug!(
        target: "tool_registry::annotations",
        tool = def.name(),
        read_only = a.read_only,
        destructive = a.destructive,
        idempotent = a.idempotent,
        open_world = a.open_world,
        requires_confirmation = a.requires_confirmation,
        risk = def.risk().as_str(),
        "tool invoked"
    );
}
