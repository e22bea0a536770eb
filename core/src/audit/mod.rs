//! The audit of calls: what is recorded, where it goes, and the clock it reads. The stage that
//! stamps a call and its `tracing` span are the pipeline's ([`exec`](crate::exec)).
//!
//! | file | what |
//! | --- | --- |
//! | `record.rs` | [`Audit`] (on every result), [`AuditExtra`] (a tool's own entries), [`AuditRecord`] (what a sink receives, the audit trail's schema), [`Acted`] (a hook that acted on the call), [`CacheAnswer`], [`approval_id`] |
//! | `sink.rs` | [`AuditSink`], [`TracingAuditSink`] (the default), [`JsonLinesAuditSink`] |
//! | `shown.rs` | `Shown`: text from a model (a name asked for, a call's id) escaped and cut, as a log line or a span shows it |
//! | `clock.rs` | the counter (TSC) for durations and timestamps; the wall clock for expiries |

mod clock;
mod record;
mod shown;
mod sink;

pub(crate) use clock::{Tick, wall_now};
pub(crate) use record::refusing_gate;
pub use record::{Acted, Audit, AuditExtra, AuditRecord, CacheAnswer, approval_id};
pub(crate) use shown::Shown;
pub use sink::{AuditSink, JsonLinesAuditSink, TracingAuditSink};
