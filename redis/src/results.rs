//! [`RedisResultCache`]: the results of `cache` tools in Redis, under `result:{key}` with their
//! TTL, so that every instance of a fleet answers an identical call from what one computed.

use std::time::Duration;

use async_trait::async_trait;
use redis::AsyncCommands;

use super::connection::Connection;
use tool_registry_core::ToolResult;
use tool_registry_core::hook::{CacheKey, ResultCache};

/// The most bytes of one result kept in Redis: a larger one is not cached (it runs each time).
pub const MAX_CACHED_RESULT_BYTES: usize = 4 << 20;

/// Cached results in Redis, shared by every instance of a fleet (see
/// [`hook`](tool_registry_core::hook)). A key is a digest of the tool, its version, the arguments and (per
/// user) who asks; nothing of the call is readable in it. While Redis is unreachable nothing
/// is cached: calls run their tools, each within [`Fleet::timeout`](super::Fleet::timeout)
/// of waiting for Redis at most.
pub struct RedisResultCache {
    redis: Connection,
}

impl RedisResultCache {
    pub(super) fn new(redis: Connection) -> Self {
        Self { redis }
    }

    fn slot(&self, key: &CacheKey) -> String {
        self.redis.key(&["result", key.as_str()])
    }
}

#[async_trait]
impl ResultCache for RedisResultCache {
    async fn get(&self, key: &CacheKey) -> Result<Option<ToolResult>, String> {
        let slot = self.slot(key);
        let text: Option<String> = self
            .redis
            .run(|mut connection| async move { connection.get(slot).await })
            .await
            .map_err(|e| e.to_string())?;
        match text {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|error| format!("a cached result in Redis is unreadable ({error})")),
        }
    }

    async fn put(&self, key: &CacheKey, result: &ToolResult, ttl: Duration) -> Result<(), String> {
        let text = serde_json::to_string(result).map_err(|e| e.to_string())?;
        if text.len() > MAX_CACHED_RESULT_BYTES {
            return Ok(());
        }
        let millis = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let slot = self.slot(key);
        self.redis
            .run(|mut connection| async move {
                connection.pset_ex::<_, _, ()>(slot, text, millis).await
            })
            .await
            .map_err(|e| e.to_string())
    }
}
