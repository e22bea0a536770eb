//! Stage 4, eval gate: an outside policy ([`Gate`]) that approves or blocks calls of
//! `requires_gate` tools, under the gate timeout.

use std::borrow::Cow;

use async_trait::async_trait;

use crate::call::with_timeout;
use crate::call::{Ctx, ToolError, ToolResult};
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

impl super::Gates {
    /// The registry's gate decides the call: `Ok(Some(result))` when it blocks it, `Ok(None)`
    /// when the call goes on (approved, or the gate failed and the tool is fail-open).
    pub(crate) async fn eval_gate(
        &self,
        def: &Tool,
        ctx: &Ctx,
    ) -> Result<Option<ToolResult>, ToolError> {
        let Some(gate) = &self.gate else {
            return Ok(None);
        };
        let verdict = match with_timeout(self.gate_timeout, gate.check(def, ctx)).await {
            Some(Ok(decision)) => Ok(decision),
            Some(Err(error)) => Err(format!("the gate failed: {error}")),
            None => Err(format!(
                "the gate took longer than {}",
                humantime::format_duration(self.gate_timeout)
            )),
        };
        match verdict {
            Ok(decision) if decision.approved => Ok(None),
            Ok(decision) => {
                let mut result = ToolResult::failure(decision.reason);
                result.audit.outcome = Some(Cow::Borrowed("denied_by_gate"));
                Ok(Some(result))
            }
            Err(reason) if def.gate_fail_closed() => Err(ToolError::GateUnavailable {
                tool: def.name().to_owned(),
                reason,
            }),
            Err(reason) => {
                tracing::warn!(target: "tool_registry::gate", tool = def.name(), %reason, "evaluation gate unavailable; the call runs (fail-open)");
                Ok(None)
            }
        }
    }
}
