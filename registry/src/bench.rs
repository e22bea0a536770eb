//! Baselines for the crate's own benchmarks: a call with none of the pipeline around it.
//!
//! **Unstable, not part of the public API.** Compiled only with the `bench-internals` feature,
//! which the crate's benchmarks and examples turn on (through a dev-dependency of the crate on
//! itself); it may change or go away in any release. An application calls tools with
//! [`Registry::call`].

use std::borrow::Cow;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;

use crate::audit::Tick;
use crate::call::panicked;
use crate::call::{Ctx, ToolArgs, ToolError, ToolResult};
use crate::exec::{Stamp, tool_name, validate};
use crate::registry::Registry;

/// Runs a tool with none of the pipeline's checks: no scope, limits, gate, confirmation,
/// timeout or audit; panics are still caught. The bare dispatch of the benchmarks.
pub async fn dispatch<'a>(
    registry: &Registry,
    name: &str,
    args: impl Into<ToolArgs<'a>>,
    ctx: &Ctx,
) -> Result<ToolResult, ToolError> {
    let tool = registry
        .lookup(name)
        .ok_or_else(|| ToolError::UnknownTool {
            name: name.to_owned(),
            suggestion: None,
        })?;
    let handler = validate(registry, &tool, args.into(), ctx)?;
    match AssertUnwindSafe(handler).catch_unwind().await {
        Err(payload) => Err(panicked(payload)),
        Ok(result) => result,
    }
}

/// The call as the core defined it: [`dispatch`] plus the audit stamps every result had before
/// the gates existed (`tool`, `duration_ms`, `ts`); no scope, limits, gate, confirmation,
/// timeout, user, outcome or sink. The baseline of the gates benchmark. (It repeats
/// [`dispatch`] rather than awaiting it or a shared `async fn`: the extra future layer costs
/// ~200 instructions a call and would weigh down both baselines.)
pub async fn dispatch_stamped<'a>(
    registry: &Registry,
    name: &str,
    args: impl Into<ToolArgs<'a>>,
    ctx: &Ctx,
) -> Result<ToolResult, ToolError> {
    let started = Tick::now();
    let tool = registry
        .lookup(name)
        .ok_or_else(|| ToolError::UnknownTool {
            name: name.to_owned(),
            suggestion: None,
        })?;
    let handler = validate(registry, &tool, args.into(), ctx)?;
    let mut result = match AssertUnwindSafe(handler).catch_unwind().await {
        Err(payload) => Err(panicked(payload)),
        Ok(result) => result,
    }?;
    let name: Cow<'static, str> = tool_name(&tool);
    Stamp::now(started).put_timing(&mut result.audit, name);
    Ok(result)
}
