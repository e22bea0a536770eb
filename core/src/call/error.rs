//! The one error type of a tool call.

use std::borrow::Cow;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::store::StoreError;

/// The most bytes of error text a failed result read from outside the registry keeps: 16 KiB
/// for each text (an MCP server's `isError` text, the message of a module's error, the
/// `message` of a failed result's `{"error": ...}` value). Longer text is cut at a character
/// boundary and ends with [`CUT_MARK`]: an error says what went wrong in a paragraph, and a
/// megabyte of it would reach the model three times over (the message, its detail, the
/// result's message).
pub const MAX_ERROR_BYTES: usize = 16 << 10;

/// What error text cut to [`MAX_ERROR_BYTES`] ends with.
pub const CUT_MARK: &str = "… [cut]";

/// `text` as at most [`MAX_ERROR_BYTES`] bytes, [`CUT_MARK`] included when it is cut.
pub(crate) fn bounded_error_text(text: &str) -> String {
    let mut out = String::new();
    push_bounded(&mut out, text);
    out
}

/// Adds `text` to `out` as far as [`MAX_ERROR_BYTES`] allows, the whole ending with
/// [`CUT_MARK`] when it does not fit; `false` when it was cut (nothing more fits).
pub fn push_bounded(out: &mut String, text: &str) -> bool {
    if out.len() + text.len() <= MAX_ERROR_BYTES {
        out.push_str(text);
        return true;
    }
    let room = MAX_ERROR_BYTES.saturating_sub(out.len());
    out.push_str(&text[..char_floor(text, room)]);
    out.truncate(char_floor(out, MAX_ERROR_BYTES - CUT_MARK.len()));
    out.push_str(CUT_MARK);
    false
}

/// The largest character boundary of `text` at most `at`.
fn char_floor(text: &str, at: usize) -> usize {
    let mut end = at.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// Why a tool call failed. Every variant has a stable [`code`](ToolError::code) and a message
/// phrased so that a model reading it can correct its next call.
///
/// It serializes as `{"code": ..., "message": <the Display text>, ...the variant's fields}`, and
/// [`from_json`](ToolError::from_json) reads that back: both directions are made from one table
/// (each variant's code, and each field's key and how it travels), so the two cannot drift. A
/// failure of a front end that reaches a tool in another process is the front end's own type,
/// converted into [`ToolError::Remote`] where it crosses into a call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No tool has this name (or alias), or none the caller may see.
    #[error(
        "unknown tool `{}`: {}{}call one of the tools listed for you",
        name.escape_debug(),
        no_module(module),
        did_you_mean(suggestion)
    )]
    UnknownTool {
        /// The name that was asked for.
        name: String,
        /// The closest name the caller may see, when one is close.
        suggestion: Option<String>,
        /// The module of a `module.tool` name when the caller may see no tool of it (a module
        /// that does not exist and one the caller may not see read alike): the module is
        /// unknown, not only the tool.
        module: Option<String>,
    },
    /// The arguments do not fit the tool's schema.
    #[error(
        "invalid arguments for tool `{tool}`: {}{message}; fix the arguments and call again",
        at_path(path)
    )]
    InvalidArguments {
        /// The tool that was called.
        tool: String,
        /// Where in the arguments the problem is, as a JSON path (`limit`, `items[2].name`),
        /// empty for the arguments as a whole.
        path: String,
        /// What was expected and what was found.
        message: String,
    },
    /// The tool ran and reported an error.
    #[error("tool `{tool}` failed: {message}")]
    Handler {
        /// The tool that was called.
        tool: String,
        /// The tool's error message.
        message: String,
    },
    /// The tool answered with something it may not: a value that does not fit its declared
    /// output schema, or a block past the size limits, of another MIME type than it says, or
    /// linking where a client must not go. Nothing of the result reaches the model.
    #[error(
        "tool `{tool}` gave an invalid result: {}{message}; the result was withheld",
        at_path(path)
    )]
    InvalidOutput {
        /// The tool that was called.
        tool: String,
        /// Where in the result the problem is: a JSON path into the structured value
        /// (`items[2].name`), or the block (`blocks[1]`); empty for the result as a whole.
        path: String,
        /// What was expected and what was found.
        message: String,
    },
    /// The tool panicked; the panic was caught and the caller goes on.
    #[error("tool `{tool}` panicked: {message}")]
    Panicked {
        /// The tool that was called.
        tool: String,
        /// The panic payload, when it was a string.
        message: String,
    },
    /// The caller used the tool too often: a cooldown or the daily limit.
    #[error(
        "tool `{tool}` is rate limited: {limit}; try again in {}",
        human(retry_after)
    )]
    RateLimited {
        /// The tool that was called.
        tool: String,
        /// Which limit: `cooldown of 30s` or `daily limit of 3`.
        limit: String,
        /// How long until a call would be admitted.
        retry_after: Duration,
    },
    /// The tool did not finish in time. The caller stops waiting: an `async` handler is
    /// dropped at its next `.await`; a `#[tool(blocking)]` handler keeps running on its thread
    /// until it returns, and its result is thrown away.
    #[error(
        "tool `{tool}` timed out after {}; its result was abandoned, so ask for less or try again later",
        human(after)
    )]
    TimedOut {
        /// The tool that was called.
        tool: String,
        /// The limit that was exceeded.
        after: Duration,
    },
    /// The tool is listed but has nothing to run: a run-time tool registered from its spec
    /// alone ([`Registry::register`](crate::Registry::register)).
    #[error(
        "tool `{tool}` has no handler in this process, so it cannot run here; call another tool"
    )]
    NoHandler {
        /// The tool that was called.
        tool: String,
    },
    /// The tool needs a human's approval; nothing ran yet.
    #[error("tool `{tool}` needs a person's approval before it runs; approval token `{token}`")]
    NeedsApproval {
        /// The tool that was called.
        tool: String,
        /// Pass it to [`Registry::approve`](crate::Registry::approve) or
        /// [`Registry::deny`](crate::Registry::deny).
        token: String,
    },
    /// An approval token was refused: unknown, used, expired, another user's, or other
    /// arguments.
    #[error("approval refused: {reason}")]
    ApprovalRefused {
        /// Why.
        reason: String,
    },
    /// A pending call does not match what the registry stored: its tool, user, arguments or
    /// expiry were changed, or its MAC is missing or wrong (the store was edited, or signed
    /// with another key). Nothing ran.
    #[error(
        "approval refused: the pending call was altered after it was stored ({reason}); nothing ran, call the tool again for a new token"
    )]
    ApprovalAltered {
        /// What does not match.
        reason: String,
    },
    /// A hook refused the call before the tool ran (see [`hook`](crate::hook)); nothing ran.
    #[error(
        "tool `{tool}` refused the call (policy `{hook}`): {reason}; change the call as this says, or call another tool"
    )]
    Refused {
        /// The tool that was called.
        tool: String,
        /// The hook that refused it.
        hook: String,
        /// Why, in the hook's words.
        reason: String,
    },
    /// A person denied the call.
    #[error("tool `{tool}` was denied: {reason}")]
    Denied {
        /// The tool that was called.
        tool: String,
        /// The reason given.
        reason: String,
    },
    /// The evaluation gate failed or timed out, and the tool is marked `gate_fail_closed`.
    #[error("tool `{tool}` cannot run now: its evaluation gate is unavailable ({reason})")]
    GateUnavailable {
        /// The tool that was called.
        tool: String,
        /// What went wrong with the gate.
        reason: String,
    },
    /// The store that counts the tool's calls or keeps its approvals (a file, Redis) could not
    /// be reached or read, so the call was not admitted; nothing ran.
    #[error(
        "tool `{tool}` cannot run now: its {store} is unavailable ({reason}); try again shortly"
    )]
    StoreUnavailable {
        /// The tool that was called.
        tool: String,
        /// Which store: `rate-limit file`, `Redis rate-limit store`.
        store: String,
        /// What went wrong.
        reason: String,
    },
    /// The application did not provide what the tool needs (such as its `State<T>`).
    #[error("tool `{tool}` is misconfigured: {message}")]
    Misconfigured {
        /// The tool that was called.
        tool: String,
        /// What is missing and how to provide it.
        message: String,
    },
    /// The argument text is longer than the tool accepts; nothing was parsed.
    #[error(
        "the arguments of tool `{tool}` are larger than its limit of {limit} bytes of JSON; send less (shorter text, fewer items) or split the work into several calls"
    )]
    ArgumentsTooLarge {
        /// The tool that was called.
        tool: String,
        /// The tool's limit on the argument text, in bytes (`#[tool(max_args_bytes = N)]`).
        limit: usize,
    },
    /// The arguments nest arrays and objects deeper than any tool accepts.
    #[error(
        "the arguments of tool `{tool}` nest arrays and objects more than {limit} levels deep; send flatter arguments"
    )]
    ArgumentsTooDeep {
        /// The tool that was called (empty for an unknown tool).
        tool: String,
        /// The deepest nesting accepted, [`MAX_ARGS_DEPTH`](crate::call::MAX_ARGS_DEPTH).
        limit: usize,
    },
    /// The tool runs in another process, reached through a front end (an HTTP tool module, a
    /// mounted MCP server), and that front end could not get its answer: the process could not
    /// be reached, or answered with a failure of its transport. The front end's own error
    /// (`tool_registry::http::ModuleError`) becomes this one where it crosses into the call,
    /// and keeps its code (`module_unreachable`, `module_status`).
    #[error("{}", .0.message)]
    Remote(Box<RemoteFailure>),
    /// The model asked for more calls in one output than the registry runs: the calls past the
    /// first `limit` did not run, and this one error reports them all.
    #[error(
        "{left_out} more tool calls not run: one answer may make at most {limit} tool calls; make the most important calls first and the rest in a later turn"
    )]
    TooManyCalls {
        /// The most calls one model output runs.
        limit: usize,
        /// How many calls of the output did not run.
        left_out: usize,
    },
}

fn no_module(module: &Option<String>) -> String {
    match module {
        Some(module) => format!(
            "no module `{}` is available to you; ",
            module.escape_debug()
        ),
        None => String::new(),
    }
}

fn did_you_mean(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(name) => format!("did you mean `{name}`? Otherwise "),
        None => String::new(),
    }
}

fn human(duration: &Duration) -> String {
    let rounded = Duration::from_millis(duration.as_millis().min(u128::from(u64::MAX)) as u64);
    humantime::format_duration(rounded).to_string()
}

fn at_path(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!("at `{path}`: ")
    }
}

impl ToolError {
    /// A handler error for `tool` with a message, for tools that build their own errors.
    pub fn handler(tool: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Handler {
            tool: tool.into(),
            message: message.into(),
        }
    }

    /// A handler error from inside a tool; the registry fills in the tool's name.
    ///
    /// ```
    /// # use tool_registry::{tool, ToolError};
    /// /// Divide two numbers.
    /// #[tool]
    /// fn divide(a: f64, b: f64) -> Result<f64, ToolError> {
    ///     if b == 0.0 { Err(ToolError::failed("cannot divide by zero")) } else { Ok(a / b) }
    /// }
    /// # fn main() {}
    /// ```
    pub fn failed(message: impl Into<String>) -> Self {
        Self::Handler {
            tool: String::new(),
            message: message.into(),
        }
    }

    /// An argument the tool cannot use, found by the tool's own checks (a path outside a
    /// sandbox, a malformed schedule); `path` names the argument so the model can fix it. The
    /// registry fills in the tool's name.
    pub fn invalid_argument(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self::InvalidArguments {
            tool: String::new(),
            path: path.into(),
            message: message.into(),
        }
    }

    pub(crate) fn set_tool(&mut self, name: &str) {
        if let Some(tool) = self.tool_mut()
            && tool.is_empty()
        {
            name.clone_into(tool);
        }
    }

    /// The name of the tool called, in the variants that hold one.
    pub(super) fn tool_mut(&mut self) -> Option<&mut String> {
        match self {
            Self::InvalidArguments { tool, .. }
            | Self::Handler { tool, .. }
            | Self::InvalidOutput { tool, .. }
            | Self::Panicked { tool, .. }
            | Self::Misconfigured { tool, .. }
            | Self::RateLimited { tool, .. }
            | Self::TimedOut { tool, .. }
            | Self::NeedsApproval { tool, .. }
            | Self::NoHandler { tool, .. }
            | Self::Denied { tool, .. }
            | Self::Refused { tool, .. }
            | Self::GateUnavailable { tool, .. }
            | Self::StoreUnavailable { tool, .. }
            | Self::ArgumentsTooLarge { tool, .. }
            | Self::ArgumentsTooDeep { tool, .. } => Some(tool),
            Self::Remote(failure) => Some(&mut failure.tool),
            Self::UnknownTool { .. }
            | Self::ApprovalRefused { .. }
            | Self::ApprovalAltered { .. }
            | Self::TooManyCalls { .. } => None,
        }
    }
}

/// A front end's failure to get a tool's answer from the process that runs it, as a call
/// carries it ([`ToolError::Remote`]). The front end builds it from its own error type (an
/// HTTP module's `ModuleError`) and reads it back from there; what it holds is written on the
/// wire as any error's fields: `code`, `message`, `tool`, `module`, `detail`, then `data`'s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteFailure {
    /// The tool that was called.
    pub tool: String,
    /// The front end's stable code for what failed (`module_unreachable`, `module_status`):
    /// what [`ToolError::code`] answers.
    pub code: Cow<'static, str>,
    /// Where the tool runs: the module's or the mounted server's name.
    pub module: String,
    /// The whole message, as the model reads it: what failed and what to do.
    pub message: String,
    /// What went wrong, in the front end's words (the wire's `detail`).
    pub detail: String,
    /// What else the front end says of the failure (an HTTP status), beside the fields above.
    pub data: Map<String, Value>,
}

/// A tool that keeps its state in a [`JsonFile`](crate::store::JsonFile) can pass the store's error on with `?`: it
/// becomes the tool's handler error, whose message names the file and what to do.
impl From<StoreError> for ToolError {
    fn from(error: StoreError) -> Self {
        ToolError::failed(error.to_string())
    }
}
