//! [`Tasks`]: a call run as a task (spawned, its progress and lease written to the store, its
//! end recorded once), and what a caller may do with its own tasks: read, answer, cancel, list.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::task::JoinHandle;

use super::record::{Refused, TaskAnswer, TaskQuestion, TaskRecord, now_ms};
use super::store::{InMemoryTaskStore, TaskStore};
use super::{TaskError, TaskLimits, approval_token};
use crate::registry::Shared;
use crate::{Ctx, ToolResult};

/// How many times a change of a task is tried against changes made at the same moment by other
/// instances before it gives up ([`TaskError::Busy`]).
const SWAP_ATTEMPTS: usize = 16;

/// The tasks of a server: where they are kept and the bounds on them. Cheap to clone.
///
/// A call run as a task is spawned on the current Tokio runtime; the instance that runs it
/// renews its lease in the store every third of [`TaskLimits::lease`], writes its progress, and
/// records its end once. Any instance sharing the store answers for it: its state, a person's
/// answer to its question, its cancellation (the running instance drops the call at its next
/// renewal). A task whose instance stopped is reported [`TaskStatus::Failed`](super::TaskStatus::Failed) once its lease
/// has run out.
#[derive(Clone)]
pub struct Tasks {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn TaskStore>,
    limits: TaskLimits,
}

/// One call to run as a task: the tool, its arguments, and the context it runs with (its
/// caller's scope; its progress is the task's).
pub struct TaskCall {
    /// The tool's name, as the caller sees it.
    pub tool: String,
    /// The arguments.
    pub arguments: Value,
    /// The call's context.
    pub ctx: Ctx,
    /// Who the task is for, and the shares it counts against ([`TaskOwner::of`](super::TaskOwner::of)
    /// the caller's scope, or a network server's guest's [`TaskOwner::guest`](super::TaskOwner::guest)).
    pub owner: super::TaskOwner,
    /// Whether the client answers a question through the task ([`TaskStatus::InputRequired`](super::TaskStatus::InputRequired)
    /// and [`Tasks::answer`]); when not, a call that needs a person's approval completes the
    /// task with its result, which names the approval token.
    pub asks: bool,
    /// Where the call's link asks its client questions while the task runs
    /// ([`TaskInputs`](super::TaskInputs)); `None` when its link asks none through the task.
    pub inputs: Option<super::TaskInputs>,
}

impl TaskCall {
    /// The call of `tool` with `arguments` in `ctx`, for the caller of `ctx`'s scope, who
    /// answers questions through the task.
    pub fn new(tool: impl Into<String>, arguments: Value, ctx: Ctx) -> Self {
        let owner = super::TaskOwner::of(ctx.scope());
        Self {
            tool: tool.into(),
            arguments,
            ctx,
            owner,
            asks: true,
            inputs: None,
        }
    }
}

/// When a call becomes a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Become {
    /// At once (a tool with `task = "required"`).
    Now,
    /// When it is still running after [`TaskLimits::after`] (`task = "optional"`).
    IfSlow,
    /// After at most [`TaskLimits::after`], or at its first question through the task: a call
    /// that ends first is a task that has ended. The call runs within its request until then,
    /// so a question it asks there comes back with the request (`task = "required"` on MCP's
    /// stateless revision).
    Soon,
}

/// What [`Tasks::run`] started.
// Made once per call that may become a task, and moved once: a box would cost more than the
// bytes it saves.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Started {
    /// The call ended before it became a task: its result.
    Ended(ToolResult),
    /// The call runs as this task.
    Task(TaskRecord),
}

impl Default for Tasks {
    fn default() -> Self {
        Self::new(Arc::new(InMemoryTaskStore::new()), TaskLimits::default())
    }
}

impl Tasks {
    /// The tasks kept in `store`, within `limits`.
    pub fn new(store: Arc<dyn TaskStore>, limits: TaskLimits) -> Self {
        Self {
            inner: Arc::new(Inner { store, limits }),
        }
    }

    /// The bounds on these tasks.
    pub fn limits(&self) -> &TaskLimits {
        &self.inner.limits
    }

    /// Runs `call` on `registry` through the whole pipeline, as a task when it becomes one
    /// (`when`). A call that ends first answers with its result; a caller with
    /// [`TaskLimits::running_per_caller`] tasks running, or [`TaskLimits::per_caller`] kept,
    /// gets [`TaskError::TooMany`] for a `Now` call, and its `IfSlow` call goes on as a call
    /// that answers within the request.
    pub async fn run(
        &self,
        registry: Shared,
        call: TaskCall,
        when: Become,
    ) -> Result<Started, TaskError> {
        let limits = &self.inner.limits;
        let id = super::new_id()?;
        let TaskCall {
            tool,
            arguments,
            ctx,
            owner,
            asks,
            inputs,
        } = call;
        let mut record = TaskRecord::new(id, owner, tool.clone(), limits.ttl, limits.lease);
        let progress = Arc::new(Progress::default());
        let ctx = progress.wire(ctx);
        // From here the call's questions go to the task.
        let mut questions = (when == Become::Now)
            .then(|| inputs.as_ref().and_then(super::TaskInputs::take))
            .flatten();
        if when == Become::Now
            && let Err(error) = self.inner.store.insert(&record, limits).await
        {
            // An operator sees a caller (a guest's address, all guests) held at its bound.
            tracing::info!(tool, %error, "a task was not started");
            return Err(error);
        }
        // Until the task exists, the call is this request's: dropping the request (a client's
        // cancellation) stops it, as it stops a call that is no task.
        let mut running = AbortOnDrop(Some(spawn_call(
            &registry,
            &tool,
            arguments.clone(),
            &ctx,
            None,
        )));
        if matches!(when, Become::IfSlow | Become::Soon) {
            let asked = async {
                match &inputs {
                    Some(inputs) => inputs.asked().await,
                    None => std::future::pending().await,
                }
            };
            // A call that asks its client becomes a task at once: its question is the task's.
            tokio::select! {
                joined = running.handle() => {
                    let result = joined_result(joined);
                    if when == Become::IfSlow {
                        return Ok(Started::Ended(result));
                    }
                    // Always a task: one that has ended, its end recorded as any other's.
                    running = AbortOnDrop(Some(tokio::spawn(async move { result })));
                }
                () = tokio::time::sleep(limits.after) => {}
                () = asked => {}
            }
            questions = inputs.as_ref().and_then(super::TaskInputs::take);
            record.lease_until_ms = now_ms().saturating_add(super::millis(limits.lease));
            if let Err(error) = self.inner.store.insert(&record, limits).await {
                tracing::info!(tool, %error, "a slow call did not become a task; it answers within its request");
                return Ok(Started::Ended(joined_result(running.handle().await)));
            }
            entered(record.status);
        }
        let running = running.release();
        let driver = Driver {
            inner: self.inner.clone(),
            registry,
            id: record.id.clone(),
            tool,
            arguments,
            ctx,
            progress,
            asks,
            inputs: questions,
            waiting: BTreeMap::new(),
        };
        tokio::spawn(driver.drive(running));
        Ok(Started::Task(record))
    }

    /// The task `id` of `owner`: [`TaskError::NotFound`] for an unknown id, an expired task and
    /// another caller's alike. A task whose instance stopped is failed here, once its lease ran
    /// out.
    pub async fn get(&self, owner: &str, id: &str) -> Result<TaskRecord, TaskError> {
        let task = self.load(owner, id).await?;
        if task.abandoned(now_ms()) {
            return self.update(owner, id, |_| Ok(())).await;
        }
        Ok(task)
    }

    /// The tasks of `owner`, newest first.
    pub async fn list(&self, owner: &str) -> Result<Vec<TaskRecord>, TaskError> {
        let mut tasks = self.inner.store.list(owner).await?;
        for task in &mut tasks {
            if task.abandoned(now_ms()) {
                *task = self.get(owner, &task.id.clone()).await?;
            }
        }
        Ok(tasks)
    }

    /// Cancels the task `id` of `owner`: it is [`TaskStatus::Cancelled`](super::TaskStatus::Cancelled) at once, and the
    /// instance running it drops the call at its next renewal. [`TaskError::Ended`] for a task
    /// that ended first (its end stands).
    pub async fn cancel(&self, owner: &str, id: &str) -> Result<TaskRecord, TaskError> {
        self.update(owner, id, TaskRecord::cancel).await
    }

    /// Answers the question of the task `id` of `owner`. [`TaskError::NoQuestion`] when it asks
    /// none now.
    pub async fn answer(
        &self,
        owner: &str,
        id: &str,
        answer: TaskAnswer,
    ) -> Result<TaskRecord, TaskError> {
        self.update(owner, id, |task| task.answer(answer)).await
    }

    /// Gives the client's answers to the questions the call of task `id` of `owner` asks
    /// ([`TaskInputs`](super::TaskInputs)): those it asks are kept for the instance running it,
    /// the rest ignored. How many were kept.
    pub async fn respond(
        &self,
        owner: &str,
        id: &str,
        responses: BTreeMap<String, Value>,
    ) -> Result<usize, TaskError> {
        let mut kept = 0;
        self.update(owner, id, |task| {
            kept = task.respond(responses.clone())?;
            Ok(())
        })
        .await?;
        Ok(kept)
    }

    async fn load(&self, owner: &str, id: &str) -> Result<TaskRecord, TaskError> {
        // An id this registry cannot have given (a megabyte, a key pattern) never reaches the
        // store.
        if !super::is_id(id) {
            return Err(TaskError::NotFound);
        }
        match self.inner.store.load(id).await? {
            // Another caller's task is answered as an unknown one, from the same check.
            Some(task) if task.owner == owner => Ok(task),
            _ => Err(TaskError::NotFound),
        }
    }

    /// Applies `change` to the task `id` of `owner` over the version read, again while
    /// another change wins the race; a task whose lease ran out is failed first.
    async fn update(
        &self,
        owner: &str,
        id: &str,
        mut change: impl FnMut(&mut TaskRecord) -> Result<(), Refused>,
    ) -> Result<TaskRecord, TaskError> {
        for _ in 0..SWAP_ATTEMPTS {
            let mut task = self.load(owner, id).await?;
            let before = task.status;
            if task.abandoned(now_ms()) {
                let _ = task.fail(ABANDONED.to_owned());
            } else {
                change(&mut task).map_err(TaskError::from)?;
            }
            task.version += 1;
            if self.inner.store.swap(&task).await? {
                if task.status != before {
                    entered(task.status);
                }
                return Ok(task);
            }
        }
        Err(TaskError::Busy)
    }
}

/// A task entered `status`: the counter `tool_registry_tasks_total{state}` of the `metrics`
/// facade (nothing but an atomic load where no recorder is installed).
fn entered(status: super::TaskStatus) {
    metrics::counter!("tool_registry_tasks_total", "state" => status.as_str()).increment(1);
}

/// Why a task whose instance stopped failed.
const ABANDONED: &str =
    "the instance running the task stopped before it ended (its lease ran out); run the call again";

/// The latest progress of a running task, written by its call and read at each renewal.
#[derive(Default)]
struct Progress {
    steps: AtomicU64,
    message: Mutex<String>,
}

impl Progress {
    /// `ctx` with its progress going to this task.
    fn wire(self: &Arc<Self>, ctx: Ctx) -> Ctx {
        let progress = self.clone();
        ctx.with_progress(move |message| {
            let mut last = progress.message.lock().unwrap_or_else(|p| p.into_inner());
            *last = message;
            progress.steps.fetch_add(1, Ordering::Release);
        })
    }

    fn read(&self) -> Option<(u64, String)> {
        let steps = self.steps.load(Ordering::Acquire);
        (steps > 0).then(|| {
            let message = self.message.lock().unwrap_or_else(|p| p.into_inner());
            (steps, message.clone())
        })
    }
}

/// A spawned call aborted when dropped, until [`release`](Self::release) hands it on.
struct AbortOnDrop(Option<JoinHandle<ToolResult>>);

impl AbortOnDrop {
    fn handle(&mut self) -> &mut JoinHandle<ToolResult> {
        self.0.as_mut().expect("held until released")
    }

    fn release(mut self) -> JoinHandle<ToolResult> {
        self.0.take().expect("released once")
    }
}

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = &self.0 {
            handle.abort();
        }
    }
}

fn spawn_call(
    registry: &Shared,
    tool: &str,
    arguments: Value,
    ctx: &Ctx,
    approval: Option<String>,
) -> JoinHandle<ToolResult> {
    let (registry, tool, ctx) = (registry.clone(), tool.to_owned(), ctx.clone());
    tokio::spawn(async move {
        let call = registry.call(&tool, arguments, &ctx);
        match approval {
            Some(token) => call.approved(&token).for_model().await,
            None => call.for_model().await,
        }
    })
}

/// Why a call ended without an answer of its tool, when it did: it panicked, ran out of
/// time, had no handler, was misconfigured, or a gate or store it needed was away. Such a task
/// fails (MCP's `failed`, with the error inlined); a tool's own failure, bad arguments or a
/// refusal are answers, and the task completes with them.
fn unanswered(result: &ToolResult) -> Option<String> {
    const UNANSWERED: &[&str] = &[
        "panicked",
        "timed_out",
        "no_handler",
        "misconfigured",
        "gate_unavailable",
        "store_unavailable",
    ];
    let outcome = result.audit.outcome.as_deref()?;
    (!result.success && UNANSWERED.contains(&outcome)).then(|| {
        result
            .message
            .clone()
            .or_else(|| result.content.as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("the call ended without an answer ({outcome})"))
    })
}

fn joined_result(joined: Result<ToolResult, tokio::task::JoinError>) -> ToolResult {
    joined.unwrap_or_else(|error| ToolResult::failure(format!("the task's call stopped: {error}")))
}

/// The instance's side of one task: runs its call, renews its lease, records its end.
struct Driver {
    inner: Arc<Inner>,
    registry: Shared,
    id: String,
    tool: String,
    arguments: Value,
    ctx: Ctx,
    progress: Arc<Progress>,
    asks: bool,
    /// The questions the call asks while it runs.
    inputs: Option<tokio::sync::mpsc::Receiver<super::inputs::Asked>>,
    /// The questions asked and not yet answered, by name.
    waiting: BTreeMap<String, tokio::sync::oneshot::Sender<Value>>,
}

/// What the store says at a renewal.
enum Heard {
    /// Go on, with the client's answers to the call's questions.
    Running(BTreeMap<String, Value>),
    /// A person answered the question.
    Answered(TaskAnswer, TaskQuestion),
    /// The task ended without this instance (cancelled, failed, expired): drop the call.
    Stop,
}

impl Driver {
    async fn drive(mut self, mut running: JoinHandle<ToolResult>) {
        // Often enough for a poll to see fresh progress, and to hold the lease.
        let limits = &self.inner.limits;
        let every = (limits.lease / 3).min(limits.poll_interval);
        let mut tick = tokio::time::interval(every.max(Duration::from_millis(10)));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            // The call runs; the lease is renewed until it ends.
            let result = loop {
                let asked = async {
                    match &mut self.inputs {
                        Some(inputs) => inputs.recv().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    joined = &mut running => break joined_result(joined),
                    asked = asked => match asked {
                        Some(asked) => {
                            let (key, request) = (asked.key.clone(), asked.request);
                            self.waiting.insert(asked.key, asked.answer);
                            if !self.end(|task| task.pose(key.clone(), request.clone())).await {
                                running.abort();
                                return;
                            }
                        }
                        None => self.inputs = None,
                    },
                    _ = tick.tick() => match self.renew().await {
                        Heard::Stop => {
                            running.abort();
                            return;
                        }
                        Heard::Running(answers) => {
                            for (key, answer) in answers {
                                if let Some(waiting) = self.waiting.remove(&key) {
                                    let _ = waiting.send(answer);
                                }
                            }
                        }
                        Heard::Answered(..) => {}
                    },
                }
            };
            let token = approval_token(&result)
                .filter(|_| self.asks)
                .map(str::to_owned);
            let Some(token) = token else {
                if let Some(reason) = unanswered(&result) {
                    self.end(|task| task.fail(reason.clone())).await;
                    return;
                }
                let bytes = serde_json::to_vec(&result).map_or(usize::MAX, |json| json.len());
                let limit = self.inner.limits.max_result_bytes;
                if bytes > limit {
                    let reason = format!(
                        "the result ({bytes} bytes) is larger than the {limit} bytes a task keeps; call the tool without a task, or ask for less"
                    );
                    self.end(|task| task.fail(reason.clone())).await;
                } else {
                    self.end(|task| task.complete(result.clone())).await;
                }
                return;
            };
            // The call needs a person's approval: the task asks, and waits for the answer.
            let question = TaskQuestion {
                token: token.clone(),
                arguments: self.arguments.clone(),
            };
            let message = format!(
                "`{}` needs a person's approval to run; answer with tasks/update",
                self.tool
            );
            if !self
                .end(|task| task.ask(question.clone(), message.clone()))
                .await
            {
                return;
            }
            let answer = loop {
                tick.tick().await;
                match self.renew().await {
                    Heard::Running(_) => {}
                    Heard::Answered(answer, question) if question.token == token => break answer,
                    Heard::Answered(..) | Heard::Stop => return,
                }
            };
            match answer {
                TaskAnswer::Approve => {
                    running = spawn_call(
                        &self.registry,
                        &self.tool,
                        self.arguments.clone(),
                        &self.ctx,
                        Some(token),
                    );
                }
                TaskAnswer::Decline => {
                    let result = self
                        .registry
                        .deny(&token, "the user declined the call", &self.ctx)
                        .await
                        .unwrap_or_else(ToolResult::from);
                    self.end(|task| task.complete(result.clone())).await;
                    return;
                }
            }
        }
    }

    /// Renews the lease and writes the progress; takes a person's answer when one was given.
    async fn renew(&self) -> Heard {
        let progress = self.progress.read();
        for _ in 0..SWAP_ATTEMPTS {
            let mut task = match self.inner.store.load(&self.id).await {
                Ok(Some(task)) => task,
                Ok(None) => return Heard::Stop,
                Err(error) => {
                    // The store is away: the call goes on, and its end is recorded if the
                    // store answers by then; past the lease, another instance reports it
                    // failed, and this one stops it.
                    tracing::warn!(task = %self.id, %error, "a task's lease could not be renewed");
                    return Heard::Running(BTreeMap::new());
                }
            };
            if task.status.is_terminal() {
                return Heard::Stop;
            }
            let until = now_ms().saturating_add(super::millis(self.inner.limits.lease));
            if task.renew(until, progress.clone()).is_err() {
                return Heard::Stop;
            }
            let answered = task.take_answer();
            let answers = task.take_responses();
            task.version += 1;
            match self.inner.store.swap(&task).await {
                Ok(true) => {
                    return match answered {
                        Some((answer, question)) => Heard::Answered(answer, question),
                        None => Heard::Running(answers),
                    };
                }
                Ok(false) => continue,
                Err(error) => {
                    tracing::warn!(task = %self.id, %error, "a task's lease could not be renewed");
                    return Heard::Running(BTreeMap::new());
                }
            }
        }
        Heard::Running(BTreeMap::new())
    }

    /// Applies `change` (an end, or a question) to the task; `false` when the task had ended
    /// already (cancelled while the call finished: the cancel stands) or could not be written.
    async fn end(&self, mut change: impl FnMut(&mut TaskRecord) -> Result<(), Refused>) -> bool {
        let mut waited = Duration::from_millis(50);
        let deadline = tokio::time::Instant::now() + self.inner.limits.lease;
        loop {
            let outcome = async {
                let Some(mut task) = self.inner.store.load(&self.id).await? else {
                    return Ok(Some(false));
                };
                let before = task.status;
                if change(&mut task).is_err() {
                    return Ok(Some(false));
                }
                task.version += 1;
                let swapped = self.inner.store.swap(&task).await?;
                if swapped && task.status != before {
                    entered(task.status);
                }
                Ok::<_, TaskError>(swapped.then_some(true))
            }
            .await;
            match outcome {
                Ok(Some(done)) => return done,
                Ok(None) => continue,
                Err(error) if tokio::time::Instant::now() < deadline => {
                    tracing::warn!(task = %self.id, %error, "a task's end could not be recorded yet; trying again");
                    tokio::time::sleep(waited).await;
                    waited = (waited * 2).min(Duration::from_secs(1));
                }
                Err(error) => {
                    tracing::error!(task = %self.id, %error, "a task's end could not be recorded; it will be reported failed");
                    return false;
                }
            }
        }
    }
}

impl From<Refused> for TaskError {
    fn from(refused: Refused) -> Self {
        match refused {
            Refused::Ended(status) => TaskError::Ended(status),
            Refused::NoQuestion => TaskError::NoQuestion,
        }
    }
}
