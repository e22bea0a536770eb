//! Stage 5 from the other side: approving, denying, or calling again with the token of a call
//! that waited for a person.

use serde_json::Value;

use super::Confirmation;
use crate::audit::{Tick, wall_now};
use crate::call::{Ctx, ToolArgs, ToolError, ToolResult, dispose_args};
use crate::gate::{PendingCall, canonical_args};
use crate::registry::Registry;

impl Registry {
    /// Runs a call that waited for approval: the token must exist, not be expired, belong to
    /// `ctx`'s user, name a tool `ctx`'s scope may use, and carry the registry's MAC over its
    /// content ([`ToolError::ApprovalAltered`] if not). A token that passes is used up either
    /// way the call ends; one that does not is left for its owner.
    pub async fn approve(&self, token: &str, ctx: &Ctx) -> Result<ToolResult, ToolError> {
        let pending = self.take_pending(token, ctx, |_| Ok(())).await?;
        let args: Value =
            serde_json::from_str(&pending.arguments).map_err(|e| ToolError::ApprovalRefused {
                reason: format!("the stored arguments are unreadable: {e}"),
            })?;
        self.run(
            &pending.tool,
            ToolArgs::Value(args),
            ctx,
            Confirmation::Given,
        )
        .await
    }

    /// Calls a tool with an approval token from an earlier call: the token must be for this
    /// tool, this user and exactly these arguments (after validation; key order and whitespace
    /// do not matter), with the checks of [`approve`](Self::approve).
    pub async fn call_approved<'a>(
        &self,
        name: &str,
        args: impl Into<ToolArgs<'a>>,
        token: &str,
        ctx: &Ctx,
    ) -> Result<ToolResult, ToolError> {
        let args = args.into();
        let taken = self
            .take_pending(token, ctx, |pending| {
                let same_tool = self
                    .get_for(name, ctx.scope())
                    .is_some_and(|def| def.name() == pending.tool);
                let same_args = canonical_args(&args).is_some_and(|text| text == pending.arguments);
                match (same_tool, same_args) {
                    (true, true) => Ok(()),
                    // A mismatch does not use the token up: its owner can still approve it.
                    (true, false) => Err(refused("the token was issued for different arguments")),
                    (false, _) => Err(refused("the token was issued for another tool")),
                }
            })
            .await;
        if let Err(error) = taken {
            dispose_args(args);
            return Err(error);
        }
        self.run(name, args, ctx, Confirmation::Given).await
    }

    /// Refuses a call that waited for approval, with the checks of [`approve`](Self::approve);
    /// the token is used up. Returns the result to hand back to the model (unsuccessful, with
    /// the reason); audited with outcome `denied`.
    pub async fn deny(
        &self,
        token: &str,
        reason: &str,
        ctx: &Ctx,
    ) -> Result<ToolResult, ToolError> {
        let pending = self.take_pending(token, ctx, |_| Ok(())).await?;
        let denied = ToolError::Denied {
            tool: pending.tool.clone(),
            reason: reason.to_owned(),
        };
        let def = self.get(&pending.tool);
        Ok(self.stamped_error(&pending.tool, def.as_ref(), Tick::now(), ctx, denied))
    }

    /// Looks at the pending call of `token` without taking it, checks its MAC, its user, that
    /// `ctx`'s scope may use its tool (the one visibility predicate: a hidden tool's token is
    /// as unknown as a made-up one) and `also`; only then takes it, atomically, so that a
    /// refused caller leaves the token to its owner and of concurrent approvals one wins.
    async fn take_pending(
        &self,
        token: &str,
        ctx: &Ctx,
        also: impl FnOnce(&PendingCall) -> Result<(), ToolError>,
    ) -> Result<PendingCall, ToolError> {
        const UNKNOWN: &str = "unknown or already used token";
        let store = |reason: String| ToolError::ApprovalRefused {
            reason: format!("the approval store is unavailable ({reason}); try again shortly"),
        };
        let approvals = &self.policy.approvals;
        let pending = approvals
            .get(token)
            .await
            .map_err(store)?
            .ok_or_else(|| refused(UNKNOWN))?;
        if !self
            .approval_key()
            .await
            .map_err(store)?
            .verify(token, &pending)
        {
            let reason = if pending.mac.is_empty() {
                "it carries no MAC"
            } else {
                "its MAC does not match its tool, user, arguments and expiry"
            };
            return Err(ToolError::ApprovalAltered {
                reason: reason.to_owned(),
            });
        }
        if pending.user.as_deref() != ctx.user() {
            return Err(refused("the token belongs to another user"));
        }
        if self.resolve(&pending.tool, ctx.scope()).is_none() {
            return Err(refused(UNKNOWN));
        }
        also(&pending)?;
        let taken = approvals
            .take(token)
            .await
            .map_err(store)?
            .ok_or_else(|| refused(UNKNOWN))?;
        if taken != pending {
            return Err(ToolError::ApprovalAltered {
                reason: "it changed while it was being approved".to_owned(),
            });
        }
        if taken.expires_at <= wall_now() {
            return Err(refused(
                "the token has expired; call the tool again for a new one",
            ));
        }
        Ok(taken)
    }
}

/// An approval refused for `reason`.
fn refused(reason: &str) -> ToolError {
    ToolError::ApprovalRefused {
        reason: reason.to_owned(),
    }
}
