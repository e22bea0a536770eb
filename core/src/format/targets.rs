//! The formats a tool promises to fit, `#[tool(targets(openai_strict, anthropic_strict,
//! gemini))]`: the macro refuses the argument types it can see that a target cannot say; the
//! rest of the schema is checked here when a registry is built, so that a broken promise stops
//! the program at its start rather than at the first request.

use std::fmt;

pub use crate::meta::Target;

use super::Provider;
use super::definitions::{parameters, strict_definition};
use crate::def::Tool;

impl Target {
    /// Whether `tool`'s arguments can be given in this format; the error says where and what
    /// cannot.
    pub fn check(self, tool: &Tool) -> Result<(), TargetError> {
        let failed = |path: String, construct: String| TargetError {
            tool: tool.name().to_owned(),
            target: self,
            path,
            construct,
        };
        match self {
            Self::OpenAiStrict | Self::AnthropicStrict => {
                let provider = match self {
                    Self::OpenAiStrict => Provider::OpenAi,
                    _ => Provider::Anthropic,
                };
                strict_definition(tool, provider)
                    .map(drop)
                    .map_err(|error| failed(error.path, error.construct))
            }
            Self::Gemini => super::gemini::parameters(&parameters(tool))
                .map(drop)
                .map_err(|error| failed(error.path, error.construct)),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tool that declares a target its arguments cannot be given in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tool `{tool}` declares `targets({target})`, which its arguments do not fit: at `{path}`, {construct}; change the arguments or leave `{target}` out of `targets`"
)]
pub struct TargetError {
    /// The tool.
    pub tool: String,
    /// The target it declares.
    pub target: Target,
    /// Where in its argument schema (a JSON Pointer).
    pub path: String,
    /// What the target cannot say there.
    pub construct: String,
}

/// The first target a linked tool of `tools` declares and does not fit.
pub(crate) fn check_all(tools: &[Tool]) -> Result<(), TargetError> {
    for tool in tools {
        let Some(def) = tool.definition() else {
            continue;
        };
        for target in def.targets() {
            target.check(tool)?;
        }
    }
    Ok(())
}
