//! The span of a call: one `tracing` span per call that goes through the call future, named and
//! fielded as OpenTelemetry's semantic conventions for generative AI describe a tool's execution
//! (`execute_tool`), so that `tracing-opentelemetry` exports it as such a span and a tool's own
//! spans and outgoing requests nest under it.
//!
//! | field | when | value |
//! | --- | --- | --- |
//! | `otel.name` | opened | `execute_tool {tool}`: the exported span's name |
//! | `otel.kind` | opened | `internal` |
//! | `gen_ai.operation.name` | opened | `execute_tool` |
//! | `gen_ai.tool.name` | opened | the tool's name, or the name asked for ([`Shown::name`]) |
//! | `gen_ai.tool.call.id` | opened | [`Ctx::call_id`], when there is one ([`Shown::call_id`]) |
//! | `gen_ai.tool.type` | opened | `function` |
//! | `user` | opened | the scope's user id, when there is one |
//! | `outcome` | closed | the audit's outcome code (`ok`, a [`ToolError::code`](crate::ToolError::code), ...) |
//! | `error.type` | closed, on failure | the same code |
//! | `otel.status_code` | closed, on failure | `ERROR` |
//!
//! The arguments and the result are never recorded: they are the model's and the tool's data,
//! and a span goes wherever the application's subscriber sends it.

use std::fmt::Display;

use tracing::field::Empty;
use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
use tracing::span::Entered;
use tracing::{Level, Span};

use crate::call::Ctx;
use crate::def::Tool;

/// The span's static name. The exported name is `otel.name`, which carries the tool's name.
const OPERATION: &str = "execute_tool";

/// The span of one call. A call that no subscriber traces holds nothing here, and pays one
/// check of the level filter to open it and one of a pointer to enter or close it: no field is
/// evaluated, nothing formatted or allocated, and the call future grows by one pointer, not by
/// the 32 bytes of a [`Span`] it would move with it.
#[derive(Default)]
pub(crate) struct CallSpan(Option<Box<Span>>);

impl CallSpan {
    /// The span of a call of `tool`.
    #[inline]
    pub(crate) fn tool(tool: &Tool, ctx: &Ctx) -> Self {
        if !wanted() {
            return Self(None);
        }
        Self::open(tool.name(), ctx)
    }

    /// The span of a call of a name that is no tool's.
    #[inline]
    pub(crate) fn asked(name: &str, ctx: &Ctx) -> Self {
        if !wanted() {
            return Self(None);
        }
        Self::open(Shown::name(name), ctx)
    }

    #[inline(never)]
    fn open(tool: impl Display, ctx: &Ctx) -> Self {
        let span = tracing::info_span!(
            target: "tool_registry",
            "execute_tool",
            otel.name = format_args!("{OPERATION} {tool}"),
            otel.kind = "internal",
            gen_ai.operation.name = OPERATION,
            gen_ai.tool.name = %tool,
            gen_ai.tool.call.id = ctx.call_id().map(Shown::call_id).map(tracing::field::display),
            gen_ai.tool.type = "function",
            user = ctx.user(),
            outcome = Empty,
            error.type = Empty,
            otel.status_code = Empty,
        );
        Self((!span.is_disabled()).then(|| Box::new(span)))
    }

    /// Makes the span the current one until the guard is dropped.
    #[inline]
    pub(crate) fn enter(&self) -> Option<Entered<'_>> {
        self.0.as_deref().map(Span::enter)
    }

    /// Writes how the call ended: the audit's outcome code, and for a call that failed, the
    /// same code as `error.type` and the `ERROR` status. Called by the audit stage only, with
    /// the code it sends to the sink.
    #[inline]
    pub(crate) fn close(&self, outcome: &str, failed: bool) {
        let Some(span) = self.0.as_deref() else {
            return;
        };
        span.record("outcome", outcome);
        if failed {
            span.record("error.type", outcome);
            span.record("otel.status_code", "ERROR");
        }
    }
}

impl Drop for CallSpan {
    /// Inline, so that dropping the span of a call no subscriber traces is one test of a null
    /// pointer where the call future is dropped or moves on, not a call into `Span`'s drop.
    #[inline]
    fn drop(&mut self) {
        if let Some(span) = self.0.take() {
            end(span);
        }
    }
}

/// Closes a span that was opened.
#[inline(never)]
fn end(span: Box<Span>) {
    drop(span);
}

/// The first check `info_span!` makes, made before anything is computed for it: whether a
/// subscriber may want an INFO span at all.
#[inline]
fn wanted() -> bool {
    Level::INFO <= STATIC_MAX_LEVEL && Level::INFO <= LevelFilter::current()
}

pub(crate) use crate::audit::Shown;
