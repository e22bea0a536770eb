//! [`Gates`]: what the waiting stages read, the stores and the gate the builder configured.
//! Each stage's step is a method of it, in the stage's own file.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::{ApprovalKey, ApprovalStore, Gate, RateLimitStore};

/// What the waiting stages read, as the registry's builder configured it: the evaluation gate,
/// the rate-limit store, the approval store and the key pending calls are signed with.
pub(crate) struct Gates {
    pub(crate) gate: Option<Arc<dyn Gate>>,
    pub(crate) gate_timeout: Duration,
    pub(crate) rate_limits: Arc<dyn RateLimitStore>,
    pub(crate) approvals: Arc<dyn ApprovalStore>,
    /// The application's key, if it gave one.
    pub(crate) approval_key: Option<ApprovalKey>,
    /// A key drawn for this registry, when neither the application nor the store has one.
    pub(crate) own_approval_key: OnceLock<ApprovalKey>,
    pub(crate) approval_ttl: Duration,
}
