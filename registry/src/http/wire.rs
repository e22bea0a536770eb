//! What travels between a gateway and a module: the manifest, the call, and the typed error
//! body of a refused request.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::def::Permission;
use crate::spec::ToolSpec;

/// What `GET /manifest` answers: the module's name and version, and each tool it serves to
/// the caller, as the [`ToolSpec`] a gateway registers (description, input and output schema,
/// permission level, category, tags, annotations and limits). Tool names carry the module's
/// name as their first segment (`kb.research`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The module's name.
    pub name: String,
    /// The module's version, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The tools, sorted by name.
    pub tools: Vec<ToolSpec>,
}

/// A manifest as a gateway first reads it: each tool is checked on its own, so that one bad
/// spec leaves the module's other tools usable.
#[derive(Deserialize)]
pub(super) struct RawManifest {
    pub(super) name: String,
    pub(super) tools: Vec<Value>,
}

/// The body of `POST /execute`.
///
/// `user_id` and `level` are believed only from a client that holds the module's shared
/// secret; without it the call runs as a guest, whatever they say.
#[derive(Debug, Serialize, Deserialize)]
pub struct ExecuteRequest<'a> {
    /// The tool, as the manifest names it (`kb.research`) or without the module's name.
    #[serde(borrow)]
    pub tool_name: std::borrow::Cow<'a, str>,
    /// The arguments, a JSON object (`{}` when left out).
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
    /// The user the call is made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The caller's permission level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Permission>,
    /// The model's id for this call, for traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_id: Option<String>,
    /// The gateway already asked a person and got a yes: the module does not ask again.
    /// Believed only from a client that holds the shared secret.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirmed: bool,
    /// The approval token of an earlier call of this tool that answered `needs_approval`,
    /// for exactly these arguments and this user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_token: Option<String>,
}

/// What `GET /health` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// The module's name.
    pub name: String,
}
