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
            module: None,
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
            module: None,
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

/// A registry of one run-time tool, `picture`, whose output schema is an object and which
/// answers `{"bytes": N}` and a PNG image of `size` bytes (the PNG signature, then bytes that
/// look random), the same bytes shared by every call; and those bytes. What the MCP image
/// benchmark and test serve.
pub fn picture_registry(size: usize) -> (Registry, bytes::Bytes) {
    use crate::content::{Content, Image};
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    while png.len() < size {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        png.push(state as u8);
    }
    let png = bytes::Bytes::from(png);
    let registry = Registry::builder()
        .without_linked()
        .build()
        .expect("an empty registry builds");
    let spec = crate::spec::ToolSpec::builder("picture")
        .description("A picture.")
        .output_schema(serde_json::json!({
            "type": "object",
            "properties": {"bytes": {"type": "integer"}},
        }))
        .build()
        .expect("the picture's spec is valid");
    let image = png.clone();
    let handler = crate::spec::ToolHandler::new(move |_, _| {
        let image = image.clone();
        async move {
            let value = serde_json::json!({"bytes": image.len()});
            Ok::<_, ToolError>(Content::value(value).image(Image::png(image)))
        }
    });
    registry
        .register(spec, handler)
        .expect("the picture registers");
    (registry, png)
}

/// A hook with nothing to do, asked before and after every call: what a hook costs by being
/// there (the `hooks` benchmark, `HOOK=1` of the `overhead` example).
pub struct NoopHook;

impl crate::hook::Hook for NoopHook {
    fn name(&self) -> &str {
        "noop"
    }

    fn before(&self, call: &crate::hook::HookCall<'_>) -> crate::hook::Before {
        std::hint::black_box(call);
        crate::hook::Before::Continue
    }

    fn after(
        &self,
        call: &crate::hook::HookCall<'_>,
        result: &mut ToolResult,
    ) -> crate::hook::After {
        std::hint::black_box((call, result));
        crate::hook::After::Kept
    }
}
