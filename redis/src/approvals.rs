//! [`RedisApprovals`]: pending calls in Redis, under `approval:{token}` with the expiry they
//! were signed with, taken with one `GETDEL`, so that a token runs at most once across the
//! fleet.

use std::sync::OnceLock;
use std::time::SystemTime;

use async_trait::async_trait;
use redis::AsyncCommands;

use super::connection::Connection;
use tool_registry_core::gate::{ApprovalKey, ApprovalStore, PendingCall};

/// Pending approvals in Redis, shared by every instance of a fleet: a call kept on one
/// instance can be approved, denied or run on any other, once.
///
/// The calls are signed with the application's key
/// ([`RegistryBuilder::approval_key`](tool_registry_core::RegistryBuilder::approval_key)) when it gives one,
/// which every instance must then share; otherwise with a key kept in Redis beside them
/// (`approval-key`, made once by the first instance that needs it). A key kept in Redis
/// protects against a changed call only from those who can read nothing there: give the key
/// from the application's own secrets to keep Redis out of what a call may run.
pub struct RedisApprovals {
    redis: Connection,
    key: OnceLock<ApprovalKey>,
}

impl RedisApprovals {
    pub(super) fn new(redis: Connection) -> Self {
        Self {
            redis,
            key: OnceLock::new(),
        }
    }

    fn slot(&self, token: &str) -> String {
        self.redis.key(&["approval", token])
    }
}

fn unreadable(error: serde_json::Error) -> String {
    format!("a pending call in Redis is unreadable ({error}); it was left as it is")
}

#[async_trait]
impl ApprovalStore for RedisApprovals {
    async fn put(&self, token: &str, call: PendingCall) -> Result<(), String> {
        let left = call
            .expires_at
            .duration_since(SystemTime::now())
            .unwrap_or_default()
            .as_millis()
            .max(1);
        let ttl = u64::try_from(left).unwrap_or(u64::MAX);
        let text = serde_json::to_string(&call).map_err(|e| e.to_string())?;
        let slot = self.slot(token);
        self.redis
            .run(|mut connection| async move {
                connection.pset_ex::<_, _, ()>(slot, text, ttl).await
            })
            .await
            .map_err(|e| e.to_string())
    }

    async fn get(&self, token: &str) -> Result<Option<PendingCall>, String> {
        let slot = self.slot(token);
        let text: Option<String> = self
            .redis
            .run(|mut connection| async move { connection.get(slot).await })
            .await
            .map_err(|e| e.to_string())?;
        text.map(|text| serde_json::from_str(&text).map_err(unreadable))
            .transpose()
    }

    async fn take(&self, token: &str) -> Result<Option<PendingCall>, String> {
        let slot = self.slot(token);
        let text: Option<String> = self
            .redis
            .run(|mut connection| async move { connection.get_del(slot).await })
            .await
            .map_err(|e| e.to_string())?;
        text.map(|text| serde_json::from_str(&text).map_err(unreadable))
            .transpose()
    }

    async fn key(&self) -> Result<Option<ApprovalKey>, String> {
        if let Some(key) = self.key.get() {
            return Ok(Some(key.clone()));
        }
        let mut fresh = [0u8; 32];
        getrandom::fill(&mut fresh)
            .map_err(|e| format!("no randomness for an approval key: {e}"))?;
        let fresh: String = fresh.iter().map(|b| format!("{b:02x}")).collect();
        let slot = self.redis.key(&["approval-key"]);
        // The first instance's key wins; every other reads it.
        let kept: String = self
            .redis
            .run(|mut connection| async move {
                let _: bool = connection.set_nx(&slot, &fresh).await?;
                connection.get(&slot).await
            })
            .await
            .map_err(|e| e.to_string())?;
        if kept.len() < 32 {
            return Err(format!(
                "the approval key in Redis is too short ({} bytes); delete it and one is made again",
                kept.len()
            ));
        }
        Ok(Some(
            self.key.get_or_init(|| ApprovalKey::new(kept)).clone(),
        ))
    }
}
