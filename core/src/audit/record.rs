//! What the audit keeps of a call: [`Audit`] on the result (stamped by the registry, extended
//! by the tool) and [`AuditRecord`], what a sink receives.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::meta::{Annotations, Permission, Risk};

/// What the registry records about one call. The registry fills `tool`, `duration_ms`, `ts`,
/// `user` and `outcome`; a tool adds its own entries to `extra` (see
/// [`ToolResult::with_audit`](crate::ToolResult::with_audit)).
///
/// It serializes flat: `{"tool": "research", "duration_ms": 1.2, "ts": "2026-11-21T10:00:00.000Z",
/// "user": "alice", "outcome": "ok", ...extra}`. The timestamp is kept as a `SystemTime` and
/// formatted (RFC 3339, UTC) only when serialized, so stamping a call costs no formatting.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// The tool that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<Cow<'static, str>>,
    /// How long the call took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
    /// When the call finished.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "rfc3339")]
    pub ts: Option<SystemTime>,
    /// The user the call was made for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<Arc<str>>,
    /// `ok`, `failed` (the tool reported failure) or a [`ToolError`](crate::ToolError) code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Cow<'static, str>>,
    /// The tool's risk level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// For a tool with a result cache: `hit` when a kept result answered the call (or an
    /// identical call's run was shared), `miss` when the tool ran. Absent for other tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheAnswer>,
    /// The tool's own entries.
    #[serde(flatten)]
    pub extra: AuditExtra,
}

impl Audit {
    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.tool.is_none()
            && self.duration_ms.is_none()
            && self.ts.is_none()
            && self.user.is_none()
            && self.outcome.is_none()
            && self.risk.is_none()
            && self.cache.is_none()
            && self.extra.is_empty()
    }
}

/// Whether a tool's result cache answered a call: what [`Audit::cache`] and
/// [`AuditRecord::cache`] say, written `"hit"` or `"miss"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheAnswer {
    /// A kept result answered the call, or an identical call's run was shared.
    Hit,
    /// The tool ran.
    Miss,
}

impl CacheAnswer {
    /// `hit` or `miss`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::Miss => "miss",
        }
    }
}

/// A tool's own audit entries: a JSON object, allocated only when a tool adds to it, so that a
/// [`ToolResult`](crate::ToolResult) stays small as it moves through the pipeline. Reads and
/// writes like a [`Map`] (`extra["matches"]`, `extra.insert(..)`).
#[derive(Clone, Default)]
pub struct AuditExtra(Option<Box<Map<String, Value>>>);

static NO_ENTRIES: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl std::ops::Deref for AuditExtra {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Self::Target {
        self.0.as_deref().unwrap_or(&NO_ENTRIES)
    }
}

impl std::ops::DerefMut for AuditExtra {
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.0.get_or_insert_default()
    }
}

impl From<Map<String, Value>> for AuditExtra {
    fn from(entries: Map<String, Value>) -> Self {
        Self((!entries.is_empty()).then(|| Box::new(entries)))
    }
}

impl std::fmt::Debug for AuditExtra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for AuditExtra {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Serialize for AuditExtra {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de> Deserialize<'de> for AuditExtra {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Map::deserialize(d).map(Self::from)
    }
}

mod rfc3339 {
    use super::*;

    pub(super) fn serialize<S: Serializer>(
        ts: &Option<SystemTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match ts {
            Some(ts) => s.collect_str(&humantime::format_rfc3339_millis(*ts)),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|text| humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// One hook that acted on a call, and how: what the audit record lists, in the order they acted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Acted {
    /// The hook's name (a built-in's: `confirm_if`, `cache`, `max_result_bytes`).
    pub hook: Arc<str>,
    /// `refused`, `rewrote`, `asked_approval`, `changed`, `hit`, `shortened`.
    pub action: &'static str,
    /// What the hook said: the reason of a refusal or a request for approval, how it changed a
    /// result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl Acted {
    pub(crate) fn new(hook: &Arc<str>, action: &'static str, detail: Option<String>) -> Self {
        Self {
            hook: hook.clone(),
            action,
            detail,
        }
    }
}

/// One record per call, sent to the registry's [`AuditSink`](super::AuditSink). It borrows from the call, so
/// recording costs no allocation; [`AuditRecord::into_owned`] keeps one.
///
/// Serialized (as [`JsonLinesAuditSink`](super::JsonLinesAuditSink) writes it), it is the audit
/// trail's schema, version 1: `tool`, `ts`, `duration_ms` and `outcome` are always there; every
/// other key is left out when it has no value. A key is never renamed or given another type;
/// new keys may be added.
///
/// ```json
/// {"tool":"research","version":"1.2.0","user":"alice","level":"user","ts":"2026-11-28T10:00:00.000Z",
///  "duration_ms":0.412,"outcome":"ok","risk":"low","annotations":{"read_only":true,...},
///  "cache":"hit","hooks":[{"hook":"cache","action":"hit"}]}
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditRecord<'a> {
    /// The tool, or the name asked for when no tool answered.
    pub tool: Cow<'a, str>,
    /// The tool's version, when it declares one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<Cow<'a, str>>,
    /// The user, if known. Never a credential: the name the caller's scope gives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<Cow<'a, str>>,
    /// The caller's permission level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<Permission>,
    /// The chat, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<i64>,
    /// When the call finished.
    #[serde(with = "rfc3339_required")]
    pub ts: SystemTime,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// `ok`, `failed`, `denied_by_gate` or a [`ToolError`](crate::ToolError) code.
    pub outcome: Cow<'a, str>,
    /// The stage that refused the call, when one did: `scope` (an unknown or hidden tool),
    /// `validate`, `hook:NAME`, `rate_limit`, `eval_gate`, `confirmation`, `batch`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gate: Option<Cow<'a, str>>,
    /// The tool's risk level (absent for unknown tools).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub risk: Option<Risk>,
    /// The annotations of the tool as they apply (declared ones, the rest from its category:
    /// [`Tool::effective_annotations`](crate::Tool::effective_annotations)), each one set;
    /// absent for unknown tools. Serialized as an object:
    /// `"annotations": {"read_only": true, "destructive": false, ...}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// For a tool with a result cache: `hit` or `miss`; absent for other tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheAnswer>,
    /// The id of the approval the call waited for or ran under ([`approval_id`]): never the
    /// token itself, which would approve the call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<Cow<'a, str>>,
    /// Each hook that acted on the call (the built-ins `confirm_if`, `cache` and
    /// `max_result_bytes` among them), and how, in the order they acted; left out when none
    /// did.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub hooks: Cow<'a, [Acted]>,
}

impl AuditRecord<'_> {
    /// The record with owned strings, to keep after the call.
    pub fn into_owned(self) -> AuditRecord<'static> {
        let owned = |text: Cow<'_, str>| Cow::Owned(text.into_owned());
        AuditRecord {
            tool: owned(self.tool),
            version: self.version.map(owned),
            user: self.user.map(owned),
            level: self.level,
            chat_id: self.chat_id,
            ts: self.ts,
            duration_ms: self.duration_ms,
            outcome: owned(self.outcome),
            gate: self.gate.map(owned),
            risk: self.risk,
            annotations: self.annotations,
            cache: self.cache,
            approval: self.approval.map(owned),
            hooks: Cow::Owned(self.hooks.into_owned()),
        }
    }
}

/// The stage that refused a call, from its outcome and the hooks that acted (see
/// [`AuditRecord::gate`]); `None` for a call no stage refused.
pub(crate) fn refusing_gate(outcome: &str, hooks: &[Acted]) -> Option<Cow<'static, str>> {
    let gate = match outcome {
        "unknown_tool" => "scope",
        "invalid_arguments" | "arguments_too_large" | "arguments_too_deep" => "validate",
        "rate_limited" => "rate_limit",
        "denied_by_gate" | "gate_unavailable" => "eval_gate",
        "needs_approval" | "approval_refused" | "approval_altered" | "denied" => "confirmation",
        "too_many_calls" => "batch",
        "refused" => {
            return Some(match hooks.iter().find(|acted| acted.action == "refused") {
                Some(acted) => Cow::Owned(format!("hook:{}", acted.hook)),
                None => Cow::Borrowed("hook"),
            });
        }
        _ => return None,
    };
    Some(Cow::Borrowed(gate))
}

/// The id an audit record gives an approval token: the first 16 hex digits of its SHA-256.
/// It names the approval in the trail, and approves nothing: the token cannot be had from it.
pub fn approval_id(token: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(token.as_bytes());
    digest[..8]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

mod rfc3339_required {
    use std::time::SystemTime;

    use serde::Serializer;

    pub(super) fn serialize<S: Serializer>(ts: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(*ts))
    }
}
