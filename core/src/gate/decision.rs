//! [`Gate`]: the outside policy of stage 6 that an application writes, and its [`Decision`].

use async_trait::async_trait;

use crate::call::Ctx;
use crate::def::Tool;

/// A gate's verdict on one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may run.
    pub approved: bool,
    /// Why; shown to the model as the result's message when the call is blocked.
    pub reason: String,
}

impl Decision {
    /// Let the call run.
    pub fn approve() -> Self {
        Self {
            approved: true,
            reason: String::new(),
        }
    }
    /// Block the call, saying why.
    pub fn deny(reason: impl Into<String>) -> Self {
        Self {
            approved: false,
            reason: reason.into(),
        }
    }
}

/// An evaluation policy consulted before every call of a tool marked `requires_gate`.
///
/// Injected once with [`RegistryBuilder::gate`](crate::RegistryBuilder::gate). A gate that
/// errors or takes longer than the gate timeout (2 s by default) lets the call run with a
/// warning (fail-open), except for tools marked `gate_fail_closed`, which are refused.
///
/// ```
/// use tool_registry::def::Cost;
/// use tool_registry::gate::{async_trait, Decision, Gate};
/// use tool_registry::{Ctx, Tool};
///
/// struct NoExpensiveCallsForGuests;
///
/// #[async_trait]
/// impl Gate for NoExpensiveCallsForGuests {
///     async fn check(&self, tool: &Tool, ctx: &Ctx) -> Result<Decision, String> {
///         if tool.cost() == Cost::Expensive && ctx.user().is_none() {
///             return Ok(Decision::deny("expensive tools need a signed-in user"));
///         }
///         Ok(Decision::approve())
///     }
/// }
/// ```
#[async_trait]
pub trait Gate: Send + Sync {
    /// Decides one call. An `Err` is a failure of the gate itself, not a denial.
    async fn check(&self, tool: &Tool, ctx: &Ctx) -> Result<Decision, String>;
}
