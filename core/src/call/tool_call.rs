//! [`ToolCall`]: one call a model asked for, by name, with its arguments and the provider's id.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One call a model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id of the call, echoed back with its result. [`Registry::execute`](crate::Registry::execute)
    /// hands it to the call as [`Ctx::call_id`](crate::Ctx::call_id), and the call's span carries it
    /// (`gen_ai.tool.call.id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name or alias.
    pub name: String,
    /// The arguments as the model wrote them.
    #[serde(default)]
    pub arguments: Value,
}

impl ToolCall {
    /// A call of `name` with `arguments`.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }
}

impl From<crate::parse::ParsedCall> for ToolCall {
    /// The call as [`Registry::execute`](crate::Registry::execute) takes it.
    fn from(call: crate::parse::ParsedCall) -> Self {
        ToolCall {
            id: call.id,
            name: call.name,
            arguments: call.arguments,
        }
    }
}
