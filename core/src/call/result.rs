//! What a tool call returns.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::ToolError;
use crate::audit::Audit;
use crate::media::{Block, Blocks};

/// The outcome of one tool call, as the knowledge-base bot spec defines it: a structured value
/// (`content`) and an ordered list of [`Block`]s (images, audio, files, links; see
/// [`content`](crate::content)).
///
/// A tool may return a `ToolResult` itself for full control (a follow-up message, side effects);
/// any other return value becomes `content` and `blocks` (see
/// [`IntoToolResult`](crate::content::IntoToolResult)). The model reads `content` first, as
/// text (a string as it is, anything else as JSON), then the blocks in order. The registry, never the handler, stamps `audit`
/// with `tool`, `duration_ms`, `ts` and `outcome`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// Whether the tool did what was asked.
    pub success: bool,
    /// The structured value handed back to the model; `Null` when the result is only blocks.
    #[serde(default)]
    pub content: Value,
    /// The blocks after the value, in order. Serialized in the shapes of
    /// [`content`](crate::content)'s wire format (binary as base64).
    #[serde(
        default,
        skip_serializing_if = "<[_]>::is_empty",
        with = "crate::media::wire"
    )]
    pub blocks: Blocks,
    /// A follow-up message for the user, if any (`None` = silent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What the call changed, e.g. `created:inbox/queue/source.md`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<String>,
    /// The audit record of the call.
    #[serde(default, skip_serializing_if = "Audit::is_empty")]
    pub audit: Audit,
}

impl ToolResult {
    /// A successful result carrying `content`.
    pub fn ok(content: impl Into<Value>) -> Self {
        Self {
            success: true,
            content: content.into(),
            blocks: Blocks::new(),
            message: None,
            side_effects: Vec::new(),
            audit: Audit::default(),
        }
    }

    /// A successful result of `blocks` only, with no structured value.
    pub fn from_blocks(blocks: Vec<Block>) -> Self {
        Self {
            blocks: blocks.into(),
            ..Self::ok(Value::Null)
        }
    }

    /// Adds one block after the others.
    pub fn with_block(mut self, block: impl Into<Block>) -> Self {
        self.blocks.push(block.into());
        self
    }

    /// An unsuccessful result: the tool ran but could not do what was asked.
    pub fn failure(message: impl Into<String>) -> Self {
        let message = message.into();
        Self {
            success: false,
            content: Value::Null,
            message: Some(message),
            ..Self::ok(Value::Null)
        }
    }

    /// Sets the follow-up message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }

    /// Records one side effect, e.g. `created:inbox/source.md`.
    pub fn with_side_effect(mut self, effect: impl Into<String>) -> Self {
        self.side_effects.push(effect.into());
        self
    }

    /// Adds one audit entry of the tool's own.
    pub fn with_audit(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.audit.extra.insert(key.into(), value.into());
        self
    }
}

/// An error becomes an unsuccessful result whose content tells the model what went wrong:
/// `{"error": {"code": "invalid_arguments", "message": "...", ...}}`.
impl From<ToolError> for ToolResult {
    fn from(error: ToolError) -> Self {
        let message = error.to_string();
        let detail = serde_json::to_value(&error).unwrap_or_else(|_| json!({}));
        let audit = Audit {
            outcome: Some(error.outcome()),
            ..Audit::default()
        };
        Self {
            success: false,
            content: json!({ "error": detail }),
            blocks: Blocks::new(),
            message: Some(message),
            side_effects: Vec::new(),
            audit,
        }
    }
}
