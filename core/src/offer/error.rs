//! [`OfferError`]: why a resource, a prompt or a completion was not given.

use crate::ToolError;

/// Why a read, a prompt or a completion gave nothing. What a caller may not see is never
/// named differently from what does not exist: both are [`OfferError::UnknownResource`] or
/// [`OfferError::UnknownPrompt`], with the same text.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum OfferError {
    /// No resource the caller may see has this URI, nor is it an instance of such a template.
    #[error("Resource not found: {uri}")]
    UnknownResource {
        /// The URI asked for, cut to [`MAX_URI_BYTES`](super::MAX_URI_BYTES).
        uri: String,
    },
    /// No prompt the caller may see has this name.
    #[error("Unknown prompt: {name}")]
    UnknownPrompt {
        /// The name asked for.
        name: String,
    },
    /// A required argument of a prompt was not given.
    #[error("the prompt `{prompt}` needs the argument `{argument}`")]
    MissingArgument {
        /// The prompt.
        prompt: String,
        /// The argument it needs.
        argument: String,
    },
    /// An argument the prompt does not take.
    #[error("the prompt `{prompt}` takes no argument `{argument}`; it takes: {takes}")]
    UnknownArgument {
        /// The prompt.
        prompt: String,
        /// The argument given.
        argument: String,
        /// The arguments it takes, comma-separated.
        takes: String,
    },
    /// A template variable holds what no resource may be asked for (`..`, a `/`, a NUL, ...).
    #[error("the URI's `{variable}` is refused: {reason}")]
    InvalidVariable {
        /// The variable.
        variable: String,
        /// Why.
        reason: String,
    },
    /// A resource template's URI cannot be read (from [`ResourceSpec::new`](super::ResourceSpec::new)).
    #[error("the URI template `{template}` is invalid: {reason}")]
    InvalidTemplate {
        /// The template.
        template: String,
        /// Why.
        reason: String,
    },
    /// A name or URI already taken by another resource or prompt (from registration).
    #[error("`{0}` is already registered; remove it first")]
    Taken(String),
    /// The reader or prompt failed, panicked, ran out of time or gave contents over the
    /// registry's content limits.
    #[error(transparent)]
    Failed(#[from] ToolError),
}

impl OfferError {
    /// A stable code for the error, as [`ToolError::code`] gives for a call.
    pub fn code(&self) -> &str {
        match self {
            Self::UnknownResource { .. } => "unknown_resource",
            Self::UnknownPrompt { .. } => "unknown_prompt",
            Self::MissingArgument { .. } => "missing_argument",
            Self::UnknownArgument { .. } => "unknown_argument",
            Self::InvalidVariable { .. } => "invalid_variable",
            Self::InvalidTemplate { .. } => "invalid_template",
            Self::Taken(_) => "taken",
            Self::Failed(error) => error.code(),
        }
    }
}
