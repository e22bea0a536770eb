//! Many calls at once: concurrency under a cap, `sequential` tools alone, results in call order.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ToolEvent;
use crate::audit::Tick;
use crate::call::{Ctx, EventSink, ToolArgs, ToolError, ToolResult};
use crate::parse::Parsed;
use crate::registry::Registry;

/// One call a model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call, echoed back with its result. [`Registry::execute_all`]
    /// hands it to the call as [`Ctx::call_id`], and the call's span carries it
    /// (`gen_ai.tool.call.id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name or alias.
    pub name: String,
    /// The arguments as the model wrote them.
    #[serde(default)]
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }
}

impl Registry {
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
        self.execute_batch(calls.into_iter().collect(), 0, ctx, None)
            .await
    }

    /// Like [`Registry::execute_all`], reporting [`ToolEvent`]s to `on_event`: `Started` when a
    /// call starts, `Progress` when a tool calls [`Ctx::progress`], `Finished` for every call.
    pub async fn execute_all_with(
        &self,
        calls: impl IntoIterator<Item = ToolCall>,
        ctx: &Ctx,
        on_event: impl Fn(ToolEvent) + Send + Sync + 'static,
    ) -> Vec<ToolResult> {
        self.execute_batch(
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
        self.execute_batch(calls, parsed.left_out.calls, ctx, None)
            .await
    }

    /// The most calls one model output runs ([`RegistryBuilder::max_calls`](crate::registry::RegistryBuilder::max_calls)):
    /// the cap to read an output with ([`Options::max_calls`](crate::parse::Options::max_calls)).
    pub fn max_calls(&self) -> usize {
        self.policy.max_calls
    }

    /// The batch `calls`, and `left_out` calls of the same output that were counted, not kept.
    async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        left_out: usize,
        ctx: &Ctx,
        events: Option<EventSink>,
    ) -> Vec<ToolResult> {
        let cap = self.policy.max_concurrency;
        let mut calls = calls;
        let over = calls.split_off(calls.len().min(self.policy.max_calls));
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
                .is_some_and(|(_, call)| self.is_sequential(call, ctx));
            let mut segment = Vec::new();
            if first_sequential {
                segment.extend(calls.next());
            } else {
                while let Some(next) = calls.next_if(|(_, call)| !self.is_sequential(call, ctx)) {
                    segment.push(next);
                }
            }
            let mut pending = segment.into_iter();
            let mut running = FuturesUnordered::new();
            for (index, call) in pending.by_ref().take(cap) {
                running.push(self.one(index, call, ctx, events.clone()));
            }
            while let Some((index, result)) = running.next().await {
                results[index] = Some(result);
                if let Some((index, call)) = pending.next() {
                    running.push(self.one(index, call, ctx, events.clone()));
                }
            }
        }
        let mut results: Vec<ToolResult> = results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| ToolResult::failure("the call did not run")))
            .collect();
        if left_out > 0 {
            results.push(self.not_run(first_left_out.as_deref(), left_out, ctx));
        }
        results
    }

    fn is_sequential(&self, call: &ToolCall, ctx: &Ctx) -> bool {
        self.get_for(&call.name, ctx.scope())
            .is_some_and(|def| def.sequential())
    }

    async fn one(
        &self,
        index: usize,
        mut call: ToolCall,
        ctx: &Ctx,
        events: Option<EventSink>,
    ) -> (usize, ToolResult) {
        let def = self.get_for(&call.name, ctx.scope());
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
        let result = self
            .call_for_model(&call.name, ToolArgs::Value(call.arguments), ctx)
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
    pub(crate) fn not_run(&self, first: Option<&str>, left_out: usize, ctx: &Ctx) -> ToolResult {
        let started = Tick::now();
        let name = first.unwrap_or_default();
        let tool = self.get_for(name, ctx.scope());
        let error = ToolError::TooManyCalls {
            limit: self.policy.max_calls,
            left_out,
        };
        self.stamped_error(name, tool.as_ref(), started, ctx, error)
    }
}
