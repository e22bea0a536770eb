//! What the registry says about run-time tools: why a registration is refused
//! ([`RegisterError`]), the changes subscribers hear ([`RegistryChange`]), and the snapshot of
//! every tool ([`RegistrySnapshot`]).

use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::{SpecError, ToolSpec};

/// Why a run-time registration or switch was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegisterError {
    /// The name is registered at this version with a different spec.
    #[error(
        "tool `{tool}` is already registered {} with a different spec; give the new spec {} to replace it",
        match version { Some(v) => format!("at version `{v}`"), None => "without a version".to_owned() },
        match version { Some(_) => "another version", None => "a version" },
    )]
    SameVersion {
        /// The tool.
        tool: String,
        /// The version both specs have (`None`: both unversioned).
        version: Option<String>,
    },
    /// The spec's version is lower than the registered one's (semver precedence; no version is
    /// below every version): a spec replaces a registered one only with a greater version.
    #[error(
        "tool `{tool}` is registered at version `{registered}`; the new spec {} is older and cannot replace it: give it a version above `{registered}`, or remove the tool first to register an older spec on purpose",
        match given { Some(v) => format!("at version `{v}`"), None => "without a version".to_owned() },
    )]
    Downgrade {
        /// The tool.
        tool: String,
        /// The version registered now (an unversioned tool is below every spec, so it has one).
        registered: String,
        /// The version of the spec that was refused.
        given: Option<String>,
    },
    /// The name differs from the name or alias of another tool only in ASCII letter case
    /// (`Search` and `search`): a model or client that normalizes case would take one for the
    /// other.
    #[error(
        "tool `{name}` cannot be registered: it differs from the {}tool `{other}` only in letter case, and a model or client that ignores case would call one for the other; choose another name",
        if *compiled { "compiled " } else { "" }
    )]
    CaseClash {
        /// The name asked for.
        name: String,
        /// The name (or alias, or wire name) of the tool it clashes with.
        other: String,
        /// Whether that tool is a compiled one.
        compiled: bool,
    },
    /// The name belongs to a compiled tool (its name or alias), which a run-time spec cannot
    /// replace or remove.
    #[error(
        "`{name}` is a compiled tool{}; a tool registered at run time cannot replace or remove it: choose another name, or switch the tool off with `Registry::disable`",
        match at { Some(at) => format!(" (declared at {at})"), None => String::new() }
    )]
    Compiled {
        /// The contested name.
        name: String,
        /// Where the compiled tool is declared.
        at: Option<String>,
    },
    /// The name meets another run-time tool's name on the wire: `a.b` and `a__b` are one name
    /// to a provider that refuses `.` (see
    /// [`Provider::wire_name`](crate::format::Provider::wire_name)).
    #[error(
        "tool `{name}` cannot be registered: `{wire}` would name both it and `{other}` for providers that refuse `.` in a name; choose another name"
    )]
    WireName {
        /// The name asked for.
        name: String,
        /// The name the two tools share on the wire.
        wire: String,
        /// The tool already registered.
        other: String,
    },
    /// No tool has this name.
    #[error("no tool is registered as `{}`", name.escape_debug())]
    UnknownTool {
        /// The name asked for.
        name: String,
    },
    /// The spec is invalid (from [`Registry::restore`](crate::Registry::restore)).
    #[error(transparent)]
    Spec(#[from] SpecError),
}

/// A change to a registry's tools, sent to every [`Registry::subscribe`](crate::Registry::subscribe)r.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RegistryChange {
    /// A new tool.
    Registered {
        /// The tool.
        tool: String,
        /// Its version.
        version: Option<String>,
    },
    /// A tool replaced by a spec of another version.
    Replaced {
        /// The tool.
        tool: String,
        /// The version it had.
        from: Option<String>,
        /// The version it has now.
        to: Option<String>,
    },
    /// Tools switched on (each of them was off).
    Enabled {
        /// The tools, sorted.
        tools: Vec<String>,
    },
    /// Tools switched off (each of them was on).
    Disabled {
        /// The tools, sorted.
        tools: Vec<String>,
    },
    /// A tool removed.
    Removed {
        /// The tool.
        tool: String,
    },
    /// The resources or resource templates changed (one registered or removed).
    Resources,
    /// The prompts changed (one registered or removed).
    Prompts,
    /// The contents of a resource changed ([`Registry::resource_updated`](crate::Registry::resource_updated)).
    ResourceUpdated {
        /// Its URI.
        uri: String,
    },
}

/// The state of a registry's tools, for transfer, tests and persistence: every tool with its
/// spec and switch. Written by [`Registry::snapshot`](crate::Registry::snapshot), read back by
/// [`Registry::restore`](crate::Registry::restore).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrySnapshot {
    /// Every tool, sorted by name.
    pub tools: Vec<SnapshotEntry>,
}

/// One tool of a [`RegistrySnapshot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnapshotEntry {
    /// The spec.
    pub spec: ToolSpec,
    /// Switched on.
    pub enabled: bool,
    /// `linked` for a compiled tool (restored by name: only its switch), `run_time` for a tool
    /// registered at run time.
    pub origin: Origin,
    /// When a run-time tool was registered (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "rfc3339")]
    pub created_at: Option<SystemTime>,
}

/// Where a tool of a snapshot comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Declared with `#[tool]` and linked into the program.
    Linked,
    /// Registered at run time.
    RunTime,
}

mod rfc3339 {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        value: &Option<SystemTime>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(time) => serializer.collect_str(&humantime::format_rfc3339_nanos(*time)),
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| humantime::parse_rfc3339(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}
