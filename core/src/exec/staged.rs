//! The staged path: stages 2 to 9 in the order of [`STAGES`], for a tool that a waiting stage
//! (a hook, the cache, rate limit, eval gate, confirmation) applies to. Each stage that applies
//! takes its step; a step that ends the call gives back what earlier steps took (a rate-limit
//! permit).

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use super::{Confirmation, Host};
use crate::audit::{Tick, approval_id};
use crate::call::{Ctx, ToolArgs, ToolError, ToolResult, with_timeout};
use crate::call::{Guarded, Handler, panicked};
use crate::def::{CachePolicy, Tool};
use crate::gate::{STAGES, Stage, canonical, canonical_args};
use crate::hook::{
    Acted, CacheKey, Escalate, HookCall, Hooks, Waiting, cache_key, run_after_from, run_before_from,
};

/// Argument text longer than this may take a compiled tool long enough to read that the call's
/// deadline is checked after it (see [`validate_by`]).
const SLOW_TEXT: usize = 4096;

/// What the staged path ends with: the outcome, and the hooks (built-ins included) that acted.
pub(super) struct Staged {
    pub(super) outcome: Result<ToolResult, ToolError>,
    pub(super) acted: Vec<Acted>,
    /// The id of the approval the call ran under ([`approval_id`]), for its audit.
    pub(super) approval: Option<String>,
}

/// The names the built-in stages act under in the audit record.
static CONFIRM_IF: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from("confirm_if"));
static CACHE: LazyLock<Arc<str>> = LazyLock::new(|| Arc::from("cache"));

/// Where the staged path begins: with the arguments, or where the direct path with hooks
/// stopped (validated, the hooks before `escalate.index` asked and done).
pub(super) enum Begin<'a> {
    Args(ToolArgs<'a>),
    Resume {
        handler: Handler<'a>,
        call: HookCall<'a>,
        escalate: Escalate,
        acted: Vec<Acted>,
    },
}

/// Stages 2 to 9 of one call, in the order of [`STAGES`]; scope, the result cap and the audit
/// are the call future's, around this.
#[allow(clippy::too_many_arguments)]
pub(super) async fn staged<'a, H: Host>(
    host: &'a H,
    tool: Tool,
    hooks: Hooks<'a>,
    begin: Begin<'a>,
    ctx: &'a Ctx,
    confirmation: Confirmation<'a>,
    started: Tick,
    limit: Duration,
) -> Staged {
    let approval = match confirmation {
        Confirmation::Approved(token) => Some(approval_id(token)),
        _ => None,
    };
    let entry = tool.entry();
    let hooked = hooks.any();
    let confirmable =
        confirmation == Confirmation::Required && Stage::Confirmation.applies(entry, hooked);
    // Hooks, `confirm_if` and the cache read the arguments: they are kept as text.
    let reads = hooked || entry.confirms_conditionally() || entry.cache().is_some();
    let mut arguments = None;
    let (mut args, mut call, mut handler, mut acted, mut resume) = match begin {
        Begin::Args(given) => {
            // An approval is bound to the arguments as the model wrote them: read for it
            // before validation takes them, or, when they are kept as text, only once a call
            // is held.
            if confirmable && !reads {
                arguments = canonical_args(&given);
            }
            let written = match &given {
                ToolArgs::Text(text) if reads => Some(Cow::Borrowed(*text)),
                ToolArgs::Value(value) if reads => Some(Cow::Owned(value.to_string())),
                _ => None,
            };
            let call = written.map(|text| HookCall::new(tool.clone(), ctx, text));
            (Some(given), call, None, Vec::new(), None)
        }
        Begin::Resume {
            handler,
            call,
            escalate,
            acted,
        } => (None, Some(call), Some(handler), acted, Some(escalate)),
    };
    let mut permit = None;
    let mut asked = None;
    let mut cached: Option<(CacheKey, CachePolicy)> = None;
    let mut hit = None;
    for stage in STAGES {
        if !stage.applies(entry, hooked) {
            continue;
        }
        // A cached answer needs no permit and no gate; a person is still asked where the tool
        // or a hook says so.
        if hit.is_some()
            && match stage {
                Stage::RateLimit => true,
                Stage::EvalGate => !entry.requires_gate(),
                Stage::Confirmation => {
                    !entry.confirm && !entry.confirms_conditionally() && asked.is_none()
                }
                _ => false,
            }
        {
            continue;
        }
        let end = match stage {
            // The call future's: before it chose this path, and once there is an outcome.
            Stage::Scope | Stage::ResultCap | Stage::Audit => continue,
            // Run with the handler's outcome, below.
            Stage::AfterHooks => continue,
            Stage::Validate => match args
                .take()
                .map(|args| validate_by(host, &tool, args, ctx, started, limit))
            {
                Some(Ok(validated)) => {
                    handler = Some(validated);
                    continue;
                }
                Some(Err(error)) => Err(error),
                None => continue,
            },
            Stage::BeforeHooks => {
                let Some(call) = call.as_mut() else { continue };
                let revalidate = |value| {
                    let args = ToolArgs::Value(value);
                    handler = Some(validate_by(host, &tool, args, ctx, started, limit)?);
                    Ok(())
                };
                let (from, pending) = resume.take().map_or((0, None), |escalate| {
                    (escalate.index, Some(escalate.decision))
                });
                let before = run_before_from(
                    hooks, call, started, limit, &mut acted, revalidate, from, pending,
                );
                match before.await {
                    Ok(reason) => {
                        asked = reason;
                        continue;
                    }
                    Err(error) => Err(error),
                }
            }
            Stage::RateLimit => match host.policy().gates.rate_limit(&tool, ctx).await {
                Ok(admitted) => {
                    permit = Some(admitted);
                    continue;
                }
                Err(error) => Err(error),
            },
            Stage::EvalGate => match host.policy().gates.eval_gate(&tool, ctx).await {
                Ok(None) => continue,
                Ok(Some(denied)) => Ok(denied),
                Err(error) => Err(error),
            },
            Stage::Confirmation if !confirmable => continue,
            Stage::Confirmation => {
                let by_predicate = !entry.confirm
                    && asked.is_none()
                    && call
                        .as_ref()
                        .is_some_and(|call| entry.confirm_if(call.arguments_text()));
                if by_predicate {
                    acted.push(Acted::new(&CONFIRM_IF, "asked_approval", None));
                }
                if !(entry.confirm || asked.is_some() || by_predicate) {
                    continue;
                }
                let arguments = arguments
                    .take()
                    .or_else(|| canonical_args(&ToolArgs::Text(call.as_ref()?.written())))
                    .unwrap_or_else(|| "{}".to_owned());
                // Boxed, for the same reason as a cache miss.
                let held = Box::pin(host.policy().gates.hold(&tool, ctx, arguments)).await;
                Err(held.unwrap_or_else(|error| error))
            }
            Stage::Cache => {
                let (Some(policy), Some(call)) = (entry.cache(), call.as_ref()) else {
                    continue;
                };
                let key = cache_key(&tool, &canonical(call.args()), ctx, policy.per_user);
                match host.policy().results.get(&key).await {
                    Ok(Some(result)) => {
                        acted.push(Acted::new(&CACHE, "hit", None));
                        hit = Some(result);
                    }
                    Ok(None) => {}
                    Err(error) => cache_unavailable(&tool, &error),
                }
                cached = Some((key, policy));
                continue;
            }
            // An admitted call keeps its permit: it counts.
            Stage::Handler => {
                let Some(handler) = handler.take() else {
                    continue;
                };
                let mut outcome = match (hit.take(), cached.take()) {
                    (Some(result), _) => {
                        drop(handler);
                        Ok(result)
                    }
                    (None, Some((key, policy))) => {
                        // Boxed: a cache miss is rare beside the calls that take this path,
                        // and its future would make every one of them larger.
                        let flown = flight(host, &tool, &key, policy, handler, started, limit);
                        let (outcome, ran) = Box::pin(flown).await;
                        if !ran && outcome.is_ok() {
                            let shared = Some("shared with an identical call".to_owned());
                            acted.push(Acted::new(&CACHE, "hit", shared));
                        }
                        outcome
                    }
                    (None, None) => {
                        let mut outcome = Guarded::new(handler, started, limit).await;
                        super::stamp::check_output(
                            &tool,
                            &host.policy().content_limits,
                            &mut outcome,
                        );
                        outcome
                    }
                };
                if let (Some(call), Ok(result)) = (call.as_ref().filter(|_| hooked), &mut outcome)
                    && let Err(error) =
                        run_after_from(hooks, call, result, started, limit, &mut acted, None).await
                {
                    outcome = Err(error);
                }
                return Staged {
                    outcome,
                    acted,
                    approval,
                };
            }
        };
        host.policy().gates.release(permit.take()).await;
        return Staged {
            outcome: end,
            acted,
            approval,
        };
    }
    unreachable!("validation always precedes the handler stage, which ends the call")
}

/// Stage 9 for the direct path with hooks, from the hook whose `after` side waits: the rest of
/// the `after` sides, within the call's deadline.
pub(super) async fn after_rest<'a>(
    hooks: Hooks<'a>,
    call: HookCall<'a>,
    mut result: ToolResult,
    started: Tick,
    limit: Duration,
    mut acted: Vec<Acted>,
    waiting: Waiting,
) -> Staged {
    let done = run_after_from(
        hooks,
        &call,
        &mut result,
        started,
        limit,
        &mut acted,
        Some(waiting),
    );
    let outcome = match done.await {
        Ok(()) => Ok(result),
        Err(error) => Err(error),
    };
    Staged {
        outcome,
        acted,
        approval: None,
    }
}

/// A cache that could not be read or written: no cache for this call, never a wrong answer.
fn cache_unavailable(tool: &Tool, error: &str) {
    tracing::warn!(target: "tool_registry", tool = tool.name(), error, "the result cache is unavailable; the call runs its tool");
}

/// Stage 8 of a `cache` tool that missed: the handler run once for every identical call that
/// misses meanwhile (the first runs it, the others wait within their own deadlines), its
/// successful result kept. Also answers whether this call's handler ran.
async fn flight<H: Host>(
    host: &H,
    tool: &Tool,
    key: &CacheKey,
    policy: CachePolicy,
    handler: Handler<'_>,
    started: Tick,
    limit: Duration,
) -> (Result<ToolResult, ToolError>, bool) {
    let host_policy = host.policy();
    let flight = host_policy.flights.join(key);
    // Landed however this call ends, a call dropped while it waits included: no flight stays
    // in the map after its last caller has gone.
    let _landing = Landing {
        flights: &host_policy.flights,
        key,
        flight: &flight,
    };
    let ran = AtomicBool::new(false);
    let run = async {
        // A flight that starts just after another landed finds its result kept.
        if let Ok(Some(result)) = host_policy.results.get(key).await {
            return Ok(result);
        }
        ran.store(true, Ordering::Relaxed);
        let mut outcome = Guarded::new(handler, started, limit).await;
        super::stamp::check_output(tool, &host_policy.content_limits, &mut outcome);
        if let Ok(result) = &outcome
            && result.success
            && let Err(error) = host_policy.results.put(key, result, policy.ttl).await
        {
            cache_unavailable(tool, &error);
        }
        outcome
    };
    let left = limit.saturating_sub(Duration::from_secs_f64(
        Tick::now().millis_since(started).max(0.0) / 1000.0,
    ));
    let outcome = match with_timeout(left, flight.get_or_init(|| run)).await {
        Some(outcome) => outcome.clone(),
        None => Err(ToolError::TimedOut {
            tool: String::new(),
            after: limit,
        }),
    };
    (outcome, ran.load(Ordering::Relaxed))
}

/// Lands a flight when dropped.
struct Landing<'a> {
    flights: &'a crate::hook::Flights,
    key: &'a CacheKey,
    flight: &'a std::sync::Arc<crate::hook::Flight>,
}

impl Drop for Landing<'_> {
    fn drop(&mut self) {
        self.flights.land(self.key, self.flight);
    }
}

/// Stage 2, validate: the shim (or, for a run-time tool, its schema) reads the arguments
/// and returns the handler, not yet started. A panic in it is an error like any other.
pub(crate) fn validate<'a, H: Host>(
    host: &'a H,
    tool: &Tool,
    args: ToolArgs<'a>,
    ctx: &'a Ctx,
) -> Result<Handler<'a>, ToolError> {
    let lenient = !host.policy().strict_arguments;
    let prepare = || match tool.entry().meta() {
        Some(meta) => host.prepare_meta(meta, args, ctx),
        None => tool.entry().prepare(args, ctx, host.state(), lenient),
    };
    match std::panic::catch_unwind(AssertUnwindSafe(prepare)) {
        Err(payload) => Err(panicked(payload)),
        Ok(result) => result,
    }
}

/// [`validate`] within the call's deadline: reading the arguments counts against
/// the tool's timeout, so a call whose arguments took the whole limit to read answers
/// [`ToolError::TimedOut`] and its handler never starts. Only where reading can take time
/// is the clock read: a run-time tool (its schema's validator), a [`Value`](serde_json::Value)
/// (read by the lenient rules), or text over [`SLOW_TEXT`] bytes; a compiled tool's short
/// text is read by its own `serde` code in microseconds.
#[inline(always)]
pub(crate) fn validate_by<'a, H: Host>(
    host: &'a H,
    tool: &Tool,
    args: ToolArgs<'a>,
    ctx: &'a Ctx,
    started: Tick,
    limit: Duration,
) -> Result<Handler<'a>, ToolError> {
    let slow = match &args {
        ToolArgs::Text(text) => text.len() > SLOW_TEXT || !tool.is_linked(),
        ToolArgs::Value(_) => true,
    };
    let handler = validate(host, tool, args, ctx)?;
    if slow && Tick::now().millis_since(started) >= limit.as_secs_f64() * 1000.0 {
        drop(handler);
        return Err(ToolError::TimedOut {
            tool: String::new(),
            after: limit,
        });
    }
    Ok(handler)
}
