//! Why a module's tool did not answer: the failures of this front end, which become the call's
//! [`ToolError::Remote`] where they cross into it and are read back from it.

use std::borrow::Cow;

use serde_json::{Map, Value};
use tool_registry_core::ToolError;
use tool_registry_core::call::RemoteFailure;

/// A tool of another process that did not answer: its module could not be reached, or answered
/// with an HTTP error status and no typed error. An MCP server mounted as a module fails the
/// same way. A call carries it as [`ToolError::Remote`] (`ToolError::from`), with its
/// [`code`](Self::code); [`ModuleError::of`] reads it back.
///
/// ```
/// use tool_registry::ToolError;
/// use tool_registry::http::ModuleError;
///
/// let failed = ModuleError::Status {
///     tool: "kb.search".into(),
///     module: "kb".into(),
///     status: 502,
///     body: "bad gateway".into(),
/// };
/// let error = ToolError::from(failed.clone());
/// assert_eq!(error.code(), "module_status");
/// assert_eq!(error.to_string(), failed.to_string());
/// // Through the wire and back, as a gateway reads a module's error.
/// let again = ToolError::from_json(&serde_json::to_value(&error).unwrap(), "kb.search");
/// assert_eq!(ModuleError::of(&again), Some(failed));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The module could not be reached: the connection was refused or dropped, or its answer was
    /// unreadable. Nothing is known to have run.
    #[error(
        "tool `{tool}` cannot run now: its module `{module}` cannot be reached ({reason}); try again later or call another tool"
    )]
    Unreachable {
        /// The tool that was called.
        tool: String,
        /// The module that serves it.
        module: String,
        /// What went wrong.
        reason: String,
    },
    /// The module answered with an HTTP error status.
    #[error(
        "tool `{tool}` failed in its module `{module}`: HTTP status {status}{}",
        excerpt(body)
    )]
    Status {
        /// The tool that was called.
        tool: String,
        /// The module that serves it.
        module: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the answer's body, at most 200 characters.
        body: String,
    },
}

fn excerpt(body: &str) -> String {
    if body.is_empty() {
        String::new()
    } else {
        format!(": {}", body.escape_debug())
    }
}

impl ModuleError {
    /// The code of [`Unreachable`](Self::Unreachable).
    pub const UNREACHABLE: &'static str = "module_unreachable";
    /// The code of [`Status`](Self::Status).
    pub const STATUS: &'static str = "module_status";

    /// The stable code of the failure, which the call's error answers as its own.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unreachable { .. } => Self::UNREACHABLE,
            Self::Status { .. } => Self::STATUS,
        }
    }

    /// The module's failure a call's error carries, if it carries one of this front end's.
    pub fn of(error: &ToolError) -> Option<Self> {
        let ToolError::Remote(failure) = error else {
            return None;
        };
        let (tool, module) = (failure.tool.clone(), failure.module.clone());
        match &*failure.code {
            Self::UNREACHABLE => Some(Self::Unreachable {
                tool,
                module,
                reason: failure.detail.clone(),
            }),
            Self::STATUS => Some(Self::Status {
                tool,
                module,
                status: (failure.data.get("status"))
                    .and_then(Value::as_u64)
                    .and_then(|status| u16::try_from(status).ok())?,
                body: failure.detail.clone(),
            }),
            _ => None,
        }
    }
}

impl From<ModuleError> for ToolError {
    fn from(error: ModuleError) -> Self {
        let message = error.to_string();
        let code = Cow::Borrowed(error.code());
        let mut data = Map::new();
        let (tool, module, detail) = match error {
            ModuleError::Unreachable {
                tool,
                module,
                reason,
            } => (tool, module, reason),
            ModuleError::Status {
                tool,
                module,
                status,
                body,
            } => {
                data.insert("status".into(), status.into());
                (tool, module, body)
            }
        };
        ToolError::Remote(Box::new(RemoteFailure {
            tool,
            code,
            module,
            message,
            detail,
            data,
        }))
    }
}
