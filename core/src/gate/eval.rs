//! Stage 6, eval gate: an outside policy ([`Gate`](super::Gate)) that approves or blocks calls of
//! `requires_gate` tools, under the gate timeout.

use std::borrow::Cow;

use super::Gates;
use crate::call::with_timeout;
use crate::call::{Ctx, ToolError, ToolResult};
use crate::def::Tool;

impl Gates {
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
