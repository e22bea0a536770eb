//! The model providers whose tool lists the registry writes, and the names each one accepts.
//!
//! Function names, as each provider publishes the rule:
//!
//! - OpenAI Chat Completions and Responses: "Must be a-z, A-Z, 0-9, or contain underscores and
//!   dashes, with a maximum length of 64" (API reference, `function.name`,
//!   <https://platform.openai.com/docs/api-reference/chat/create>).
//! - Anthropic: `name` "must match the regex `^[a-zA-Z0-9_-]{1,64}$`" (tool use,
//!   <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>).
//! - Gemini: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain
//!   underscores and dashes, with a maximum length of 64" (`FunctionDeclaration.name`,
//!   <https://ai.google.dev/api/caching#FunctionDeclaration>; some versions also allow dots
//!   and colons: the narrower rule is the one every version accepts).
//! - MCP: tool names "SHOULD be between 1 and 128 characters", of ASCII letters, digits, `_`,
//!   `-` and `.` (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool-names>).
//!
//! A `#[tool]` name is segments of `[A-Za-z0-9_-]` joined by `.`, at most 64 characters: MCP
//! takes it as it is; for the others, each `.` is written `__`, and for Gemini a name that does
//! not start with a letter or `_` gets a leading `_`. The registry resolves these wire names back to
//! their tools wherever a name comes in, and refuses two tools whose wire names meet.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

/// A model provider's tool-list format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Provider {
    /// OpenAI Chat Completions: `{"type": "function", "function": {...}}`.
    OpenAi,
    /// OpenAI Responses: flat `{"type": "function", "name": ..., "parameters": ...}`.
    Responses,
    /// Anthropic Messages: `{"name", "description", "input_schema"}`.
    Anthropic,
    /// Gemini: one `{"functionDeclarations": [...]}` tool.
    Gemini,
    /// Model Context Protocol: `Tool` objects of `tools/list`.
    Mcp,
}

impl Provider {
    /// Every provider, in a fixed order.
    pub const ALL: [Provider; 5] = [
        Provider::OpenAi,
        Provider::Responses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Mcp,
    ];

    /// `openai`, `responses`, `anthropic`, `gemini` or `mcp`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Responses => "responses",
            Self::Anthropic => "anthropic",
            Self::Gemini => "gemini",
            Self::Mcp => "mcp",
        }
    }

    /// The position of the provider in [`Provider::ALL`], for per-provider caches.
    pub(crate) const fn index(self) -> usize {
        match self {
            Self::OpenAi => 0,
            Self::Responses => 1,
            Self::Anthropic => 2,
            Self::Gemini => 3,
            Self::Mcp => 4,
        }
    }

    /// The most characters the provider accepts in a tool name.
    pub const fn max_name_len(self) -> usize {
        match self {
            Self::Mcp => 128,
            _ => 64,
        }
    }

    /// Whether the provider takes `.` in a name (only MCP, of the five).
    const fn takes_dots(self) -> bool {
        matches!(self, Self::Mcp)
    }

    /// Whether the provider's names must begin with a letter or `_` (only Gemini, of the five).
    const fn letter_first(self) -> bool {
        matches!(self, Self::Gemini)
    }

    /// The name the provider is given for the tool `name`: the name itself where the provider
    /// accepts it, else `.` written `__` and, for a provider whose names begin with a letter
    /// or `_` (Gemini), a leading `_` before a first character that is neither.
    pub fn wire_name(self, name: &str) -> Cow<'_, str> {
        if self.takes_dots() {
            return Cow::Borrowed(name);
        }
        let starts_well = !self.letter_first()
            || name
                .bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
        if starts_well && !name.contains('.') {
            return Cow::Borrowed(name);
        }
        let mut wire = String::with_capacity(name.len() + 4);
        if !starts_well {
            wire.push('_');
        }
        for c in name.chars() {
            if c == '.' {
                wire.push_str("__");
            } else {
                wire.push(c);
            }
        }
        Cow::Owned(wire)
    }

    /// Whether `name` is one the provider accepts, by its published rule (the rule checked, not
    /// the mapping: see the module documentation).
    pub fn accepts(self, name: &str) -> bool {
        let len = name.len();
        if len == 0 || len > self.max_name_len() {
            return false;
        }
        let plain = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        match self {
            Self::OpenAi | Self::Responses | Self::Anthropic => name.bytes().all(plain),
            Self::Gemini => {
                let first = name.as_bytes()[0];
                (first.is_ascii_alphabetic() || first == b'_') && name.bytes().all(plain)
            }
            Self::Mcp => name.bytes().all(|b| plain(b) || b == b'.'),
        }
    }
}

/// The wire names of `name` that differ from it, once each: what a provider that refuses a
/// character of `name` is given, and what a call from it comes back as.
pub(crate) fn wire_aliases(name: &str) -> impl Iterator<Item = String> + '_ {
    let mut seen: Vec<String> = Vec::new();
    Provider::ALL.into_iter().filter_map(move |provider| {
        let wire = provider.wire_name(name);
        if wire == name || seen.iter().any(|s| *s == wire) {
            return None;
        }
        seen.push(wire.clone().into_owned());
        Some(wire.into_owned())
    })
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider name that is none of [`Provider::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`: use openai, responses, anthropic, gemini or mcp")]
pub struct UnknownProvider(pub String);

impl FromStr for Provider {
    type Err = UnknownProvider;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| UnknownProvider(text.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::Provider;

    #[test]
    fn wire_names_follow_each_rule() {
        for provider in Provider::ALL {
            for name in [
                "search",
                "file_manager.create_document",
                "9lives",
                "-x.y",
                "a.b.c",
            ] {
                let wire = provider.wire_name(name);
                assert!(provider.accepts(&wire), "{provider}: {name} -> {wire}");
            }
        }
        assert_eq!(
            Provider::OpenAi.wire_name("file_manager.create_document"),
            "file_manager__create_document"
        );
        assert_eq!(Provider::Gemini.wire_name("9lives"), "_9lives");
        // The others take a digit first: the name is theirs as it is.
        assert_eq!(Provider::OpenAi.wire_name("9lives"), "9lives");
        assert_eq!(Provider::Anthropic.wire_name("9.lives"), "9__lives");
        assert_eq!(Provider::Mcp.wire_name("a.b"), "a.b");
        assert!(!Provider::Anthropic.accepts("a.b") && !Provider::Gemini.accepts("9x"));
        assert!(
            !Provider::OpenAi.accepts(&"x".repeat(65)) && Provider::Mcp.accepts(&"x".repeat(128))
        );
    }

    #[test]
    fn providers_read_from_their_names() {
        for provider in Provider::ALL {
            assert_eq!(provider.as_str().parse::<Provider>(), Ok(provider));
        }
        assert!("openai-chat".parse::<Provider>().is_err());
    }
}
