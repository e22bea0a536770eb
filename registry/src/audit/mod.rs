//! The audit of calls: what is recorded, where it goes, the one function that stamps it, and
//! the clock it reads.
//!
//! | file | what |
//! | --- | --- |
//! | `record.rs` | [`Audit`] (on every result), [`AuditExtra`] (a tool's own entries), [`AuditRecord`] (what a sink receives) |
//! | `sink.rs` | [`AuditSink`], [`TracingAuditSink`] (the default), [`JsonLinesAuditSink`] |
//! | `stamp.rs` | stage 7 of a call: one clock reading stamps the result and fills the record |
//! | `clock.rs` | the counter (TSC) for durations and timestamps; the wall clock for expiries |

mod clock;
mod record;
mod sink;
mod stamp;

pub(crate) use clock::{Tick, wall_now};
pub use record::{Audit, AuditExtra, AuditRecord};
pub use sink::{AuditSink, JsonLinesAuditSink, TracingAuditSink};
#[cfg(feature = "bench-internals")]
pub(crate) use stamp::Stamp;
pub(crate) use stamp::tool_name;
