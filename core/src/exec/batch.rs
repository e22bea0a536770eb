//! Many calls at once: concurrency under a cap, `sequential` tools alone, results in call order.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;

use super::{Confirmation, ForModel, Host, run_as};
use crate::audit::Tick;
use crate::call::{Ctx, EventSink, ToolArgs, ToolCall, ToolError, ToolEvent, ToolResult};
use crate::parse::Parsed;

/// The calls of one model output, as [`Registry::execute`](crate::Registry::execute) runs
/// them: the calls, how many more the output held that were counted and not kept, and who
/// hears of each call as it runs.
///
/// A `Vec` or an array of [`ToolCall`]s is a batch, an iterator of them is collected into one
/// (or given to [`Batch::new`]); so is a parse ([`Parsed`]), whose calls of unknown tools are left out and whose calls past its
/// cap ([`Parsed::left_out`]) are reported with those past the registry's.
///
/// ```
/// use serde_json::json;
/// use tool_registry::ToolCall;
/// use tool_registry::call::ToolEvent;
/// use tool_registry::exec::Batch;
///
/// let batch = Batch::from(vec![ToolCall::new("search", json!({"query": "rust"}))])
///     .on_event(|event| if let ToolEvent::Started { tool, .. } = event { println!("{tool}") });
/// assert_eq!(batch.len(), 1);
/// ```
#[derive(Default)]
pub struct Batch {
    calls: Vec<ToolCall>,
    /// Calls of the same output that were counted, not kept.
    left_out: usize,
    events: Option<EventSink>,
}

impl Batch {
    /// The batch of `calls`, in call order.
    pub fn new(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        calls.into_iter().collect()
    }

    /// Reports [`ToolEvent`]s to `on_event`: `Started` when a call starts, `Progress` when a
    /// tool calls [`Ctx::progress`], `Finished` for every call.
    pub fn on_event(self, on_event: impl Fn(ToolEvent) + Send + Sync + 'static) -> Self {
        Self {
            events: Some(Arc::new(on_event)),
            ..self
        }
    }

    /// The calls kept, in call order.
    pub fn calls(&self) -> &[ToolCall] {
        &self.calls
    }

    /// How many calls the batch holds (those counted and not kept aside).
    pub fn len(&self) -> usize {
        self.calls.len()
    }

    /// Whether the batch holds no call.
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }
}

impl FromIterator<ToolCall> for Batch {
    fn from_iter<I: IntoIterator<Item = ToolCall>>(calls: I) -> Self {
        Self {
            calls: calls.into_iter().collect(),
            ..Self::default()
        }
    }
}

impl From<Vec<ToolCall>> for Batch {
    fn from(calls: Vec<ToolCall>) -> Self {
        Self {
            calls,
            ..Self::default()
        }
    }
}

impl<const N: usize> From<[ToolCall; N]> for Batch {
    fn from(calls: [ToolCall; N]) -> Self {
        calls.into_iter().collect()
    }
}

impl From<&Parsed> for Batch {
    /// The calls a parse found (calls of unknown tools, in [`Parsed::unknown`], are not run),
    /// with the calls it counted past its cap.
    fn from(parsed: &Parsed) -> Self {
        Self {
            calls: parsed.calls.iter().cloned().map(ToolCall::from).collect(),
            left_out: parsed.left_out.calls,
            events: None,
        }
    }
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("calls", &self.calls)
            .field("left_out", &self.left_out)
            .field("on_event", &self.events.is_some())
            .finish()
    }
}

/// Runs `batch` on `host`.
pub(crate) async fn execute_batch<H: Host>(host: &H, batch: Batch, ctx: &Ctx) -> Vec<ToolResult> {
    let Batch {
        calls,
        left_out,
        events,
    } = batch;
    let cap = host.policy().max_concurrency;
    let mut calls = calls;
    let over = calls.split_off(calls.len().min(host.policy().max_calls));
    let left_out = left_out + over.len();
    let first_left_out = over.first().map(|call| call.name.clone());
    for call in over {
        crate::call::dispose_args(ToolArgs::Value(call.arguments));
    }
    let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
    let mut calls = calls.into_iter().enumerate().peekable();
    while calls.peek().is_some() {
        // The next segment: one sequential call, or a run of concurrent ones.
        let first_sequential = calls
            .peek()
            .is_some_and(|(_, call)| is_sequential(host, call, ctx));
        let mut segment = Vec::new();
        if first_sequential {
            segment.extend(calls.next());
        } else {
            while let Some(next) = calls.next_if(|(_, call)| !is_sequential(host, call, ctx)) {
                segment.push(next);
            }
        }
        let mut pending = segment.into_iter();
        let mut running = FuturesUnordered::new();
        for (index, call) in pending.by_ref().take(cap) {
            running.push(one(host, index, call, ctx, events.clone()));
        }
        while let Some((index, result)) = running.next().await {
            results[index] = Some(result);
            if let Some((index, call)) = pending.next() {
                running.push(one(host, index, call, ctx, events.clone()));
            }
        }
    }
    let mut results: Vec<ToolResult> = results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| ToolResult::failure("the call did not run")))
        .collect();
    if left_out > 0 {
        results.push(not_run(host, first_left_out.as_deref(), left_out, ctx));
    }
    results
}

fn is_sequential<H: Host>(host: &H, call: &ToolCall, ctx: &Ctx) -> bool {
    host.resolve(&call.name, ctx.scope())
        .is_some_and(|(def, ..)| def.sequential())
}

async fn one<H: Host>(
    host: &H,
    index: usize,
    mut call: ToolCall,
    ctx: &Ctx,
    events: Option<EventSink>,
) -> (usize, ToolResult) {
    let def = host.resolve(&call.name, ctx.scope()).map(|(def, ..)| def);
    let progress = match (&events, &def) {
        (Some(sink), Some(def)) => {
            sink(ToolEvent::Started {
                index,
                tool: def.name().to_owned(),
            });
            Some((index, Arc::from(def.name()), Arc::clone(sink)))
        }
        _ => None,
    };
    let call_ctx = ctx.for_call(call.id.take(), progress);
    let ctx = call_ctx.as_ref().unwrap_or(ctx);
    let result = run_as::<ForModel, H>(
        host,
        &call.name,
        ToolArgs::Value(call.arguments),
        ctx,
        Confirmation::Required,
    )
    .await;
    if let Some(sink) = &events {
        sink(ToolEvent::Finished {
            index,
            tool: def.map_or(call.name, |d| d.name().to_owned()),
            outcome: result
                .audit
                .outcome
                .as_deref()
                .unwrap_or("failed")
                .to_owned(),
            // The registry's own stamp: the event and the audit record agree.
            duration_ms: result.audit.duration_ms.unwrap_or_default(),
        });
    }
    (index, result)
}

/// The one answer for the calls of a batch that are not run at all (over the batch's
/// `max_calls`): [`ToolError::TooManyCalls`] as a result, audited and stamped once, under
/// the name of the first call left out when it is known.
pub(crate) fn not_run<H: Host>(
    host: &H,
    first: Option<&str>,
    left_out: usize,
    ctx: &Ctx,
) -> ToolResult {
    let started = Tick::now();
    let name = first.unwrap_or_default();
    let tool = host.resolve(name, ctx.scope()).map(|(tool, ..)| tool);
    let error = ToolError::TooManyCalls {
        limit: host.policy().max_calls,
        left_out,
    };
    host.policy()
        .stamped_error(name, tool.as_ref(), started, ctx, error)
}
