//! What a declaration says about a tool besides its code: tier, cost, permission level,
//! the response-tag form, where it was declared and its arguments as written; its behavioural
//! annotations and the risk they imply; the formats it promises to fit. The crate's vocabulary:
//! a compiled definition and a run-time spec both speak it, and it uses nothing else of the
//! crate. Re-exported from [`def`](crate::def) (and [`Target`] from [`format`](crate::format)).
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Tier`], [`Cost`], [`Permission`], [`SourceLocation`], [`ArgInfo`], [`CachePolicy`], [`TaskSupport`] |
//! | `annotations.rs` | [`Annotations`] as declared and as they apply, and the [`Risk`] they imply |
//! | `target.rs` | [`Target`]: a format a tool can promise to fit |

mod annotations;
mod target;

pub use annotations::{Annotations, Risk};
pub(crate) use annotations::{effective, known, risk};
pub use target::Target;

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How a tool's results are reused (`#[tool(cache = "5m", cache_per_user = false)]`; see
/// [`hook`](crate::hook)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CachePolicy {
    /// How long a result is reused.
    pub ttl: Duration,
    /// Whether who asks is part of the key (the default). `false` only for a tool whose
    /// answer is the same for every caller that may call it.
    pub per_user: bool,
}

/// How much a tool matters when choosing which tools a model sees (`#[tool(tier = "high")]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Rarely needed; the first to drop from a crowded list.
    Low,
    /// The default.
    #[default]
    Medium,
    /// Core tools, always offered.
    High,
}

/// What one call costs (`#[tool(cost = "cheap")]`), used by evaluation gates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Cost {
    /// No external calls: a file write, a computation. The default.
    #[default]
    Free,
    /// One inexpensive external call.
    Cheap,
    /// Slow or billed work worth gating.
    Expensive,
}

/// The least permission level a caller needs (`#[tool(permission = "admin")]`).
///
/// Levels are ordered: `Guest < User < Admin < Owner`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, Default,
)]
#[serde(rename_all = "snake_case")]
pub enum Permission {
    /// Anyone, the default.
    #[default]
    Guest,
    /// A known user.
    User,
    /// An administrator.
    Admin,
    /// The owner of the deployment.
    Owner,
}

macro_rules! names {
    ($($ty:ident { $($variant:ident = $name:literal),* })*) => {$(
        impl $ty {
            /// The lowercase name used in attributes, JSON and the catalog.
            pub const fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $name),* }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}

/// Whether a call of the tool may outlive its request as a task (MCP's tasks extension,
/// `#[tool(task = "optional")]`; see [`task`](crate::task)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never a task, the default: every call answers within its request.
    #[default]
    Forbidden,
    /// A task when the client opted in and the call is still running after a short while
    /// ([`TaskLimits::after`](crate::task::TaskLimits::after)); an answer within the request
    /// otherwise.
    Optional,
    /// Always a task: a client without the extension is refused with the protocol's error.
    Required,
}

impl TaskSupport {
    /// Reads `forbidden`, `optional` or `required`; `None` for anything else.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "forbidden" => Some(Self::Forbidden),
            "optional" => Some(Self::Optional),
            "required" => Some(Self::Required),
            _ => None,
        }
    }
}

names! {
    TaskSupport { Forbidden = "forbidden", Optional = "optional", Required = "required" }
    Tier { Low = "low", Medium = "medium", High = "high" }
    Cost { Free = "free", Cheap = "cheap", Expensive = "expensive" }
    Permission { Guest = "guest", User = "user", Admin = "admin", Owner = "owner" }
}

impl Permission {
    /// Reads a level name; anything unknown counts as [`Permission::Guest`].
    pub fn from_name(name: &str) -> Self {
        match name.trim().to_ascii_lowercase().as_str() {
            "user" => Self::User,
            "admin" => Self::Admin,
            "owner" => Self::Owner,
            _ => Self::Guest,
        }
    }
}

/// Where a tool was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SourceLocation {
    /// The crate that declared it (`CARGO_CRATE_NAME`).
    pub crate_name: &'static str,
    /// The module path of the function.
    pub module_path: &'static str,
    /// The source file, relative to the workspace root when built by cargo.
    pub file: &'static str,
    /// The line of the tool's name.
    pub line: u32,
    /// The column of the tool's name.
    pub column: u32,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{} (crate `{}`)",
            self.file, self.line, self.column, self.crate_name
        )
    }
}

/// A model-visible argument as the attribute declared it (the schema has the full shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ArgInfo {
    /// The JSON name of the argument.
    pub name: &'static str,
    /// The Rust type as written.
    pub rust_type: &'static str,
    /// Whether the model must supply it (`false` for `Option<T>` and arguments with a default).
    pub required: bool,
}
