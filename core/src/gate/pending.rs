//! [`PendingCall`]: a call waiting for a person, bound to its tool, its user and its exact
//! arguments in canonical form, and what its expiry is kept as.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::{MAX_ARGS_DEPTH, ToolArgs, nests_deeper};

/// A call waiting for approval, bound to its tool, its user and its exact arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingCall {
    /// The tool.
    pub tool: String,
    /// The user who made the call (`None` for an anonymous caller).
    pub user: Option<String>,
    /// The validated arguments in canonical form (object keys sorted, no whitespace).
    pub arguments: String,
    /// When the token stops being valid.
    #[serde(with = "humantime_serde_compat")]
    pub expires_at: SystemTime,
    /// The registry's HMAC-SHA256 over the token and the fields above, in hex; a call whose
    /// MAC does not verify is refused ([`ToolError::ApprovalAltered`](crate::ToolError)).
    #[serde(default)]
    pub mac: String,
}

/// An expiry as whole milliseconds since the Unix epoch: what the file keeps of it.
pub(crate) fn expiry_millis(at: SystemTime) -> u64 {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

/// `at` cut to whole milliseconds, so that it reads back from a file unchanged.
pub(crate) fn to_millis(at: SystemTime) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(expiry_millis(at))
}

/// The canonical text of arguments: object keys sorted at every level, no whitespace; written
/// out directly, without a sorted copy of the value.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    // Only JSON was written: valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                let _ = serde_json::to_writer(&mut *out, key);
                out.push(b':');
                write_canonical(value, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        scalar => {
            let _ = serde_json::to_writer(&mut *out, scalar);
        }
    }
}

/// The canonical text of arguments, for binding approvals to them.
pub(crate) fn canonical_args(args: &ToolArgs<'_>) -> Option<String> {
    match args {
        ToolArgs::Text(text) if text.trim().is_empty() || text.trim() == "null" => {
            Some("{}".to_owned())
        }
        ToolArgs::Text(text) => serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| canonical(&v)),
        ToolArgs::Value(Value::Null) => Some("{}".to_owned()),
        // `canonical` recurses: it is given nothing deeper than the arguments' limit.
        ToolArgs::Value(value) if nests_deeper(value, MAX_ARGS_DEPTH) => None,
        ToolArgs::Value(value) => Some(canonical(value)),
    }
}

mod humantime_serde_compat {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(ts: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&humantime::format_rfc3339_millis(*ts))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let text = String::deserialize(d)?;
        humantime::parse_rfc3339_weak(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    /// The text approvals already kept are bound to: what `canonical` wrote before it wrote
    /// directly (a sorted copy of the value, serialized).
    fn by_copy(value: &Value) -> String {
        fn sorted(value: &Value) -> Value {
            match value {
                Value::Object(map) => {
                    let mut entries: Vec<_> = map.iter().collect();
                    entries.sort_by(|a, b| a.0.cmp(b.0));
                    Value::Object(
                        entries
                            .into_iter()
                            .map(|(k, v)| (k.clone(), sorted(v)))
                            .collect(),
                    )
                }
                Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
                other => other.clone(),
            }
        }
        sorted(value).to_string()
    }

    #[test]
    fn the_canonical_text_is_the_same_as_before() {
        for value in [
            json!({}),
            json!({"b": 1, "a": [3, {"z": null, "y": "é\"\n\u{1}"}], "c": 1.5e300}),
            json!([{"b": true, "a": false}, -0.0, 18446744073709551615u64, "x"]),
            json!({"é": {"\u{7f}": "tab\t", "a b": []}}),
        ] {
            assert_eq!(super::canonical(&value), by_copy(&value));
        }
    }
}
