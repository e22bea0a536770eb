//! The tasks of the 2025-11-25 revision over streamable HTTP, which rmcp no longer speaks: the
//! HTTP layer reads each request of a 2025-11-25 session and answers the task requests itself
//! (a `tools/call` with `params.task`, `tasks/get`, `tasks/result`, `tasks/list`,
//! `tasks/cancel`), and adds to rmcp's answers what that revision says of tasks (the
//! `capabilities.tasks` of `initialize`, each tool's `execution.taskSupport` in `tools/list`).
//!
//! The tasks are the registry's [`Tasks`](tool_registry_core::task::Tasks), the same as the 2026-07-28
//! extension's: one store, one owner per caller. What differs is the wire: the answer to a
//! task's `tools/call` is `{"task": {...}}`, `tasks/get` carries no result, `tasks/result` waits
//! for the end, `tasks/cancel` answers the cancelled task and refuses an ended one. A call that
//! needs a person's approval does not ask through the task (that revision asks over the
//! `tasks/result` stream): the task completes with the result that names the approval token.

use std::time::Duration;

use serde_json::{Map, Value, json};

use super::answer::call_tool_result;
use super::server::McpServer;
use super::tasks::iso;
use tool_registry_core::Scope;
use tool_registry_core::task::{
    Become, Started, TaskCall, TaskError, TaskOwner, TaskRecord, TaskStatus, TaskSupport,
};

/// The revision whose tasks this file speaks.
pub(super) const VERSION: &str = "2025-11-25";

/// How many tasks one `tasks/list` page holds.
const LIST_PAGE: usize = 100;

/// What the HTTP layer does with a request of a 2025-11-25 client.
pub(super) enum Handling {
    /// rmcp answers it as it is.
    Pass,
    /// rmcp answers it; its answer is then given what this revision says of tasks.
    Amend(Amend),
    /// A task request: answered here, with this JSON-RPC message.
    Answer(Value),
}

/// Which of rmcp's answers is amended.
#[derive(Clone, Copy)]
pub(super) enum Amend {
    /// `initialize`: the server's `capabilities.tasks`.
    Initialize,
    /// `tools/list`: each tool's `execution.taskSupport`.
    ToolsList,
}

/// The JSON-RPC request in `body`: its id, method and params.
struct Request {
    id: Value,
    method: String,
    params: Map<String, Value>,
}

fn request(body: &[u8]) -> Option<Request> {
    let Value::Object(mut message) = serde_json::from_slice(body).ok()? else {
        return None;
    };
    let id = message.remove("id")?;
    let Value::String(method) = message.remove("method")? else {
        return None;
    };
    let params = match message.remove("params") {
        Some(Value::Object(params)) => params,
        _ => Map::new(),
    };
    Some(Request { id, method, params })
}

/// What a request says of itself, read without building its arguments: its method, whether
/// its params hold `task`, and the version an `initialize` asks for.
#[derive(serde::Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<HeadParams<'a>>,
}

#[derive(serde::Deserialize)]
struct HeadParams<'a> {
    #[serde(default)]
    task: Option<serde::de::IgnoredAny>,
    #[serde(borrow, default, rename = "protocolVersion")]
    protocol_version: Option<std::borrow::Cow<'a, str>>,
}

fn head(body: &[u8]) -> Option<Head<'_>> {
    serde_json::from_slice(body).ok()
}

/// Whether `body` is an `initialize` asking for this revision.
pub(super) fn initializes(body: &[u8]) -> bool {
    head(body).is_some_and(|head| {
        head.method.as_deref() == Some("initialize")
            && head
                .params
                .and_then(|params| params.protocol_version)
                .as_deref()
                == Some(VERSION)
    })
}

/// What to do with `body`, a request of a 2025-11-25 session of the caller `scope`, whose
/// tasks are `owner`'s (a guest's: its session's alone). Most requests are read only as far as
/// their method (and a `tools/call`'s `task`): the whole message is read only for a task
/// request.
pub(super) async fn handle(
    server: &McpServer,
    scope: &Scope,
    owner: &TaskOwner,
    body: &[u8],
) -> Handling {
    let Some(head) = head(body) else {
        return Handling::Pass;
    };
    let tasked = head
        .params
        .as_ref()
        .is_some_and(|params| params.task.is_some());
    match head.method.as_deref() {
        Some("tools/list") => return Handling::Amend(Amend::ToolsList),
        Some("tools/call") if tasked => {}
        Some("tasks/get" | "tasks/result" | "tasks/list" | "tasks/cancel") => {}
        _ => return Handling::Pass,
    }
    let Some(request) = request(body) else {
        return Handling::Pass;
    };
    let answer = match request.method.as_str() {
        "tools/list" => return Handling::Amend(Amend::ToolsList),
        "tools/call" if request.params.contains_key("task") => {
            call(server, scope, owner, &request.params).await
        }
        "tasks/get" => task_of(server, &owner.id, &request.params)
            .await
            .map(|task| task_json(&task, server)),
        "tasks/result" => result(server, &owner.id, &request.params).await,
        "tasks/list" => list(server, &owner.id, &request.params).await,
        "tasks/cancel" => cancel(server, &owner.id, &request.params).await,
        _ => return Handling::Pass,
    };
    Handling::Answer(match answer {
        Ok(result) => json!({"jsonrpc": "2.0", "id": request.id, "result": result}),
        Err((code, message)) => json!({
            "jsonrpc": "2.0",
            "id": request.id,
            "error": {"code": code, "message": message},
        }),
    })
}

type Answer = Result<Value, (i64, String)>;

const INVALID_PARAMS: i64 = -32602;
const METHOD_NOT_FOUND: i64 = -32601;
const INTERNAL: i64 = -32603;

fn not_found() -> (i64, String) {
    (
        INVALID_PARAMS,
        "Failed to retrieve task: Task not found".to_owned(),
    )
}

fn task_error(error: TaskError) -> (i64, String) {
    match error {
        TaskError::NotFound => not_found(),
        TaskError::Ended(status) => (
            INVALID_PARAMS,
            format!(
                "Cannot cancel task: already in terminal status '{}'",
                status.as_str()
            ),
        ),
        other => (INTERNAL, other.to_string()),
    }
}

/// A task as this revision writes it; a task whose call ended with an error result is
/// `failed` here (the 2026-07-28 extension calls it `completed`).
fn task_json(task: &TaskRecord, server: &McpServer) -> Value {
    let status = match (task.status, &task.result) {
        (TaskStatus::Completed, Some(result)) if !result.success => "failed",
        (status, _) => status.as_str(),
    };
    let mut wire = json!({
        "taskId": task.id,
        "status": status,
        "createdAt": iso(task.created_ms),
        "lastUpdatedAt": iso(task.updated_ms),
        "ttl": task.ttl_ms,
        "pollInterval": tool_registry_core::task::millis(server.tasks_of().limits().poll_interval),
    });
    if let Some(message) = &task.message {
        wire["statusMessage"] = Value::String(message.clone());
    }
    wire
}

fn task_id(params: &Map<String, Value>) -> Result<&str, (i64, String)> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| (INVALID_PARAMS, "`taskId` must be a string".to_owned()))
}

async fn task_of(
    server: &McpServer,
    owner: &str,
    params: &Map<String, Value>,
) -> Result<TaskRecord, (i64, String)> {
    let id = task_id(params)?;
    (server.tasks_of().get(owner, id).await).map_err(task_error)
}

/// A `tools/call` with `params.task`: the task, created at once.
async fn call(
    server: &McpServer,
    scope: &Scope,
    owner: &TaskOwner,
    params: &Map<String, Value>,
) -> Answer {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let registry = server.registry_of();
    // Hidden is unknown: the same error, from the same check, as rmcp's `tools/call`.
    let Some(tool) = registry.get(name, scope) else {
        return Err((INVALID_PARAMS, format!("Unknown tool: {name}")));
    };
    if tool.task_support() == TaskSupport::Forbidden {
        return Err((
            METHOD_NOT_FOUND,
            format!(
                "Tool {name} does not support task augmentation (taskSupport: 'forbidden'); call it without `task`"
            ),
        ));
    }
    let arguments = match params.get("arguments") {
        Some(Value::Object(arguments)) => Value::Object(arguments.clone()),
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(_) => return Err((INVALID_PARAMS, "`arguments` must be an object".to_owned())),
    };
    let call = TaskCall {
        tool: tool.name().to_owned(),
        arguments,
        ctx: tool_registry_core::Ctx::for_scope(scope.clone()),
        owner: owner.clone(),
        asks: false,
        inputs: None,
    };
    match server
        .tasks_of()
        .run(registry.clone(), call, Become::Now)
        .await
    {
        Ok(Started::Task(task)) => Ok(json!({"task": task_json(&task, server)})),
        Ok(Started::Ended(result)) => call_tool_result(&registry, name, &result)
            .and_then(|answer| {
                serde_json::to_value(answer)
                    .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
            })
            .map_err(|error| (INTERNAL, error.message.to_string())),
        Err(error @ TaskError::TooMany { .. }) => Err((INVALID_PARAMS, error.to_string())),
        Err(error) => Err(task_error(error)),
    }
}

/// `tasks/result`: waits for the task's end, then answers what its `tools/call` would have.
async fn result(server: &McpServer, owner: &str, params: &Map<String, Value>) -> Answer {
    let poll = server
        .tasks_of()
        .limits()
        .poll_interval
        .min(Duration::from_millis(200));
    let task = loop {
        let task = task_of(server, owner, params).await?;
        if task.status.is_terminal() {
            break task;
        }
        tokio::time::sleep(poll).await;
    };
    let related = json!({"io.modelcontextprotocol/related-task": {"taskId": task.id}});
    match (task.status, &task.result) {
        (TaskStatus::Completed, Some(result)) => {
            let answer = call_tool_result(&server.registry_of(), &task.tool, result)
                .map_err(|error| (INTERNAL, error.message.to_string()))?;
            let mut answer = serde_json::to_value(answer).map_err(|e| (INTERNAL, e.to_string()))?;
            answer["_meta"] = related;
            Ok(answer)
        }
        (TaskStatus::Cancelled, _) => Err((INTERNAL, format!("Task {} was cancelled", task.id))),
        _ => Err((
            INTERNAL,
            task.error.unwrap_or_else(|| "the task failed".to_owned()),
        )),
    }
}

async fn list(server: &McpServer, owner: &str, params: &Map<String, Value>) -> Answer {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(cursor)) => cursor
            .strip_prefix('t')
            .and_then(|n| n.parse::<usize>().ok())
            .ok_or_else(|| {
                (
                    INVALID_PARAMS,
                    "invalid cursor; start again without one".to_owned(),
                )
            })?,
        Some(_) => return Err((INVALID_PARAMS, "`cursor` must be a string".to_owned())),
    };
    let tasks = (server.tasks_of().list(owner).await).map_err(task_error)?;
    let page: Vec<Value> = tasks
        .iter()
        .skip(start)
        .take(LIST_PAGE)
        .map(|task| task_json(task, server))
        .collect();
    let mut answer = json!({"tasks": page});
    if start + LIST_PAGE < tasks.len() {
        answer["nextCursor"] = Value::String(format!("t{}", start + LIST_PAGE));
    }
    Ok(answer)
}

async fn cancel(server: &McpServer, owner: &str, params: &Map<String, Value>) -> Answer {
    let id = task_id(params)?;
    let task = (server.tasks_of().cancel(owner, id).await).map_err(task_error)?;
    Ok(task_json(&task, server))
}

/// rmcp's answer `message` (a JSON-RPC response) given what this revision says of tasks.
pub(super) fn amend(amend: Amend, server: &McpServer, scope: &Scope, message: &mut Value) {
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
        return;
    };
    match amend {
        Amend::Initialize => {
            if result.get("protocolVersion").and_then(Value::as_str) != Some(VERSION) {
                return;
            }
            if let Some(capabilities) = result
                .get_mut("capabilities")
                .and_then(Value::as_object_mut)
            {
                capabilities.insert(
                    "tasks".to_owned(),
                    json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
                );
            }
        }
        Amend::ToolsList => {
            let registry = server.registry_of();
            let Some(tools) = result.get_mut("tools").and_then(Value::as_array_mut) else {
                return;
            };
            for tool in tools {
                let Some(name) = tool.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let support = registry
                    .get(name, scope)
                    .map_or(TaskSupport::Forbidden, |tool| tool.task_support());
                if support != TaskSupport::Forbidden {
                    tool["execution"] = json!({"taskSupport": support.as_str()});
                }
            }
        }
    }
}
