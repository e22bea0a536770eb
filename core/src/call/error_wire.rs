//! How a [`ToolError`] travels between processes: its code, and the JSON it is written as and
//! read back from (`{"code", "message", ...fields}`), both made from one table.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

use super::error::{RemoteFailure, ToolError, bounded_error_text};

/// The wire form of each variant, the one definition both directions are made from: its code,
/// then every field (the match is exhaustive: a field cannot be left out) with its key and how
/// it travels (the modules of `travel`).
macro_rules! wire {
    ($($variant:ident $code:literal { $($field:ident: $key:literal $travel:ident),* $(,)? })*) => {
        impl ToolError {
            /// The code of every variant but [`Remote`](Self::Remote), whose code is its own.
            fn static_code(&self) -> &'static str {
                match self {
                    $(Self::$variant { .. } => $code,)*
                    Self::Remote(_) => "remote",
                }
            }

            /// Writes the variant's fields after its `code` and `message`.
            fn write_fields<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
                match self {
                    $(Self::$variant { $($field),* } => {
                        $(travel::$travel::write(map, $key, $field)?;)*
                    })*
                    Self::Remote(failure) => {
                        map.serialize_entry("tool", &failure.tool)?;
                        map.serialize_entry("module", &failure.module)?;
                        map.serialize_entry("detail", &failure.detail)?;
                        for (key, value) in &failure.data {
                            map.serialize_entry(key, value)?;
                        }
                    }
                }
                Ok(())
            }

            /// The variant of `code` from the fields another process wrote; `None` for a code
            /// this table does not hold, or fields that do not fit it.
            fn read_fields(code: &str, fields: &Map<String, Value>) -> Option<Self> {
                match code {
                    $($code => Some(Self::$variant { $($field: travel::$travel::read(fields, $key)?),* }),)*
                    _ => None,
                }
            }
        }
    };
}

wire! {
    UnknownTool "unknown_tool" { name: "name" or_empty, suggestion: "suggestion" maybe, module: "module" maybe }
    InvalidArguments "invalid_arguments" { tool: "tool" or_empty, path: "path" or_empty, message: "detail" or_empty }
    Handler "handler_error" { tool: "tool" or_empty, message: "detail" text }
    InvalidOutput "invalid_output" { tool: "tool" or_empty, path: "path" or_empty, message: "detail" or_empty }
    Panicked "panicked" { tool: "tool" or_empty, message: "detail" text }
    RateLimited "rate_limited" { tool: "tool" or_empty, limit: "limit" or_a_limit, retry_after: "retry_after_ms" millis }
    TimedOut "timed_out" { tool: "tool" or_empty, after: "after_ms" millis }
    NoHandler "no_handler" { tool: "tool" or_empty }
    NeedsApproval "needs_approval" { tool: "tool" or_empty, token: "token" text }
    ApprovalRefused "approval_refused" { reason: "detail" text }
    ApprovalAltered "approval_altered" { reason: "detail" text }
    Refused "refused" { tool: "tool" or_empty, hook: "hook" or_empty, reason: "detail" text }
    Denied "denied" { tool: "tool" or_empty, reason: "detail" text }
    GateUnavailable "gate_unavailable" { tool: "tool" or_empty, reason: "detail" text }
    StoreUnavailable "store_unavailable" { tool: "tool" or_empty, store: "store" text, reason: "detail" text }
    Misconfigured "misconfigured" { tool: "tool" or_empty, message: "detail" text }
    ArgumentsTooLarge "arguments_too_large" { tool: "tool" or_empty, limit: "limit" count }
    ArgumentsTooDeep "arguments_too_deep" { tool: "tool" or_empty, limit: "limit" count }
    TooManyCalls "too_many_calls" { limit: "limit" count, left_out: "left_out" count }
}

/// How a field travels: each module writes one kind of field under its key and reads it back
/// (`None`: the field does not fit, and the error is read as a handler error).
mod travel {
    use serde::ser::SerializeMap;
    use serde_json::{Map, Value};

    /// A string that must be there.
    pub(super) mod text {
        use super::*;

        pub(in super::super) fn write<M: SerializeMap>(
            map: &mut M,
            key: &str,
            text: &String,
        ) -> Result<(), M::Error> {
            map.serialize_entry(key, text)
        }

        pub(in super::super) fn read(fields: &Map<String, Value>, key: &str) -> Option<String> {
            fields.get(key)?.as_str().map(str::to_owned)
        }
    }

    /// A string, empty when left out.
    pub(super) mod or_empty {
        use super::*;

        pub(in super::super) use super::text::write;

        pub(in super::super) fn read(fields: &Map<String, Value>, key: &str) -> Option<String> {
            Some(super::text::read(fields, key).unwrap_or_default())
        }
    }

    /// A rate limit's text, `a limit` when left out.
    pub(super) mod or_a_limit {
        use super::*;

        pub(in super::super) use super::text::write;

        pub(in super::super) fn read(fields: &Map<String, Value>, key: &str) -> Option<String> {
            Some(super::text::read(fields, key).unwrap_or_else(|| "a limit".to_owned()))
        }
    }

    /// A string that may be absent: left out when it is.
    pub(super) mod maybe {
        use super::*;

        pub(in super::super) fn write<M: SerializeMap>(
            map: &mut M,
            key: &str,
            text: &Option<String>,
        ) -> Result<(), M::Error> {
            match text {
                Some(text) => map.serialize_entry(key, text),
                None => Ok(()),
            }
        }

        pub(in super::super) fn read(
            fields: &Map<String, Value>,
            key: &str,
        ) -> Option<Option<String>> {
            Some(super::text::read(fields, key))
        }
    }

    /// A duration, in whole milliseconds.
    pub(super) mod millis {
        use std::time::Duration;

        use super::*;

        pub(in super::super) fn write<M: SerializeMap>(
            map: &mut M,
            key: &str,
            duration: &Duration,
        ) -> Result<(), M::Error> {
            map.serialize_entry(key, &duration.as_millis())
        }

        pub(in super::super) fn read(fields: &Map<String, Value>, key: &str) -> Option<Duration> {
            fields.get(key)?.as_u64().map(Duration::from_millis)
        }
    }

    /// A count.
    pub(super) mod count {
        use super::*;

        pub(in super::super) fn write<M: SerializeMap>(
            map: &mut M,
            key: &str,
            count: &usize,
        ) -> Result<(), M::Error> {
            map.serialize_entry(key, count)
        }

        pub(in super::super) fn read(fields: &Map<String, Value>, key: &str) -> Option<usize> {
            fields
                .get(key)?
                .as_u64()
                .map(|count| usize::try_from(count).unwrap_or(usize::MAX))
        }
    }
}

impl ToolError {
    /// A stable, snake_case identifier of the variant, for programs and audit records (for
    /// [`Remote`](Self::Remote), the front end's code of its failure).
    pub fn code(&self) -> &str {
        match self {
            Self::Remote(failure) => &failure.code,
            other => other.static_code(),
        }
    }

    /// [`code`](Self::code), as an audit record keeps it.
    pub(crate) fn outcome(&self) -> Cow<'static, str> {
        match self {
            Self::Remote(failure) => failure.code.clone(),
            other => Cow::Borrowed(other.static_code()),
        }
    }
}

/// The most fields beside its own a remote failure read from another process keeps.
const MAX_DATA_FIELDS: usize = 8;

/// The longest name of such a field, in bytes.
const MAX_DATA_KEY: usize = 64;

impl Serialize for ToolError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("code", self.code())?;
        map.serialize_entry("message", &self.to_string())?;
        self.write_fields(&mut map)?;
        map.end()
    }
}

impl ToolError {
    /// Reads back what [`Serialize`] wrote (`{"code": ..., "message": ..., ...}`), as another
    /// process sends it: the error of a tool that ran elsewhere. `tool` replaces the tool's name
    /// (the caller's name for it). A code this version does not know that names the `module` it
    /// failed in is a [`Remote`](Self::Remote) failure, kept with its code and fields; any
    /// other code this version does not know, or fields that do not fit it, give a
    /// [`ToolError::Handler`] with the message as written. Each text is kept to
    /// [`MAX_ERROR_BYTES`](crate::call::MAX_ERROR_BYTES).
    pub fn from_json(value: &Value, tool: &str) -> Self {
        // Each text as long as an error's may be: a module's error is what it says it is.
        let mut fields: Map<String, Value> = match value {
            Value::Object(object) => (object.iter())
                .map(|(key, value)| {
                    let value = match value {
                        Value::String(text) => Value::String(bounded_error_text(text)),
                        other => other.clone(),
                    };
                    (key.clone(), value)
                })
                .collect(),
            _ => Map::new(),
        };
        let message = fields.remove("message");
        let text = |value: Option<Value>| match value {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let code = text(fields.get("code").cloned()).unwrap_or_default();
        match Self::read_fields(&code, &fields) {
            Some(mut error) => {
                if let Self::UnknownTool {
                    name,
                    suggestion,
                    module,
                } = &mut error
                {
                    tool.clone_into(name);
                    *suggestion = None;
                    *module = None;
                }
                if let Some(named) = error.tool_mut() {
                    tool.clone_into(named);
                }
                error
            }
            None => {
                fields.remove("code");
                let detail = text(fields.remove("detail"));
                let module = text(fields.remove("module"));
                let message = text(message);
                match module {
                    Some(module) if !code.is_empty() => {
                        fields.remove("tool");
                        // What else it says, within bounds: a few scalars (an HTTP status, a
                        // process id), never a structure another process chose the size of.
                        let data: Map<String, Value> = (fields.into_iter())
                            .filter(|(key, value)| {
                                key.len() <= MAX_DATA_KEY && !value.is_array() && !value.is_object()
                            })
                            .take(MAX_DATA_FIELDS)
                            .collect();
                        Self::Remote(Box::new(RemoteFailure {
                            tool: tool.to_owned(),
                            code: Cow::Owned(code),
                            module,
                            message: message
                                .clone()
                                .or_else(|| detail.clone())
                                .unwrap_or_default(),
                            detail: detail.unwrap_or_default(),
                            data,
                        }))
                    }
                    _ => Self::Handler {
                        tool: tool.to_owned(),
                        message: detail
                            .or(message)
                            .unwrap_or_else(|| "the tool failed and said nothing more".to_owned()),
                    },
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use std::time::Duration;

    use super::super::error::{CUT_MARK, MAX_ERROR_BYTES};
    use super::*;

    /// One error of each variant, as a tool named `t` would give it.
    fn every_variant() -> Vec<ToolError> {
        let tool = || "t".to_owned();
        vec![
            ToolError::UnknownTool {
                name: tool(),
                suggestion: None,
                module: None,
            },
            ToolError::InvalidArguments {
                tool: tool(),
                path: "items[2]".into(),
                message: "expected a string".into(),
            },
            ToolError::Handler {
                tool: tool(),
                message: "no such note".into(),
            },
            ToolError::InvalidOutput {
                tool: tool(),
                path: "blocks[1]".into(),
                message: "not a PNG".into(),
            },
            ToolError::Panicked {
                tool: tool(),
                message: "boom".into(),
            },
            ToolError::RateLimited {
                tool: tool(),
                limit: "daily limit of 3".into(),
                retry_after: Duration::from_millis(1500),
            },
            ToolError::TimedOut {
                tool: tool(),
                after: Duration::from_secs(30),
            },
            ToolError::NoHandler { tool: tool() },
            ToolError::NeedsApproval {
                tool: tool(),
                token: "abc".into(),
            },
            ToolError::ApprovalRefused {
                reason: "unknown token".into(),
            },
            ToolError::ApprovalAltered {
                reason: "the user".into(),
            },
            ToolError::Refused {
                tool: tool(),
                hook: "inside_folder".into(),
                reason: "outside the folder".into(),
            },
            ToolError::Denied {
                tool: tool(),
                reason: "not today".into(),
            },
            ToolError::GateUnavailable {
                tool: tool(),
                reason: "timed out".into(),
            },
            ToolError::StoreUnavailable {
                tool: tool(),
                store: "Redis rate-limit store".into(),
                reason: "connection refused".into(),
            },
            ToolError::Misconfigured {
                tool: tool(),
                message: "no State<Db>".into(),
            },
            ToolError::ArgumentsTooLarge {
                tool: tool(),
                limit: 1024,
            },
            ToolError::ArgumentsTooDeep {
                tool: tool(),
                limit: 127,
            },
            ToolError::Remote(Box::new(RemoteFailure {
                tool: tool(),
                code: Cow::Borrowed("module_status"),
                module: "kb".into(),
                message: "tool `t` failed in its module `kb`: HTTP status 502".into(),
                detail: "bad gateway".into(),
                data: json!({"status": 502}).as_object().cloned().unwrap(),
            })),
            ToolError::TooManyCalls {
                limit: 32,
                left_out: 7,
            },
        ]
    }

    #[test]
    fn every_error_reads_back_as_it_was_written() {
        for error in every_variant() {
            let wire = serde_json::to_value(&error).unwrap();
            assert_eq!(wire["code"], error.code(), "{wire}");
            assert_eq!(wire["message"], error.to_string(), "{wire}");
            assert_eq!(ToolError::from_json(&wire, "t"), error, "{wire}");
        }
    }

    #[test]
    fn the_wire_keeps_its_keys_code_and_message_first() {
        let error = ToolError::RateLimited {
            tool: "t".into(),
            limit: "cooldown of 30s".into(),
            retry_after: Duration::from_millis(2500),
        };
        let wire = serde_json::to_value(&error).unwrap();
        let keys: Vec<&str> = wire
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["code", "message", "tool", "limit", "retry_after_ms"]);
        assert_eq!(wire["retry_after_ms"], 2500);
        let unknown = serde_json::to_value(ToolError::UnknownTool {
            name: "serach".into(),
            suggestion: Some("search".into()),
            module: None,
        })
        .unwrap();
        assert_eq!(unknown["suggestion"], "search");
        assert!(unknown.get("module").is_none());
        assert_eq!(unknown["name"], "serach");
    }

    #[test]
    fn what_another_process_says_is_read_within_bounds_and_named_for_the_caller() {
        // The caller's name replaces the one written, suggestions included.
        let read = ToolError::from_json(
            &json!({"code": "unknown_tool", "name": "x.serach", "suggestion": "x.search", "module": "x"}),
            "kb.serach",
        );
        assert_eq!(
            read,
            ToolError::UnknownTool {
                name: "kb.serach".into(),
                suggestion: None,
                module: None,
            }
        );
        // A code this version does not know, with no module: the message as a handler error.
        let read = ToolError::from_json(&json!({"code": "quota", "message": "over"}), "t");
        assert_eq!(read, ToolError::handler("t", "over"));
        // Fields that do not fit the code: the same.
        let read = ToolError::from_json(&json!({"code": "timed_out", "detail": "slow"}), "t");
        assert_eq!(read, ToolError::handler("t", "slow"));
        // A front end's failure this version does not know, naming its module: kept as it is.
        let read = ToolError::from_json(
            &json!({"code": "server_gone", "message": "m", "module": "py", "detail": "d", "pid": 7}),
            "py.echo",
        );
        let ToolError::Remote(failure) = &read else {
            panic!("{read:?}")
        };
        assert_eq!(
            (
                &*failure.code,
                failure.module.as_str(),
                failure.tool.as_str()
            ),
            ("server_gone", "py", "py.echo")
        );
        assert_eq!(failure.data["pid"], 7);
        assert_eq!(read.code(), "server_gone");
        // Of what else it says, a few scalars are kept; structures and the rest are not.
        let mut hostile =
            json!({"code": "server_gone", "module": "py", "nested": [[[1]]], "map": {"a": 1}});
        for i in 0..100 {
            hostile[format!("k{i:03}")] = json!(i);
        }
        let ToolError::Remote(failure) = ToolError::from_json(&hostile, "py.echo") else {
            panic!()
        };
        assert_eq!(failure.data.len(), 8, "{:?}", failure.data);
        assert!(failure.data.values().all(Value::is_number));
        // Every text is bounded, whatever its key.
        let long = "x".repeat(MAX_ERROR_BYTES * 4);
        let read = ToolError::from_json(&json!({"code": "handler_error", "detail": long}), "t");
        let ToolError::Handler { message, .. } = read else {
            panic!()
        };
        assert!(message.len() <= MAX_ERROR_BYTES && message.ends_with(CUT_MARK));
        // Not an object at all.
        assert_eq!(
            ToolError::from_json(&json!([1, 2]), "t"),
            ToolError::handler("t", "the tool failed and said nothing more")
        );
    }
}
