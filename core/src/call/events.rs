//! Status events of a batch of calls.

use serde::Serialize;

/// What a batch run reports to its status callback
/// ([`Batch::on_event`](crate::exec::Batch::on_event)).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ToolEvent {
    /// The call at `index` passed its checks and its handler starts.
    Started {
        /// The position of the call in the batch.
        index: usize,
        /// The tool.
        tool: String,
    },
    /// The tool reported progress through [`Ctx::progress`](crate::Ctx::progress).
    Progress {
        /// The position of the call in the batch.
        index: usize,
        /// The tool.
        tool: String,
        /// What the tool said.
        message: String,
    },
    /// The call at `index` finished (successfully or not).
    Finished {
        /// The position of the call in the batch.
        index: usize,
        /// The tool, or the name asked for when there is no such tool.
        tool: String,
        /// `ok`, `failed` or an error code.
        outcome: String,
        /// How long it took, in milliseconds.
        duration_ms: f64,
    },
}
