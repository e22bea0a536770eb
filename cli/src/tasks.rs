//! Tasks on the command line: the bounds and timing `mcp` runs its tasks with
//! (`--task-after`, `--task-lease`, `--guest-tasks-per-address`, `--guest-tasks`), where they are kept (the fleet's Redis with `--redis`, the
//! process's memory otherwise), and `tasks list|get|cancel` on a fleet's tasks.

use std::io::Write;
use std::sync::Arc;

use super::output::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, print_json, shown};
use super::runtime::block_on;
use tool_registry_core::Scope;
use tool_registry_core::task::{
    GuestTaskLimits, InMemoryTaskStore, TaskLimits, TaskStore, Tasks, owner_of,
};

/// The timing of the tasks a server runs.
#[derive(clap::Args, Clone)]
pub(super) struct TaskArgs {
    /// How long a `task = "optional"` call runs within its request before it becomes a task
    /// for a client that follows tasks.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = humantime::parse_duration)]
    task_after: std::time::Duration,
    /// How long a task's instance holds it without renewing: a task whose instance stopped is
    /// failed this long after its last renewal at most.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    task_lease: std::time::Duration,
    /// How many tasks the guests (callers without a token) of one address run at once.
    #[arg(long, value_name = "N", default_value_t = GuestTaskLimits::default().running_per_peer)]
    guest_tasks_per_address: usize,
    /// How many tasks all the guests together run at once.
    #[arg(long, value_name = "N", default_value_t = GuestTaskLimits::default().running)]
    guest_tasks: usize,
}

impl TaskArgs {
    /// The tasks of a server: in `store`, with these timings.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the servers are `http`'s and `mcp`'s
    pub(super) fn tasks(&self, store: Option<Arc<dyn TaskStore>>) -> Tasks {
        let limits = TaskLimits {
            after: self.task_after,
            lease: self.task_lease.max(std::time::Duration::from_millis(100)),
            guests: GuestTaskLimits {
                running_per_peer: self.guest_tasks_per_address,
                running: self.guest_tasks,
                ..GuestTaskLimits::default()
            },
            ..TaskLimits::default()
        };
        Tasks::new(
            store.unwrap_or_else(|| Arc::new(InMemoryTaskStore::new())),
            limits,
        )
    }
}

/// `tasks`: what to do with the caller's tasks.
#[derive(clap::Subcommand)]
pub(super) enum TasksCommand {
    /// The caller's tasks, newest first: id, status, tool, last change, message.
    List,
    /// One task of the caller, as JSON (its result once it completed).
    Get {
        /// The task's id.
        id: String,
    },
    /// Cancels one task of the caller: it is cancelled at once, and its call is dropped by
    /// the instance running it.
    Cancel {
        /// The task's id.
        id: String,
    },
}

/// `tasks`: on the fleet's store (`store`), as the caller `scope`; a task of another caller
/// is not found, as an unknown id.
pub(super) fn tasks(
    command: TasksCommand,
    store: Option<Arc<dyn TaskStore>>,
    scope: &Scope,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Some(store) = store else {
        let _ = writeln!(
            err,
            "error: tasks live in the memory of the server that runs them; give --redis URL (or $TOOLREG_REDIS) to read a fleet's tasks."
        );
        return EXIT_USAGE;
    };
    let tasks = Tasks::new(store, TaskLimits::default());
    let owner = owner_of(scope);
    let outcome = block_on(err, async {
        match &command {
            TasksCommand::List => tasks.list(&owner).await.map(|list| {
                if list.is_empty() {
                    let _ = writeln!(out, "no tasks");
                }
                for task in list {
                    let when =
                        std::time::UNIX_EPOCH + std::time::Duration::from_millis(task.updated_ms);
                    let _ = writeln!(
                        out,
                        "{}  {:<14}  {}  {}  {}",
                        task.id,
                        task.status.as_str(),
                        shown(&task.tool),
                        humantime::format_rfc3339_seconds(when),
                        shown(task.message.as_deref().unwrap_or(""))
                    );
                }
            }),
            TasksCommand::Get { id } => tasks.get(&owner, id).await.map(|task| {
                let _ = print_json(out, &task);
            }),
            TasksCommand::Cancel { id } => tasks.cancel(&owner, id).await.map(|task| {
                let _ = writeln!(out, "cancelled {}", task.id);
            }),
        }
    });
    match outcome {
        Some(Ok(())) => EXIT_OK,
        Some(Err(error)) => {
            let _ = writeln!(err, "error: {error}");
            EXIT_TOOL_ERROR
        }
        None => EXIT_TOOL_ERROR,
    }
}
