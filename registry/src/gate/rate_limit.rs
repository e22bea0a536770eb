//! Stage 3, rate limit: a call counts against the tool's `cooldown` and `daily_limit` for its
//! user, through the registry's [`RateLimitStore`](super::RateLimitStore).

use super::{Limits, Permit};
use crate::audit::Tick;
use crate::call::{Ctx, ToolError};
use crate::def::Tool;
use crate::registry::Registry;

impl Registry {
    /// Admits the call, or refuses it with how long to wait.
    pub(crate) async fn rate_limit(&self, tool: &Tool, ctx: &Ctx) -> Result<Permit, ToolError> {
        let limits = Limits {
            cooldown: tool.cooldown(),
            daily_limit: tool.daily_limit(),
        };
        let user = ctx.user().unwrap_or("anonymous");
        self.policy
            .rate_limits
            .acquire(user, tool.name(), limits, Tick::now().wall_time())
            .await
            .map_err(|refusal| ToolError::RateLimited {
                tool: tool.name().to_owned(),
                limit: refusal.limit,
                retry_after: refusal.retry_after,
            })
    }

    /// Gives back the permit of a call that a later stage stopped: it does not count.
    pub(crate) async fn release(&self, permit: Option<Permit>) {
        if let Some(permit) = permit {
            self.policy.rate_limits.release(permit).await;
        }
    }
}
