//! [`TaskInputs`]: the questions a task's call asks its client while it runs (MCP's input
//! requests: a form, a completion, the client's roots), kept in the task's record until the
//! client answers them with `tasks/update`, and the answers handed back to the call.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use crate::call::AskError;

/// The most questions one task's call may have waiting at once.
pub const MAX_TASK_INPUTS: usize = 16;

/// One question, on its way to the task's driver.
pub(crate) struct Asked {
    pub(crate) key: String,
    pub(crate) request: Value,
    pub(crate) answer: oneshot::Sender<Value>,
}

/// Where a task's call asks its questions: a front end gives one to the call's link
/// (its [`ClientLink`](crate::call::ClientLink)) and to the [`TaskCall`](super::TaskCall); the
/// task's driver writes each question into the task's record
/// ([`TaskRecord::inputs`](super::TaskRecord::inputs), status `input_required`) and hands the
/// answer back once the client gave it ([`Tasks::respond`](super::Tasks::respond)). Cheap to
/// clone.
#[derive(Clone)]
pub struct TaskInputs {
    sender: mpsc::Sender<Asked>,
    receiver: Arc<Mutex<Option<mpsc::Receiver<Asked>>>>,
    /// Told of each question: a call that may become a task becomes one when it asks.
    asked: Arc<tokio::sync::Notify>,
}

impl Default for TaskInputs {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskInputs {
    /// A channel for one task's questions.
    pub fn new() -> Self {
        let (sender, receiver) = mpsc::channel(MAX_TASK_INPUTS);
        Self {
            sender,
            receiver: Arc::new(Mutex::new(Some(receiver))),
            asked: Arc::new(tokio::sync::Notify::new()),
        }
    }

    /// Asks the client `request` (its input request as the front end writes it) under the name
    /// `key`, and waits for the answer: the client's result, unread. Unsupported when more than
    /// [`MAX_TASK_INPUTS`] wait at once; [`AskError::Gone`] when the task ended first.
    pub async fn ask(&self, key: impl Into<String>, request: Value) -> Result<Value, AskError> {
        let (answer, answered) = oneshot::channel();
        let asked = Asked {
            key: key.into(),
            request,
            answer,
        };
        self.sender.try_send(asked).map_err(|_| {
            AskError::Unsupported(format!(
                "the task already waits for {MAX_TASK_INPUTS} answers; ask fewer questions at once"
            ))
        })?;
        self.asked.notify_one();
        answered.await.map_err(|_| AskError::Gone)
    }

    /// Whether the call runs as a task now: its questions go to the task (before, a front end
    /// may answer them within the request that made the call).
    pub fn is_task(&self) -> bool {
        self.receiver
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_none()
    }

    /// Waits until the call asks a question.
    pub(crate) async fn asked(&self) {
        self.asked.notified().await;
    }

    /// The driver's end: taken once, as the call becomes a task.
    pub(crate) fn take(&self) -> Option<mpsc::Receiver<Asked>> {
        self.receiver
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}
