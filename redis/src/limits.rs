//! [`RedisRateLimits`]: cooldown and daily limit checked and taken in one round trip (a Lua
//! script), under the admission rule of the in-memory store.
//!
//! Keys, under the fleet's prefix:
//! - `limit:{tool}:{user}:{day}`: the calls admitted on that UTC day; it expires a day after
//!   the day ends.
//! - `cooldown:{tool}:{user}`: the last admitted call's time in milliseconds, expiring when its
//!   cooldown does.

use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

use super::connection::Connection;
use tool_registry_core::gate::{InMemoryRateLimits, Limits, Permit, RateLimitStore, Refusal};

/// KEYS: the day's count, the cooldown. ARGV: now (ms), cooldown (ms, 0 = none), the daily
/// limit (-1 = none), the count's time to live (ms). Returns `{0, previous or -1}` when
/// admitted, `{1, ms to wait}` for the cooldown, `{2, 0}` for the daily limit.
static ACQUIRE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local now = tonumber(ARGV[1])
local cooldown = tonumber(ARGV[2])
local last = nil
if cooldown > 0 then
  last = redis.call('GET', KEYS[2])
  if last then
    local elapsed = now - tonumber(last)
    if elapsed < 0 then elapsed = 0 end
    if elapsed < cooldown then return {1, cooldown - elapsed} end
  end
end
local limit = tonumber(ARGV[3])
if limit >= 0 then
  local count = tonumber(redis.call('GET', KEYS[1]) or '0')
  if count >= limit then return {2, 0} end
  redis.call('INCR', KEYS[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
if cooldown > 0 then redis.call('SET', KEYS[2], ARGV[1], 'PX', cooldown) end
if last then return {0, tonumber(last)} end
return {0, -1}
",
    )
});

/// KEYS as for [`ACQUIRE`]. ARGV: when the permit was admitted (ms), the previous call's time
/// (ms, -1 = none). The count goes down by one; the cooldown goes back to the previous call's,
/// unless a later call owns it.
static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count > 0 then redis.call('DECR', KEYS[1]) end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  local ttl = redis.call('PTTL', KEYS[2])
  local previous = tonumber(ARGV[2])
  local left = ttl - (tonumber(ARGV[1]) - previous)
  if previous >= 0 and ttl > 0 and left > 0 then
    redis.call('SET', KEYS[2], ARGV[2], 'PX', left)
  else
    redis.call('DEL', KEYS[2])
  end
end
return 0
",
    )
});

/// How long a permit of the fallback is remembered for its release.
const LENT_FOR: Duration = Duration::from_secs(300);

/// Rate-limit counts in Redis, shared by every instance of a fleet: of any number of
/// concurrent calls on any number of instances, exactly as many as the limit allows are
/// admitted. While Redis is unreachable a call is refused with
/// [`Refusal::Unavailable`] (the typed `store_unavailable`), or, with
/// [`Fleet::fallback_in_memory`](super::Fleet::fallback_in_memory), counted on this instance
/// alone.
///
/// The times compared are the instances' clocks: keep them synchronized (NTP) and a cooldown
/// holds across the fleet to within their difference.
pub struct RedisRateLimits {
    redis: Connection,
    fallback: InMemoryRateLimits,
    /// The permits the fallback gave, so that each is given back where it was taken.
    lent: Mutex<Vec<Permit>>,
}

impl RedisRateLimits {
    pub(super) fn new(redis: Connection) -> Self {
        Self {
            redis,
            fallback: InMemoryRateLimits::new(),
            lent: Mutex::new(Vec::new()),
        }
    }

    fn keys(&self, tool: &str, user: &str, day: u64) -> (String, String) {
        (
            self.redis.key(&["limit", tool, user, &day.to_string()]),
            self.redis.key(&["cooldown", tool, user]),
        )
    }
}

fn millis(at: SystemTime) -> i64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn time_of(millis: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}

#[async_trait]
impl RateLimitStore for RedisRateLimits {
    async fn acquire(
        &self,
        user: &str,
        tool: &str,
        limits: Limits,
        now: SystemTime,
    ) -> Result<Permit, Refusal> {
        let (day, until_midnight) = tool_registry_core::gate::utc_day(now);
        // Cut to the millisecond, as Redis keeps it, so that a release finds it again.
        let at = time_of(millis(now));
        let (count_key, cooldown_key) = self.keys(tool, user, day);
        let cooldown = limits.cooldown.map_or(0, |c| {
            i64::try_from(c.as_millis()).unwrap_or(i64::MAX).max(1)
        });
        let limit = limits.daily_limit.map_or(-1, i64::from);
        let ttl = i64::try_from((until_midnight + Duration::from_secs(24 * 60 * 60)).as_millis())
            .unwrap_or(i64::MAX);
        let answer: Result<(i64, i64), _> = self
            .redis
            .run(|mut connection| async move {
                ACQUIRE
                    .key(&count_key)
                    .key(&cooldown_key)
                    .arg(millis(at))
                    .arg(cooldown)
                    .arg(limit)
                    .arg(ttl)
                    .invoke_async(&mut connection)
                    .await
            })
            .await;
        match answer {
            Ok((0, previous)) => Ok(Permit {
                user: Arc::from(user),
                tool: Arc::from(tool),
                day,
                previous: (previous >= 0).then(|| time_of(previous)),
                at,
            }),
            Ok((1, wait)) => Err(Refusal::cooldown(
                limits.cooldown.unwrap_or_default(),
                Duration::from_millis(u64::try_from(wait).unwrap_or(0)),
            )),
            Ok(_) => Err(Refusal::daily(
                limits.daily_limit.unwrap_or(0),
                until_midnight,
            )),
            Err(error) if self.redis.falls_back() => {
                tracing::warn!(%error, tool, "Redis is unavailable; counting this call on this instance");
                let permit = self.fallback.acquire(user, tool, limits, now).await?;
                let mut lent = self.lent.lock().unwrap_or_else(|e| e.into_inner());
                // A permit comes back, if at all, before its call's handler starts: only the
                // recent ones are kept.
                lent.retain(|given| now.duration_since(given.at).unwrap_or_default() < LENT_FOR);
                lent.push(permit.clone());
                Ok(permit)
            }
            Err(error) => Err(Refusal::Unavailable {
                store: "Redis rate-limit store".to_owned(),
                reason: error.to_string(),
            }),
        }
    }

    async fn release(&self, permit: Permit) {
        let lent = {
            let mut lent = self.lent.lock().unwrap_or_else(|e| e.into_inner());
            let found = lent.iter().position(|given| *given == permit);
            found.map(|at| lent.swap_remove(at))
        };
        if let Some(permit) = lent {
            return self.fallback.release(permit).await;
        }
        let (count_key, cooldown_key) = self.keys(&permit.tool, &permit.user, permit.day);
        let previous = permit.previous.map_or(-1, millis);
        let released = self
            .redis
            .run(|mut connection| async move {
                RELEASE
                    .key(&count_key)
                    .key(&cooldown_key)
                    .arg(millis(permit.at))
                    .arg(previous)
                    .invoke_async::<i64>(&mut connection)
                    .await
            })
            .await;
        if let Err(error) = released {
            tracing::warn!(%error, "a call that did not run could not be given back to Redis; it counts");
        }
    }
}
