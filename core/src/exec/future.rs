//! The call future: what [`Registry::call`](crate::Registry::call) returns. Scope and
//! validation run on its first poll; then a tool to which no waiting stage applies runs its
//! handler in place (the direct path), any other runs the staged path
//! ([`staged`](super::staged)); the audit ends both. A call made with an approval token first
//! takes the token back (`approval`), then starts as any call whose confirmation was given.
//! The call's span is opened once the name is resolved and entered on every poll from then on,
//! so every later stage, the handler and the audit run inside it.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::approve::{refused, take_pending};
use super::staged::{Begin, Staged, after_rest, staged, validate_by};
use super::{CallSpan, Confirmation, Host, Stamp, tool_name};
use crate::audit::{Audit, Tick};
use crate::call::{
    BoxFuture, Ctx, Guarded, ToolArgs, ToolError, ToolResult, admit_args, dispose_args,
};
use crate::def::Tool;
use crate::gate::canonical_args;
use crate::hook::{Acted, HookCall, Hooks, Waiting, after_now, before_now};

/// The call of `name` on `host` as a future that does nothing until polled; see [`CallFuture`].
pub(crate) fn run_as<'a, A: Answer, H: Host>(
    host: &'a H,
    name: &'a str,
    args: ToolArgs<'a>,
    ctx: &'a Ctx,
    confirmation: Confirmation<'a>,
) -> CallFuture<'a, A, H> {
    CallFuture {
        answer: std::marker::PhantomData,
        span: CallSpan::default(),
        state: State::Start {
            registry: host,
            name,
            args,
            ctx,
            confirmation,
            token: None,
        },
    }
}

/// What a call answers, chosen by its type at compile time, so that a call pays nothing for
/// the form it does not use: [`Plain`] (what [`Registry::call`](crate::Registry::call)
/// answers) or [`ForModel`] (after [`Call::for_model`](crate::registry::Call::for_model)).
/// Sealed: these two are the forms.
pub trait Answer: sealed::Sealed {
    /// What the call's future resolves to.
    type Output;

    /// The outcome in this form; `stamp_error` puts the registry's stamps on the audit of an
    /// error's result.
    #[doc(hidden)]
    fn answer(
        outcome: Result<ToolResult, ToolError>,
        stamp_error: impl FnOnce(&mut Audit),
    ) -> Self::Output;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Plain {}
    impl Sealed for super::ForModel {}
}

/// The answer as it is, `Result<ToolResult, ToolError>`: for the application's own code.
#[derive(Debug)]
pub enum Plain {}

impl Answer for Plain {
    type Output = Result<ToolResult, ToolError>;

    #[inline(always)]
    fn answer(outcome: Result<ToolResult, ToolError>, _: impl FnOnce(&mut Audit)) -> Self::Output {
        outcome
    }
}

/// The answer as a model should read it, a [`ToolResult`]: an error becomes an unsuccessful
/// result (see [`ToolResult::from`]) that carries the same audit stamps as a success (`tool`,
/// `duration_ms`, `ts`, `user`, `outcome`, `risk`), taken from the same clock reading as the
/// record sent to the audit sink.
#[derive(Debug)]
pub enum ForModel {}

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
pub(crate) struct CallFuture<'a, A, H> {
    answer: std::marker::PhantomData<fn() -> A>,
    /// The call's span: none until the first poll resolves the name, and again once the audit
    /// has closed it.
    span: CallSpan,
    state: State<'a, H>,
}

impl<'a, A: Answer, H: Host> CallFuture<'a, A, H> {
    /// The same call, answered in the form `B`. Before the first poll only, as every method
    /// that changes a call.
    pub(crate) fn answer_as<B: Answer>(mut self) -> CallFuture<'a, B, H> {
        CallFuture {
            answer: std::marker::PhantomData,
            span: std::mem::take(&mut self.span),
            state: std::mem::replace(&mut self.state, State::Done),
        }
    }

    /// The same call, with its confirmation (stage 7) given.
    pub(crate) fn confirmed(mut self) -> Self {
        if let State::Start { confirmation, .. } = &mut self.state {
            *confirmation = Confirmation::Given;
        }
        self
    }

    /// The same call, made with the approval token of an earlier call of it.
    pub(crate) fn approved(mut self, approval: &'a str) -> Self {
        if let State::Start { token, .. } = &mut self.state {
            *token = Some(approval);
        }
        self
    }
}

enum State<'a, H> {
    /// Not polled yet: nothing has happened.
    Start {
        registry: &'a H,
        name: &'a str,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation<'a>,
        /// The approval token the call comes back with, taken back before the call starts.
        token: Option<&'a str>,
    },
    /// The approval token being taken back: the arguments come back with it when it is this
    /// call's.
    Approving {
        approval: BoxFuture<'a, Result<ToolArgs<'a>, ToolError>>,
        name: &'a str,
        ctx: &'a Ctx,
        started: Tick,
        registry: &'a H,
        token: &'a str,
    },
    /// Stage 8, handler, of a tool with nothing to wait for before it.
    Direct {
        guarded: Guarded<'a>,
        audit: Finish<'a, H>,
    },
    /// Stage 8, handler, of a tool with nothing to wait for but hooks that answered at once:
    /// their `after` sides run when it ends, in place too unless one waits.
    Hooked {
        guarded: Guarded<'a>,
        audit: Finish<'a, H>,
        after: AfterHooks<'a>,
    },
    /// Stages 2 to 9, through the stages that await hooks, stores, gates or approvals.
    Staged {
        stages: BoxFuture<'a, Staged>,
        audit: Finish<'a, H>,
    },
    Done,
}

/// What the `after` sides of a call's hooks need once its handler ended.
struct AfterHooks<'a> {
    call: HookCall<'a>,
    hooks: Hooks<'a>,
    acted: Vec<Acted>,
}

/// What stages 10 and 11 (result cap, audit) need once the call has an outcome.
struct Finish<'a, H> {
    registry: &'a H,
    tool: Tool,
    started: Tick,
    limit: Duration,
    ctx: &'a Ctx,
}

impl<H: Host> Finish<'_, H> {
    #[inline(always)]
    fn finish<A: Answer>(
        &self,
        mut outcome: Result<ToolResult, ToolError>,
        span: &CallSpan,
        checked: bool,
        acted: Vec<Acted>,
        approval: Option<String>,
    ) -> A::Output {
        let stamp = self.registry.policy().finish(
            &self.tool,
            self.started,
            self.limit,
            self.ctx,
            &mut outcome,
            span,
            checked,
            acted,
            approval,
        );
        A::answer(outcome, |audit| {
            let code = audit.outcome.take().unwrap_or(Cow::Borrowed("failed"));
            let risk = Some(self.tool.risk());
            stamp.put(audit, tool_name(&self.tool), self.ctx, code, risk);
        })
    }
}

impl<'a, H: Host> State<'a, H> {
    /// Stage 1 (scope) and, on the direct path, stage 2 (validate); then the state that runs the rest; `Err` when the
    /// call ends here. Opens the call's `span` once the name is resolved, and runs the rest
    /// inside it.
    fn start<A: Answer>(
        registry: &'a H,
        name: &'a str,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation<'a>,
        span: &mut CallSpan,
        state: &mut Self,
    ) -> Result<(), A::Output> {
        let started = Tick::now();
        // Stage 1, scope: the name resolved as the caller's scope sees it.
        let Some((tool, limit, hooks)) = registry.resolve(name, ctx.scope()) else {
            let span = CallSpan::asked(name, ctx);
            let _in = span.enter();
            dispose_args(args);
            let code = Cow::Borrowed("unknown_tool");
            let stamp = registry
                .policy()
                .record(name, None, started, ctx, code.clone(), &span);
            let error = ToolError::UnknownTool {
                name: name.to_owned(),
                suggestion: registry.suggest(name, ctx.scope()),
                module: registry.unknown_module(name, ctx.scope()),
            };
            return Err(A::answer(Err(error), |audit| {
                stamp.put(audit, Cow::Owned(name.to_owned()), ctx, code, None);
            }));
        };
        *span = CallSpan::tool(&tool, ctx);
        let span = &*span;
        let _in = span.enter();
        if ctx
            .annotation_log()
            .unwrap_or(registry.policy().log_annotations)
        {
            log_annotations(&tool);
        }
        // The direct path: no waiting stage applies to the tool but hooks, which it runs in
        // place as long as they answer at once.
        let direct = direct(&tool);
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
            return Err(audit.finish::<A>(Err(error), span, false, Vec::new(), None));
        }
        if !direct {
            let tool = audit.tool.clone();
            let hooks = Hooks {
                set: &registry.policy().hooks,
                mask: hooks,
            };
            let stages = Box::pin(staged(
                registry,
                tool,
                hooks,
                Begin::Args(args),
                ctx,
                confirmation,
                started,
                limit,
            ));
            *state = Self::Staged { stages, audit };
            return Ok(());
        }
        if hooks != 0 {
            return Self::hooked::<A>(
                registry,
                args,
                ctx,
                confirmation,
                started,
                limit,
                hooks,
                audit,
                span,
                state,
            );
        }
        // A tool without hooks, limits, gate, confirmation or cache: stages 3 to 7 have
        // nothing to do. Stage 2, validate.
        match validate_by(registry, &audit.tool, args, ctx, started, limit) {
            Ok(handler) => {
                *state = Self::Direct {
                    guarded: Guarded::new(handler, started, limit),
                    audit,
                };
                Ok(())
            }
            Err(error) => Err(audit.finish::<A>(Err(error), span, false, Vec::new(), None)),
        }
    }

    /// The direct path of a tool that only hooks wait for: stage 2 (validate), then stage 3
    /// (before hooks) in place for as long as the hooks answer at once; at the first that waits or asks for approval, the
    /// staged path goes on from there.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn hooked<A: Answer>(
        registry: &'a H,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        confirmation: Confirmation<'a>,
        started: Tick,
        limit: Duration,
        mask: u64,
        audit: Finish<'a, H>,
        span: &CallSpan,
        state: &mut Self,
    ) -> Result<(), A::Output> {
        let hooks = Hooks {
            set: &registry.policy().hooks,
            mask,
        };
        let written = match &args {
            ToolArgs::Text(text) => Cow::Borrowed(*text),
            ToolArgs::Value(value) => Cow::Owned(value.to_string()),
        };
        let mut call = HookCall::new(audit.tool.clone(), ctx, written);
        let mut handler = match validate_by(registry, &audit.tool, args, ctx, started, limit) {
            Ok(handler) => handler,
            Err(error) => return Err(audit.finish::<A>(Err(error), span, false, Vec::new(), None)),
        };
        let mut acted = Vec::new();
        let tool = &audit.tool;
        let revalidate = |value| {
            handler = validate_by(registry, tool, ToolArgs::Value(value), ctx, started, limit)?;
            Ok(())
        };
        match before_now(hooks, &mut call, &mut acted, revalidate) {
            Ok(None) => {
                *state = Self::Hooked {
                    guarded: Guarded::new(handler, started, limit),
                    audit,
                    after: AfterHooks { call, hooks, acted },
                };
                Ok(())
            }
            Ok(Some(escalate)) => {
                let begin = Begin::Resume {
                    handler,
                    call,
                    escalate,
                    acted,
                };
                let tool = audit.tool.clone();
                let stages = staged(
                    registry,
                    tool,
                    hooks,
                    begin,
                    ctx,
                    confirmation,
                    started,
                    limit,
                );
                *state = Self::Staged {
                    stages: Box::pin(stages),
                    audit,
                };
                Ok(())
            }
            Err(error) => Err(audit.finish::<A>(Err(error), span, false, acted, None)),
        }
    }
}

impl<'a, H: Host> State<'a, H> {
    /// The state that takes `token` back for the call of `name` with `args`: the token must
    /// be for this tool, this user and exactly these arguments (after validation; key order
    /// and whitespace do not matter), with the checks of `take_pending`. A mismatch does not
    /// use the token up: its owner can still approve it.
    #[cold]
    fn approving(
        registry: &'a H,
        name: &'a str,
        args: ToolArgs<'a>,
        token: &'a str,
        ctx: &'a Ctx,
    ) -> Self {
        let approval = Box::pin(async move {
            let taken = take_pending(registry, token, ctx, |pending| {
                let same_tool = registry
                    .resolve(name, ctx.scope())
                    .is_some_and(|(tool, ..)| tool.name() == pending.tool);
                let same_args = canonical_args(&args).is_some_and(|text| text == pending.arguments);
                match (same_tool, same_args) {
                    (true, true) => Ok(()),
                    (true, false) => Err(refused("the token was issued for different arguments")),
                    (false, _) => Err(refused("the token was issued for another tool")),
                }
            })
            .await;
            match taken {
                Ok(_) => Ok(args),
                Err(error) => {
                    dispose_args(args);
                    Err(error)
                }
            }
        });
        State::Approving {
            approval,
            name,
            ctx,
            started: Tick::now(),
            registry,
            token,
        }
    }
}

/// The answer of a call whose approval token was refused: the tool did not run, and nothing is
/// audited; a result for a model carries the call's stamps.
#[cold]
fn refuse<A: Answer>(name: &str, ctx: &Ctx, started: Tick, error: ToolError) -> A::Output {
    let code = error.outcome();
    A::answer(Err(error), |audit| {
        Stamp::now(started).put(audit, Cow::Owned(name.to_owned()), ctx, code, None);
    })
}

impl<A: Answer, H: Host> Future for CallFuture<'_, A, H> {
    type Output = A::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let state = &mut this.state;
        // Before the stages: the approval token taken back, when the call has one; then scope
        // and validation, which choose the path.
        loop {
            match state {
                State::Start { token: Some(_), .. } => {
                    let State::Start {
                        registry,
                        name,
                        args,
                        ctx,
                        token: Some(token),
                        ..
                    } = std::mem::replace(state, State::Done)
                    else {
                        unreachable!()
                    };
                    *state = State::approving(registry, name, args, token, ctx);
                }
                State::Approving { approval, .. } => {
                    let approved = std::task::ready!(approval.as_mut().poll(cx));
                    let State::Approving {
                        registry,
                        name,
                        ctx,
                        started,
                        token,
                        ..
                    } = std::mem::replace(state, State::Done)
                    else {
                        unreachable!()
                    };
                    *state = match approved {
                        Ok(args) => State::Start {
                            registry,
                            name,
                            args,
                            ctx,
                            confirmation: Confirmation::Approved(token),
                            token: None,
                        },
                        Err(error) => return Poll::Ready(refuse::<A>(name, ctx, started, error)),
                    };
                }
                State::Start { .. } => {
                    let State::Start {
                        registry,
                        name,
                        args,
                        ctx,
                        confirmation,
                        ..
                    } = std::mem::replace(state, State::Done)
                    else {
                        unreachable!()
                    };
                    match State::start::<A>(
                        registry,
                        name,
                        args,
                        ctx,
                        confirmation,
                        &mut this.span,
                        state,
                    ) {
                        Ok(()) => {}
                        Err(outcome) => {
                            this.span = CallSpan::default();
                            return Poll::Ready(outcome);
                        }
                    }
                    break;
                }
                _ => break,
            }
        }
        // What runs from here on (the stages that wait, the handler, the audit) sees the
        // call's span as the current one, on every poll.
        let (mut checked, mut acted, mut approval) = (false, Vec::new(), None);
        let _in = this.span.enter();
        let mut outcome = match state {
            State::Direct { guarded, .. } | State::Hooked { guarded, .. } => {
                std::task::ready!(Pin::new(guarded).poll(cx))
            }
            State::Staged { stages, .. } => {
                let done = std::task::ready!(stages.as_mut().poll(cx));
                (checked, acted, approval) = (true, done.acted, done.approval);
                done.outcome
            }
            State::Start { .. } | State::Approving { .. } | State::Done => {
                panic!("a tool call polled after it finished")
            }
        };
        // Stage 9 of a hooked call on the direct path: the hooks' `after` sides, in place
        // unless one waits; then the rest of them are the call's staged future, polled next.
        if let State::Hooked { audit, after, .. } = state {
            match after_hooks(audit, after, &mut outcome) {
                None => {
                    checked = true;
                    std::mem::swap(&mut acted, &mut after.acted);
                }
                Some(waiting) => {
                    after_waits(state, outcome, waiting);
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
            }
        }
        drop(_in);
        // The span ends with the call, not with this future, which the caller may keep.
        let span = std::mem::take(&mut this.span);
        let _in = span.enter();
        // The handler's future, the stages and the hooks' call are dropped in place once the
        // answer is made.
        let done = Reset(state);
        match &*done.0 {
            State::Direct { audit, .. }
            | State::Staged { audit, .. }
            | State::Hooked { audit, .. } => {
                Poll::Ready(audit.finish::<A>(outcome, &span, checked, acted, approval))
            }
            State::Start { .. } | State::Approving { .. } | State::Done => unreachable!(),
        }
    }
}

/// Leaves a call's state [`State::Done`] when dropped.
struct Reset<'s, 'a, H>(&'s mut State<'a, H>);

impl<H> Drop for Reset<'_, '_, H> {
    #[inline(always)]
    fn drop(&mut self) {
        *self.0 = State::Done;
    }
}

/// Stage 9 on the direct path with hooks, once the handler ended: the result checked, then
/// the hooks' `after` sides, in place; the hook whose `after` side waits, if one does. Kept out
/// of the call future's `poll`, which every call runs.
#[inline(never)]
fn after_hooks<H: Host>(
    audit: &Finish<'_, H>,
    after: &mut AfterHooks<'_>,
    outcome: &mut Result<ToolResult, ToolError>,
) -> Option<Waiting> {
    let policy = audit.registry.policy();
    super::stamp::check_output(&audit.tool, &policy.content_limits, outcome);
    let Ok(result) = outcome else { return None };
    match after_now(after.hooks, &after.call, result, &mut after.acted) {
        Ok(waiting) => waiting,
        Err(error) => {
            *outcome = Err(error);
            None
        }
    }
}

/// A hooked call whose hook's `after` side waits: the rest of the `after` sides become the
/// call's staged future, within the call's deadline.
#[cold]
fn after_waits<H: Host>(
    state: &mut State<'_, H>,
    outcome: Result<ToolResult, ToolError>,
    waiting: Waiting,
) {
    let State::Hooked { audit, after, .. } = std::mem::replace(state, State::Done) else {
        unreachable!()
    };
    let AfterHooks { call, hooks, acted } = after;
    let Ok(result) = outcome else {
        unreachable!("only a result has `after` sides to wait for")
    };
    let (started, limit) = (audit.started, audit.limit);
    let rest = after_rest(hooks, call, result, started, limit, acted, waiting);
    *state = State::Staged {
        stages: Box::pin(rest),
        audit,
    };
}

impl<A, H> Drop for CallFuture<'_, A, H> {
    /// A call dropped before it was polled still owns its arguments, which may be too deep for
    /// a recursive drop.
    fn drop(&mut self) {
        if let State::Start { args, .. } = &mut self.state {
            dispose_args(std::mem::replace(args, ToolArgs::Text("")));
        }
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

/// Whether no stage that waits applies to `tool` ([`gate::direct`](crate::gate::direct)):
/// decided from the list of stages on the tool's first call and kept in its entry.
#[inline]
fn direct(tool: &Tool) -> bool {
    let entry = tool.entry();
    *entry.direct.get_or_init(|| crate::gate::direct(entry))
}
