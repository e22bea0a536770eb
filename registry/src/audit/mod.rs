//! The audit of calls: what is recorded, where it goes, the one function that stamps it, the
//! call's `tracing` span, and the clock it reads.
//!
//! | file | what |
//! | --- | --- |
//! | `record.rs` | [`Audit`] (on every result), [`AuditExtra`] (a tool's own entries), [`AuditRecord`] (what a sink receives) |
//! | `sink.rs` | [`AuditSink`], [`TracingAuditSink`] (the default), [`JsonLinesAuditSink`] |
//! | `stamp.rs` | stage 7 of a call: one clock reading stamps the result and fills the record; the outcome on the call's span |
//! | `span.rs` | the call's span, `execute_tool`, fielded as OpenTelemetry's generative-AI conventions ask |
//! | `clock.rs` | the counter (TSC) for durations and timestamps; the wall clock for expiries |

mod clock;
mod record;
mod sink;
mod span;
mod stamp;

pub(crate) use clock::{Tick, wall_now};
pub use record::{Audit, AuditExtra, AuditRecord};
pub use sink::{AuditSink, JsonLinesAuditSink, TracingAuditSink};
pub(crate) use span::CallSpan;
#[cfg(feature = "bench-internals")]
pub(crate) use stamp::Stamp;
pub(crate) use stamp::tool_name;
