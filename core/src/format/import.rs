//! A tool definition written in a provider's shape, read back into a [`ToolSpec`]: the reverse
//! of [`Registry::provider_tools`](crate::Registry::provider_tools), for definitions held in
//! OpenAI, Anthropic, Gemini or MCP shape (a migration from another framework, a plugin handed in
//! as an OpenAI dict).

use serde_json::{Map, Value};

use super::Provider;
use crate::meta::{Annotations, TaskSupport};
use crate::spec::{SpecError, ToolSpec};

/// A definition read back: the spec, the shape it was written in, and what the shape allows
/// that a spec has no field for, kept as written.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The spec, built with every check of [`ToolSpecBuilder::build`](crate::spec::ToolSpecBuilder::build).
    pub spec: ToolSpec,
    /// The shape the definition was written in.
    pub provider: Provider,
    /// The keys the provider allows that the spec does not keep, by their path in the
    /// definition (`strict`, `cache_control`, `title`, `_meta`, `annotations.title`, ...):
    /// reported, never dropped unseen.
    pub kept: Map<String, Value>,
}

impl ToolSpec {
    /// Reads a tool definition in any provider's shape, told apart by its keys:
    ///
    /// | shape | written as |
    /// | --- | --- |
    /// | OpenAI Chat Completions | `{"type": "function", "function": {"name", "description", "parameters", "strict"}}` |
    /// | OpenAI Responses | `{"type": "function", "name", "description", "parameters", "strict"}` |
    /// | Anthropic | `{"name", "description", "input_schema", "cache_control", "defer_loading", "strict"}` |
    /// | Gemini `FunctionDeclaration` | `{"name", "description", "parameters"}` (its OpenAPI subset) or `"parametersJsonSchema"`, `"response"`/`"responseJsonSchema"` |
    /// | MCP `Tool` | `{"name", "title", "description", "inputSchema", "outputSchema", "annotations", "execution", "_meta"}` |
    ///
    /// The name is kept as the provider has it (a provider's wire name is a valid tool name;
    /// rename with [`with_name`](Self::with_name)); a name the provider's own rule refuses
    /// (a `.` in an OpenAI name) is a valid tool name too, and is written back in the
    /// provider's wire form ([`Provider::wire_name`]). What the spec keeps: the description, the
    /// argument schema, Anthropic's `defer_loading`, Gemini's and MCP's output schema, MCP's
    /// hints as [`Annotations`] and `execution.taskSupport`. Normalised on the way in, so that
    /// the spec's definition for the same provider is the one given but for these: Gemini's
    /// upper-case types (`"STRING"`) become JSON Schema's (`"string"`), and its `nullable`
    /// a `null` in the type; MCP's hints are all written out (MCP's defaults where absent), and
    /// an MCP output schema this registry wrapped (`x-tool-registry-wrapped`, for a value that
    /// is not an object) is unwrapped.
    /// The argument schema is written as every provider takes it: an object schema with
    /// `properties` (empty when it has none), without a top-level `title` (nor `$schema`, but
    /// for MCP). Two keys the spec keeps are written back only where they apply:
    /// `defer_loading` in a list with the provider's own tool search
    /// ([`discovery`](crate::discovery)), and `execution.taskSupport` by the MCP server of the
    /// 2025-11-25 revision, which runs tasks, not by
    /// [`provider_tools`](crate::Registry::provider_tools). Anything else a provider allows is in [`Imported::kept`]; a key no provider's shape has
    /// is an error naming it.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_registry::ToolSpec;
    /// use tool_registry::format::Provider;
    ///
    /// let openai = json!({"type": "function", "function": {
    ///     "name": "get_weather",
    ///     "description": "The weather of a city.",
    ///     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ///     "strict": true,
    /// }});
    /// let imported = ToolSpec::from_provider(&openai)?;
    /// assert_eq!(imported.provider, Provider::OpenAi);
    /// assert_eq!(imported.spec.tool_name(), "get_weather");
    /// assert_eq!(imported.kept["function.strict"], true); // kept, with its path
    /// # Ok::<(), tool_registry::spec::SpecError>(())
    /// ```
    pub fn from_provider(definition: &Value) -> Result<Imported, SpecError> {
        let shape = |problem: String| SpecError::Shape { problem };
        let Value::Object(object) = definition else {
            return Err(shape("a tool definition is a JSON object".to_owned()));
        };
        let provider = if object.get("type").and_then(Value::as_str) == Some("function") {
            match object.contains_key("function") {
                true => Provider::OpenAi,
                false => Provider::Responses,
            }
        } else if object.contains_key("input_schema") {
            Provider::Anthropic
        } else if object.contains_key("inputSchema") {
            Provider::Mcp
        } else if object.contains_key("parameters") || object.contains_key("parametersJsonSchema") {
            Provider::Gemini
        } else {
            return Err(shape(
                "no provider's shape: an OpenAI definition has `\"type\": \"function\"`, an Anthropic one `input_schema`, an MCP one `inputSchema`, a Gemini one `parameters` or `parametersJsonSchema`".to_owned(),
            ));
        };
        Self::from_provider_as(definition, provider)
    }

    /// Reads a tool definition written in `provider`'s shape; see
    /// [`from_provider`](Self::from_provider).
    pub fn from_provider_as(definition: &Value, provider: Provider) -> Result<Imported, SpecError> {
        let mut reader = Reader {
            kept: Map::new(),
            provider,
        };
        let object = match (provider, definition) {
            (Provider::OpenAi, Value::Object(outer)) => {
                reader.only(outer, "", &["type", "function"])?;
                match outer.get("function") {
                    Some(Value::Object(function)) => function,
                    _ => return Err(reader.wrong("function", "an object")),
                }
            }
            (_, Value::Object(object)) => object,
            _ => {
                return Err(SpecError::Shape {
                    problem: "a tool definition is a JSON object".to_owned(),
                });
            }
        };
        let allowed: &[&str] = match provider {
            Provider::OpenAi => &["name", "description", "parameters", "strict"],
            Provider::Responses => &["type", "name", "description", "parameters", "strict"],
            Provider::Anthropic => &[
                "name",
                "description",
                "input_schema",
                "cache_control",
                "defer_loading",
                "strict",
                "type",
                "input_examples",
            ],
            Provider::Gemini => &[
                "name",
                "description",
                "parameters",
                "parametersJsonSchema",
                "response",
                "responseJsonSchema",
                "behavior",
            ],
            Provider::Mcp => &[
                "name",
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
                "execution",
                "icons",
                "_meta",
            ],
        };
        reader.only(object, prefix(provider), allowed)?;
        let name = reader
            .text(object, "name")?
            .ok_or_else(|| reader.wrong("name", "a string"))?;
        let mut builder = ToolSpec::builder(name);
        if let Some(description) = reader.text(object, "description")? {
            builder = builder.description(description);
        }
        let input_key = match provider {
            Provider::OpenAi | Provider::Responses => "parameters",
            Provider::Anthropic => "input_schema",
            Provider::Mcp => "inputSchema",
            Provider::Gemini if object.contains_key("parametersJsonSchema") => {
                "parametersJsonSchema"
            }
            Provider::Gemini => "parameters",
        };
        if let Some(schema) = object.get(input_key) {
            let schema = match (provider, input_key) {
                (Provider::Gemini, "parameters") => from_openapi(schema),
                _ => schema.clone(),
            };
            builder = builder.input_schema(schema);
        }
        match provider {
            Provider::Gemini => {
                if let Some(output) = object.get("responseJsonSchema") {
                    builder = builder.output_schema(output.clone());
                } else if let Some(output) = object.get("response") {
                    builder = builder.output_schema(from_openapi(output));
                }
            }
            Provider::Mcp => {
                if let Some(output) = object.get("outputSchema") {
                    // A schema this registry wrapped for MCP (a tool whose value is not an
                    // object) is the tool's own schema again.
                    let (output, _) = super::mcp::unwrap_output_schema(output.clone());
                    builder = builder.output_schema(output);
                }
                if let Some(hints) = object.get("annotations") {
                    builder = builder.annotations(reader.hints(hints)?);
                }
                if let Some(execution) = object.get("execution") {
                    builder = builder.task(reader.task(execution)?);
                }
            }
            Provider::Anthropic => {
                if let Some(defer) = object.get("defer_loading") {
                    let defer = defer
                        .as_bool()
                        .ok_or_else(|| reader.wrong("defer_loading", "true or false"))?;
                    builder = builder.defer_loading(defer);
                }
            }
            Provider::OpenAi | Provider::Responses => {}
        }
        for key in provider_only(provider) {
            if let Some(value) = object.get(*key) {
                reader
                    .kept
                    .insert(format!("{}{key}", prefix(provider)), value.clone());
            }
        }
        let spec = builder.build()?;
        Ok(Imported {
            spec,
            provider,
            kept: reader.kept,
        })
    }
}

/// Where the tool's keys sit in a definition of `provider`'s shape.
fn prefix(provider: Provider) -> &'static str {
    match provider {
        Provider::OpenAi => "function.",
        _ => "",
    }
}

/// The keys each shape allows that a spec keeps nothing of: kept in [`Imported::kept`].
fn provider_only(provider: Provider) -> &'static [&'static str] {
    match provider {
        Provider::OpenAi | Provider::Responses => &["strict"],
        Provider::Anthropic => &["cache_control", "strict", "type", "input_examples"],
        Provider::Gemini => &["behavior"],
        Provider::Mcp => &["title", "icons", "_meta"],
    }
}

/// Reads one definition, noting what it keeps.
struct Reader {
    kept: Map<String, Value>,
    provider: Provider,
}

impl Reader {
    /// An error for `key`, which must be `what`.
    fn wrong(&self, key: &str, what: &str) -> SpecError {
        SpecError::Shape {
            problem: format!(
                "`{}{key}` must be {what} in a {} definition",
                prefix(self.provider),
                self.provider.as_str()
            ),
        }
    }

    /// Refuses a key of `object` that `allowed` does not name.
    fn only(
        &self,
        object: &Map<String, Value>,
        at: &str,
        allowed: &[&str],
    ) -> Result<(), SpecError> {
        match object.keys().find(|key| !allowed.contains(&key.as_str())) {
            Some(key) => Err(SpecError::Shape {
                problem: format!(
                    "`{at}{}` is no key of a {} definition (it has {})",
                    key.escape_debug(),
                    self.provider.as_str(),
                    allowed.join(", ")
                ),
            }),
            None => Ok(()),
        }
    }

    /// The text at `key`, if any.
    fn text<'v>(
        &self,
        object: &'v Map<String, Value>,
        key: &str,
    ) -> Result<Option<&'v str>, SpecError> {
        match object.get(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(_) => Err(self.wrong(key, "a string")),
        }
    }

    /// MCP's hints as annotations; its `title` kept.
    fn hints(&mut self, hints: &Value) -> Result<Annotations, SpecError> {
        let Value::Object(hints) = hints else {
            return Err(self.wrong("annotations", "an object"));
        };
        let hint = |key: &str| match hints.get(key) {
            None => Ok(None),
            Some(Value::Bool(yes)) => Ok(Some(*yes)),
            Some(_) => Err(self.wrong(&format!("annotations.{key}"), "true or false")),
        };
        let annotations = Annotations {
            read_only: Some(hint("readOnlyHint")?.unwrap_or(false)),
            destructive: Some(hint("destructiveHint")?.unwrap_or(true)),
            idempotent: Some(hint("idempotentHint")?.unwrap_or(false)),
            open_world: Some(hint("openWorldHint")?.unwrap_or(true)),
            ..Annotations::default()
        };
        for (key, value) in hints {
            if !matches!(
                key.as_str(),
                "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint"
            ) {
                self.kept
                    .insert(format!("annotations.{key}"), value.clone());
            }
        }
        Ok(annotations)
    }

    /// MCP's `execution.taskSupport`.
    fn task(&mut self, execution: &Value) -> Result<TaskSupport, SpecError> {
        let support = execution.get("taskSupport").and_then(Value::as_str);
        match support {
            None => Ok(TaskSupport::Forbidden),
            Some("forbidden") => Ok(TaskSupport::Forbidden),
            Some("optional") => Ok(TaskSupport::Optional),
            Some("required") => Ok(TaskSupport::Required),
            Some(_) => Err(self.wrong(
                "execution.taskSupport",
                "`forbidden`, `optional` or `required`",
            )),
        }
    }
}

/// A schema of Gemini's OpenAPI subset as JSON Schema: upper-case types in lower case, and
/// `nullable: true` a `null` in the type.
fn from_openapi(schema: &Value) -> Value {
    match schema {
        Value::Object(object) => {
            let mut out = Map::new();
            let nullable = object.get("nullable") == Some(&Value::Bool(true));
            for (key, value) in object {
                let value = match key.as_str() {
                    "nullable" => continue,
                    "type" => match value {
                        Value::String(kind) => Value::String(kind.to_ascii_lowercase()),
                        other => other.clone(),
                    },
                    "properties" => match value {
                        Value::Object(properties) => Value::Object(
                            properties
                                .iter()
                                .map(|(name, schema)| (name.clone(), from_openapi(schema)))
                                .collect(),
                        ),
                        other => other.clone(),
                    },
                    "items" => from_openapi(value),
                    "anyOf" => match value {
                        Value::Array(options) => {
                            Value::Array(options.iter().map(from_openapi).collect())
                        }
                        other => other.clone(),
                    },
                    _ => value.clone(),
                };
                out.insert(key.clone(), value);
            }
            if nullable && let Some(Value::String(kind)) = out.get("type").cloned() {
                out.insert(
                    "type".into(),
                    Value::Array(vec![Value::String(kind), Value::String("null".into())]),
                );
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_mcp_output_schema_this_registry_wrapped_is_read_as_the_tools_own() {
        let own = json!({"type": "string"});
        let definition = json!({
            "name": "greet",
            "inputSchema": {"type": "object", "properties": {}},
            "outputSchema": super::super::mcp::output_schema(&own),
        });
        let imported = ToolSpec::from_provider(&definition).unwrap();
        assert_eq!(imported.spec.output_schema(), Some(&own));
        // Any other object schema is kept as it is.
        let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        let definition =
            json!({"name": "count", "inputSchema": {"type": "object"}, "outputSchema": object});
        let imported = ToolSpec::from_provider(&definition).unwrap();
        assert_eq!(imported.spec.output_schema(), Some(&object));
    }
}
