//! Stage 11, audit: the one place a call's audit is made. [`Stamp`] is one clock reading at the
//! end of a call; it stamps the result (`tool`, `duration_ms`, `ts`, `user`, `outcome`, `risk`)
//! and fills the record sent to the registry's [`AuditSink`](super::AuditSink), and the same
//! outcome is written on the call's span ([`span`](super::span)), so the three always agree.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use super::{CallSpan, Policy};
use crate::audit::{Acted, Audit, AuditRecord, CacheAnswer, Tick, approval_id, refusing_gate};
use crate::call::{Ctx, ToolError, ToolResult};
use crate::def::{Risk, Tool};

impl Policy {
    /// The audit stage: one record to the sink, the outcome on the call's `span`, and the
    /// registry's part of a successful result's audit; the stamp is returned for an error's
    /// result. A call failed when it ended in an error or an unsuccessful result.
    ///
    /// Before the audit, stage 10 (result cap): a `max_result_bytes` tool's result shortened
    /// to fit. `checked`: the staged path checked the result against the tool's output rules
    /// already, right after the handler; `acted`: the hooks that acted, for the record.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn finish(
        &self,
        tool: &Tool,
        started: Tick,
        limit: Duration,
        ctx: &Ctx,
        outcome: &mut Result<ToolResult, ToolError>,
        span: &CallSpan,
        checked: bool,
        mut acted: Vec<Acted>,
        approval: Option<String>,
    ) -> Stamp {
        if !checked {
            check_output(tool, &self.content_limits, outcome);
        }
        if let Some(max) = tool.max_result_bytes() {
            cap(max, outcome, &mut acted);
        }
        let code: Cow<'static, str> = match outcome {
            Ok(result) => result
                .audit
                .outcome
                .take()
                .unwrap_or(Cow::Borrowed(if result.success { "ok" } else { "failed" })),
            Err(error) => {
                error.set_tool(tool.name());
                error.outcome()
            }
        };
        let stamp = Stamp::now(started);
        if stamp.duration_ms > limit.as_secs_f64() * 1000.0 && outcome.is_ok() {
            tracing::warn!(target: "tool_registry", tool = tool.name(), duration_ms = stamp.duration_ms, "the tool ran past its timeout without waiting, where the timeout cannot stop it; mark it `#[tool(blocking)]`");
        }
        let failed = outcome.as_ref().map_or(true, |result| !result.success);
        let (gate, approval) = match failed {
            true => refused_by(&code, &acted, outcome.as_ref().err(), approval),
            false => (None, approval.map(Cow::Owned)),
        };
        // A call a stage refused asked the cache nothing, or was not answered by it; a tool
        // with a cache takes the staged path, which checked its result (`checked`).
        let cache = match checked && gate.is_none() && tool.cache().is_some() {
            true => Some(cache_answer(&acted)),
            false => None,
        };
        // Every field but the two texts of a failed call borrows: nothing else to drop.
        let record = std::mem::ManuallyDrop::new(AuditRecord {
            tool: Cow::Borrowed(tool.name()),
            version: tool.version().map(Cow::Borrowed),
            user: ctx.user().map(Cow::Borrowed),
            level: Some(ctx.scope().level()),
            chat_id: ctx.chat_id(),
            ts: stamp.ts,
            duration_ms: stamp.duration_ms,
            outcome: Cow::Borrowed(&code),
            gate,
            risk: Some(tool.risk()),
            annotations: Some(tool.effective_annotations()),
            cache,
            approval,
            hooks: Cow::Borrowed(&acted),
        });
        self.audit(&record, failed, span);
        if failed {
            let record = std::mem::ManuallyDrop::into_inner(record);
            drop((record.gate, record.approval));
        } else if record.approval.is_some() {
            drop(std::mem::ManuallyDrop::into_inner(record).approval);
        }
        if let Ok(result) = outcome {
            stamp.put(
                &mut result.audit,
                tool_name(tool),
                ctx,
                code,
                Some(tool.risk()),
            );
            result.audit.cache = cache;
        }
        stamp
    }

    /// An error that ends a call without running its tool, as a result: audited and stamped
    /// like any other call.
    pub(crate) fn stamped_error(
        &self,
        name: &str,
        tool: Option<&Tool>,
        started: Tick,
        ctx: &Ctx,
        error: ToolError,
    ) -> ToolResult {
        let code = error.outcome();
        let stamp = self.record(name, tool, started, ctx, code.clone(), &CallSpan::default());
        let shown = tool.map_or_else(|| Cow::Owned(name.to_owned()), tool_name);
        let mut result = ToolResult::from(error);
        stamp.put(&mut result.audit, shown, ctx, code, tool.map(Tool::risk));
        result
    }

    /// The audit record of a call that ended before a tool was found, or without running it:
    /// a failure, on `span` too.
    pub(crate) fn record(
        &self,
        tool: &str,
        def: Option<&Tool>,
        started: Tick,
        ctx: &Ctx,
        outcome: Cow<'static, str>,
        span: &CallSpan,
    ) -> Stamp {
        let risk = def.map(Tool::risk);
        let stamp = Stamp::now(started);
        let gate = refusing_gate(&outcome, &[]);
        let record = AuditRecord {
            tool: Cow::Borrowed(tool),
            version: def.and_then(Tool::version).map(Cow::Borrowed),
            user: ctx.user().map(Cow::Borrowed),
            level: Some(ctx.scope().level()),
            chat_id: ctx.chat_id(),
            ts: stamp.ts,
            duration_ms: stamp.duration_ms,
            outcome,
            gate,
            risk,
            annotations: def.map(Tool::effective_annotations),
            cache: None,
            approval: None,
            hooks: Cow::Borrowed(&[]),
        };
        self.audit(&record, true, span);
        stamp
    }

    /// Where every audited call ends: its record to the sink, its outcome on its span.
    #[inline(always)]
    fn audit(&self, record: &AuditRecord<'_>, failed: bool, span: &CallSpan) {
        self.audit.record(record);
        span.close(&record.outcome, failed);
    }
}

/// Whether a cache tool's call was answered by the cache (`hit`, a kept result or an identical
/// call's run) or ran its tool (`miss`).
#[inline]
fn cache_answer(acted: &[Acted]) -> CacheAnswer {
    match acted
        .iter()
        .any(|acted| acted.action == "hit" && &*acted.hook == "cache")
    {
        true => CacheAnswer::Hit,
        false => CacheAnswer::Miss,
    }
}

/// What the audit says of a failed call: the stage that refused it, and the approval it
/// waits for (a new token) or ran under.
#[cold]
fn refused_by<'a>(
    code: &str,
    acted: &[Acted],
    error: Option<&ToolError>,
    approval: Option<String>,
) -> (Option<Cow<'a, str>>, Option<Cow<'a, str>>) {
    let approval = match error {
        Some(ToolError::NeedsApproval { token, .. }) => Some(approval_id(token)),
        _ => approval,
    };
    (refusing_gate(code, acted), approval.map(Cow::Owned))
}

/// Stage 10, result cap: a result over `max` bytes of text shortened to fit.
#[cold]
fn cap(max: usize, outcome: &mut Result<ToolResult, ToolError>, acted: &mut Vec<Acted>) {
    if let Ok(result) = outcome
        && let Some(cut) = crate::hook::cap::shorten(result, max)
    {
        let how = format!("{} bytes to {}", cut.from, cut.to);
        acted.push(Acted::new(
            &"max_result_bytes".into(),
            "shortened",
            Some(how),
        ));
    }
}

/// The time a call took and when it ended, from one clock reading: what the registry stamps on
/// every result and audit record.
#[derive(Clone, Copy)]
pub(crate) struct Stamp {
    /// Milliseconds, rounded to the microsecond: the counter's nanoseconds carry no meaning
    /// past that, and a rounded figure prints without float noise (`0.005`, not
    /// `0.005366999999999999`).
    duration_ms: f64,
    ts: SystemTime,
}

impl Stamp {
    #[inline]
    pub(crate) fn now(started: Tick) -> Self {
        let now = Tick::now();
        // Rounded by the conversion to an integer (a duration is never negative): one
        // instruction, where `f64::round` is a call into libm.
        let micros = (now.millis_since(started) * 1000.0 + 0.5) as u64;
        Self {
            duration_ms: micros as f64 / 1000.0,
            ts: now.wall_time(),
        }
    }

    /// The registry's part of a result's audit: the only place that writes it.
    #[inline]
    pub(crate) fn put(
        self,
        audit: &mut Audit,
        tool: Cow<'static, str>,
        ctx: &Ctx,
        outcome: Cow<'static, str>,
        risk: Option<Risk>,
    ) {
        self.put_timing(audit, tool);
        audit.user = ctx.scope().user_arc();
        audit.outcome = Some(outcome);
        audit.risk = risk;
    }

    /// The stamps every result had before the gates existed: `tool`, `duration_ms`, `ts`.
    #[inline]
    pub(crate) fn put_timing(self, audit: &mut Audit, tool: Cow<'static, str>) {
        audit.tool = Some(tool);
        audit.duration_ms = Some(self.duration_ms);
        audit.ts = Some(self.ts);
    }
}

/// The tool's name for an audit: borrowed for free from a compiled tool.
pub(crate) fn tool_name(tool: &Tool) -> Cow<'static, str> {
    match tool.definition() {
        Some(def) => Cow::Borrowed(def.name()),
        None => Cow::Owned(tool.name().to_owned()),
    }
}

/// What a tool answered, checked before anyone reads it: its blocks against the limits (every
/// tool, failed results too), its value against its output schema (run-time, remote and
/// MCP-module tools only: a compiled tool's value is typed by construction), or, for such a
/// tool's failed result, against the error shape ([`failed_value`]). A result that fails
/// becomes the error.
#[inline(always)]
pub(super) fn check_output(
    tool: &Tool,
    limits: &crate::media::ContentLimits,
    outcome: &mut Result<ToolResult, ToolError>,
) {
    let Ok(result) = outcome else { return };
    if !result.blocks.is_empty()
        && let Err(refused) = crate::media::check_blocks(&result.blocks, limits)
    {
        *outcome = Err(ToolError::InvalidOutput {
            tool: String::new(),
            path: format!("blocks[{}]", refused.index),
            message: refused.message,
        });
        return;
    }
    let Some(validator) = tool.output_validator() else {
        return;
    };
    if !result.success {
        if let Err(error) = failed_value(result) {
            *outcome = Err(error);
        }
        return;
    }
    let invalid =
        validator
            .iter_errors(&result.content)
            .next()
            .map(|error| ToolError::InvalidOutput {
                tool: String::new(),
                path: crate::def::json_path(&error.instance_path().to_string()),
                message: breaks_rule(&error.schema_path().to_string()),
            });
    if let Some(error) = invalid {
        *outcome = Err(error);
    }
}

/// A failed result of a tool whose values are checked, made to keep to the error shape. An
/// output schema says what the tool answers when it succeeds; a failed result's value has
/// only the shape of an error to keep to: nothing, or `{"error": {"code": "...", "message":
/// "..."}}`, which is kept as exactly those two texts, each cut to
/// [`MAX_ERROR_BYTES`](crate::call::MAX_ERROR_BYTES) (as is the result's `message`). Whatever
/// else the value held (a field the schema would have refused, a secret) goes no further; a
/// value of any other shape is `invalid_output`, which names no part of it.
#[cold]
fn failed_value(result: &mut ToolResult) -> Result<(), ToolError> {
    use crate::call::{MAX_ERROR_BYTES, bounded_error_text};
    use serde_json::{Value, json};

    if let Some(message) = &mut result.message
        && message.len() > MAX_ERROR_BYTES
    {
        *message = bounded_error_text(message);
    }
    let error = match &result.content {
        Value::Null => return Ok(()),
        content => content.get("error"),
    };
    let text = |key: &str| error.and_then(|error| error.get(key)?.as_str());
    let (Some(code), Some(message)) = (text("code"), text("message")) else {
        return Err(ToolError::InvalidOutput {
            tool: String::new(),
            path: String::new(),
            message: "a failed result's value must be `{\"error\": {\"code\": \"...\", \"message\": \"...\"}}`, or none; this one is neither".to_owned(),
        });
    };
    let kept = json!({"error": {
        "code": bounded_error_text(code),
        "message": bounded_error_text(message),
    }});
    result.content = kept;
    Ok(())
}

/// Which rule of the output schema a value breaks, without the value itself: what reaches the
/// model says what was wrong, never what the tool answered.
fn breaks_rule(schema_path: &str) -> String {
    let keyword = schema_path.rsplit('/').next().unwrap_or_default();
    format!(
        "the value breaks the `{keyword}` rule of the declared output schema (at `{schema_path}`)"
    )
}
