//! Stage 5, rate limit: a call counts against the tool's `cooldown` and `daily_limit` for its
//! user, through the registry's [`RateLimitStore`](super::RateLimitStore).

use super::{Gates, Limits, Permit, Refusal};
use crate::audit::Tick;
use crate::call::{Ctx, ToolError};
use crate::def::Tool;
impl Gates {
    /// Admits the call, or refuses it with how long to wait.
    pub(crate) async fn rate_limit(&self, tool: &Tool, ctx: &Ctx) -> Result<Permit, ToolError> {
        let limits = Limits {
            cooldown: tool.cooldown(),
            daily_limit: tool.daily_limit(),
        };
        let user = ctx.scope().limit_key();
        self.rate_limits
            .acquire(user, tool.name(), limits, Tick::now().wall_time())
            .await
            .map_err(|refusal| match refusal {
                Refusal::Limited { limit, retry_after } => ToolError::RateLimited {
                    tool: tool.name().to_owned(),
                    limit,
                    retry_after,
                },
                Refusal::Unavailable { store, reason } => ToolError::StoreUnavailable {
                    tool: tool.name().to_owned(),
                    store,
                    reason,
                },
            })
    }

    /// Gives back the permit of a call that a later stage stopped: it does not count.
    pub(crate) async fn release(&self, permit: Option<Permit>) {
        if let Some(permit) = permit {
            self.rate_limits.release(permit).await;
        }
    }
}
