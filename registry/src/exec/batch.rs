//! Many calls at once: concurrency under a cap, `sequential` tools alone, results in call order.

use std::sync::Arc;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ToolEvent;
use crate::audit::Tick;
use crate::call::{Ctx, EventSink, ToolArgs, ToolError, ToolResult};
use crate::def::Tool;
use crate::registry::Registry;

/// One call a model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call, echoed back with its result.
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
    /// of its calls run (32 by default); each call after those is answered with
    /// [`ToolError::TooManyCalls`] and does not run.
    pub async fn execute_all(
        &self,
        calls: impl IntoIterator<Item = ToolCall>,
        ctx: &Ctx,
    ) -> Vec<ToolResult> {
        self.execute_batch(calls.into_iter().collect(), ctx, None)
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
        self.execute_batch(calls.into_iter().collect(), ctx, Some(Arc::new(on_event)))
            .await
    }

    async fn execute_batch(
        &self,
        calls: Vec<ToolCall>,
        ctx: &Ctx,
        events: Option<EventSink>,
    ) -> Vec<ToolResult> {
        let mut results: Vec<Option<ToolResult>> = vec![None; calls.len()];
        let cap = self.policy.max_concurrency;
        let mut calls = calls;
        let over = calls.split_off(calls.len().min(self.policy.max_calls));
        for (offset, call) in over.into_iter().enumerate() {
            results[self.policy.max_calls + offset] = Some(self.not_run(&call.name, ctx));
            crate::call::dispose_args(ToolArgs::Value(call.arguments));
        }
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
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|| ToolResult::failure("the call did not run")))
            .collect()
    }

    fn is_sequential(&self, call: &ToolCall, ctx: &Ctx) -> bool {
        self.get_for(&call.name, ctx.scope())
            .is_some_and(|def| def.sequential())
    }

    async fn one(
        &self,
        index: usize,
        call: ToolCall,
        ctx: &Ctx,
        events: Option<EventSink>,
    ) -> (usize, ToolResult) {
        let def = self.get_for(&call.name, ctx.scope());
        let scoped_ctx;
        let ctx = match (&events, &def) {
            (Some(sink), Some(def)) => {
                sink(ToolEvent::Started {
                    index,
                    tool: def.name().to_owned(),
                });
                scoped_ctx = ctx.with_progress(index, Arc::from(def.name()), Arc::clone(sink));
                &scoped_ctx
            }
            _ => ctx,
        };
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
}
