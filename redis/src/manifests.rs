//! [`RedisManifestCache`]: the module registry's manifests in Redis, as
//! `module_manifest:{name}` under the fleet's prefix, each expiring with its TTL.

use redis::AsyncCommands;

use super::connection::Connection;
use tool_registry_core::store::StoreError;
use tool_registry_http::{CachedManifest, ManifestCache};

/// Module manifests in Redis: written on every fetch, read at start, so that an instance that
/// starts lists every module without asking any of them.
pub struct RedisManifestCache {
    redis: Connection,
}

impl RedisManifestCache {
    pub(super) fn new(redis: Connection) -> Self {
        Self { redis }
    }
}

fn unavailable(error: impl std::fmt::Display) -> StoreError {
    StoreError::Unavailable {
        what: "Redis manifest cache",
        reason: error.to_string(),
    }
}

#[async_trait::async_trait]
impl ManifestCache for RedisManifestCache {
    async fn load(&self, module: &str) -> Result<Option<CachedManifest>, StoreError> {
        let slot = self.redis.key(&["module_manifest", module]);
        let text: Option<String> = self
            .redis
            .run(|mut connection| async move { connection.get(slot).await })
            .await
            .map_err(unavailable)?;
        // An entry that does not read is as good as none: the module is asked again.
        Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
    }

    async fn store(&self, module: &str, entry: &CachedManifest) -> Result<(), StoreError> {
        let slot = self.redis.key(&["module_manifest", module]);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs();
        let ttl = entry.expires_at.saturating_sub(now).max(1);
        let text = serde_json::to_string(entry).map_err(unavailable)?;
        self.redis
            .run(|mut connection| async move { connection.set_ex::<_, _, ()>(slot, text, ttl).await })
            .await
            .map_err(unavailable)
    }
}
