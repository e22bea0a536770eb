//! What travels between a gateway and a module: the manifest, the call, and the typed error
//! body of a refused request.

use std::fmt;

use serde::de::{
    DeserializeSeed, Deserializer, Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use tool_registry_core::Permission;
use tool_registry_core::ToolSpec;

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

/// A manifest as a gateway reads it, with a bound on memory: its name and version, and its
/// first tools up to the number [`ReadManifest`] keeps, each read as a JSON value of its own
/// (checked one at a time later, so that one bad spec leaves the module's other tools usable).
/// The tools past them are counted and skipped as they are read, never built, so a manifest
/// of 100,000 tools costs what the tools kept cost.
#[derive(Debug)]
pub(super) struct RawManifest {
    pub(super) name: String,
    pub(super) version: Option<Value>,
    pub(super) tools: Vec<Value>,
    /// How many tools were left out: counted when read, plus what the manifest itself records
    /// under [`LEFT_OUT_KEY`] (a manifest a gateway kept).
    pub(super) left_out: usize,
}

/// Where the manifest a gateway keeps records how many tools it left out: the tools are gone,
/// their count is not.
const LEFT_OUT_KEY: &str = "tools_left_out";

impl RawManifest {
    /// The manifest as a gateway keeps it: the tools read, and how many were left out.
    pub(super) fn into_value(self) -> Value {
        let mut manifest = serde_json::Map::new();
        manifest.insert("name".to_owned(), Value::String(self.name));
        if let Some(version) = self.version {
            manifest.insert("version".to_owned(), version);
        }
        manifest.insert("tools".to_owned(), Value::Array(self.tools));
        if self.left_out > 0 {
            manifest.insert(LEFT_OUT_KEY.to_owned(), Value::from(self.left_out));
        }
        Value::Object(manifest)
    }
}

/// Reads a [`RawManifest`] keeping at most `keep` tools.
#[derive(Clone, Copy)]
pub(super) struct ReadManifest {
    pub(super) keep: usize,
}

impl<'de> DeserializeSeed<'de> for ReadManifest {
    type Value = RawManifest;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<RawManifest, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for ReadManifest {
    type Value = RawManifest;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a module manifest: an object with `name` and `tools`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawManifest, A::Error> {
        let (mut name, mut version, mut tools, mut recorded) = (None, None, None, 0);
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match &*key {
                "name" if name.is_some() => return Err(A::Error::duplicate_field("name")),
                "name" => name = Some(map.next_value::<String>()?),
                "version" => version = Some(map.next_value::<Value>()?),
                "tools" if tools.is_some() => return Err(A::Error::duplicate_field("tools")),
                "tools" => tools = Some(map.next_value_seed(FirstTools { keep: self.keep })?),
                LEFT_OUT_KEY => recorded = map.next_value::<usize>()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let name = name.ok_or_else(|| A::Error::missing_field("name"))?;
        let (tools, skipped) = tools.ok_or_else(|| A::Error::missing_field("tools"))?;
        Ok(RawManifest {
            name,
            version,
            tools,
            left_out: recorded.saturating_add(skipped),
        })
    }
}

/// The `tools` array: the first `keep` elements as values, the rest counted.
struct FirstTools {
    keep: usize,
}

impl<'de> DeserializeSeed<'de> for FirstTools {
    type Value = (Vec<Value>, usize);

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for FirstTools {
    type Value = (Vec<Value>, usize);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of tools")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut tools = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.keep));
        while tools.len() < self.keep {
            match seq.next_element::<Value>()? {
                Some(tool) => tools.push(tool),
                None => return Ok((tools, 0)),
            }
        }
        let mut skipped = 0usize;
        while seq.next_element::<IgnoredAny>()?.is_some() {
            skipped += 1;
        }
        Ok((tools, skipped))
    }
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
    /// The client follows a task: a call of a tool with `task = "optional"` that runs longer
    /// than a moment, or of one with `task = "required"`, answers `202 Accepted` with
    /// [`TaskAnswer`], read again with `POST /tasks/get` and cancelled with
    /// `POST /tasks/cancel` ([`TaskRequest`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub task: bool,
}

/// The body of `POST /tasks/get` and `POST /tasks/cancel`: the task, and who asks (believed,
/// as for `/execute`, only from a client that holds the module's secret).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRequest {
    /// The task's id.
    pub task_id: String,
    /// The user the task was started for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    /// The caller's permission level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<Permission>,
}

/// A task as a module answers it: `{"task": {...}}`, with `202` when `/execute` started it and
/// `200` from `/tasks/get` and `/tasks/cancel`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskAnswer {
    /// The task.
    pub task: RemoteTask,
}

/// What a module says of one task.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RemoteTask {
    /// Its id.
    pub id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: tool_registry_core::task::TaskStatus,
    /// The last progress message, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The result of a completed task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<tool_registry_core::ToolResult>,
    /// How often to read it again, in milliseconds.
    pub poll_interval_ms: u64,
}

impl RemoteTask {
    /// `task` as a module answers it, asked to be read every `poll`.
    pub(crate) fn of(
        task: tool_registry_core::task::TaskRecord,
        poll: std::time::Duration,
    ) -> Self {
        Self {
            id: task.id,
            status: task.status,
            message: task.message,
            result: task.result,
            poll_interval_ms: tool_registry_core::task::millis(poll),
        }
    }
}

/// What `GET /health` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    /// `ok`.
    pub status: String,
    /// The module's name.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use serde::de::DeserializeSeed;
    use serde_json::json;

    use super::ReadManifest;

    #[test]
    fn a_manifest_keeps_its_first_tools_and_counts_the_rest_once() {
        let read = ReadManifest { keep: 2 };
        let body =
            r#"{"name": "m", "extra": [1], "tools": [{"a": 1}, "x", 3, {"deep": [[[]]]}, null]}"#;
        let raw = read
            .deserialize(&mut serde_json::Deserializer::from_str(body))
            .unwrap();
        assert_eq!((raw.tools.len(), raw.left_out), (2, 3));
        // Kept, and read again from the cache: the count is not added twice.
        let kept = raw.into_value();
        assert_eq!(
            kept,
            json!({"name": "m", "tools": [{"a": 1}, "x"], "tools_left_out": 3})
        );
        let again = read.deserialize(&kept).unwrap();
        assert_eq!((again.tools.len(), again.left_out), (2, 3));

        for bad in [
            r#"{"name": "m", "tools": [], "tools": []}"#,
            r#"{"name": "m"}"#,
            r#"{"tools": []}"#,
            r#"[]"#,
        ] {
            let read = read.deserialize(&mut serde_json::Deserializer::from_str(bad));
            assert!(read.is_err(), "{bad}");
        }
    }
}
