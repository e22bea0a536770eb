//! [`ToolSpec`]: what a tool registered at run time is, its fields as JSON, the name rule, the
//! schema checks; [`SpecError`].

use std::fmt::{self, Display};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::meta::{Annotations, Permission};

use super::depth::{self, MAX_SCHEMA_DEPTH};

// The rules `#[tool]` applies to a name at compile time, the same here.
pub(crate) use tool_registry_rules::check_name;

/// What a tool registered at run time is: its name and version, what the model reads, the
/// schemas of its input and output, its labels, and the policy keys a `#[tool]` can declare.
/// Immutable once built; build one with [`ToolSpec::builder`] or read one from JSON (unknown
/// keys are refused). The name follows `#[tool]`'s rule; the version, when given, is a semantic
/// version (`1.0.0`).
///
/// Two specs are the same registration when they are equal in every field. What replaces what
/// when a spec is registered under a name that is taken: an equal spec changes nothing; a spec
/// with a greater version (semver precedence, no version below every version) replaces the
/// registered one; the same version with another spec, or a lower version, is refused
/// ([`RegisterError::SameVersion`](super::RegisterError::SameVersion),
/// [`RegisterError::Downgrade`](super::RegisterError::Downgrade)).
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "Fields", into = "Fields")]
pub struct ToolSpec {
    fields: Fields,
    /// The input schema compiled when the spec was checked, for the registry to use.
    validator: Option<Arc<jsonschema::Validator>>,
    /// The output schema compiled when the spec was checked: the registry checks every result
    /// of a run-time tool against it.
    output_validator: Option<Arc<jsonschema::Validator>>,
    /// `confirm_if` compiled when the spec was checked: a call whose arguments it accepts
    /// needs a person's approval.
    confirm_validator: Option<Arc<jsonschema::Validator>>,
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
pub(crate) struct Fields {
    pub(crate) tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) version: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) description: String,
    /// The one line discovery and listings show; `None`: the description's first sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) short_description: Option<String>,
    pub(crate) input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) output_schema: Option<Value>,
    /// The kinds of blocks the tool returns besides its value, for the catalog.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) returns: Vec<crate::media::BlockKind>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tags: Vec<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) permission: Permission,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) category: Option<String>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) annotations: Annotations,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "humantime_serde::option"
    )]
    pub(crate) cooldown: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) daily_limit: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "humantime_serde::option"
    )]
    pub(crate) timeout: Option<Duration>,
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) requires_gate: bool,
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) defer_loading: bool,
    /// A JSON Schema: a call whose arguments it accepts needs a person's approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) confirm_if: Option<Value>,
    /// How long a result is reused for identical calls.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "humantime_serde::option"
    )]
    pub(crate) cache: Option<Duration>,
    /// Whether who asks is part of the cache key.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub(crate) cache_per_user: bool,
    /// The most bytes of text a result may have; longer ones are shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_result_bytes: Option<usize>,
    /// Whether a call may outlive its request as a task (`"optional"` or `"required"`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub(crate) task: crate::meta::TaskSupport,
}

fn yes() -> bool {
    true
}

fn is_true(value: &bool) -> bool {
    *value
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl TryFrom<Fields> for ToolSpec {
    type Error = SpecError;

    fn try_from(fields: Fields) -> Result<Self, SpecError> {
        let mut spec = Self {
            fields,
            validator: None,
            output_validator: None,
            confirm_validator: None,
        };
        let (input, output) = spec.check()?;
        spec.validator = Some(Arc::new(input));
        spec.output_validator = output.map(Arc::new);
        spec.confirm_validator = spec.check_policies()?.map(Arc::new);
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
    /// The version is not a semantic version (<https://semver.org>).
    #[error(
        "tool `{tool}`: version `{}` is not a semantic version ({problem}); write MAJOR.MINOR.PATCH, such as `1.0.0`, `0.3.1` or `2.0.0-beta.1`",
        shown(version)
    )]
    Version {
        /// The tool.
        tool: String,
        /// The version as given.
        version: String,
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
    /// A definition read from a provider's shape is not one
    /// ([`ToolSpec::from_provider`](crate::ToolSpec::from_provider)): not an object, a key the
    /// shape does not have, a value of the wrong type.
    #[error("{problem}")]
    Shape {
        /// What is wrong, and what the shape has.
        problem: String,
    },
    /// A policy key does not fit the tool (`cache` on a tool that is neither `read_only` nor
    /// `idempotent`, a zero limit).
    #[error("tool `{tool}`: {problem}")]
    Policy {
        /// The tool.
        tool: String,
        /// What is wrong, and how to fix it.
        problem: String,
    },
}

impl ToolSpec {
    /// The spec of these fields, before its input schema is compiled: what a compiled tool's
    /// declaration amounts to.
    pub(crate) fn of_fields(fields: Fields) -> Self {
        Self {
            validator: None,
            output_validator: None,
            confirm_validator: None,
            fields,
        }
    }

    /// The same spec under another name (checked by the naming rule), keeping the input schema
    /// already compiled: how a gateway lists a module's tool as `module.tool`.
    pub fn with_name(mut self, tool_name: impl Into<String>) -> Result<Self, SpecError> {
        let tool_name = tool_name.into();
        check_name(&tool_name).map_err(|problem| SpecError::Name {
            name: tool_name.clone(),
            problem,
        })?;
        self.fields.tool_name = tool_name;
        Ok(self)
    }

    /// The same spec with another timeout (`None`: the registry's default).
    pub fn with_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.fields.timeout = timeout;
        self
    }

    /// The unique name.
    pub fn tool_name(&self) -> &str {
        &self.fields.tool_name
    }
    /// The version, a semantic version (`1.2.0`), if the spec has one. A spec replaces the one
    /// registered under its name only with a greater version, compared by semver precedence
    /// (build metadata, `+…`, is not compared); no version is below every version. See
    /// [`Registry::register`](crate::Registry::register).
    pub fn version(&self) -> Option<&str> {
        self.fields.version.as_deref()
    }

    /// How this spec's version compares with `other`'s by semver precedence, no version being
    /// the least. A version that does not parse counts as none (neither the builder nor
    /// `#[tool]` lets one through).
    pub(crate) fn version_order(&self, other: &ToolSpec) -> std::cmp::Ordering {
        let parse = |spec: &ToolSpec| {
            spec.fields
                .version
                .as_deref()
                .and_then(|v| semver::Version::parse(v).ok())
        };
        match (parse(self), parse(other)) {
            (Some(mine), Some(theirs)) => mine.cmp_precedence(&theirs),
            (mine, theirs) => mine.is_some().cmp(&theirs.is_some()),
        }
    }
    /// What the model reads.
    pub fn description(&self) -> &str {
        &self.fields.description
    }
    /// The one line discovery, listings and the catalog show, when the spec gives one
    /// ([`Tool::short_description`](crate::Tool::short_description) falls back on the
    /// description's first sentence).
    pub fn short_description(&self) -> Option<&str> {
        self.fields.short_description.as_deref()
    }
    /// The JSON Schema the arguments are validated against, with JSON Schema's meaning
    /// throughout: an object whose schema has no `additionalProperties` admits keys it does not
    /// name (unlike a compiled tool, which refuses unknown keys at every depth), so write
    /// `"additionalProperties": false` where unknown keys should be refused.
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
    /// Left out of the upfront tool list, found through [`discovery`](crate::discovery).
    pub fn defer_loading(&self) -> bool {
        self.fields.defer_loading
    }
    /// `confirm_if`: a JSON Schema; a call whose arguments it accepts needs a person's approval.
    pub fn confirm_if(&self) -> Option<&Value> {
        self.fields.confirm_if.as_ref()
    }
    /// `cache`: how long and for whom a result is reused (see [`hook`](crate::hook)).
    pub fn cache(&self) -> Option<crate::meta::CachePolicy> {
        self.fields.cache.map(|ttl| crate::meta::CachePolicy {
            ttl,
            per_user: self.fields.cache_per_user,
        })
    }
    /// `max_result_bytes`: the most bytes of text a result may have (see
    /// [`hook::cap`](crate::hook::cap)).
    pub fn max_result_bytes(&self) -> Option<usize> {
        self.fields.max_result_bytes
    }
    /// `task`: whether a call may outlive its request (see [`task`](crate::task)).
    pub fn task_support(&self) -> crate::meta::TaskSupport {
        self.fields.task
    }
    /// Whether a call with `args` (validated) needs a person's approval by `confirm_if`.
    pub(crate) fn confirms(&self, args: &Value) -> bool {
        self.confirm_validator
            .as_ref()
            .is_some_and(|validator| validator.is_valid(args))
    }

    /// The policy keys that need checks of their own: `cache` is for a tool marked `read_only`
    /// or `idempotent`; `confirm_if` is a JSON Schema, compiled here.
    fn check_policies(&self) -> Result<Option<jsonschema::Validator>, SpecError> {
        let tool = || self.fields.tool_name.clone();
        if self.fields.cache.is_some() {
            let annotations = self.fields.annotations;
            if annotations.read_only != Some(true) && annotations.idempotent != Some(true) {
                return Err(SpecError::Policy {
                    tool: tool(),
                    problem: "`cache` is for a tool whose repeated calls give the same answer: mark it `read_only` or `idempotent` in its annotations, or remove `cache`".into(),
                });
            }
            let guard = if annotations.requires_confirmation == Some(true) {
                Some("requires_confirmation")
            } else if self.fields.confirm_if.is_some() {
                Some("confirm_if")
            } else if self.fields.requires_gate {
                Some("requires_gate")
            } else {
                None
            };
            if let Some(guard) = guard {
                return Err(SpecError::Policy {
                    tool: tool(),
                    problem: format!(
                        "`cache` answers a repeated call without running the tool, so it cannot be combined with `{guard}`, which must see every run; remove one of them"
                    ),
                });
            }
            if self.fields.cache == Some(Duration::ZERO) {
                return Err(SpecError::Policy {
                    tool: tool(),
                    problem: "`cache` must be a positive duration, such as `5m`".into(),
                });
            }
        }
        if self.fields.max_result_bytes == Some(0) {
            return Err(SpecError::Policy {
                tool: tool(),
                problem: "`max_result_bytes` must be at least 1".into(),
            });
        }
        let Some(schema) = &self.fields.confirm_if else {
            return Ok(None);
        };
        self.check_depth("confirm_if", schema)?;
        jsonschema::meta::validate(schema).map_err(|e| self.schema_error("confirm_if", e))?;
        jsonschema::validator_for(schema)
            .map(Some)
            .map_err(|e| self.schema_error("confirm_if", e))
    }

    /// Checks the name, the version and the schemas; returns the compiled input schema.
    fn check(&self) -> Result<(jsonschema::Validator, Option<jsonschema::Validator>), SpecError> {
        check_name(&self.fields.tool_name).map_err(|problem| SpecError::Name {
            name: self.fields.tool_name.clone(),
            problem,
        })?;
        // The rule `#[tool(version = "...")]` is held to at compile time
        // (`registry-macros/src/attr/values.rs`), so a snapshot's compiled tools read back too;
        // the two must say the same.
        if let Some(version) = &self.fields.version {
            semver::Version::parse(version).map_err(|error| SpecError::Version {
                tool: self.fields.tool_name.clone(),
                version: version.clone(),
                problem: error.to_string(),
            })?;
        }
        self.check_depth("input", &self.fields.input_schema)?;
        if let Some(output) = &self.fields.output_schema {
            self.check_depth("output", output)?;
        }
        let validator = self.compile()?;
        let output = match &self.fields.output_schema {
            Some(output) => {
                jsonschema::meta::validate(output).map_err(|e| self.schema_error("output", e))?;
                Some(
                    jsonschema::validator_for(output)
                        .map_err(|e| self.schema_error("output", e))?,
                )
            }
            None => None,
        };
        Ok((validator, output))
    }

    /// The kinds of blocks the tool returns besides its value.
    pub fn returns(&self) -> &[crate::media::BlockKind] {
        &self.fields.returns
    }

    /// The compiled validator of the output schema, when the spec declares one.
    pub(crate) fn output_validator(&self) -> Option<&jsonschema::Validator> {
        self.output_validator.as_deref()
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

    /// Schemas nest at most [`MAX_SCHEMA_DEPTH`] levels, so every client that walks them can,
    /// and every walk of the registry's own fits its budget ([`MAX_SCHEMA_NODES`](super::MAX_SCHEMA_NODES) schemas,
    /// [`MAX_WALK_DEPTH`](super::MAX_WALK_DEPTH) levels with `$ref`s followed): the cost is paid here, once, never per
    /// call or per listing.
    fn check_depth(&self, which: &'static str, schema: &Value) -> Result<(), SpecError> {
        if let Some((_, at)) = depth::too_deep(schema).first() {
            return Err(SpecError::Schema {
                tool: self.fields.tool_name.clone(),
                which,
                problem: format!(
                    "nests schemas more than {MAX_SCHEMA_DEPTH} levels deep (at `{at}`); \
                     flatten it, or move nested parts into `$defs` and refer to them with `$ref`"
                ),
            });
        }
        crate::schema::measure(schema).map_err(|stop| SpecError::Schema {
            tool: self.fields.tool_name.clone(),
            which,
            problem: format!(
                "cannot be read within the budget: {stop}; {}",
                stop.why.remedy()
            ),
        })
    }

    fn schema_error(&self, which: &'static str, error: impl Display) -> SpecError {
        SpecError::Schema {
            tool: self.fields.tool_name.clone(),
            which,
            problem: format!("is invalid: {error}"),
        }
    }
}

/// A value for an error message: at most 64 characters of it, escaped, so a megabyte or a
/// newline written as a version stays one short line.
fn shown(text: &str) -> String {
    const SHOWN: usize = 64;
    let mut shown: String = text
        .chars()
        .take(SHOWN)
        .collect::<String>()
        .escape_debug()
        .collect();
    if text.chars().nth(SHOWN).is_some() {
        shown.push('…');
    }
    shown
}

/// Segments of `[A-Za-z0-9_-]` joined by `.`, at most 64 characters: the rule of `#[tool]`,
/// which `registry-macros/src/check.rs` applies at compile time (a proc-macro crate cannot share
/// code with the runtime; the two must say the same, and the trybuild cases and the tests of
/// this module hold each to it).
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
    fn schemas_nesting_deeper_than_the_bound_are_refused() {
        let nested = |levels: usize| {
            (1..levels).fold(
                json!({ "type": "string" }),
                |inner, _| json!({ "type": "object", "properties": { "a": inner } }),
            )
        };
        let error = ToolSpec::builder("deep")
            .input_schema(nested(100))
            .build()
            .unwrap_err();
        let text = error.to_string();
        assert!(
            text.starts_with("tool `deep`: the input schema nests schemas more than 32 levels deep (at `/properties/a/"),
            "{text}"
        );
        assert!(text.contains("move nested parts into `$defs`"), "{text}");
        let error = ToolSpec::builder("deep")
            .output_schema(nested(MAX_SCHEMA_DEPTH + 1))
            .build()
            .unwrap_err();
        assert!(
            matches!(
                &error,
                SpecError::Schema {
                    which: "output",
                    ..
                }
            ),
            "{error}"
        );
        assert!(
            ToolSpec::builder("deep")
                .input_schema(nested(MAX_SCHEMA_DEPTH))
                .build()
                .is_ok()
        );
        // From JSON too.
        let spec = json!({ "tool_name": "deep", "input_schema": nested(100) });
        assert!(serde_json::from_value::<ToolSpec>(spec).is_err());
    }

    #[test]
    fn specs_round_trip_through_json_and_refuse_unknown_keys() {
        let spec = ToolSpec::builder("t")
            .version("1.0.0")
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
