//! [`Target`]: a format a tool can promise to fit, as `#[tool(targets(...))]` names it; the
//! check that it does is [`format`](crate::format)'s.

/// A format a tool can promise to fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// OpenAI strict mode (Chat Completions and Responses, `"strict": true`).
    OpenAiStrict,
    /// Anthropic strict tool use (`"strict": true`).
    AnthropicStrict,
    /// Gemini's `parameters`, its OpenAPI subset (not the `parametersJsonSchema` fallback).
    Gemini,
}

impl Target {
    /// Every target, in a fixed order.
    pub const ALL: [Target; 3] = [
        Target::OpenAiStrict,
        Target::AnthropicStrict,
        Target::Gemini,
    ];

    /// The name `targets(...)` takes.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAiStrict => "openai_strict",
            Self::AnthropicStrict => "anthropic_strict",
            Self::Gemini => "gemini",
        }
    }

    /// The target's bit in `ToolParts::targets`, as the macro writes it.
    pub(crate) const fn bit(self) -> u8 {
        match self {
            Self::OpenAiStrict => 1,
            Self::AnthropicStrict => 2,
            Self::Gemini => 4,
        }
    }
}
