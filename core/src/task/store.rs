//! Where tasks are kept: [`TaskStore`], the four operations a store answers (insert within the
//! caller's bounds, load, swap over a version, list a caller's), and [`InMemoryTaskStore`], the
//! store of one process. A fleet's store is `redis::RedisTaskStore`.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::record::{TaskRecord, now_ms};
use super::{TaskError, TaskLimits};

/// Where tasks are kept. Every change of a task is a [`swap`](Self::swap) over the version
/// it was read at, so that two instances changing one task at once (a cancel racing the end of
/// the call) never both win: the loser reads the task again and decides anew.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Keeps `record`, a new task, unless its owner keeps [`TaskLimits::per_caller`] tasks
    /// already, or runs [`TaskLimits::running_per_caller`], or one of the record's
    /// [`shares`](TaskRecord::shares) is used up ([`TaskError::TooMany`]), counted in the same
    /// step as the task is added.
    async fn insert(&self, record: &TaskRecord, limits: &TaskLimits) -> Result<(), TaskError>;

    /// The task `id`, unless it does not exist or has expired.
    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, TaskError>;

    /// Stores `record` in place of the one at version `record.version - 1`: `Ok(false)` when
    /// the stored one changed since (or is gone), and nothing was written.
    async fn swap(&self, record: &TaskRecord) -> Result<bool, TaskError>;

    /// The tasks of `owner` not expired, newest first.
    async fn list(&self, owner: &str) -> Result<Vec<TaskRecord>, TaskError>;
}

/// The tasks of this process, in its memory: what a registry keeps unless told otherwise.
/// Tasks end with the process.
#[derive(Default)]
pub struct InMemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl InMemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

fn purge(tasks: &mut HashMap<String, TaskRecord>, now: u64) {
    tasks.retain(|_, task| !task.expired(now));
}

#[async_trait]
impl TaskStore for InMemoryTaskStore {
    async fn insert(&self, record: &TaskRecord, limits: &TaskLimits) -> Result<(), TaskError> {
        let now = now_ms();
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        purge(&mut tasks, now);
        let (mut kept, mut running) = (0, 0);
        // Kept and running, for each of the record's shares.
        let mut shared = vec![(0, 0); record.shares.len()];
        for task in tasks.values() {
            let live = usize::from(!task.status.is_terminal() && !task.abandoned(now));
            if task.owner == record.owner {
                kept += 1;
                running += live;
            }
            for (share, counts) in record.shares.iter().zip(&mut shared) {
                if task.shares.iter().any(|theirs| theirs.key == share.key) {
                    counts.0 += 1;
                    counts.1 += live;
                }
            }
        }
        limits.admit(kept, running)?;
        for (share, (kept, running)) in record.shares.iter().zip(shared) {
            share.admit(kept, running)?;
        }
        tasks.insert(record.id.clone(), record.clone());
        Ok(())
    }

    async fn load(&self, id: &str) -> Result<Option<TaskRecord>, TaskError> {
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        Ok(tasks
            .get(id)
            .filter(|task| !task.expired(now_ms()))
            .cloned())
    }

    async fn swap(&self, record: &TaskRecord) -> Result<bool, TaskError> {
        let mut tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        match tasks.get_mut(&record.id) {
            Some(stored) if stored.version.wrapping_add(1) == record.version => {
                *stored = record.clone();
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn list(&self, owner: &str) -> Result<Vec<TaskRecord>, TaskError> {
        let now = now_ms();
        let tasks = self.tasks.lock().unwrap_or_else(|p| p.into_inner());
        let mut mine: Vec<TaskRecord> = tasks
            .values()
            .filter(|task| task.owner == owner && !task.expired(now))
            .cloned()
            .collect();
        mine.sort_by(|a, b| b.created_ms.cmp(&a.created_ms).then(a.id.cmp(&b.id)));
        Ok(mine)
    }
}
