//! Behavioural annotations: as declared, as they apply (declared ones win, the rest follow from
//! the category), and the risk level computed from them.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::Tier;

/// Behavioural hints as declared on the tool; `None` means "not declared".
///
/// The names follow the MCP tool annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Annotations {
    /// The tool does not change its environment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only: Option<bool>,
    /// The tool may delete or overwrite data.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destructive: Option<bool>,
    /// Calling twice with the same arguments has no further effect.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotent: Option<bool>,
    /// The tool talks to the open world (web, third-party APIs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub open_world: Option<bool>,
    /// A human must approve each call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_confirmation: Option<bool>,
}

impl Annotations {
    /// No annotation declared: every field `None` (the same as `Annotations::default()`, in a
    /// const context).
    pub const NONE: Annotations = Annotations {
        read_only: None,
        destructive: None,
        idempotent: None,
        open_world: None,
        requires_confirmation: None,
    };

    /// The annotations that apply to a tool named `name` in `category` that declares these:
    /// each declared one as declared, the others derived from the category (`search` is
    /// read-only; `code_changes` tools that write or delete are destructive; `terminal` is
    /// destructive and needs confirmation), the rest `false`. What the registry acts on, and
    /// what a front end that registers another's tools (a gateway) must read before the tool is
    /// registered.
    ///
    /// ```
    /// use tool_registry::def::Annotations;
    /// let applied = Annotations::NONE.effective("shell.run", Some("terminal"));
    /// assert_eq!(applied.requires_confirmation, Some(true));
    /// assert_eq!(Annotations::NONE.effective("notes.read", None).destructive, Some(false));
    /// ```
    pub fn effective(self, name: &str, category: Option<&str>) -> Annotations {
        effective(name, category, self)
    }
}

/// How much harm a mistaken call can do, computed from the annotations and the tier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Read-only and closed-world.
    Low,
    /// Changes things, reaches the open world, or is a read-only tool of tier `high`.
    Medium,
    /// Destructive, or needs a person's confirmation.
    High,
}

impl Risk {
    /// `low`, `medium` or `high`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

impl fmt::Display for Risk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The annotations one category implies (the allow-list design's categories).
fn from_category(name: &str, category: Option<&str>) -> Annotations {
    let name = name.rsplit('.').next().unwrap_or(name);
    match category {
        Some("search") => Annotations {
            read_only: Some(true),
            destructive: Some(false),
            ..Annotations::default()
        },
        Some("code_changes")
            if ["write", "delete", "remove", "edit"]
                .iter()
                .any(|w| name.contains(w)) =>
        {
            Annotations {
                read_only: Some(false),
                destructive: Some(true),
                ..Annotations::default()
            }
        }
        Some("terminal") => Annotations {
            read_only: Some(false),
            destructive: Some(true),
            requires_confirmation: Some(true),
            ..Annotations::default()
        },
        _ => Annotations::default(),
    }
}

/// The annotations that apply: each declared one as declared, the others derived from the
/// category (`search` is read-only; `code_changes` tools that write or delete are destructive;
/// `terminal` is destructive and needs confirmation), the rest `false` (`read_only` `false`
/// unless known).
pub(crate) fn effective(name: &str, category: Option<&str>, declared: Annotations) -> Annotations {
    let known = known(name, category, declared);
    let pick = |v: Option<bool>| Some(v.unwrap_or(false));
    Annotations {
        read_only: pick(known.read_only),
        destructive: pick(known.destructive),
        idempotent: pick(known.idempotent),
        open_world: pick(known.open_world),
        requires_confirmation: pick(known.requires_confirmation),
    }
}

/// What is known of each annotation: declared, else derived from the category, else `None`.
pub(crate) fn known(name: &str, category: Option<&str>, declared: Annotations) -> Annotations {
    let derived = from_category(name, category);
    Annotations {
        read_only: declared.read_only.or(derived.read_only),
        destructive: declared.destructive.or(derived.destructive),
        idempotent: declared.idempotent.or(derived.idempotent),
        open_world: declared.open_world.or(derived.open_world),
        requires_confirmation: declared
            .requires_confirmation
            .or(derived.requires_confirmation),
    }
}

/// The risk level of a call, from the annotations that apply and the tier.
pub(crate) fn risk(a: &Annotations, tier: Tier) -> Risk {
    let yes = |v: Option<bool>| v == Some(true);
    if yes(a.destructive) || yes(a.requires_confirmation) {
        Risk::High
    } else if !yes(a.read_only) || yes(a.open_world) || tier == Tier::High {
        Risk::Medium
    } else {
        Risk::Low
    }
}
