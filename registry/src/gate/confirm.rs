//! Stage 5, confirmation: a call of a tool that needs a person's approval is kept, signed, under
//! a fresh token, and answered with [`ToolError::NeedsApproval`]; the calls that come back with
//! the token are in [`exec/approve.rs`](crate::exec).

use super::{ApprovalKey, PendingCall, new_token, to_millis};
use crate::audit::wall_now;
use crate::call::{Ctx, ToolError};
use crate::def::Tool;
use crate::registry::Registry;

impl Registry {
    /// Stage 5: keeps the call, signed, under a new token, and answers
    /// [`ToolError::NeedsApproval`] with it; `Err` when the call cannot be kept.
    pub(crate) fn hold(
        &self,
        def: &Tool,
        ctx: &Ctx,
        arguments: String,
    ) -> Result<ToolError, ToolError> {
        let misconfigured = |message: String| ToolError::Misconfigured {
            tool: def.name().to_owned(),
            message,
        };
        let token = new_token().map_err(misconfigured)?;
        let mut pending = PendingCall {
            tool: def.name().to_owned(),
            user: ctx.user().map(str::to_owned),
            arguments,
            expires_at: to_millis(wall_now() + self.policy.approval_ttl),
            mac: String::new(),
        };
        pending.mac = self
            .approval_key()
            .map_err(misconfigured)?
            .sign(&token, &pending);
        self.policy
            .approvals
            .put(&token, pending)
            .map_err(misconfigured)?;
        Ok(ToolError::NeedsApproval {
            tool: def.name().to_owned(),
            token,
        })
    }

    /// The key pending calls are signed with: the application's, else the store's, else one
    /// drawn for this registry.
    pub(crate) fn approval_key(&self) -> Result<ApprovalKey, String> {
        let policy = &self.policy;
        if let Some(key) = &policy.approval_key {
            return Ok(key.clone());
        }
        if let Some(key) = policy.approvals.key()? {
            return Ok(key);
        }
        if let Some(key) = policy.own_approval_key.get() {
            return Ok(key.clone());
        }
        let key = ApprovalKey::random()?;
        Ok(policy.own_approval_key.get_or_init(|| key).clone())
    }
}
