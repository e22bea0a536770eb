//! [`Connection`]: one Redis as every part of a fleet reaches it: the client, connected on first
//! use and again after a failure, every operation under one timeout, the key prefix, and what
//! to do while Redis is away. Each store holds one; [`Fleet`](super::Fleet) hands them out.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// The prefix of every key unless [`Fleet::prefix`](super::Fleet::prefix) sets another.
pub const DEFAULT_PREFIX: &str = "toolreg";

/// How long an operation on Redis may take unless [`Fleet::timeout`](super::Fleet::timeout)
/// sets another.
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

/// A client that connects on first use and again after a failure, a key prefix, and what to
/// do while Redis is away. Cheap to clone.
#[derive(Clone)]
pub(super) struct Connection {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    at: String,
    prefix: String,
    timeout: Duration,
    fallback: bool,
    connection: tokio::sync::Mutex<Option<ConnectionManager>>,
    /// When Redis last failed to answer in time (or to take a connection). For one timeout
    /// after that, an operation fails at once instead of waiting a timeout of its own: a
    /// command that reads the switches and then a limit waits one timeout in all, not two,
    /// and a server under load has one operation at a time find out whether Redis is back.
    down_since: Mutex<Option<Instant>>,
}

impl Connection {
    /// The Redis at `url`, with the password from [`PASSWORD_ENV`] when the URL carries none.
    /// Nothing connects until the first operation.
    pub(super) fn new(url: &str) -> Result<Self, FleetError> {
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
                down_since: Mutex::new(None),
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
            down_since: Mutex::new(None),
        });
        change(&mut inner);
        Self {
            inner: Arc::new(inner),
        }
    }

    pub(super) fn with_prefix(self, prefix: String) -> Self {
        self.with(|inner| inner.prefix = prefix)
    }

    pub(super) fn with_timeout(self, timeout: Duration) -> Self {
        self.with(|inner| inner.timeout = timeout)
    }

    pub(super) fn with_fallback(self, on: bool) -> Self {
        self.with(|inner| inner.fallback = on)
    }

    /// Where Redis is, without credentials: `127.0.0.1:6379`.
    pub(super) fn address(&self) -> &str {
        &self.inner.at
    }

    /// `prefix:part:part…`, each part with `%` and `:` escaped, so that no two lists of parts
    /// make one key.
    pub(super) fn key(&self, parts: &[&str]) -> String {
        let mut key = escape(&self.inner.prefix);
        for part in parts {
            key.push(':');
            key.push_str(&escape(part));
        }
        key
    }

    pub(super) fn falls_back(&self) -> bool {
        self.inner.fallback
    }

    pub(super) fn unavailable(&self, reason: impl std::fmt::Display) -> FleetError {
        FleetError::Unavailable {
            at: self.inner.at.clone(),
            reason: reason.to_string(),
        }
    }

    /// A connection, made on first use and again after a failure to connect; within the
    /// timeout.
    async fn connect(&self) -> Result<ConnectionManager, FleetError> {
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
    /// Within one timeout of Redis failing to answer, fails at once without trying.
    pub(super) async fn run<T, F>(
        &self,
        work: impl FnOnce(ConnectionManager) -> F,
    ) -> Result<T, FleetError>
    where
        F: Future<Output = redis::RedisResult<T>>,
    {
        let timeout = self.inner.timeout;
        if let Some(ago) = self.down_within(timeout) {
            return Err(self.unavailable(format!(
                "no answer {ago:?} ago; tried again once {timeout:?} has passed"
            )));
        }
        let attempt = async {
            let connection = self.connect().await.map_err(|error| (true, error))?;
            work(connection).await.map_err(|error| {
                // An error Redis answered with says it is there; only silence counts.
                let silent = error.is_timeout()
                    || error.is_io_error()
                    || error.is_connection_dropped()
                    || error.is_connection_refusal();
                (silent, self.unavailable(error))
            })
        };
        let outcome = tokio::time::timeout(timeout, attempt)
            .await
            .unwrap_or_else(|_| {
                Err((
                    true,
                    self.unavailable(format!("no answer within {timeout:?}")),
                ))
            });
        let mut down_since = self
            .inner
            .down_since
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(answer) => {
                *down_since = None;
                Ok(answer)
            }
            Err((silent, error)) => {
                if silent {
                    *down_since = Some(Instant::now());
                }
                Err(error)
            }
        }
    }

    /// How long ago Redis failed to answer, when that was less than `window` ago.
    fn down_within(&self, window: Duration) -> Option<Duration> {
        let down_since = self
            .inner
            .down_since
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        down_since
            .map(|since| since.elapsed())
            .filter(|ago| *ago < window)
    }

    pub(super) fn client(&self) -> &redis::Client {
        &self.inner.client
    }

    pub(super) fn timeout(&self) -> Duration {
        self.inner.timeout
    }
}

fn escape(part: &str) -> String {
    if !part.contains(['%', ':']) {
        return part.to_owned();
    }
    part.replace('%', "%25").replace(':', "%3A")
}
