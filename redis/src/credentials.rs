//! [`RedisCredentials`]: an OAuth client's registration and tokens (rmcp's
//! [`CredentialStore`]) shared by a fleet, under `oauth_credentials:{name}`, with one refresh at
//! a time across the fleet (`oauth_refresh:{name}`, a lock that expires by itself), so that a
//! refresh token the authorization server rotates is spent once. With feature `oauth`.

use std::sync::LazyLock;
use std::time::Duration;

use redis::AsyncCommands;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};

use super::connection::Connection;

/// How long one instance may hold the refresh before the lock lapses by itself.
pub const REFRESH_LOCK: Duration = Duration::from_secs(30);

/// How often an instance that waits for the refresh asks again.
const REFRESH_POLL: Duration = Duration::from_millis(50);

/// KEYS: the lock. ARGV: its holder's value. Deletes the lock only when it is still that holder's.
static RELEASE: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
",
    )
});

/// One MCP module's OAuth client state in the fleet's Redis: every instance reads the tokens
/// any of them got, and refreshes one at a time.
#[derive(Clone)]
pub struct RedisCredentials {
    redis: Connection,
    name: String,
}

impl RedisCredentials {
    pub(super) fn new(redis: Connection, name: &str) -> Self {
        Self {
            redis,
            name: name.to_owned(),
        }
    }
}

fn failed(error: impl std::fmt::Display) -> AuthError {
    AuthError::InternalError(format!(
        "the fleet's Redis keeps no OAuth tokens now: {error}"
    ))
}

#[async_trait::async_trait]
impl CredentialStore for RedisCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let slot = self.redis.key(&["oauth_credentials", &self.name]);
        let text: Option<String> = self
            .redis
            .run(|mut connection| async move { connection.get(slot).await })
            .await
            .map_err(failed)?;
        // An entry that does not read is as good as none: the client authorizes anew.
        Ok(text.and_then(|text| serde_json::from_str(&text).ok()))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let slot = self.redis.key(&["oauth_credentials", &self.name]);
        let text = serde_json::to_string(&credentials).map_err(failed)?;
        self.redis
            .run(|mut connection| async move { connection.set::<_, _, ()>(slot, text).await })
            .await
            .map_err(failed)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let slot = self.redis.key(&["oauth_credentials", &self.name]);
        self.redis
            .run(|mut connection| async move { connection.del::<_, ()>(slot).await })
            .await
            .map_err(failed)
    }

    /// Waits (at most [`REFRESH_LOCK`]) until no other instance refreshes, then holds the
    /// refresh until the guard is dropped or the lock lapses.
    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self.redis.key(&["oauth_refresh", &self.name]);
        let mut value = [0u8; 16];
        getrandom::fill(&mut value).map_err(|error| failed(error.to_string()))?;
        let value: String = value.iter().map(|byte| format!("{byte:02x}")).collect();
        let started = tokio::time::Instant::now();
        loop {
            let (slot, held) = (lock.clone(), value.clone());
            let taken: Option<String> = self
                .redis
                .run(|mut connection| async move {
                    redis::cmd("SET")
                        .arg(slot)
                        .arg(held)
                        .arg("NX")
                        .arg("PX")
                        .arg(REFRESH_LOCK.as_millis() as u64)
                        .query_async(&mut connection)
                        .await
                })
                .await
                .map_err(failed)?;
            if taken.is_some() {
                let guard = Release {
                    redis: self.redis.clone(),
                    lock,
                    value,
                };
                return Ok(Some(CredentialRefreshGuard::new(guard)));
            }
            if started.elapsed() > REFRESH_LOCK {
                return Err(failed("another instance has held the refresh too long"));
            }
            tokio::time::sleep(REFRESH_POLL).await;
        }
    }
}

/// The refresh lock of one instance, given back when dropped.
struct Release {
    redis: Connection,
    lock: String,
    value: String,
}

impl Drop for Release {
    fn drop(&mut self) {
        let (redis, lock, value) = (self.redis.clone(), self.lock.clone(), self.value.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let released = redis
                    .run(|mut connection| async move {
                        RELEASE
                            .key(lock)
                            .arg(value)
                            .invoke_async::<i64>(&mut connection)
                            .await
                    })
                    .await;
                if let Err(error) = released {
                    tracing::warn!(target: "tool_registry::redis", %error, "the OAuth refresh lock was not given back; it lapses by itself");
                }
            });
        }
    }
}
