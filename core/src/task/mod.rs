//! Calls that outlive their request: a tool declared `#[tool(task = "optional")]` (or
//! `"required"`, or [`ToolSpecBuilder::task`](crate::spec::ToolSpecBuilder::task)) runs as a
//! task for a client that can follow one (MCP's tasks extension,
//! `io.modelcontextprotocol/tasks`): the call answers with a handle at once, runs on, and the
//! client reads its state, progress and result, answers its question, or cancels it.
//!
//! The files are listed from the bottom layer up: each imports only files listed before it.
//!
//! | file | what |
//! | --- | --- |
//! | `share.rs` | [`TaskOwner`]: who a task is for ([`owner_of`] a named caller, [`TaskOwner::guest`] a network guest), and the [`TaskShare`]s of bounds it counts against |
//! | `record.rs` | [`TaskRecord`]: one task as a store keeps it, and every change of its state |
//! | `inputs.rs` | [`TaskInputs`]: the questions a task's call asks while it runs, and their answers |
//! | `store.rs` | [`TaskStore`] (insert within bounds, load, swap over a version, list) and [`InMemoryTaskStore`]; a fleet's is `redis::RedisTaskStore` (feature `redis`) |
//! | `run.rs` | [`Tasks`]: a call run as a task (spawned, its lease and progress written, its end recorded once); read, answer, cancel, list |
//!
//! **Who sees a task.** A task belongs to the caller that started it ([`TaskOwner`]; for a
//! named caller [`owner_of`]: its user and permission level). Every read and change names the
//! caller, and another caller's task is [`TaskError::NotFound`], the same answer as an id that
//! never existed. Guests of a network server have no name ([`TaskOwner::guest`]): a guest's
//! task started in a session (MCP's 2025-11-25 revision) is that session's alone, so its
//! `tasks/list` shows no other guest's task; a task started by a request of no session (MCP's
//! stateless 2026-07-28 revision, an HTTP module's `/execute`) is reached only through its id,
//! 128 bits from the operating system's CSPRNG, which only the request that started it was
//! told, and no list shows it.
//!
//! **What a caller may keep.** A caller runs at most [`TaskLimits::running_per_caller`] tasks
//! and keeps [`TaskLimits::per_caller`]. A guest's task also counts against the shares of
//! [`TaskLimits::guests`] ([`TaskShare`]): the guests of one peer address together, and all the
//! guests together, so that one guest holding many sessions or sending many requests uses up
//! its address's share, never every guest's.
//!
//! **In a fleet.** With a store shared by the instances (`redis::RedisTaskStore`), any instance
//! answers for any task; the instance running a task renews its lease every third of
//! [`TaskLimits::lease`], and a task whose instance stopped is [`TaskStatus::Failed`] once its
//! lease ran out, never left working. Every change is a compare-and-swap over the task's version,
//! so a cancel racing the end of the call has one winner, and the call never runs twice.
//!
//! ```no_run
//! # async fn run() -> Result<(), tool_registry::task::TaskError> {
//! use tool_registry::task::{Become, Started, TaskCall, Tasks, owner_of};
//! use tool_registry::{Ctx, Registry, Scope};
//!
//! let tasks = Tasks::default(); // in this process's memory
//! let scope = Scope::user("alice");
//! let args = serde_json::json!({"year": 2026});
//! let call = TaskCall::new("build_report", args, Ctx::for_scope(scope.clone()));
//! if let Started::Task(task) = tasks.run(Registry::global().into(), call, Become::Now).await? {
//!     let now = tasks.get(&owner_of(&scope), &task.id).await?;
//!     println!("{}: {}", now.id, now.status.as_str());
//! }
//! # Ok(()) }
//! ```

mod inputs;
mod record;
mod run;
mod share;
mod store;

use std::time::Duration;

pub use crate::meta::TaskSupport;
pub use inputs::{MAX_TASK_INPUTS, TaskInputs};
pub use record::millis;
pub use record::now_ms;
pub use record::{TaskAnswer, TaskQuestion, TaskRecord, TaskStatus};
pub use run::{Become, Started, TaskCall, Tasks};
pub use share::{GuestTaskLimits, ShareKind, TaskOwner, TaskShare, owner_of};
pub use store::{InMemoryTaskStore, TaskStore};

use crate::call::ToolResult;

/// The bounds on tasks, and their timing.
#[derive(Debug, Clone)]
pub struct TaskLimits {
    /// How long a `task = "optional"` call runs within its request before it becomes a task
    /// (1 s unless set).
    pub after: Duration,
    /// How long a task is kept from its creation, its result included (1 hour unless set).
    pub ttl: Duration,
    /// How often a client is asked to poll (500 ms unless set).
    pub poll_interval: Duration,
    /// How long the instance running a task holds it without renewing (10 s unless set): a
    /// task whose instance stopped is failed this long after its last renewal at most.
    pub lease: Duration,
    /// The most tasks one caller keeps, ended ones included until their TTL (100 unless set).
    pub per_caller: usize,
    /// The most tasks one caller has running at once (32 unless set).
    pub running_per_caller: usize,
    /// The largest result a task keeps, in bytes of JSON (4 MiB unless set): a task whose
    /// result is larger fails, saying so, so that what one caller keeps is bounded by
    /// `per_caller` times this.
    pub max_result_bytes: usize,
    /// What the guests of a network server may keep and run, per peer address and together
    /// ([`GuestTaskLimits::default`] unless set).
    pub guests: GuestTaskLimits,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            after: Duration::from_secs(1),
            ttl: Duration::from_secs(3600),
            poll_interval: Duration::from_millis(500),
            lease: Duration::from_secs(10),
            per_caller: 100,
            running_per_caller: 32,
            max_result_bytes: 4 << 20,
            guests: GuestTaskLimits::default(),
        }
    }
}

impl TaskLimits {
    /// Whether a caller that keeps `kept` tasks, `running` of them running, may start one more.
    pub fn admit(&self, kept: usize, running: usize) -> Result<(), TaskError> {
        if running >= self.running_per_caller {
            return Err(TaskError::TooMany {
                limit: self.running_per_caller,
                what: "running",
            });
        }
        if kept >= self.per_caller {
            return Err(TaskError::TooMany {
                limit: self.per_caller,
                what: "kept",
            });
        }
        Ok(())
    }
}

/// Why a task could not be started, read or changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TaskError {
    /// No task of this caller has this id: it never existed, has expired, or is another
    /// caller's.
    #[error("task not found: no task of yours has this id (it may have expired)")]
    NotFound,
    /// The caller has as many tasks as it may.
    #[error(
        "too many tasks: you have {limit} {what} already; wait for some to end (or expire), or cancel some"
    )]
    TooMany {
        /// The bound reached.
        limit: usize,
        /// `running` or `kept`, and for a share of the guests' bounds, whose tasks they are.
        what: &'static str,
    },
    /// The task has ended: nothing changes it any more.
    #[error("the task has ended ({}); nothing changes it any more", .0.as_str())]
    Ended(TaskStatus),
    /// The task asks no question now.
    #[error("the task asks no question now; read its state with tasks/get")]
    NoQuestion,
    /// Other changes of the task won every try: try again.
    #[error("the task is changing under many hands at once; try again")]
    Busy,
    /// The store of tasks failed (Redis unreachable, an unreadable record).
    #[error("the task store failed: {0}")]
    Store(String),
}

/// The bounds of a share, checked where a store adds a task.
impl TaskShare {
    /// Whether one more task fits when `kept` tasks are kept under this share, `running` of
    /// them running.
    pub fn admit(&self, kept: usize, running: usize) -> Result<(), TaskError> {
        if running >= self.running {
            return Err(self.refused(true));
        }
        if kept >= self.kept {
            return Err(self.refused(false));
        }
        Ok(())
    }

    /// The error of a task refused for this share's bound on running tasks (`running`), or on
    /// kept ones.
    pub fn refused(&self, running: bool) -> TaskError {
        let what = match (self.kind, running) {
            (ShareKind::Peer, true) => "running among the guests of your address",
            (ShareKind::Peer, false) => "kept among the guests of your address",
            (ShareKind::Guests, true) => "running among all guests",
            (ShareKind::Guests, false) => "kept among all guests",
        };
        let limit = if running { self.running } else { self.kept };
        TaskError::TooMany { limit, what }
    }
}

/// A new task id: 128 random bits as 32 hex digits.
pub(crate) fn new_id() -> Result<String, TaskError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|error| TaskError::Store(format!("no randomness for a task id: {error}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `id` can be a task id: 32 lowercase hex digits.
pub(crate) fn is_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The approval token a result waits under, when it is a call that waits for a person's
/// approval (outcome `needs_approval`).
pub fn approval_token(result: &ToolResult) -> Option<&str> {
    if result.success || result.audit.outcome.as_deref() != Some("needs_approval") {
        return None;
    }
    result
        .content
        .pointer("/error/token")
        .and_then(serde_json::Value::as_str)
}
