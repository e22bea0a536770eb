//! [`JsonFileRateLimits`]: rate-limit counts in a JSON file shared by processes, under the same
//! admission rule as the in-memory store.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::limits::{count_call, utc_day};
use super::{Limits, Permit, RateLimitStore, Refusal};
use crate::store::{JsonFile, StoreError};

/// Call counts in a JSON file shared by processes, so that limits hold across runs of a command
/// line (`toolreg --limits FILE`). Every admission is one locked read-modify-write of the file
/// (see [`store`](crate::store)) under the same rule as [`InMemoryRateLimits`](super::InMemoryRateLimits): of any number
/// of concurrent calls in any number of processes, exactly as many as the limit allows are
/// admitted.
///
/// A file that cannot be read or written refuses the call (the refusal names the file and what
/// to do): limits fail closed.
pub struct JsonFileRateLimits {
    file: JsonFile,
}

/// The rate-limit file's layout: `usage[tool][user]`.
#[derive(Default, Serialize, Deserialize)]
struct LimitsFile {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    usage: BTreeMap<String, BTreeMap<String, FileUsage>>,
    /// Keys this version does not know, kept as they are.
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// One user's usage of one tool, as the file keeps it.
#[derive(Default, Serialize, Deserialize)]
struct FileUsage {
    /// The last admitted call (RFC 3339, to the nanosecond, so that a release restores it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last: Option<String>,
    /// The UTC day `count` is for (days since the Unix epoch).
    #[serde(default)]
    day: u64,
    /// Calls admitted on `day`.
    #[serde(default)]
    count: u32,
    #[serde(flatten)]
    other: Map<String, Value>,
}

impl JsonFileRateLimits {
    /// A store in `path`, created on the first admitted call.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            file: JsonFile::new(path, "rate-limit file"),
        }
    }
}

fn time_text(at: SystemTime) -> String {
    humantime::format_rfc3339_nanos(at).to_string()
}

fn time_of(text: &str) -> Result<SystemTime, String> {
    humantime::parse_rfc3339_weak(text).map_err(|e| format!("the time {text:?} is unreadable: {e}"))
}

/// What an admission can end with besides a permit.
enum Stop {
    Refused(Refusal),
    Store(String),
}

impl From<StoreError> for Stop {
    fn from(error: StoreError) -> Self {
        Self::Store(error.to_string())
    }
}

#[async_trait]
impl RateLimitStore for JsonFileRateLimits {
    async fn acquire(
        &self,
        user: &str,
        tool: &str,
        limits: Limits,
        now: SystemTime,
    ) -> Result<Permit, Refusal> {
        let (day, _) = utc_day(now);
        let admitted = self.file.update(|doc: &mut LimitsFile| {
            doc.version = 1;
            let entry = doc
                .usage
                .entry(tool.to_owned())
                .or_default()
                .entry(user.to_owned())
                .or_default();
            let last = match entry.last.as_deref().map(time_of).transpose() {
                Ok(last) => last,
                Err(detail) => {
                    return Err(Stop::Store(format!(
                        "the rate-limit file {} is not a valid rate-limit file ({detail}); fix it by hand, or move it away and a new one is started",
                        self.file.path().display()
                    )));
                }
            };
            count_call(&mut entry.day, &mut entry.count, last, limits, now)
                .map_err(Stop::Refused)?;
            entry.last = Some(time_text(now));
            Ok(Permit {
                user: Arc::from(user),
                tool: Arc::from(tool),
                day,
                previous: last,
                at: now,
            })
        });
        admitted.map_err(|stop| match stop {
            Stop::Refused(refusal) => refusal,
            Stop::Store(reason) => Refusal::Unavailable {
                store: "rate-limit file".to_owned(),
                reason,
            },
        })
    }

    async fn release(&self, permit: Permit) {
        let released = self.file.update(|doc: &mut LimitsFile| {
            if let Some(entry) = doc
                .usage
                .get_mut(&*permit.tool)
                .and_then(|users| users.get_mut(&*permit.user))
            {
                if entry.day == permit.day {
                    entry.count = entry.count.saturating_sub(1);
                }
                entry.last = permit.previous.map(time_text);
            }
            Ok::<_, StoreError>(())
        });
        if let Err(error) = released {
            tracing::warn!(target: "tool_registry::limits", %error, "a call that did not run still counts");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    use crate::gate::limits::DAY;

    #[tokio::test]
    async fn the_file_store_counts_across_instances_and_gives_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limits.json");
        let limits = Limits {
            cooldown: None,
            daily_limit: Some(2),
        };
        let now = UNIX_EPOCH + Duration::from_secs(20_000 * DAY + 5);
        let first = JsonFileRateLimits::new(&path);
        let permit = first.acquire("u", "t", limits, now).await.unwrap();
        JsonFileRateLimits::new(&path)
            .acquire("u", "t", limits, now)
            .await
            .unwrap();
        let refusal = JsonFileRateLimits::new(&path)
            .acquire("u", "t", limits, now)
            .await
            .unwrap_err();
        assert!(
            matches!(&refusal, Refusal::Limited { limit, .. } if limit == "daily limit of 2 calls"),
            "{refusal:?}"
        );
        first.release(permit).await;
        assert!(first.acquire("u", "t", limits, now).await.is_ok());
        assert!(
            first.acquire("v", "t", limits, now).await.is_ok(),
            "per user"
        );
    }

    #[tokio::test]
    async fn the_file_store_keeps_cooldowns_exact_and_fails_closed_on_a_bad_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limits.json");
        let limits = Limits {
            cooldown: Some(Duration::from_secs(30)),
            daily_limit: None,
        };
        let store = JsonFileRateLimits::new(&path);
        let at = UNIX_EPOCH + Duration::new(20_000 * DAY, 123_456_789);
        store.acquire("u", "t", limits, at).await.unwrap();
        let refusal = store
            .acquire("u", "t", limits, at + Duration::from_secs(10))
            .await
            .unwrap_err();
        assert!(
            matches!(refusal, Refusal::Limited { retry_after, .. } if retry_after == Duration::from_secs(20)),
            "{refusal:?}"
        );
        let permit = store
            .acquire("u", "t", limits, at + Duration::from_secs(30))
            .await
            .unwrap();
        assert_eq!(permit.previous, Some(at), "to the nanosecond");

        std::fs::write(&path, "not json").unwrap();
        let refusal = store.acquire("u", "t", limits, at).await.unwrap_err();
        assert!(
            matches!(&refusal, Refusal::Unavailable { store, reason }
                if store == "rate-limit file" && reason.contains("limits.json") && reason.contains("move it away")),
            "{refusal:?}"
        );
    }
}
