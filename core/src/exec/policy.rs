//! What the builder configured and every stage of a call reads: the gate, the stores, the
//! audit sink, the timeouts and the batch limits; and their defaults.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::audit::AuditSink;
use crate::def::Tool;
use crate::gate::Gates;
use crate::scope::{AllowLists, module_of};

/// The timeout of tools without one of their own.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The timeout of tools and modules listed as slow.
pub const SLOW_TIMEOUT: Duration = Duration::from_secs(120);
/// How long an evaluation gate may take before the call goes on without it.
pub const GATE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an approval token stays valid.
pub const APPROVAL_TTL: Duration = Duration::from_secs(15 * 60);
/// How many calls of one batch run at once.
pub const MAX_CONCURRENCY: usize = 8;
/// How many calls of one batch (one model output) run at all; the rest are answered with
/// [`ToolError::TooManyCalls`](crate::ToolError::TooManyCalls).
pub const MAX_CALLS: usize = 32;

/// How long calls may take: one policy, applied to every tool as it joins.
pub(crate) struct Timeouts {
    pub(crate) default: Duration,
    pub(crate) slow: Duration,
    pub(crate) slow_names: BTreeSet<String>,
}

/// What the builder configured: every stage of the pipeline reads it.
pub(crate) struct Policy {
    pub(crate) guest_modules: Option<Vec<String>>,
    pub(crate) allow_lists: AllowLists,
    pub(crate) timeouts: Timeouts,
    pub(crate) gates: Gates,
    pub(crate) audit: Arc<dyn AuditSink>,
    pub(crate) log_annotations: bool,
    pub(crate) max_concurrency: usize,
    pub(crate) max_calls: usize,
    /// Arguments are read strictly: none of the lenient readings of `call::lenient`.
    pub(crate) strict_arguments: bool,
    /// The bounds on what tools return.
    pub(crate) content_limits: crate::media::ContentLimits,
    /// How deferred tools are found.
    pub(crate) discovery: crate::discovery::Discovery,
    /// The hooks around every call, in the order they were registered.
    pub(crate) hooks: crate::hook::HookSet,
    /// Where `cache` tools keep their results.
    pub(crate) results: Arc<dyn crate::hook::ResultCache>,
    /// The `cache` calls running, one per key.
    pub(crate) flights: crate::hook::Flights,
}

impl Timeouts {
    pub(crate) fn of(&self, tool: &Tool) -> Duration {
        tool.timeout().unwrap_or_else(|| {
            let name = tool.name();
            if self.slow_names.contains(name) || self.slow_names.contains(module_of(name)) {
                self.slow
            } else {
                self.default
            }
        })
    }
}
