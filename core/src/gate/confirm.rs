//! Stage 7, confirmation: a call of a tool that needs a person's approval is kept, signed, under
//! a fresh token, and answered with [`ToolError::NeedsApproval`]; the calls that come back with
//! the token are in [`exec/approve.rs`](crate::exec).

use super::Gates;
use super::{ApprovalKey, PendingCall, new_token, to_millis};
use crate::audit::wall_now;
use crate::call::{Ctx, ToolError};
use crate::def::Tool;

impl Gates {
    /// Stage 7: keeps the call, signed, under a new token, and answers
    /// [`ToolError::NeedsApproval`] with it; `Err` when the call cannot be kept.
    pub(crate) async fn hold(
        &self,
        def: &Tool,
        ctx: &Ctx,
        arguments: String,
    ) -> Result<ToolError, ToolError> {
        let misconfigured = |message: String| ToolError::Misconfigured {
            tool: def.name().to_owned(),
            message,
        };
        let unavailable = |reason: String| ToolError::StoreUnavailable {
            tool: def.name().to_owned(),
            store: "approval store".to_owned(),
            reason,
        };
        let token = new_token().map_err(misconfigured)?;
        let mut pending = PendingCall {
            tool: def.name().to_owned(),
            user: ctx.user().map(str::to_owned),
            arguments,
            expires_at: to_millis(wall_now() + self.approval_ttl),
            mac: String::new(),
        };
        pending.mac = self
            .approval_key()
            .await
            .map_err(unavailable)?
            .sign(&token, &pending);
        self.approvals
            .put(&token, pending)
            .await
            .map_err(unavailable)?;
        Ok(ToolError::NeedsApproval {
            tool: def.name().to_owned(),
            token,
        })
    }

    /// The key pending calls are signed with: the application's, else the store's, else one
    /// drawn for this registry.
    pub(crate) async fn approval_key(&self) -> Result<ApprovalKey, String> {
        let policy = self;
        if let Some(key) = &policy.approval_key {
            return Ok(key.clone());
        }
        if let Some(key) = policy.approvals.key().await? {
            return Ok(key);
        }
        if let Some(key) = policy.own_approval_key.get() {
            return Ok(key.clone());
        }
        let key = ApprovalKey::random()?;
        Ok(policy.own_approval_key.get_or_init(|| key).clone())
    }
}
