//! Per-user, per-tool rate limits: `cooldown` and `daily_limit` (UTC calendar day). The store
//! trait, the admission rule every store applies, and the in-memory store.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use rustc_hash::FxHashMap;

pub(super) const DAY: u64 = 24 * 60 * 60;

/// The limits of one tool, from its attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The least time between two admitted calls.
    pub cooldown: Option<Duration>,
    /// The most admitted calls per UTC day.
    pub daily_limit: Option<u32>,
}

/// Why a call was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// A limit is reached.
    Limited {
        /// `cooldown of 30s` or `daily limit of 3`.
        limit: String,
        /// How long until a call would be admitted.
        retry_after: Duration,
    },
    /// The store could not count the call (unreachable, unreadable), so it was not admitted:
    /// limits fail closed.
    Unavailable {
        /// What the store is: `rate-limit file`, `Redis rate-limit store`.
        store: String,
        /// What went wrong, and what to do.
        reason: String,
    },
}

impl Refusal {
    /// The refusal of a call within `cooldown` of the last, `retry_after` before it would
    /// pass, in the words every store uses.
    pub fn cooldown(cooldown: Duration, retry_after: Duration) -> Self {
        Refusal::Limited {
            limit: format!("cooldown of {}", humantime::format_duration(cooldown)),
            retry_after,
        }
    }

    /// The refusal of a call past a daily limit of `limit`, `retry_after` before midnight
    /// (UTC), in the words every store uses.
    pub fn daily(limit: u32, retry_after: Duration) -> Self {
        Refusal::Limited {
            limit: format!(
                "daily limit of {limit} call{}",
                if limit == 1 { "" } else { "s" }
            ),
            retry_after,
        }
    }
}

/// A call admitted by a [`RateLimitStore`]; hand it back to [`RateLimitStore::release`] when
/// the call did not run after all (a gate denied it, it awaits approval).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permit {
    /// The user the call counts for.
    pub user: Arc<str>,
    /// The tool.
    pub tool: Arc<str>,
    /// The UTC day (days since the Unix epoch) the call counted on.
    pub day: u64,
    /// The previous admitted call's time, restored on release.
    pub previous: Option<SystemTime>,
    /// When this call was admitted (what a shared store checks before it restores
    /// `previous`, so that a later call's cooldown is left alone).
    pub at: SystemTime,
}

/// Where call counts live. Admission must be atomic: of any number of concurrent calls, exactly
/// as many as the limit allows are admitted.
#[async_trait]
pub trait RateLimitStore: Send + Sync {
    /// Admits one call of `tool` by `user` at `now`, or says how long to wait.
    async fn acquire(
        &self,
        user: &str,
        tool: &str,
        limits: Limits,
        now: SystemTime,
    ) -> Result<Permit, Refusal>;
    /// Gives back an admitted call that did not run.
    async fn release(&self, permit: Permit);
}

/// One user's usage of one tool.
struct Usage {
    user: Arc<str>,
    last: Option<SystemTime>,
    day: u64,
    count: u32,
}

/// One tool's usage, per user.
struct ToolUsage {
    tool: Arc<str>,
    users: FxHashMap<Arc<str>, Usage>,
}

/// The default store: in memory, one mutex, exact under concurrency. Usage is kept per tool,
/// then per user; names are stored once, so an admission allocates nothing after a user's
/// first call of a tool.
#[derive(Default)]
pub struct InMemoryRateLimits {
    usage: Mutex<FxHashMap<Arc<str>, ToolUsage>>,
}

/// The value under `key`, inserted (with the key allocated once) when missing.
fn slot<'m, V>(
    map: &'m mut FxHashMap<Arc<str>, V>,
    key: &str,
    new: impl FnOnce(Arc<str>) -> V,
) -> &'m mut V {
    if !map.contains_key(key) {
        let key: Arc<str> = Arc::from(key);
        map.insert(Arc::clone(&key), new(key));
    }
    map.get_mut(key).expect("inserted above")
}

impl InMemoryRateLimits {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Days since the Unix epoch, and the time left until the next UTC midnight: the day a daily
/// limit counts in, for a [`RateLimitStore`] of your own.
pub fn utc_day(now: SystemTime) -> (u64, Duration) {
    let since = now.duration_since(UNIX_EPOCH).unwrap_or_default();
    let day = since.as_secs() / DAY;
    let next = Duration::from_secs((day + 1) * DAY);
    (day, next.saturating_sub(since))
}

/// The admission rule every store applies to one user's usage of one tool: a new UTC day
/// (`day`, days since the epoch) starts the count again, and an admitted call counts.
pub(super) fn count_call(
    day: &mut u64,
    count: &mut u32,
    last: Option<SystemTime>,
    limits: Limits,
    now: SystemTime,
) -> Result<(), Refusal> {
    let (today, _) = utc_day(now);
    if *day != today {
        *day = today;
        *count = 0;
    }
    admit(last, *count, limits, now)?;
    *count += 1;
    Ok(())
}

/// Whether one more call fits the cooldown and the daily limit.
fn admit(
    last: Option<SystemTime>,
    count_today: u32,
    limits: Limits,
    now: SystemTime,
) -> Result<(), Refusal> {
    if let (Some(cooldown), Some(last)) = (limits.cooldown, last) {
        let elapsed = now.duration_since(last).unwrap_or_default();
        if elapsed < cooldown {
            return Err(Refusal::cooldown(cooldown, cooldown - elapsed));
        }
    }
    if let Some(limit) = limits.daily_limit
        && count_today >= limit
    {
        return Err(Refusal::daily(limit, utc_day(now).1));
    }
    Ok(())
}

#[async_trait]
impl RateLimitStore for InMemoryRateLimits {
    async fn acquire(
        &self,
        user: &str,
        tool: &str,
        limits: Limits,
        now: SystemTime,
    ) -> Result<Permit, Refusal> {
        let (day, _) = utc_day(now);
        let mut tools = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        let usage = slot(&mut tools, tool, |tool| ToolUsage {
            tool,
            users: FxHashMap::default(),
        });
        let entry = slot(&mut usage.users, user, |user| Usage {
            user,
            last: None,
            day,
            count: 0,
        });
        count_call(&mut entry.day, &mut entry.count, entry.last, limits, now)?;
        let previous = entry.last.replace(now);
        Ok(Permit {
            user: Arc::clone(&entry.user),
            tool: Arc::clone(&usage.tool),
            day,
            previous,
            at: now,
        })
    }

    async fn release(&self, permit: Permit) {
        let mut tools = self.usage.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(entry) = tools
            .get_mut(&*permit.tool)
            .and_then(|usage| usage.users.get_mut(&*permit.user))
        {
            if entry.day == permit.day {
                entry.count = entry.count.saturating_sub(1);
            }
            entry.last = permit.previous;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_day_turns_at_utc_midnight() {
        let just_before = UNIX_EPOCH + Duration::from_secs(3 * DAY - 1);
        assert_eq!(utc_day(just_before), (2, Duration::from_secs(1)));
        assert_eq!(utc_day(just_before + Duration::from_secs(1)).0, 3);
    }

    #[tokio::test]
    async fn daily_counts_reset_on_a_new_day_and_release_gives_back() {
        let store = InMemoryRateLimits::new();
        let limits = Limits {
            cooldown: None,
            daily_limit: Some(1),
        };
        let day1 = UNIX_EPOCH + Duration::from_secs(10 * DAY + 5);
        let permit = store.acquire("u", "t", limits, day1).await.unwrap();
        let refusal = store.acquire("u", "t", limits, day1).await.unwrap_err();
        assert!(
            matches!(refusal, Refusal::Limited { retry_after, .. } if retry_after == Duration::from_secs(DAY - 5)),
            "{refusal:?}"
        );
        assert!(
            store.acquire("other", "t", limits, day1).await.is_ok(),
            "limits are per user"
        );
        store.release(permit).await;
        assert!(
            store.acquire("u", "t", limits, day1).await.is_ok(),
            "a released call does not count"
        );
        assert!(
            store
                .acquire("u", "t", limits, day1 + Duration::from_secs(DAY))
                .await
                .is_ok()
        );
    }
}
