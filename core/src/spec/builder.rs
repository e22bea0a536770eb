//! [`ToolSpecBuilder`]: a spec built field by field and checked once.

use std::time::Duration;

use serde_json::Value;

use super::{Fields, SpecError, ToolSpec};
use crate::meta::{Annotations, Permission};

/// Builds a [`ToolSpec`]; see [`ToolSpec::builder`].
#[derive(Debug, Clone)]
#[must_use]
pub struct ToolSpecBuilder {
    pub(super) fields: Fields,
}

impl ToolSpecBuilder {
    /// The version, a semantic version such as `1.0.0` ([`build`](Self::build) refuses
    /// anything else with [`SpecError::Version`]). A spec replaces the registered spec of its
    /// name only with a greater version: bump it to replace a tool.
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.fields.version = Some(version.into());
        self
    }
    /// What the model reads.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.fields.description = description.into();
        self
    }
    /// The one line discovery results (`search_tools`), listings and the catalog show (the
    /// allow-list design's `short_description`); without it, the description's first sentence.
    pub fn short_description(mut self, short: impl Into<String>) -> Self {
        self.fields.short_description = Some(short.into());
        self
    }
    /// The JSON Schema of the arguments (`"type": "object"`), read as JSON Schema reads it:
    /// write `"additionalProperties": false` on each object whose unknown keys are refused.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.fields.input_schema = schema;
        self
    }
    /// The JSON Schema of the value the tool returns. The registry checks every result of the
    /// tool against it: one that does not fit is refused with
    /// [`ToolError::InvalidOutput`](crate::ToolError::InvalidOutput).
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.fields.output_schema = Some(schema);
        self
    }
    /// The kinds of blocks the tool returns besides its value (images, files, links), for the
    /// catalog.
    pub fn returns(mut self, kinds: impl IntoIterator<Item = crate::media::BlockKind>) -> Self {
        self.fields.returns = kinds.into_iter().collect();
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
    /// Leaves the tool out of the upfront tool list; models find it through
    /// [`discovery`](crate::discovery). It stays callable by name.
    pub fn defer_loading(mut self, yes: bool) -> Self {
        self.fields.defer_loading = yes;
        self
    }
    /// A call whose arguments `schema` (a JSON Schema) accepts needs a person's approval; the
    /// others run without. The run-time form of `#[tool(confirm_if = path)]`.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_registry::ToolSpec;
    ///
    /// // Deleting anything outside `tmp/` asks first.
    /// let spec = ToolSpec::builder("delete_file")
    ///     .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
    ///     .confirm_if(json!({"not": {"properties": {"path": {"pattern": "^tmp/"}}}}))
    ///     .build()?;
    /// assert!(spec.confirm_if().is_some());
    /// # Ok::<(), tool_registry::spec::SpecError>(())
    /// ```
    pub fn confirm_if(mut self, schema: Value) -> Self {
        self.fields.confirm_if = Some(schema);
        self
    }
    /// Reuses a successful result for identical calls within `ttl` (see
    /// [`hook`](crate::hook)); for a tool marked `read_only` or `idempotent` only.
    pub fn cache(mut self, ttl: Duration) -> Self {
        self.fields.cache = Some(ttl);
        self
    }
    /// Whether who asks is part of the cache key (the default). `false` only for a tool whose
    /// answer is the same for every caller.
    pub fn cache_per_user(mut self, per_user: bool) -> Self {
        self.fields.cache_per_user = per_user;
        self
    }
    /// Shortens results of more than `max` bytes of text to fit (see
    /// [`hook::cap`](crate::hook::cap)).
    pub fn max_result_bytes(mut self, max: usize) -> Self {
        self.fields.max_result_bytes = Some(max);
        self
    }
    /// Whether a call may outlive its request as a task (see [`task`](crate::task)):
    /// [`TaskSupport::Optional`](crate::meta::TaskSupport::Optional) when the client opted in
    /// and the call is still running after a short while,
    /// [`Required`](crate::meta::TaskSupport::Required) always.
    pub fn task(mut self, support: crate::meta::TaskSupport) -> Self {
        self.fields.task = support;
        self
    }
    /// Checks the name, the version and the schemas: each must be a valid JSON Schema that
    /// nests at most [`MAX_SCHEMA_DEPTH`](super::MAX_SCHEMA_DEPTH) levels, holds at most
    /// [`MAX_SCHEMA_NODES`](super::MAX_SCHEMA_NODES) schemas, goes at most
    /// [`MAX_WALK_DEPTH`](super::MAX_WALK_DEPTH) levels deep with its `$ref`s followed, and
    /// whose validation of one value applies at most `MAX_SCHEMA_NODES` schemas at one place
    /// of it (options that share definitions multiply; a schema that applies itself to the same
    /// value never decides). What listing and calling the tool cost is then bounded by its size,
    /// paid here once.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_registry::ToolSpec;
    ///
    /// // An `anyOf` that refers to itself at the same place: refused, with the place.
    /// let error = ToolSpec::builder("loop")
    ///     .input_schema(json!({
    ///         "type": "object",
    ///         "properties": { "a": { "$ref": "#/$defs/A" } },
    ///         "$defs": { "A": { "anyOf": [{ "type": "string" }, { "$ref": "#/$defs/A" }] } }
    ///     }))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(error.to_string().contains("at `/$defs/A/anyOf/1/$ref`"), "{error}");
    /// ```
    pub fn build(self) -> Result<ToolSpec, SpecError> {
        ToolSpec::try_from(self.fields)
    }
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
                short_description: None,
                input_schema: serde_json::json!({ "type": "object" }),
                output_schema: None,
                returns: Vec::new(),
                tags: Vec::new(),
                permission: Permission::Guest,
                category: None,
                annotations: Annotations::default(),
                cooldown: None,
                daily_limit: None,
                timeout: None,
                requires_gate: false,
                defer_loading: false,
                confirm_if: None,
                cache: None,
                cache_per_user: true,
                max_result_bytes: None,
                task: crate::meta::TaskSupport::Forbidden,
            },
        }
    }
}
