//! One task as a store keeps it, and every change of its state as a method: the stores (memory,
//! Redis) only load, compare and swap records, so every rule of the life of a task is here once.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::ToolResult;

/// Where a task is in its life. Terminal: [`Completed`](Self::Completed),
/// [`Failed`](Self::Failed), [`Cancelled`](Self::Cancelled).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The call is running.
    Working,
    /// The call waits for a person's answer ([`TaskRecord::question`]).
    InputRequired,
    /// The call ended with a result, successful or not ([`TaskRecord::result`]).
    Completed,
    /// The call could not end with a result: the instance running it stopped, or the task
    /// could not go on ([`TaskRecord::error`]).
    Failed,
    /// The caller cancelled the task; its call was dropped.
    Cancelled,
}

impl TaskStatus {
    /// Whether the task has ended: nothing changes it any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }

    /// The status as MCP writes it: `working`, `input_required`, `completed`, `failed`,
    /// `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::InputRequired => "input_required",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// What a task waiting in [`TaskStatus::InputRequired`] asks: whether to run its call, which
/// needs a person's approval, exactly as shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskQuestion {
    /// The approval token the call waits under (bound to its tool, user and arguments).
    pub token: String,
    /// The arguments of the call, as the question shows them.
    pub arguments: Value,
}

/// A person's answer to a [`TaskQuestion`], given with `tasks/update` and taken by the
/// instance running the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskAnswer {
    /// Run the call.
    Approve,
    /// Drop the call.
    Decline,
}

/// One task: who started it, which tool it runs, where it is, and what it ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's id: 128 random bits as 32 hex digits.
    pub id: String,
    /// Who started the task ([`TaskOwner::id`](super::TaskOwner::id)): no one else reads or
    /// changes it.
    pub owner: String,
    /// The shares of bounds the task counts against besides its owner's (a guest's: its
    /// address's, every guest's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shares: Vec<super::TaskShare>,
    /// The tool the task runs.
    pub tool: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// The last progress message, or why the task failed or waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// How many progress messages the call sent.
    #[serde(default)]
    pub progress: u64,
    /// When the task was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When the task last changed, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// How long the task is kept from its creation, in milliseconds.
    pub ttl_ms: u64,
    /// Until when the instance running the task holds it, in milliseconds since the Unix
    /// epoch; a task not ended by then is [`TaskStatus::Failed`].
    pub lease_until_ms: u64,
    /// The result of a [`TaskStatus::Completed`] task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ToolResult>,
    /// Why a [`TaskStatus::Failed`] task failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What a [`TaskStatus::InputRequired`] task asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<TaskQuestion>,
    /// The answer given to the question, until the running instance takes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<TaskAnswer>,
    /// The questions the running call asks its client ([`TaskInputs`](super::TaskInputs)), by
    /// name, each as the front end wrote it, until answered.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, Value>,
    /// Answers given to `inputs`, until the running instance takes them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub responses: BTreeMap<String, Value>,
    /// Counts the changes: a store swaps a record only over the version it was read at.
    #[serde(default)]
    pub version: u64,
}

/// Milliseconds since the Unix epoch, now: the clock of tasks' records (`created_ms`, leases,
/// expiry), which a [`TaskStore`](super::TaskStore) of one's own reads to judge them as the
/// in-memory store does.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `duration` in whole milliseconds, `u64::MAX` past it: how tasks' records and the protocols
/// that carry them (`ttl_ms`, `pollInterval`) write a time.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Why a change of a task's state was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    /// The task has ended already.
    Ended(TaskStatus),
    /// The task asks no question now.
    NoQuestion,
}

impl TaskRecord {
    /// A new task of `owner` running `tool`, kept `ttl`, held by its instance for `lease`.
    pub(crate) fn new(
        id: String,
        owner: super::TaskOwner,
        tool: String,
        ttl: Duration,
        lease: Duration,
    ) -> Self {
        let now = now_ms();
        Self {
            id,
            owner: owner.id,
            shares: owner.shares,
            tool,
            status: TaskStatus::Working,
            message: None,
            progress: 0,
            created_ms: now,
            updated_ms: now,
            ttl_ms: millis(ttl),
            lease_until_ms: now.saturating_add(millis(lease)),
            result: None,
            error: None,
            question: None,
            answer: None,
            inputs: BTreeMap::new(),
            responses: BTreeMap::new(),
            version: 0,
        }
    }

    /// When the task is dropped from its store, in milliseconds since the Unix epoch.
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// Whether the task is past its TTL at `now`.
    pub(crate) fn expired(&self, now: u64) -> bool {
        now >= self.expires_ms()
    }

    /// Whether the task should be running but its instance has not renewed its lease: it
    /// stopped, and the task will never end by itself.
    pub(crate) fn abandoned(&self, now: u64) -> bool {
        !self.status.is_terminal() && now > self.lease_until_ms
    }

    fn touch(&mut self) {
        self.updated_ms = now_ms().max(self.updated_ms);
    }

    fn open(&self) -> Result<(), Refused> {
        if self.status.is_terminal() {
            Err(Refused::Ended(self.status))
        } else {
            Ok(())
        }
    }

    /// The running instance's renewal: its lease until `until`, and the progress it saw.
    pub(crate) fn renew(
        &mut self,
        until: u64,
        progress: Option<(u64, String)>,
    ) -> Result<(), Refused> {
        self.open()?;
        self.lease_until_ms = until;
        if let Some((steps, message)) = progress
            && steps > self.progress
        {
            self.progress = steps;
            if self.status == TaskStatus::Working {
                self.message = Some(message);
            }
            self.touch();
        }
        Ok(())
    }

    /// The call ended with `result`.
    pub(crate) fn complete(&mut self, result: ToolResult) -> Result<(), Refused> {
        self.open()?;
        self.status = TaskStatus::Completed;
        self.message = None;
        self.question = None;
        self.settle();
        self.result = Some(result);
        self.touch();
        Ok(())
    }

    /// The task cannot end with a result, for `reason`.
    pub(crate) fn fail(&mut self, reason: String) -> Result<(), Refused> {
        self.open()?;
        self.status = TaskStatus::Failed;
        self.question = None;
        self.settle();
        self.message = Some(reason.clone());
        self.error = Some(reason);
        self.touch();
        Ok(())
    }

    /// The caller cancelled the task.
    pub(crate) fn cancel(&mut self) -> Result<(), Refused> {
        self.open()?;
        self.status = TaskStatus::Cancelled;
        self.question = None;
        self.settle();
        self.message = Some("cancelled by its caller".to_owned());
        self.touch();
        Ok(())
    }

    /// The call waits for a person: `question`, with `message` saying why.
    pub(crate) fn ask(&mut self, question: TaskQuestion, message: String) -> Result<(), Refused> {
        self.open()?;
        self.status = TaskStatus::InputRequired;
        self.message = Some(message);
        self.question = Some(question);
        self.answer = None;
        self.touch();
        Ok(())
    }

    /// The person's answer: the task runs again, and its instance takes the answer.
    pub(crate) fn answer(&mut self, answer: TaskAnswer) -> Result<(), Refused> {
        self.open()?;
        if self.status != TaskStatus::InputRequired {
            return Err(Refused::NoQuestion);
        }
        self.status = TaskStatus::Working;
        self.message = Some(match answer {
            TaskAnswer::Approve => "approved; running".to_owned(),
            TaskAnswer::Decline => "declined".to_owned(),
        });
        self.answer = Some(answer);
        self.touch();
        Ok(())
    }

    /// The running call asks its client `request` under `key`: the task waits for input.
    pub(crate) fn pose(&mut self, key: String, request: Value) -> Result<(), Refused> {
        self.open()?;
        self.inputs.insert(key, request);
        self.status = TaskStatus::InputRequired;
        self.message = Some("waiting for the client's answer; answer with tasks/update".to_owned());
        self.touch();
        Ok(())
    }

    /// The client's answers: those to questions the task asks are kept for the running
    /// instance, the rest ignored. How many were kept; the task runs again once nothing is
    /// left unanswered.
    pub(crate) fn respond(&mut self, responses: BTreeMap<String, Value>) -> Result<usize, Refused> {
        self.open()?;
        let mut kept = 0;
        for (key, response) in responses {
            if self.inputs.remove(&key).is_some() {
                self.responses.insert(key, response);
                kept += 1;
            }
        }
        if kept > 0 {
            if self.inputs.is_empty() && self.question.is_none() {
                self.status = TaskStatus::Working;
                self.message = Some("answered; running".to_owned());
            }
            self.touch();
        }
        Ok(kept)
    }

    /// The running instance takes the answers given to its call's questions.
    pub(crate) fn take_responses(&mut self) -> BTreeMap<String, Value> {
        std::mem::take(&mut self.responses)
    }

    /// Drops what a task that ended still asked.
    fn settle(&mut self) {
        self.inputs.clear();
        self.responses.clear();
    }

    /// The running instance takes the answer given, with the question it answered.
    pub(crate) fn take_answer(&mut self) -> Option<(TaskAnswer, TaskQuestion)> {
        if self.status != TaskStatus::Working {
            return None;
        }
        let answer = self.answer.take()?;
        let question = self.question.take()?;
        Some((answer, question))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> TaskRecord {
        TaskRecord::new(
            "t".into(),
            super::super::TaskOwner::of(&crate::scope::Scope::user("alice")),
            "slow".into(),
            Duration::from_secs(60),
            Duration::from_secs(5),
        )
    }

    #[test]
    fn a_task_ends_once_and_nothing_changes_it_after() {
        let mut task = record();
        task.complete(ToolResult::ok("done")).unwrap();
        assert_eq!(task.cancel(), Err(Refused::Ended(TaskStatus::Completed)));
        assert_eq!(
            task.fail("late".into()),
            Err(Refused::Ended(TaskStatus::Completed))
        );
        assert_eq!(task.status, TaskStatus::Completed);

        let mut task = record();
        task.cancel().unwrap();
        assert_eq!(
            task.complete(ToolResult::ok("late")),
            Err(Refused::Ended(TaskStatus::Cancelled))
        );
        assert!(task.result.is_none());
    }

    #[test]
    fn an_answer_is_taken_once_and_only_for_a_question() {
        let mut task = record();
        assert_eq!(task.answer(TaskAnswer::Approve), Err(Refused::NoQuestion));
        let question = TaskQuestion {
            token: "tok".into(),
            arguments: serde_json::json!({"path": "a"}),
        };
        task.ask(question.clone(), "needs approval".into()).unwrap();
        assert_eq!(task.status, TaskStatus::InputRequired);
        task.answer(TaskAnswer::Approve).unwrap();
        assert_eq!(task.answer(TaskAnswer::Decline), Err(Refused::NoQuestion));
        assert_eq!(task.take_answer(), Some((TaskAnswer::Approve, question)));
        assert_eq!(task.take_answer(), None);
    }

    #[test]
    fn a_task_whose_lease_ran_out_is_abandoned_until_it_ends() {
        let mut task = record();
        let later = task.lease_until_ms + 1;
        assert!(task.abandoned(later));
        task.renew(later + 1000, None).unwrap();
        assert!(!task.abandoned(later));
        task.complete(ToolResult::ok("x")).unwrap();
        assert!(!task.abandoned(u64::MAX));
    }
}
