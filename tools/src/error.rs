//! Building the registry's `ToolError`s. The registry fills in the tool's name.

use std::fmt::Display;

use tool_registry::ToolError;

/// The model sent a value the tool cannot use: it names the argument so the model can fix it.
pub(crate) fn invalid(arg: &str, message: impl Display) -> ToolError {
    ToolError::invalid_argument(arg, message.to_string())
}

/// The tool could not do its work.
pub(crate) fn failed(message: impl Display) -> ToolError {
    ToolError::failed(message.to_string())
}

/// An I/O failure on `path`, phrased for the model without the host's absolute paths.
pub(crate) fn io_failed(what: &str, shown: &str, error: &std::io::Error) -> ToolError {
    failed(format!("cannot {what} {shown:?}: {}", io_reason(error)))
}

/// An I/O error without the OS error number.
pub(crate) fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}
