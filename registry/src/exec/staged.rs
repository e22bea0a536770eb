//! The staged path: stages 2 to 6 in the order of [`STAGES`], for a tool that a waiting stage
//! (rate limit, eval gate, confirmation) applies to. Each stage that applies takes its step; a
//! step that ends the call gives back what earlier steps took (a rate-limit permit).

use std::panic::AssertUnwindSafe;
use std::time::Duration;

use super::{Confirmation, Host};
use crate::audit::Tick;
use crate::call::{Ctx, ToolArgs, ToolError, ToolResult};
use crate::call::{Guarded, Handler, panicked};
use crate::def::Tool;
use crate::gate::{STAGES, Stage, canonical_args};

/// Argument text longer than this may take a compiled tool long enough to read that the call's
/// deadline is checked after it (see [`validate_by`]).
const SLOW_TEXT: usize = 4096;

/// Stages 2 to 6 of one call, in the order of [`STAGES`]; scope and audit are the call
/// future's, around this.
pub(super) async fn staged<H: Host>(
    host: &H,
    tool: Tool,
    args: ToolArgs<'_>,
    ctx: &Ctx,
    confirmation: Confirmation,
    started: Tick,
    limit: Duration,
) -> Result<ToolResult, ToolError> {
    let entry = tool.entry();
    let confirm = confirmation == Confirmation::Required && Stage::Confirmation.applies(entry);
    // An approval is bound to the arguments as the model wrote them, so they are read for
    // it before validation takes them.
    let mut arguments = if confirm { canonical_args(&args) } else { None };
    let mut args = Some(args);
    let mut handler = None;
    let mut permit = None;
    for stage in STAGES {
        if !stage.applies(entry) {
            continue;
        }
        let end = match stage {
            // The call future's own: before it chose this path, and once there is an outcome.
            Stage::Scope | Stage::Audit => continue,
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
            Stage::Confirmation if !confirm => continue,
            Stage::Confirmation => {
                let arguments = arguments.take().unwrap_or_else(|| "{}".to_owned());
                Err(host
                    .policy()
                    .gates
                    .hold(&tool, ctx, arguments)
                    .await
                    .unwrap_or_else(|error| error))
            }
            // An admitted call keeps its permit: it counts.
            Stage::Handler => match handler.take() {
                Some(handler) => return Guarded::new(handler, started, limit).await,
                None => continue,
            },
        };
        host.policy().gates.release(permit.take()).await;
        return end;
    }
    unreachable!("validation always precedes the handler stage, which ends the call")
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
