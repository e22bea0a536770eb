//! Calls: one through the pipeline, many at once, and the calls that waited for approval.
//!
//! Every call takes these stages, in this order, and only these (the list is
//! [`gate::STAGES`](crate::gate), where each stage says to which tools it applies):
//!
//! 1. **scope**: resolve the name or alias; out of scope or switched off answers exactly like an
//!    unknown tool;
//! 2. **validate** the arguments into the tool's argument type (the handler is not started);
//! 3. **before hooks**: the `before` side of the registry's [hooks](crate::hook) that apply, in
//!    the order they were registered (go on, refuse, rewrite the arguments, ask for approval);
//! 4. **cache**, for `cache` tools: a kept result answers an identical call, and the next
//!    three stages, which guard running the tool, have nothing to guard (a person is still
//!    asked where a hook says so); identical calls that miss at once run the handler once;
//! 5. **rate limit**: per user and tool, `cooldown` and `daily_limit`;
//! 6. **eval gate**, for `requires_gate` tools;
//! 7. **confirmation**, for tools that need a person's approval: always, by their
//!    `confirm_if` for these arguments, or because a hook asked;
//! 8. **handler**, under its timeout, with panics caught;
//! 9. **after hooks**: the hooks' `after` side, in the reverse order (they may change the
//!    result);
//! 10. **result cap**, for `max_result_bytes` tools: a longer result shortened to fit;
//! 11. **audit**: the registry stamps the result, sends one record to the audit sink (naming
//!     each hook that acted) and writes the outcome on the call's span (see [Spans](#spans)).
//!
//! A stage that refuses the call gives back what earlier stages took (a rate-limit permit).
//! The stages that may wait (for a hook, a store, a gate, a person, a cache) are 3 to 7 and 9; a
//! tool to which none of them applies (no hook of the registry applies to it, and it has no
//! limits, gate, confirmation or cache) takes the direct path, decided once per tool from the
//! same list: the call future validates and starts the handler on its first poll, with nothing
//! boxed but the handler's own future.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | `Host`: what a call asks of the registry that runs it |
//! | `policy.rs` | `Policy`: what the builder configured and every stage reads; the defaults ([`DEFAULT_TIMEOUT`], ...) |
//! | `future.rs` | the call future: scope and validation on the first poll, then the direct or the staged path, then the audit |
//! | `staged.rs` | stages 2 to 9 in the order of the list, for tools a waiting stage applies to |
//! | `stamp.rs` | stage 11, audit: one clock reading stamps the result and fills the record |
//! | `span.rs` | the call's `execute_tool` span, fielded as OpenTelemetry's generative-AI conventions ask |
//! | `approve.rs` | the calls that waited, taken back with their token (for [`Registry::approve`](crate::Registry::approve), [`Call::approved`](crate::registry::Call::approved), [`Registry::deny`](crate::Registry::deny)) |
//! | `batch.rs` | [`Batch`]: many calls under a cap, `sequential` tools alone (for [`Registry::execute`](crate::Registry::execute)) |
//!
//! The registry's methods that call tools ([`Registry::call`](crate::Registry::call) and the
//! [`Call`](crate::registry::Call) it returns, [`Registry::execute`](crate::Registry::execute),
//! ...) are in `registry/calls.rs`; this module is generic over the registry, through `Host`. A
//! call's answer form is a type ([`Plain`], [`ForModel`]), chosen at compile time.
//!
//! # Spans
//!
//! Every call through the pipeline ([`Registry::call`](crate::Registry::call) in every answer
//! form, [`Registry::execute`](crate::Registry::execute), [`Registry::approve`](crate::Registry::approve),
//! [`Call::approved`](crate::registry::Call::approved), the command line) is one `tracing` span, target
//! `tool_registry`, level INFO, named and fielded as OpenTelemetry's semantic conventions for
//! generative AI describe a tool's execution, so that `tracing-opentelemetry` exports it as one:
//!
//! | field | value |
//! | --- | --- |
//! | span name | `execute_tool` |
//! | `otel.name` | `execute_tool {tool}`, the name the span is exported under |
//! | `otel.kind` | `internal` |
//! | `gen_ai.operation.name` | `execute_tool` |
//! | `gen_ai.tool.name` | the tool's name; for a name no tool has, the name asked for, escaped and cut at 64 characters |
//! | `gen_ai.tool.call.id` | [`Ctx::call_id`](crate::Ctx::call_id), when the call has one ([`ToolCall::id`](crate::ToolCall::id) in a batch), escaped and cut at 128 characters |
//! | `gen_ai.tool.type` | `function` |
//! | `user` | the scope's user id, when there is one |
//! | `outcome` | the audit's outcome code: `ok`, a [`ToolError::code`], or a tool's own |
//! | `error.type` | the same code, when the call failed: it ended in an error or an unsuccessful result |
//! | `otel.status_code` | `ERROR`, when the call failed |
//!
//! The span opens when the name is resolved, on the call future's first poll, as a child of the
//! span current then; the audit stage writes `outcome`, `error.type` and the status in the same
//! place it stamps the result and fills the record, and the span ends with the call. From
//! validation to the audit it is the current span on every poll, so a tool's own spans and
//! events, and an HTTP client that reads the OpenTelemetry context to send a `traceparent`
//! header, find it with [`tracing::Span::current`]; a `#[tool(blocking)]` handler runs inside it
//! on the blocking pool too. The default audit sink's event is inside it. Arguments and results
//! are never recorded on it.
//!
//! Without a subscriber that wants INFO spans, the span costs one check of the level filter and
//! a few tests of a null pointer per call. Calls that never run (those past a batch's
//! `max_calls`, and [`Registry::deny`](crate::Registry::deny)) are audited without a span; a call future dropped
//! before it ends closes its span without an `outcome`.
//!
//! # Limits
//!
//! Before stage 2 reads the arguments, they are measured: the argument text may be at most the
//! tool's [`max_args_bytes`](crate::def::ToolDef::max_args_bytes) long
//! ([`ToolError::ArgumentsTooLarge`]), and arrays and objects may nest at most
//! [`MAX_ARGS_DEPTH`](crate::call::MAX_ARGS_DEPTH) levels ([`ToolError::ArgumentsTooDeep`]). A
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

use std::time::Duration;

use crate::call::{Ctx, Handler, ToolArgs, ToolError, TypeMap};
use crate::def::Tool;
use crate::discovery::Meta;
use crate::scope::Scope;

mod approve;
mod batch;
mod future;
mod policy;
mod span;
mod staged;
mod stamp;

pub(crate) use approve::take_pending;
pub use batch::Batch;
pub(crate) use batch::execute_batch;
pub use future::{Answer, ForModel, Plain};
pub(crate) use future::{CallFuture, run_as};
pub use policy::{
    APPROVAL_TTL, DEFAULT_TIMEOUT, GATE_TIMEOUT, MAX_CALLS, MAX_CONCURRENCY, SLOW_TIMEOUT,
};
pub(crate) use policy::{Policy, Timeouts};
pub(crate) use span::CallSpan;
#[cfg(feature = "bench-internals")]
pub(crate) use staged::validate;
pub(crate) use stamp::Stamp;
pub(crate) use stamp::tool_name;

/// Whether the confirmation stage already happened for this call: not yet, given by the
/// application, or by a person's approval of the token (which the call's audit names).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Confirmation<'a> {
    Required,
    Given,
    Approved(&'a str),
}

/// What a call asks of the registry that runs it, when it starts: the pipeline takes these as
/// arguments instead of reaching up to the registry, so the registry is built on the pipeline
/// and not the other way round. [`Registry`](crate::Registry) is the one host; every function
/// of this module is generic over it and compiled for it alone.
pub(crate) trait Host: Sync {
    /// The tool `name` resolves to for `scope` in the current snapshot, its time limit, and
    /// which of the registry's hooks apply to it (a bit each): stage 1, scope (`None`:
    /// unknown or hidden, alike).
    fn resolve(&self, name: &str, scope: &Scope) -> Option<(Tool, Duration, u64)>;
    /// A name `scope` may see that is close to `name`, for an unknown tool's error.
    fn suggest(&self, name: &str, scope: &Scope) -> Option<String>;
    /// The module of `name` (`nomodule` of `nomodule.tool`) when `scope` may see no tool of
    /// it, for an unknown tool's error.
    fn unknown_module(&self, name: &str, scope: &Scope) -> Option<String>;
    /// What the builder configured: gates, stores, the audit sink, limits.
    fn policy(&self) -> &Policy;
    /// The application's state, handed to every handler.
    fn state(&self) -> &TypeMap;
    /// Validation of a call of one of the registry's meta-tools (see
    /// [`discovery`](crate::discovery)), which the registry answers itself.
    fn prepare_meta<'a>(
        &'a self,
        meta: Meta,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
    ) -> Result<Handler<'a>, ToolError>;
}
