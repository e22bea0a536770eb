//! Tools registered at run time (the Tool Registry v2 rules): [`ToolSpec`], the handler that
//! runs them, what the registry reports about them, and its snapshot.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use serde_json::json;
//! use tool_registry::spec::ToolSpec;
//! use tool_registry::{Ctx, Registry};
//!
//! let registry = Registry::builder().without_linked().build()?;
//! let spec = ToolSpec::builder("weather_lookup")
//!     .version("1.0.0")
//!     .description("Look up the weather of a city.")
//!     .input_schema(json!({
//!         "type": "object",
//!         "properties": { "city": { "type": "string" } },
//!         "required": ["city"],
//!     }))
//!     .build()?;
//! registry.register_with_handler(spec, |args, _ctx| async move {
//!     Ok::<_, String>(json!({ "city": args["city"], "temp": 21 }))
//! })?;
//!
//! let result = registry.call("weather_lookup", r#"{"city": "Oslo"}"#, &Ctx::new()).await?;
//! assert_eq!(result.content["temp"], 21);
//!
//! let error = registry.call("weather_lookup", r#"{"city": 7}"#, &Ctx::new()).await.unwrap_err();
//! assert_eq!(error.code(), "invalid_arguments");
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```

use std::fmt::{self, Display};
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::BoxFuture;
use crate::call::output;
use crate::{Annotations, Ctx, Permission, Tool, ToolDef, ToolError, ToolResult};

/// The most characters in a tool name.
const MAX_NAME_LEN: usize = 64;

/// What a tool registered at run time is: its name and version, what the model reads, the
/// schemas of its input and output, its labels, and the policy keys a `#[tool]` can declare.
/// Immutable once built; build one with [`ToolSpec::builder`] or read one from JSON (unknown
/// keys are refused).
///
/// Two specs are the same registration when they are equal in every field.
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "Fields", into = "Fields")]
pub struct ToolSpec {
    fields: Fields,
    /// The input schema compiled when the spec was checked, for the registry to use.
    validator: Option<Arc<jsonschema::Validator>>,
}

impl PartialEq for ToolSpec {
    fn eq(&self, other: &Self) -> bool {
        self.fields == other.fields
    }
}

impl fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.fields.fmt(f)
    }
}

/// The fields of a spec as they read and write in JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fields {
    tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    description: String,
    input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    permission: Permission,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    category: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    annotations: Annotations,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "human")]
    cooldown: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    daily_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none", with = "human")]
    timeout: Option<Duration>,
    #[serde(default, skip_serializing_if = "is_default")]
    requires_gate: bool,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// Durations as people write them (`30s`, `1h 30m`), as in `#[tool(cooldown = "30s")]`.
mod human {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(duration) => {
                serializer.collect_str(&humantime::format_duration(*duration).to_string())
            }
            None => serializer.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| humantime::parse_duration(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl TryFrom<Fields> for ToolSpec {
    type Error = SpecError;

    fn try_from(fields: Fields) -> Result<Self, SpecError> {
        let mut spec = Self {
            fields,
            validator: None,
        };
        spec.validator = Some(Arc::new(spec.check()?));
        Ok(spec)
    }
}

impl From<ToolSpec> for Fields {
    fn from(spec: ToolSpec) -> Self {
        spec.fields
    }
}

/// Why a [`ToolSpec`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The name breaks the naming rule.
    #[error(
        "invalid tool name `{}`: {problem}",
        name.escape_debug()
    )]
    Name {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A schema is not a JSON Schema the registry can validate with.
    #[error("tool `{tool}`: the {which} schema {problem}")]
    Schema {
        /// The tool.
        tool: String,
        /// `input` or `output`.
        which: &'static str,
        /// What is wrong with it.
        problem: String,
    },
}

impl ToolSpec {
    /// A builder for the tool `tool_name` (segments of `[A-Za-z0-9_-]` joined by `.`, at most
    /// 64 characters, as for `#[tool]`). Its input schema is `{"type": "object"}` until set.
    pub fn builder(tool_name: impl Into<String>) -> ToolSpecBuilder {
        ToolSpecBuilder {
            fields: Fields {
                tool_name: tool_name.into(),
                version: None,
                description: String::new(),
                input_schema: serde_json::json!({ "type": "object" }),
                output_schema: None,
                tags: Vec::new(),
                permission: Permission::Guest,
                category: None,
                annotations: Annotations::default(),
                cooldown: None,
                daily_limit: None,
                timeout: None,
                requires_gate: false,
            },
        }
    }

    /// The spec a compiled tool's declaration amounts to.
    pub(crate) fn of_linked(def: &ToolDef, input_schema: &schemars::Schema) -> Self {
        Self {
            validator: None,
            fields: Fields {
                tool_name: def.name().to_owned(),
                version: def.version().map(str::to_owned),
                description: def.description().to_owned(),
                input_schema: input_schema.as_value().clone(),
                output_schema: None,
                tags: def.tags().iter().map(|t| (*t).to_owned()).collect(),
                permission: def.permission(),
                category: def.category().map(str::to_owned),
                annotations: def.annotations(),
                cooldown: def.cooldown(),
                daily_limit: def.daily_limit(),
                timeout: def.timeout(),
                requires_gate: def.requires_gate(),
            },
        }
    }

    /// The unique name.
    pub fn tool_name(&self) -> &str {
        &self.fields.tool_name
    }
    /// The version; two specs of one name and one version must be equal.
    pub fn version(&self) -> Option<&str> {
        self.fields.version.as_deref()
    }
    /// What the model reads.
    pub fn description(&self) -> &str {
        &self.fields.description
    }
    /// The JSON Schema the arguments are validated against.
    pub fn input_schema(&self) -> &Value {
        &self.fields.input_schema
    }
    /// The JSON Schema of what the tool returns, if given.
    pub fn output_schema(&self) -> Option<&Value> {
        self.fields.output_schema.as_ref()
    }
    /// Labels for discovery and for switching tools on and off together.
    pub fn tags(&self) -> &[String] {
        &self.fields.tags
    }
    /// The least permission level a caller needs.
    pub fn permission(&self) -> Permission {
        self.fields.permission
    }
    /// The category (the allow-list design's categories).
    pub fn category(&self) -> Option<&str> {
        self.fields.category.as_deref()
    }
    /// The behavioural annotations, `requires_confirmation` included.
    pub fn annotations(&self) -> Annotations {
        self.fields.annotations
    }
    /// The least time between two calls by one user.
    pub fn cooldown(&self) -> Option<Duration> {
        self.fields.cooldown
    }
    /// Calls per user per UTC day.
    pub fn daily_limit(&self) -> Option<u32> {
        self.fields.daily_limit
    }
    /// The timeout of one call.
    pub fn timeout(&self) -> Option<Duration> {
        self.fields.timeout
    }
    /// An evaluation gate decides each call.
    pub fn requires_gate(&self) -> bool {
        self.fields.requires_gate
    }

    /// Checks the name and the schemas; returns the compiled input schema.
    fn check(&self) -> Result<jsonschema::Validator, SpecError> {
        check_name(&self.fields.tool_name).map_err(|problem| SpecError::Name {
            name: self.fields.tool_name.clone(),
            problem,
        })?;
        let validator = self.compile()?;
        if let Some(output) = &self.fields.output_schema {
            jsonschema::meta::validate(output).map_err(|e| self.schema_error("output", e))?;
        }
        Ok(validator)
    }

    /// The compiled validator of the input schema (compiled when the spec was checked).
    pub(crate) fn validator(&self) -> Result<Arc<jsonschema::Validator>, SpecError> {
        match &self.validator {
            Some(validator) => Ok(Arc::clone(validator)),
            None => self.compile().map(Arc::new),
        }
    }

    /// Compiles the input schema, which must describe an object.
    fn compile(&self) -> Result<jsonschema::Validator, SpecError> {
        let schema = &self.fields.input_schema;
        if schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(SpecError::Schema {
                tool: self.fields.tool_name.clone(),
                which: "input",
                problem: "must have `\"type\": \"object\"`: a tool takes named arguments".into(),
            });
        }
        jsonschema::validator_for(schema).map_err(|e| self.schema_error("input", e))
    }

    fn schema_error(&self, which: &'static str, error: impl Display) -> SpecError {
        SpecError::Schema {
            tool: self.fields.tool_name.clone(),
            which,
            problem: format!("is invalid: {error}"),
        }
    }
}

/// Segments of `[A-Za-z0-9_-]` joined by `.`, at most 64 characters: the rule of `#[tool]`.
fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("it is empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "it has {} characters; the limit is {MAX_NAME_LEN}",
            name.len()
        ));
    }
    for segment in name.split('.') {
        if segment.is_empty() {
            return Err("a `.` must separate two non-empty parts, as in `module.tool`".into());
        }
        if let Some(bad) = segment
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        {
            return Err(format!(
                "`{}` is not allowed; use letters, digits, `_` and `-`, with `.` between module and tool",
                bad.escape_debug()
            ));
        }
    }
    Ok(())
}

/// Builds a [`ToolSpec`]; see [`ToolSpec::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolSpecBuilder {
    fields: Fields,
}

impl ToolSpecBuilder {
    /// The version; bump it to replace a registered spec.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.fields.version = Some(version.into());
        self
    }
    /// What the model reads.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.fields.description = description.into();
        self
    }
    /// The JSON Schema of the arguments (`"type": "object"`).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.fields.input_schema = schema;
        self
    }
    /// The JSON Schema of what the tool returns.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.fields.output_schema = Some(schema);
        self
    }
    /// Labels for discovery and switches.
    pub fn tags<I: IntoIterator<Item = S>, S: Into<String>>(mut self, tags: I) -> Self {
        self.fields.tags = tags.into_iter().map(Into::into).collect();
        self
    }
    /// The least permission level a caller needs (`guest` by default).
    pub fn permission(mut self, permission: Permission) -> Self {
        self.fields.permission = permission;
        self
    }
    /// The category.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.fields.category = Some(category.into());
        self
    }
    /// The behavioural annotations.
    pub fn annotations(mut self, annotations: Annotations) -> Self {
        self.fields.annotations = annotations;
        self
    }
    /// A human must approve each call.
    pub fn requires_confirmation(mut self, yes: bool) -> Self {
        self.fields.annotations.requires_confirmation = Some(yes);
        self
    }
    /// The least time between two calls by one user.
    pub fn cooldown(mut self, cooldown: Duration) -> Self {
        self.fields.cooldown = Some(cooldown);
        self
    }
    /// Calls per user per UTC day.
    pub fn daily_limit(mut self, limit: u32) -> Self {
        self.fields.daily_limit = Some(limit);
        self
    }
    /// The timeout of one call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.fields.timeout = Some(timeout);
        self
    }
    /// An evaluation gate decides each call.
    pub fn requires_gate(mut self, yes: bool) -> Self {
        self.fields.requires_gate = yes;
        self
    }
    /// Checks the name and the schemas.
    pub fn build(self) -> Result<ToolSpec, SpecError> {
        ToolSpec::try_from(self.fields)
    }
}

type HandlerFn =
    dyn Fn(Value, Ctx) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync;

/// What runs a tool registered at run time: an `async` closure over the arguments (already
/// validated against the input schema) and the call's [`Ctx`].
///
/// It returns `Result<T, E>` with `T: Serialize` (the result's content) and `E: Display` (a
/// handler error; a [`ToolError`] is kept as it is), like a `#[tool]` function.
#[derive(Clone)]
pub struct ToolHandler(Arc<HandlerFn>);

impl ToolHandler {
    /// Wraps an `async` closure.
    pub fn new<F, Fut, T, E>(handler: F) -> Self
    where
        F: Fn(Value, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: Serialize + 'static,
        E: Display + 'static,
    {
        Self(Arc::new(move |args, ctx| {
            let future = handler(args, ctx);
            Box::pin(async move { output::result(future.await) })
        }))
    }

    pub(crate) fn start(
        &self,
        args: Value,
        ctx: Ctx,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>> {
        (self.0)(args, ctx)
    }
}

impl fmt::Debug for ToolHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolHandler")
    }
}

/// A tool as the registry holds it: the tool, and whether it is switched on.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The tool.
    pub tool: Tool,
    /// Switched on: listed and callable (within each caller's scope).
    pub enabled: bool,
}

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
    /// The name belongs to a compiled tool (its name or alias), which a run-time spec cannot
    /// replace or remove.
    #[error(
        "`{name}` is a compiled tool{}; a tool registered at run time cannot replace or remove it: choose another name, or switch the tool off with `set_enabled`",
        match at { Some(at) => format!(" (declared at {at})"), None => String::new() }
    )]
    Compiled {
        /// The contested name.
        name: String,
        /// Where the compiled tool is declared.
        at: Option<String>,
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_follow_the_tool_attribute_rule() {
        assert!(ToolSpec::builder("ok.name-1").build().is_ok());
        for bad in ["", "a..b", ".a", "a b", "ä", &"x".repeat(65)] {
            let error = ToolSpec::builder(bad).build().unwrap_err();
            assert!(matches!(error, SpecError::Name { .. }), "{bad}: {error}");
        }
    }

    #[test]
    fn schemas_must_describe_objects_and_compile() {
        let error = ToolSpec::builder("t")
            .input_schema(json!({ "type": "string" }))
            .build()
            .unwrap_err();
        assert!(
            error.to_string().contains("\"type\": \"object\""),
            "{error}"
        );
        let error = ToolSpec::builder("t")
            .input_schema(json!({ "type": "object", "properties": { "a": { "type": 5 } } }))
            .build()
            .unwrap_err();
        assert!(
            error.to_string().contains("the input schema is invalid"),
            "{error}"
        );
    }

    #[test]
    fn specs_round_trip_through_json_and_refuse_unknown_keys() {
        let spec = ToolSpec::builder("t")
            .version("1")
            .tags(["a"])
            .cooldown(Duration::from_secs(30))
            .requires_confirmation(true)
            .build()
            .unwrap();
        let text = serde_json::to_string(&spec).unwrap();
        assert!(text.contains(r#""cooldown":"30s""#), "{text}");
        assert_eq!(serde_json::from_str::<ToolSpec>(&text).unwrap(), spec);
        let extra = json!({ "tool_name": "t", "input_schema": { "type": "object" }, "x": 1 });
        assert!(serde_json::from_value::<ToolSpec>(extra).is_err());
        let bad_name = json!({ "tool_name": "a b", "input_schema": { "type": "object" } });
        assert!(serde_json::from_value::<ToolSpec>(bad_name).is_err());
    }
}
