//! Stage 7 from the other side: approving, denying, or calling again with the token of a call
//! that waited for a person.

use super::Host;
use crate::audit::wall_now;
use crate::call::{Ctx, ToolError};
use crate::gate::PendingCall;

/// Looks at the pending call of `token` without taking it, checks its MAC, its user, that
/// `ctx`'s scope may use its tool (the one visibility predicate: a hidden tool's token is
/// as unknown as a made-up one) and `also`; only then takes it, atomically, so that a
/// refused caller leaves the token to its owner and of concurrent approvals one wins.
pub(crate) async fn take_pending<H: Host>(
    host: &H,
    token: &str,
    ctx: &Ctx,
    also: impl FnOnce(&PendingCall) -> Result<(), ToolError>,
) -> Result<PendingCall, ToolError> {
    const UNKNOWN: &str = "unknown or already used token";
    let store = |reason: String| ToolError::ApprovalRefused {
        reason: format!("the approval store is unavailable ({reason}); try again shortly"),
    };
    let gates = &host.policy().gates;
    let approvals = &gates.approvals;
    let pending = approvals
        .get(token)
        .await
        .map_err(store)?
        .ok_or_else(|| refused(UNKNOWN))?;
    if !gates
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
    if host.resolve(&pending.tool, ctx.scope()).is_none() {
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
/// An approval refused for `reason`.
pub(crate) fn refused(reason: &str) -> ToolError {
    ToolError::ApprovalRefused {
        reason: reason.to_owned(),
    }
}
