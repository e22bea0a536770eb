//! One tool as the catalog shows it ([`ToolDoc`], [`ArgDoc`]), read from the tool and its
//! schema so that it always matches what the model sees.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::call::MAX_ARGS_BYTES;
use crate::def::{Annotations, SourceLocation, Tool};

/// One argument as the catalog shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgDoc {
    /// The JSON name.
    pub name: String,
    /// The type, in JSON Schema terms (`string`, `integer`, `"a" | "b"`, `Kind`, `array of string`).
    #[serde(rename = "type")]
    pub ty: String,
    /// The Rust type, when the argument was declared as a parameter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rust_type: Option<String>,
    /// Whether the model must supply it.
    pub required: bool,
    /// The default value, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
    /// The description, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// One tool as the catalog shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDoc {
    /// The tool's name.
    pub name: String,
    /// The full description.
    pub description: String,
    /// The first sentence of the description.
    pub short_description: String,
    /// Other names.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub aliases: &'static [&'static str],
    /// The arguments.
    pub arguments: Vec<ArgDoc>,
    /// Every metadata key with its value: `module` (of a `module.tool` name), `version`,
    /// `category`, `tags`, `tier`, `cost`, `permission`, and the limits and switches the tool
    /// sets (`cooldown`, `daily_limit`, `timeout`, `max_args_bytes` when not the default,
    /// `max_result_bytes`, `cache` as `{"ttl": "5m", "per_user": true}`, `confirm_if` as
    /// `true` for a compiled tool's predicate or a run-time spec's JSON Schema,
    /// `requires_gate`, `defer_loading`, `sequential`, `gate_fail_closed`).
    pub metadata: Map<String, Value>,
    /// The annotations that apply (declared, or derived from the category).
    pub annotations: Annotations,
    /// The risk level computed from the annotations and tier.
    pub risk: crate::def::Risk,
    /// The response-tag form.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tag: Option<Value>,
    /// Where a compiled tool is declared; `None` for a tool registered at run time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLocation>,
    /// When a run-time tool was registered (RFC 3339); `None` for a compiled tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_at: Option<String>,
    /// The JSON Schema of the arguments.
    pub input_schema: Value,
    /// The JSON Schema of what the tool returns, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// The kinds of blocks (images, files, links, ...) the tool returns besides its value;
    /// empty for a value only (see [`Tool::returns`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub returns: Vec<crate::media::BlockKind>,
    /// What the tool's definition costs in prompt tokens, per provider: empty unless the
    /// catalog counts them ([`Catalog::with_token_counts`](super::Catalog::with_token_counts),
    /// feature `tokens`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tokens: Vec<super::TokenShare>,
}

impl ToolDoc {
    /// What the cache does, in words: `results reused for 5m, per user` (or `shared by every
    /// user`); `None` for a tool without a cache.
    pub(super) fn cache_text(&self) -> Option<String> {
        let cache = self.metadata.get("cache")?;
        let whom = if cache["per_user"] == Value::Bool(false) {
            "shared by every user"
        } else {
            "per user"
        };
        Some(format!(
            "results reused for {}, {whom}",
            cache["ttl"].as_str().unwrap_or_default()
        ))
    }

    /// What the tool returns, in words: `a value`, `a value, then image blocks`, `blocks of
    /// any kind`, ...
    pub fn returns_text(&self) -> String {
        use crate::media::BlockKind;
        let blocks = if self.returns.is_empty() {
            None
        } else if self.returns == BlockKind::ALL {
            Some("blocks of any kind (text, images, audio, files, links)".to_owned())
        } else {
            let kinds: Vec<&str> = self
                .returns
                .iter()
                .map(|kind| match kind {
                    BlockKind::Text => "text",
                    BlockKind::Image => "an image",
                    BlockKind::Audio => "audio",
                    BlockKind::File => "a file",
                    BlockKind::ResourceLink => "a resource link",
                    BlockKind::Resource => "an embedded resource",
                })
                .collect();
            Some(kinds.join(" and "))
        };
        let value = if self.output_schema.is_some() {
            "a value (see the output schema)"
        } else {
            "a value"
        };
        match blocks {
            None => value.to_owned(),
            Some(blocks) if self.returns.len() == 1 && self.output_schema.is_none() => blocks,
            Some(blocks) => format!("{value}, then {blocks}"),
        }
    }
}

pub(super) fn tool_doc(def: &Tool) -> ToolDoc {
    let schema = def.input_schema().as_value().clone();
    ToolDoc {
        name: def.name().to_owned(),
        description: def.description().to_owned(),
        short_description: def.short_description().to_owned(),
        aliases: def.definition().map_or(&[], |d| d.aliases()),
        arguments: arguments(def, &schema),
        metadata: metadata(def),
        annotations: def.effective_annotations(),
        risk: def.risk(),
        tag: def.tag().map(|tag| {
            let mut value = serde_json::to_value(tag).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut value {
                map.insert("strip_from_display".into(), def.strip_from_display().into());
            }
            value
        }),
        source: def.source().copied(),
        registered_at: def
            .created_at()
            .map(|at| humantime::format_rfc3339_millis(at).to_string()),
        input_schema: schema,
        output_schema: def.output_schema().cloned(),
        returns: def.returns().to_vec(),
        tokens: Vec::new(),
    }
}

fn metadata(def: &Tool) -> Map<String, Value> {
    let mut map = Map::new();
    let mut put = |key: &str, value: Value| {
        map.insert(key.to_owned(), value);
    };
    if let Some(module) = def.module() {
        put("module", module.into());
    }
    if let Some(version) = def.version() {
        put("version", version.into());
    }
    if let Some(category) = def.category() {
        put("category", category.into());
    }
    let tags: Vec<&str> = def.tags().collect();
    if !tags.is_empty() {
        put("tags", tags.into());
    }
    put("tier", def.tier().as_str().into());
    put("cost", def.cost().as_str().into());
    put("permission", def.permission().as_str().into());
    if def.requires_gate() {
        put("requires_gate", true.into());
    }
    if let Some(cooldown) = def.cooldown() {
        put("cooldown", human(cooldown).into());
    }
    if let Some(limit) = def.daily_limit() {
        put("daily_limit", limit.into());
    }
    if let Some(timeout) = def.timeout() {
        put("timeout", human(timeout).into());
    }
    if def.max_args_bytes() != MAX_ARGS_BYTES {
        put("max_args_bytes", def.max_args_bytes().into());
    }
    if let Some(max) = def.max_result_bytes() {
        put("max_result_bytes", max.into());
    }
    if def.task_support() != crate::meta::TaskSupport::Forbidden {
        put("task", def.task_support().as_str().into());
    }
    if let Some(cache) = def.cache() {
        put(
            "cache",
            serde_json::json!({ "ttl": human(cache.ttl), "per_user": cache.per_user }),
        );
    }
    if def.confirms_conditionally() {
        // A run-time spec's condition is data the reader can check; a compiled tool's is code.
        let schema = def.owned().and_then(|owned| owned.spec.confirm_if());
        put("confirm_if", schema.cloned().unwrap_or(Value::Bool(true)));
    }
    if def.defer_loading() {
        put("defer_loading", true.into());
    }
    if def.sequential() {
        put("sequential", true.into());
    }
    if def.gate_fail_closed() {
        put("gate_fail_closed", true.into());
    }
    map
}

fn human(duration: Duration) -> String {
    humantime::format_duration(duration).to_string()
}

/// The argument table, read from the schema so that it always matches what the model sees.
fn arguments(def: &Tool, schema: &Value) -> Vec<ArgDoc> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args: Vec<ArgDoc> = properties
        .iter()
        .map(|(name, property)| ArgDoc {
            name: name.clone(),
            ty: type_name(property),
            rust_type: def
                .args()
                .iter()
                .find(|a| a.name == name)
                .map(|a| a.rust_type.to_owned()),
            required: required.contains(&name.as_str()),
            default: property.get("default").cloned(),
            description: property
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
        })
        .collect();
    // Declaration order when known, then the schema's order.
    let position = |name: &str| {
        def.args()
            .iter()
            .position(|a| a.name == name)
            .unwrap_or(usize::MAX)
    };
    args.sort_by_key(|arg| position(&arg.name));
    args
}

/// A short, readable name for a property's type.
fn type_name(property: &Value) -> String {
    if let Some(reference) = property.get("$ref").and_then(Value::as_str) {
        return reference.rsplit('/').next().unwrap_or(reference).to_owned();
    }
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join(" | ");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(options) = property.get(key).and_then(Value::as_array) {
            let names: Vec<String> = options
                .iter()
                .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                .map(type_name)
                .collect();
            return names.join(" or ");
        }
    }
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect(),
        _ => Vec::new(),
    };
    if types.is_empty() {
        return "any".to_owned();
    }
    types
        .iter()
        .map(|ty| match (*ty, property.get("items")) {
            ("array", Some(items)) => format!("array of {}", type_name(items)),
            (ty, _) => ty.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" or ")
}

/// Each annotation's name and whether it holds, in the order every output shows them.
pub(super) fn annotation_flags(annotations: &Annotations) -> [(&'static str, bool); 5] {
    let holds = |value: Option<bool>| value == Some(true);
    [
        ("read_only", holds(annotations.read_only)),
        ("destructive", holds(annotations.destructive)),
        ("idempotent", holds(annotations.idempotent)),
        ("open_world", holds(annotations.open_world)),
        (
            "requires_confirmation",
            holds(annotations.requires_confirmation),
        ),
    ]
}

/// The names of the annotations that hold.
pub(super) fn annotation_names(annotations: &Annotations) -> impl Iterator<Item = &'static str> {
    annotation_flags(annotations)
        .into_iter()
        .filter(|(_, holds)| *holds)
        .map(|(name, _)| name)
}
