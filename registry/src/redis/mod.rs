//! A fleet on Redis (feature `redis`): several instances of an application behind a load
//! balancer share one daily limit per user and tool, one set of pending approvals, one set of
//! switches and one cache of module manifests.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Fleet`]: the connection (lazy, reconnecting, every operation under a timeout), the key prefix, the failure policy; [`FleetBuilder`] |
//! | `limits.rs` | [`RedisRateLimits`]: cooldown and daily limit checked and taken in one script |
//! | `approvals.rs` | [`RedisApprovals`]: pending calls under their tokens, taken once across the fleet |
//! | `switches.rs` | switches stored in Redis and published; [`Fleet::join`] follows them |
//! | `manifests.rs` | [`RedisManifestCache`]: `module_manifest:{name}` with its TTL (with feature `http`) |
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use tool_registry::Registry;
//! use tool_registry::redis::{Fleet, FleetBuilder};
//!
//! let fleet = Fleet::new("redis://127.0.0.1:6379")?.prefix("shop");
//! let registry = Arc::new(Registry::builder().redis(&fleet).build()?);
//! let _following = fleet.join(registry.clone()).await?; // switches, read now and followed
//! # Ok(()) }
//! ```
//!
//! **When Redis fails.** No operation waits past [`Fleet::timeout`] (500 ms unless set), and
//! nothing panics. A tool with a rate limit, or one that needs confirmation, refuses its call
//! with the typed error `store_unavailable` while Redis is unreachable; with
//! [`Fleet::fallback_in_memory`] a tool with limits is admitted instead on this instance's own
//! counts, logged, until Redis answers again (those counts stay on the instance). Every other
//! tool keeps serving, and the switches last read stay in force. The connection is made again
//! by itself; the switches are read again when it is. What Redis counted before it failed is
//! what it counts after, as far as Redis itself kept it (run it with `appendonly yes` and
//! `appendfsync always` for a count that survives a crash of Redis).

mod approvals;
mod limits;
#[cfg(feature = "http")]
mod manifests;
mod switches;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

pub use approvals::RedisApprovals;
pub use limits::RedisRateLimits;
#[cfg(feature = "http")]
pub use manifests::RedisManifestCache;
pub use switches::Following;

use crate::RegistryBuilder;

/// The prefix of every key unless [`Fleet::prefix`] sets another.
pub const DEFAULT_PREFIX: &str = "toolreg";

/// How long an operation on Redis may take unless [`Fleet::timeout`] sets another.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(500);

/// The environment variable a password is read from when the URL carries none.
pub const PASSWORD_ENV: &str = "TOOLREG_REDIS_PASSWORD";

/// What went wrong with Redis. Never holds the URL's credentials.
#[derive(Debug, Clone, thiserror::Error)]
pub enum FleetError {
    /// The URL is not one of Redis.
    #[error(
        "the Redis URL is not valid ({0}); write redis://[user:password@]host:port[/db], or rediss:// for TLS"
    )]
    Url(String),
    /// Redis did not answer, or not in time.
    #[error("Redis at {at} is unavailable: {reason}")]
    Unavailable {
        /// Where (host and port, never credentials).
        at: String,
        /// What went wrong.
        reason: String,
    },
}

/// One Redis shared by the instances of a fleet: a client that connects on first use and
/// again after a failure, a key prefix, and what to do while Redis is away. Cheap to clone.
#[derive(Clone)]
pub struct Fleet {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    at: String,
    prefix: String,
    timeout: Duration,
    fallback: bool,
    connection: tokio::sync::Mutex<Option<ConnectionManager>>,
}

impl Fleet {
    /// A fleet on the Redis at `url` (`redis://host:port[/db]`; credentials in the URL, or the
    /// password in `$TOOLREG_REDIS_PASSWORD`). Nothing connects until the first operation.
    pub fn new(url: &str) -> Result<Self, FleetError> {
        use redis::IntoConnectionInfo;
        let mut info = url
            .into_connection_info()
            .map_err(|error| FleetError::Url(format!("{:?}", error.kind())))?;
        if info.redis_settings().password().is_none()
            && let Ok(password) = std::env::var(PASSWORD_ENV)
        {
            let settings = info.redis_settings().clone().set_password(password);
            info = info.set_redis_settings(settings);
        }
        let at = info.addr().to_string();
        let client = redis::Client::open(info)
            .map_err(|error| FleetError::Url(format!("{:?}", error.kind())))?;
        Ok(Self {
            inner: Arc::new(Inner {
                client,
                at,
                prefix: DEFAULT_PREFIX.to_owned(),
                timeout: DEFAULT_TIMEOUT,
                fallback: false,
                connection: tokio::sync::Mutex::new(None),
            }),
        })
    }

    fn with(self, change: impl FnOnce(&mut Inner)) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|shared| Inner {
            client: shared.client.clone(),
            at: shared.at.clone(),
            prefix: shared.prefix.clone(),
            timeout: shared.timeout,
            fallback: shared.fallback,
            connection: tokio::sync::Mutex::new(None),
        });
        change(&mut inner);
        Self {
            inner: Arc::new(inner),
        }
    }

    /// The prefix of every key, so that several deployments can share one Redis
    /// ([`DEFAULT_PREFIX`] unless set).
    #[must_use]
    pub fn prefix(self, prefix: impl Into<String>) -> Self {
        let prefix = prefix.into();
        self.with(|inner| inner.prefix = prefix)
    }

    /// The longest any operation on Redis may take, connecting included ([`DEFAULT_TIMEOUT`]
    /// unless set).
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        self.with(|inner| inner.timeout = timeout)
    }

    /// While Redis is unreachable, admit calls of tools with limits on this instance's own
    /// counts (logged) instead of refusing them. Off by default: limits fail closed.
    #[must_use]
    pub fn fallback_in_memory(self, on: bool) -> Self {
        self.with(|inner| inner.fallback = on)
    }

    /// Where the fleet's Redis is, without credentials: `127.0.0.1:6379`.
    pub fn address(&self) -> &str {
        &self.inner.at
    }

    /// Asks Redis for a `PONG`, within the timeout: a readiness check.
    pub async fn ping(&self) -> Result<(), FleetError> {
        self.run(|mut connection| async move {
            redis::cmd("PING")
                .query_async::<String>(&mut connection)
                .await
        })
        .await
        .map(drop)
    }

    /// The rate-limit store of this fleet.
    pub fn rate_limits(&self) -> RedisRateLimits {
        RedisRateLimits::new(self.clone())
    }

    /// The approval store of this fleet.
    pub fn approvals(&self) -> RedisApprovals {
        RedisApprovals::new(self.clone())
    }

    /// The module-manifest cache of this fleet, for
    /// [`GatewayBuilder::cache`](crate::http::GatewayBuilder::cache).
    #[cfg(feature = "http")]
    pub fn manifest_cache(&self) -> RedisManifestCache {
        RedisManifestCache::new(self.clone())
    }

    /// `prefix:part:part…`, each part with `%` and `:` escaped, so that no two lists of parts
    /// make one key.
    pub(crate) fn key(&self, parts: &[&str]) -> String {
        let mut key = escape(&self.inner.prefix);
        for part in parts {
            key.push(':');
            key.push_str(&escape(part));
        }
        key
    }

    pub(crate) fn falls_back(&self) -> bool {
        self.inner.fallback
    }

    pub(crate) fn unavailable(&self, reason: impl std::fmt::Display) -> FleetError {
        FleetError::Unavailable {
            at: self.inner.at.clone(),
            reason: reason.to_string(),
        }
    }

    /// A connection, made on first use and again after a failure to connect; within the
    /// timeout.
    pub(crate) async fn connection(&self) -> Result<ConnectionManager, FleetError> {
        let mut slot = self.inner.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let timeout = self.inner.timeout;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let made = tokio::time::timeout(
            timeout,
            self.inner.client.get_connection_manager_with_config(config),
        )
        .await
        .map_err(|_| self.unavailable(format!("no connection within {timeout:?}")))?
        .map_err(|error| self.unavailable(error))?;
        *slot = Some(made.clone());
        Ok(made)
    }

    /// Runs `work` on a connection: connecting (or waiting for another call's attempt) and the
    /// answer together within the timeout, so no call waits longer, however many wait at once.
    pub(crate) async fn run<T, F>(
        &self,
        work: impl FnOnce(ConnectionManager) -> F,
    ) -> Result<T, FleetError>
    where
        F: Future<Output = redis::RedisResult<T>>,
    {
        let timeout = self.inner.timeout;
        let attempt = async {
            let connection = self.connection().await?;
            work(connection)
                .await
                .map_err(|error| self.unavailable(error))
        };
        tokio::time::timeout(timeout, attempt)
            .await
            .unwrap_or_else(|_| Err(self.unavailable(format!("no answer within {timeout:?}"))))
    }

    pub(crate) fn client(&self) -> &redis::Client {
        &self.inner.client
    }

    pub(crate) fn op_timeout(&self) -> Duration {
        self.inner.timeout
    }
}

fn escape(part: &str) -> String {
    if !part.contains(['%', ':']) {
        return part.to_owned();
    }
    part.replace('%', "%25").replace(':', "%3A")
}

/// `.redis(&fleet)` on [`RegistryBuilder`]: the fleet's rate-limit and approval stores.
pub trait FleetBuilder {
    /// Keeps rate-limit counts and pending approvals in `fleet`'s Redis.
    #[must_use]
    fn redis(self, fleet: &Fleet) -> Self;
}

impl FleetBuilder for RegistryBuilder {
    fn redis(self, fleet: &Fleet) -> Self {
        self.rate_limit_store(fleet.rate_limits())
            .approval_store(fleet.approvals())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_escape_their_separator_and_hide_nothing() {
        let fleet = Fleet::new("redis://127.0.0.1:1/0").unwrap().prefix("a:b");
        assert_eq!(
            fleet.key(&["limit", "t:1", "u%2"]),
            "a%3Ab:limit:t%3A1:u%252"
        );
        assert_ne!(fleet.key(&["a:b", "c"]), fleet.key(&["a", "b:c"]));
    }

    #[test]
    fn a_url_with_credentials_never_shows_them() {
        let fleet = Fleet::new("redis://user:s3cret@127.0.0.1:6390/2").unwrap();
        assert!(!fleet.address().contains("s3cret"), "{}", fleet.address());
        let error = Fleet::new("http://user:s3cret@host").err().unwrap();
        assert!(!error.to_string().contains("s3cret"), "{error}");
    }
}
