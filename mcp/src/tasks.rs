//! MCP's tasks extension (`io.modelcontextprotocol/tasks`, the 2026-07-28 revision) over the
//! registry's [`Tasks`]: when a `tools/call` becomes a task, the task's state as `tasks/get`
//! answers it, a person's answer given with `tasks/update`, and the errors of the extension.

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, InputResponses, JsonObject,
    Task, TaskPayload, TaskStatus as WireStatus, UpdateTaskParams,
};
use serde_json::{Value, json};

use super::answer::call_tool_result;
use super::confirm::{self, CONFIRM_INPUT};
use super::request::Request;
use tool_registry_core::task::{
    Become, TaskAnswer, TaskError, TaskLimits, TaskRecord, TaskStatus, TaskSupport, Tasks, owner_of,
};
use tool_registry_core::{Registry, Scope};

/// Whether the request's client follows tasks: a 2026-07-28 request that declared the
/// extension in its own capabilities (a declaration under an older revision enables nothing).
pub(super) fn client_follows(request: &Request) -> bool {
    request.modern()
        && (request.capabilities()).is_some_and(|capabilities| capabilities.supports_tasks())
}

/// When a call of a tool with `support` becomes a task for this request: `None` when it
/// answers within the request; for a tool that is always a task and a client that does not
/// follow tasks, the protocol's error (`-32021` in the 2026-07-28 revision, `-32601` before).
pub(super) fn when(
    tool: &str,
    support: TaskSupport,
    request: &Request,
) -> Result<Option<Become>, ErrorData> {
    // A tool that is never a task (most) asks nothing of the request.
    if support == TaskSupport::Forbidden {
        return Ok(None);
    }
    match (support, client_follows(request)) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(None),
        (TaskSupport::Optional, true) => Ok(Some(Become::IfSlow)),
        // On the stateless revision a call runs within its request for its first moments
        // (`TaskLimits::after`): what it asks there comes back with the request (an
        // `input_required` result); then, or when it ends first, it is a task.
        (TaskSupport::Required, true) if request.modern() => Ok(Some(Become::Soon)),
        (TaskSupport::Required, true) => Ok(Some(Become::Now)),
        // A client of the `initialize` era asks for a task with `params.task`, which the HTTP
        // layer answers (`tasks_2025.rs`); without it, the error its revision names.
        (TaskSupport::Required, false)
            if (request.version()).is_some_and(|version| version.has_initialize()) =>
        {
            Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Tool {tool} requires task augmentation (taskSupport: 'required'): call it with `task` in its params"
                ),
                None,
            ))
        }
        (TaskSupport::Required, false) => {
            let mut error = ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            );
            error.message = format!(
                "the tool `{tool}` runs only as a task: declare the tasks extension (io.modelcontextprotocol/tasks) in this request's client capabilities"
            )
            .into();
            Err(error)
        }
    }
}

/// A time in milliseconds since the Unix epoch as MCP writes it (RFC 3339, milliseconds).
pub(super) fn iso(millis: u64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_millis(millis);
    humantime::format_rfc3339_millis(at).to_string()
}

fn wire_status(status: TaskStatus) -> WireStatus {
    match status {
        TaskStatus::Working => WireStatus::Working,
        TaskStatus::InputRequired => WireStatus::InputRequired,
        TaskStatus::Completed => WireStatus::Completed,
        TaskStatus::Failed => WireStatus::Failed,
        TaskStatus::Cancelled => WireStatus::Cancelled,
    }
}

/// The task's fields every answer carries.
fn task_of(task: &TaskRecord, limits: &TaskLimits) -> Task {
    let mut wire = Task::new(
        task.id.clone(),
        wire_status(task.status),
        iso(task.created_ms),
        iso(task.updated_ms),
    )
    .with_ttl_ms(task.ttl_ms)
    .with_poll_interval_ms(tool_registry_core::task::millis(limits.poll_interval));
    if let Some(message) = &task.message {
        wire = wire.with_status_message(message.clone());
    }
    wire
}

/// The answer to a `tools/call` that became `task`.
pub(super) fn created(task: &TaskRecord, limits: &TaskLimits) -> CreateTaskResult {
    CreateTaskResult::new(task_of(task, limits))
}

/// The task as `tasks/get` answers it: its fields, and what its status carries (the question
/// of a task that waits, the result of a completed one, the error of a failed one).
pub(super) fn detailed(
    registry: &Registry,
    task: &TaskRecord,
    limits: &TaskLimits,
) -> Result<DetailedTask, ErrorData> {
    let payload = match task.status {
        TaskStatus::Working => TaskPayload::Working,
        TaskStatus::InputRequired => {
            let mut input_requests = task
                .question
                .as_ref()
                .map(|question| confirm::question(&task.tool, &question.arguments))
                .transpose()?
                .flatten()
                .unwrap_or_default();
            // The questions the call asks while it runs, as its link wrote them.
            for (key, request) in &task.inputs {
                let request = serde_json::from_value(request.clone()).map_err(internal)?;
                input_requests.insert(key.clone(), request);
            }
            TaskPayload::InputRequired { input_requests }
        }
        TaskStatus::Completed => {
            let result = task
                .result
                .as_ref()
                .ok_or_else(|| ErrorData::internal_error("a completed task has no result", None))?;
            let answer = call_tool_result(registry, &task.tool, result)?;
            TaskPayload::Completed {
                result: object(serde_json::to_value(answer).map_err(internal)?),
            }
        }
        TaskStatus::Failed => TaskPayload::Failed {
            error: object(json!({
                "code": ErrorData::internal_error("", None).code.0,
                "message": task.error.as_deref().unwrap_or("the task failed"),
            })),
        },
        TaskStatus::Cancelled => TaskPayload::Cancelled,
    };
    Ok(DetailedTask::new(task_of(task, limits), payload))
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn internal(error: impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(error.to_string(), None)
}

/// The person's answer among `responses`: `None` when they answer nothing this server asked
/// (the spec's "ignore what is not outstanding").
pub(super) fn answer_of(responses: &InputResponses) -> Result<Option<TaskAnswer>, ErrorData> {
    let Some(response) = responses.get(CONFIRM_INPUT) else {
        return Ok(None);
    };
    Ok(Some(match confirm::approval_of(response)? {
        Some(true) => TaskAnswer::Approve,
        // Closing the question without choosing runs nothing either.
        Some(false) | None => TaskAnswer::Decline,
    }))
}

/// A [`TaskError`] as the extension answers it: an unknown task (another caller's alike) is
/// `-32602`; the store's failure `-32603`.
pub(super) fn error(error: TaskError) -> ErrorData {
    match error {
        TaskError::NotFound => ErrorData::invalid_params(
            "Failed to retrieve task: Task not found (no task of yours has this id; it may have expired)",
            None,
        ),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

/// `tasks/get`: the caller's task `id`, with its progress and, once it ended, its result.
pub(super) async fn get(
    registry: &Registry,
    tasks: &Tasks,
    scope: &Scope,
    id: &str,
) -> Result<GetTaskResult, ErrorData> {
    let task = (tasks.get(&owner_of(scope), id).await).map_err(error)?;
    Ok(GetTaskResult::new(detailed(
        registry,
        &task,
        tasks.limits(),
    )?))
}

/// `tasks/update`: the answers to what the caller's task asks.
pub(super) async fn update(
    tasks: &Tasks,
    scope: &Scope,
    request: UpdateTaskParams,
) -> Result<(), ErrorData> {
    let owner = owner_of(scope);
    // The task must be the caller's, whatever the answers say.
    let task = (tasks.get(&owner, &request.task_id).await).map_err(error)?;
    // A call waiting for a person's approval is answered by `confirm`; a call that asks its own
    // questions while it runs, by their names. Answers to nothing asked are ignored, as the
    // extension says.
    if task.question.is_none() {
        return match (tasks.respond(&owner, &request.task_id, request.input_responses)).await {
            Ok(_) | Err(TaskError::Ended(_)) => Ok(()),
            Err(failed) => Err(error(failed)),
        };
    }
    let Some(answer) = answer_of(&request.input_responses)? else {
        return Ok(());
    };
    match tasks.answer(&owner, &request.task_id, answer).await {
        // An answer to a question no longer asked (answered already, or the task ended) is
        // ignored, as the extension says.
        Ok(_) | Err(TaskError::NoQuestion | TaskError::Ended(_)) => Ok(()),
        Err(failed) => Err(error(failed)),
    }
}

/// `tasks/cancel`: the caller's task `id` dropped; one that ended first keeps its end, and the
/// cancel is acknowledged.
pub(super) async fn cancel(tasks: &Tasks, scope: &Scope, id: &str) -> Result<(), ErrorData> {
    match tasks.cancel(&owner_of(scope), id).await {
        Ok(_) | Err(TaskError::Ended(_)) => Ok(()),
        Err(failed) => Err(error(failed)),
    }
}
