//! [`RedisTaskStore`]: tasks in Redis, so that any instance of a fleet answers for a task
//! another started. A task is the hash `task:{id}` (its version and its record as JSON) until
//! its TTL; each caller's tasks are indexed by a digest of who they are, in `tasks-kept:{who}`
//! (scored by expiry) and `tasks-running:{who}` (scored by the running instance's lease), which
//! the insert script counts against the caller's bounds in the same step as it adds the task.

use std::sync::LazyLock;

use async_trait::async_trait;
use sha2::{Digest, Sha256};

use super::connection::Connection;
use tool_registry_core::task::{TaskError, TaskLimits, TaskRecord, TaskShare, TaskStore};

/// KEYS: the task, its caller's kept index, its caller's running index, then the kept and
/// running index of each of its shares. ARGV: now (ms), the record (JSON), its expiry (ms), its
/// lease (ms), the kept bound, the running bound, the id, the TTL (ms), then the kept and
/// running bound of each share. Returns 0 when added, 1 past the running bound, 2 past the
/// kept bound, 3 when the id is taken, `10 + 2i` past the running bound of share `i`, `11 + 2i`
/// past its kept bound.
static INSERT: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local shares = (#KEYS - 3) / 2
for k = 2, #KEYS do redis.call('ZREMRANGEBYSCORE', KEYS[k], '-inf', ARGV[1]) end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[6]) then return 1 end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then return 2 end
for i = 0, shares - 1 do
  if redis.call('ZCARD', KEYS[5 + 2 * i]) >= tonumber(ARGV[10 + 2 * i]) then return 10 + 2 * i end
  if redis.call('ZCARD', KEYS[4 + 2 * i]) >= tonumber(ARGV[9 + 2 * i]) then return 11 + 2 * i end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return 3 end
redis.call('HSET', KEYS[1], 'v', '0', 'json', ARGV[2])
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
for i = 0, shares do
  redis.call('ZADD', KEYS[2 + 2 * i], ARGV[3], ARGV[7])
  redis.call('ZADD', KEYS[3 + 2 * i], ARGV[4], ARGV[7])
  redis.call('PEXPIRE', KEYS[2 + 2 * i], ARGV[8])
  redis.call('PEXPIRE', KEYS[3 + 2 * i], ARGV[8])
end
return 0
",
    )
});

/// KEYS: the task, its caller's running index, then the running index of each of its shares.
/// ARGV: the version read, the new version, the record (JSON), `1` when it has ended, its lease
/// (ms), the id. Returns 1 when swapped, 0 when the stored version is another (or the task is
/// gone).
static SWAP: LazyLock<redis::Script> = LazyLock::new(|| {
    redis::Script::new(
        r"
local v = redis.call('HGET', KEYS[1], 'v')
if not v or v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'json', ARGV[3])
for k = 2, #KEYS do
  if ARGV[4] == '1' then
    redis.call('ZREM', KEYS[k], ARGV[6])
  else
    redis.call('ZADD', KEYS[k], 'XX', ARGV[5], ARGV[6])
  end
end
return 1
",
    )
});

/// Tasks in Redis, shared by every instance of a fleet (see [`task`](tool_registry_core::task)). While
/// Redis is unreachable, starting, reading and changing a task is the typed error
/// [`TaskError::Store`]; a running task goes on, and records its end once Redis answers within
/// its lease (else it is reported failed, and its instance drops its call).
pub struct RedisTaskStore {
    redis: Connection,
}

impl RedisTaskStore {
    pub(super) fn new(redis: Connection) -> Self {
        Self { redis }
    }

    fn task(&self, id: &str) -> String {
        self.redis.key(&["task", id])
    }

    /// The two indexes of `owner`'s tasks: kept, running. Named by a digest: nothing of who
    /// the caller is can be read in a key.
    fn indexes(&self, owner: &str) -> (String, String) {
        self.indexes_of("", owner)
    }

    /// The two indexes of the tasks under `share`, apart from every owner's.
    fn share_indexes(&self, share: &TaskShare) -> (String, String) {
        self.indexes_of("share:", &share.key)
    }

    fn indexes_of(&self, kind: &str, who: &str) -> (String, String) {
        let digest = Sha256::new()
            .chain_update(kind.as_bytes())
            .chain_update(who.as_bytes())
            .finalize();
        let who: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        (
            self.redis.key(&["tasks-kept", &who]),
            self.redis.key(&["tasks-running", &who]),
        )
    }
}

fn store_error(error: impl std::fmt::Display) -> TaskError {
    TaskError::Store(error.to_string())
}

fn unreadable(error: serde_json::Error) -> TaskError {
    TaskError::Store(format!("a task in Redis is unreadable ({error})"))
}

#[async_trait]
impl TaskStore for RedisTaskStore {
    async fn insert(&self, record: &TaskRecord, limits: &TaskLimits) -> Result<(), TaskError> {
        let json = serde_json::to_string(record).map_err(unreadable)?;
        let (kept, running) = self.indexes(&record.owner);
        let task = self.task(&record.id);
        let now = tool_registry_core::task::now_ms();
        let shares: Vec<(String, String)> = (record.shares.iter())
            .map(|share| self.share_indexes(share))
            .collect();
        let answer: i64 = self
            .redis
            .run(|mut connection| async move {
                let mut insert = INSERT.key(task);
                insert.key(kept).key(running);
                for (kept, running) in shares {
                    insert.key(kept).key(running);
                }
                insert
                    .arg(now)
                    .arg(json)
                    .arg(record.expires_ms())
                    .arg(record.lease_until_ms)
                    .arg(limits.per_caller)
                    .arg(limits.running_per_caller)
                    .arg(&record.id)
                    .arg(record.ttl_ms.max(1));
                for share in &record.shares {
                    insert.arg(share.kept).arg(share.running);
                }
                insert.invoke_async(&mut connection).await
            })
            .await
            .map_err(store_error)?;
        match answer {
            0 => Ok(()),
            1 => Err(TaskError::TooMany {
                limit: limits.running_per_caller,
                what: "running",
            }),
            2 => Err(TaskError::TooMany {
                limit: limits.per_caller,
                what: "kept",
            }),
            3 => Err(TaskError::Store("a task id was drawn twice".to_owned())),
            // `10 + 2i` past share i's running bound, `11 + 2i` past its kept bound.
            past => {
                let at = usize::try_from(past - 10).unwrap_or(usize::MAX);
                match record.shares.get(at / 2) {
                    Some(share) => Err(share.refused(at % 2 == 0)),
                    None => Err(TaskError::Store(format!(
                        "the task store answered {past} to an insert"
                    ))),
                }
            }
        }
    }

    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, TaskError> {
        let task = self.task(id);
        let json: Option<String> = self
            .redis
            .run(|mut connection| async move {
                redis::cmd("HGET")
                    .arg(task)
                    .arg("json")
                    .query_async(&mut connection)
                    .await
            })
            .await
            .map_err(store_error)?;
        json.map(|json| serde_json::from_str(&json).map_err(unreadable))
            .transpose()
    }

    async fn swap(&self, record: &TaskRecord) -> Result<bool, TaskError> {
        let json = serde_json::to_string(record).map_err(unreadable)?;
        let (_, running) = self.indexes(&record.owner);
        let shares: Vec<String> = (record.shares.iter())
            .map(|share| self.share_indexes(share).1)
            .collect();
        let task = self.task(&record.id);
        let ended = if record.status.is_terminal() { 1 } else { 0 };
        let swapped: i64 = self
            .redis
            .run(|mut connection| async move {
                let mut swap = SWAP.key(task);
                swap.key(running);
                for running in shares {
                    swap.key(running);
                }
                swap.arg(record.version.wrapping_sub(1))
                    .arg(record.version)
                    .arg(json)
                    .arg(ended)
                    .arg(record.lease_until_ms)
                    .arg(&record.id)
                    .invoke_async(&mut connection)
                    .await
            })
            .await
            .map_err(store_error)?;
        Ok(swapped == 1)
    }

    async fn list(&self, owner: &str) -> Result<Vec<TaskRecord>, TaskError> {
        let (kept, _) = self.indexes(owner);
        let now = tool_registry_core::task::now_ms();
        let ids: Vec<String> = self
            .redis
            .run(|mut connection| async move {
                redis::cmd("ZRANGEBYSCORE")
                    .arg(kept)
                    .arg(now)
                    .arg("+inf")
                    .query_async(&mut connection)
                    .await
            })
            .await
            .map_err(store_error)?;
        let mut tasks = Vec::with_capacity(ids.len());
        for id in ids {
            if let Some(task) = self.load(&id).await?
                && task.owner == owner
            {
                tasks.push(task);
            }
        }
        tasks.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(a.id.cmp(&b.id)));
        Ok(tasks)
    }
}
