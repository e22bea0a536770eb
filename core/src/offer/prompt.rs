//! [`PromptSpec`]: a prompt, its arguments and the function that writes its messages;
//! [`IntoMessages`], what that function may return.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::future::BoxFuture;

use super::about::{About, about_methods};
use crate::media::Block;
use crate::{Ctx, ToolError};

/// One argument of a prompt (always a string, as MCP says).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptArgument {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Whether the prompt needs it.
    pub required: bool,
}

impl PromptArgument {
    /// A required argument.
    pub fn required(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            required: true,
        }
    }

    /// An argument the caller may leave out.
    pub fn optional(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            required: false,
            ..Self::required(name, description)
        }
    }
}

/// Who says a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The assistant.
    Assistant,
}

/// One message of a prompt: who says it, and one block (text, an image, audio, an embedded
/// resource or a link to one).
#[derive(Debug, Clone)]
pub struct PromptMessage {
    /// Who says it.
    pub role: Role,
    /// What it says.
    pub content: Block,
}

impl PromptMessage {
    /// A message of the user.
    pub fn user(content: impl Into<Block>) -> Self {
        Self {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message of the assistant.
    pub fn assistant(content: impl Into<Block>) -> Self {
        Self {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What a prompt's function is given: its arguments (the required ones present, no unknown
/// one) and the caller's context.
#[derive(Clone)]
pub struct GetRequest {
    /// The arguments, by name.
    pub arguments: BTreeMap<String, String>,
    /// The caller.
    pub ctx: Ctx,
}

impl GetRequest {
    /// The argument `name`, if given.
    pub fn argument(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).map(String::as_str)
    }
}

/// The future a prompt's function returns.
pub type GetFuture = BoxFuture<'static, Result<Vec<PromptMessage>, ToolError>>;

type Getter = Arc<dyn Fn(GetRequest) -> GetFuture + Send + Sync>;

/// A prompt: what a client lists (`prompts/list`) and gets (`prompts/get`). Declared with
/// `#[prompt]` on a function, or built here and given to
/// [`Registry::register_prompt`](crate::Registry::register_prompt).
///
/// ```
/// use tool_registry::offer::{PromptArgument, PromptMessage, PromptSpec};
///
/// let review = PromptSpec::new("review", |request| async move {
///     let code = request.argument("code").unwrap_or_default().to_owned();
///     Ok(vec![PromptMessage::user(format!("Review this code:\n{code}"))])
/// })
/// .with_description("Ask for a code review.")
/// .with_argument(PromptArgument::required("code", "The code to review."));
/// assert_eq!(review.arguments().len(), 1);
/// ```
#[derive(Clone)]
pub struct PromptSpec {
    about: About,
    arguments: Vec<PromptArgument>,
    getter: Getter,
}

about_methods!(PromptSpec, "get", "argument");

impl std::fmt::Debug for PromptSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PromptSpec")
            .field("name", &self.about.name)
            .field("arguments", &self.arguments)
            .field("permission", &self.about.permission)
            .finish_non_exhaustive()
    }
}

impl PromptSpec {
    /// A prompt named `name` whose messages `get` writes.
    pub fn new<F, Fut>(name: impl Into<String>, get: F) -> Self
    where
        F: Fn(GetRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<PromptMessage>, ToolError>> + Send + 'static,
    {
        Self {
            about: About::new(name.into()),
            arguments: Vec::new(),
            getter: Arc::new(move |request| Box::pin(get(request))),
        }
    }

    /// One more argument.
    #[must_use]
    pub fn with_argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Its arguments.
    pub fn arguments(&self) -> &[PromptArgument] {
        &self.arguments
    }

    pub(crate) fn get(&self, request: GetRequest) -> GetFuture {
        (self.getter)(request)
    }
}

/// What a `#[prompt]` function may return.
///
/// - `String` and `&'static str`: one message of the user;
/// - [`PromptMessage`]: one message; `Vec<PromptMessage>`: several;
/// - `Result<T, E>` of any of these, `E: Display`: the error is the prompt's failure.
pub trait IntoMessages {
    /// The messages.
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError>;
}

impl IntoMessages for String {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl IntoMessages for &'static str {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![PromptMessage::user(self)])
    }
}

impl IntoMessages for PromptMessage {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(vec![self])
    }
}

impl IntoMessages for Vec<PromptMessage> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        Ok(self)
    }
}

impl<T: IntoMessages, E: std::fmt::Display> IntoMessages for Result<T, E> {
    fn into_messages(self) -> Result<Vec<PromptMessage>, ToolError> {
        match self {
            Ok(value) => value.into_messages(),
            Err(error) => Err(ToolError::failed(error.to_string())),
        }
    }
}
