//! A fleet on Redis (feature `redis`): several instances of an application behind a load
//! balancer share one daily limit per user and tool, one set of pending approvals, one set of
//! switches, one cache of module manifests, one cache of tool results and one store of tasks.
//!
//! The files are listed from the bottom layer up: each imports only files listed before it, so no
//! circle runs between them. The stores hold a connection, not a [`Fleet`], which hands them out.
//!
//! | file | what |
//! | --- | --- |
//! | `connection.rs` | the connection (lazy, reconnecting, every operation under a timeout), the key prefix, the failure policy; [`FleetError`] |
//! | `limits.rs` | [`RedisRateLimits`]: cooldown and daily limit checked and taken in one script |
//! | `approvals.rs` | [`RedisApprovals`]: pending calls under their tokens, taken once across the fleet |
//! | `results.rs` | [`RedisResultCache`]: results of `cache` tools under `result:{key}` with their TTL |
//! | `tasks.rs` | [`RedisTaskStore`]: tasks under `task:{id}` until their TTL, each caller's indexed by a digest, bounds counted in the insert script |
//! | `manifests.rs` | `RedisManifestCache`: `module_manifest:{name}` with its TTL (with feature `http`) |
//! | `credentials.rs` | `RedisCredentials`: an MCP module's OAuth registration and tokens under `oauth_credentials:{name}`, one refresh at a time across the fleet (with feature `oauth`) |
//! | `lib.rs` | [`Fleet`]: one connection, its settings, and the stores on it; [`FleetBuilder`] |
//! | `switches.rs` | switches stored in Redis and published; [`Fleet::join`] follows them |
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
//! nothing panics. Once Redis has not answered in time, the operations of the next timeout fail
//! at once without trying, so no caller waits two timeouts in a row. A tool with a rate limit, or one that needs confirmation, refuses its call
//! with the typed error `store_unavailable` while Redis is unreachable; with
//! [`Fleet::fallback_in_memory`] a tool with limits is admitted instead on this instance's own
//! counts, logged, until Redis answers again (those counts stay on the instance). Every other
//! tool keeps serving, and the switches last read stay in force. The connection is made again
//! by itself; the switches are read again when it is. What Redis counted before it failed is
//! what it counts after, as far as Redis itself kept it (run it with `appendonly yes` and
//! `appendfsync always` for a count that survives a crash of Redis).

#![warn(missing_docs)]

mod approvals;
mod connection;
#[cfg(feature = "oauth")]
mod credentials;
mod limits;
#[cfg(feature = "http")]
mod manifests;
mod results;
mod switches;
mod tasks;

use std::time::Duration;

pub use approvals::RedisApprovals;
pub use connection::{DEFAULT_PREFIX, DEFAULT_TIMEOUT, FleetError, PASSWORD_ENV};
#[cfg(feature = "oauth")]
pub use credentials::{REFRESH_LOCK, RedisCredentials};
pub use limits::RedisRateLimits;
#[cfg(feature = "http")]
pub use manifests::RedisManifestCache;
pub use results::{MAX_CACHED_RESULT_BYTES, RedisResultCache};
pub use switches::Following;
pub use tasks::RedisTaskStore;

use connection::Connection;
use tool_registry_core::RegistryBuilder;

/// One Redis shared by the instances of a fleet: a client that connects on first use and
/// again after a failure, a key prefix, and what to do while Redis is away. Cheap to clone.
#[derive(Clone)]
pub struct Fleet {
    redis: Connection,
}

impl Fleet {
    /// A fleet on the Redis at `url` (`redis://host:port[/db]`; credentials in the URL, or the
    /// password in `$TOOLREG_REDIS_PASSWORD`). Nothing connects until the first operation.
    pub fn new(url: &str) -> Result<Self, FleetError> {
        Ok(Self {
            redis: Connection::new(url)?,
        })
    }

    /// The prefix of every key, so that several deployments can share one Redis
    /// ([`DEFAULT_PREFIX`] unless set).
    #[must_use]
    pub fn prefix(self, prefix: impl Into<String>) -> Self {
        Self {
            redis: self.redis.with_prefix(prefix.into()),
        }
    }

    /// The longest any operation on Redis may take, connecting included ([`DEFAULT_TIMEOUT`]
    /// unless set). Once Redis has not answered in that time, the operations of the next
    /// timeout fail at once, without trying.
    #[must_use]
    pub fn timeout(self, timeout: Duration) -> Self {
        Self {
            redis: self.redis.with_timeout(timeout),
        }
    }

    /// While Redis is unreachable, admit calls of tools with limits on this instance's own
    /// counts (logged) instead of refusing them. Off by default: limits fail closed.
    #[must_use]
    pub fn fallback_in_memory(self, on: bool) -> Self {
        Self {
            redis: self.redis.with_fallback(on),
        }
    }

    /// Where the fleet's Redis is, without credentials: `127.0.0.1:6379`.
    pub fn address(&self) -> &str {
        self.redis.address()
    }

    /// Asks Redis for a `PONG`, within the timeout: a readiness check.
    pub async fn ping(&self) -> Result<(), FleetError> {
        self.redis
            .run(|mut connection| async move {
                redis::cmd("PING")
                    .query_async::<String>(&mut connection)
                    .await
            })
            .await
            .map(drop)
    }

    /// The rate-limit store of this fleet.
    pub fn rate_limits(&self) -> RedisRateLimits {
        RedisRateLimits::new(self.redis.clone())
    }

    /// The store of the OAuth registration and tokens of the MCP module `name`, for
    /// `tool_registry::mcp::oauth::OAuth::store`: every instance uses the tokens any of them
    /// got, and one refreshes at a time (feature `oauth`).
    #[cfg(feature = "oauth")]
    pub fn credentials(&self, name: &str) -> RedisCredentials {
        RedisCredentials::new(self.redis.clone(), name)
    }

    /// The approval store of this fleet.
    pub fn approvals(&self) -> RedisApprovals {
        RedisApprovals::new(self.redis.clone())
    }

    /// The task store of this fleet, for [`Tasks`](tool_registry_core::task::Tasks): any instance answers
    /// for a task another started.
    pub fn task_store(&self) -> RedisTaskStore {
        RedisTaskStore::new(self.redis.clone())
    }

    /// The result cache of this fleet, for
    /// [`RegistryBuilder::result_cache`](tool_registry_core::RegistryBuilder::result_cache).
    pub fn result_cache(&self) -> RedisResultCache {
        RedisResultCache::new(self.redis.clone())
    }

    /// The module-manifest cache of this fleet, for
    /// [`GatewayBuilder::cache`](tool_registry_http::GatewayBuilder::cache).
    #[cfg(feature = "http")]
    pub fn manifest_cache(&self) -> RedisManifestCache {
        RedisManifestCache::new(self.redis.clone())
    }
}

/// `.redis(&fleet)` on [`RegistryBuilder`]: the fleet's rate-limit and approval stores and
/// its result cache.
pub trait FleetBuilder {
    /// Keeps rate-limit counts, pending approvals and the results of `cache` tools in
    /// `fleet`'s Redis.
    #[must_use]
    fn redis(self, fleet: &Fleet) -> Self;
}

impl FleetBuilder for RegistryBuilder {
    fn redis(self, fleet: &Fleet) -> Self {
        self.rate_limit_store(fleet.rate_limits())
            .approval_store(fleet.approvals())
            .result_cache(fleet.result_cache())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_escape_their_separator_and_hide_nothing() {
        let fleet = Fleet::new("redis://127.0.0.1:1/0").unwrap().prefix("a:b");
        assert_eq!(
            fleet.redis.key(&["limit", "t:1", "u%2"]),
            "a%3Ab:limit:t%3A1:u%252"
        );
        assert_ne!(
            fleet.redis.key(&["a:b", "c"]),
            fleet.redis.key(&["a", "b:c"])
        );
    }

    #[test]
    fn a_url_with_credentials_never_shows_them() {
        let fleet = Fleet::new("redis://user:s3cret@127.0.0.1:6390/2").unwrap();
        assert!(!fleet.address().contains("s3cret"), "{}", fleet.address());
        let error = Fleet::new("http://user:s3cret@host").err().unwrap();
        assert!(!error.to_string().contains("s3cret"), "{error}");
    }
}
