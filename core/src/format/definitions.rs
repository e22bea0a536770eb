//! One tool's definition in each provider's shape, from its name on the wire, description and
//! schemas. Built once per tool and provider, then cached on the tool's entry.
//!
//! Shapes, as each provider documents its tool object:
//!
//! - OpenAI Chat Completions: `{"type": "function", "function": {"name", "description",
//!   "parameters"}}` (<https://platform.openai.com/docs/api-reference/chat/create#chat-create-tools>).
//! - OpenAI Responses: `{"type": "function", "name", "description", "parameters", "strict"}`,
//!   where `strict` is on unless set to `false`
//!   (<https://platform.openai.com/docs/api-reference/responses/create#responses-create-tools>).
//! - Anthropic: `{"name", "description", "input_schema"}`
//!   (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>).
//! - Gemini: a `FunctionDeclaration` `{"name", "description", "parameters"}` (its OpenAPI
//!   subset, see `gemini.rs`; `parametersJsonSchema` for a schema that subset cannot say), inside
//!   one `{"functionDeclarations": [...]}` tool (<https://ai.google.dev/api/caching#FunctionDeclaration>).
//! - MCP: a `Tool` `{"name", "title", "description", "inputSchema", "outputSchema",
//!   "annotations"}` (an `outputSchema` that is not an object schema wrapped in one, see
//!   `mcp.rs`), the hints `readOnlyHint` (default `false`), `destructiveHint` (default
//!   `true`), `idempotentHint` (default `false`) and `openWorldHint` (default `true`)
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#tool>). The schemas
//!   are JSON Schema 2020-12 as generated, MCP's default dialect
//!   (<https://modelcontextprotocol.io/community/seps/1613-establish-json-schema-2020-12-as-default-dialect-f>),
//!   with nesting bounded by
//!   [`MAX_SCHEMA_DEPTH`](crate::spec::MAX_SCHEMA_DEPTH): a run-time spec deeper than that is
//!   refused when built; a compiled tool's schema is shown down to the bound, each deeper
//!   schema replaced by `true` (any value) and the description of the one holding it saying so.

use serde_json::{Map, Value, json};

use super::Provider;
use super::strict::{Dialect, StrictError, strict_parameters};
use crate::def::Tool;

/// The tool's definition for `provider` in strict mode (`"strict": true`, the schema in its
/// strict form; see [`super::strict`]), for the providers that have one; for the others, the
/// plain definition.
pub(crate) fn strict_definition(tool: &Tool, provider: Provider) -> Result<Value, StrictError> {
    let parameters = |dialect| strict_parameters(tool.name(), &parameters(tool), dialect);
    let mut definition = definition(tool, provider);
    match provider {
        Provider::OpenAi => {
            definition["function"]["parameters"] = parameters(Dialect::OpenAi)?;
            definition["function"]["strict"] = true.into();
        }
        Provider::Responses => {
            definition["parameters"] = parameters(Dialect::OpenAi)?;
            definition["strict"] = true.into();
        }
        Provider::Anthropic => {
            definition["input_schema"] = parameters(Dialect::Anthropic)?;
            definition["strict"] = true.into();
        }
        Provider::Gemini | Provider::Mcp => {}
    }
    Ok(definition)
}

/// The tool's definition for `provider`.
pub(crate) fn definition(tool: &Tool, provider: Provider) -> Value {
    let name = provider.wire_name(tool.name());
    let description = tool.description();
    match provider {
        Provider::OpenAi => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": parameters(tool),
            }
        }),
        Provider::Responses => json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": parameters(tool),
            "strict": false,
        }),
        Provider::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": parameters(tool),
        }),
        Provider::Gemini => {
            let parameters = parameters(tool);
            // The OpenAPI subset where it can say the schema; the JSON Schema form otherwise.
            let (key, schema) = match super::gemini::parameters(&parameters) {
                Ok(schema) => ("parameters", schema),
                Err(_) => ("parametersJsonSchema", Value::Object(parameters)),
            };
            json!({ "name": name, "description": description, key: schema })
        }
        Provider::Mcp => mcp(tool, &name),
    }
}

/// The argument schema as providers take it: an object schema without the `$schema` and
/// `title` keys the generator adds, with `properties` even when there are none.
pub(crate) fn parameters(tool: &Tool) -> Map<String, Value> {
    let mut parameters = match tool.input_schema().as_value() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    parameters.remove("$schema");
    parameters.remove("title");
    parameters
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    parameters
}

fn mcp(tool: &Tool, name: &str) -> Value {
    // A hint the tool declares, or that its category implies, is given; where neither says,
    // MCP's own default is written out, so a client never has to guess.
    let known = crate::meta::known(tool.name(), tool.category(), tool.annotations());
    let read_only = known.read_only.unwrap_or(false);
    let mut object = Map::new();
    object.insert("name".into(), name.into());
    object.insert("title".into(), title(tool.name()).into());
    object.insert("description".into(), tool.description().into());
    let mut input = parameters(tool);
    // MCP reads `$schema` (SEP-1613: 2020-12 unless it names another dialect): one the author
    // of a run-time tool wrote stays; a compiled tool's is the generator's, left out.
    if !tool.is_linked()
        && let Some(dialect) = tool.input_schema().as_value().get("$schema")
    {
        input.insert("$schema".into(), dialect.clone());
    }
    let mut input = Value::Object(input);
    let mut cut = crate::spec::depth::cut(&mut input);
    object.insert("inputSchema".into(), input);
    // MCP takes an object schema here, whose instances are the `structuredContent`; any other
    // schema is wrapped in one (see `mcp.rs`).
    if let Some(output) = tool.output_schema() {
        let mut output = super::mcp::output_schema(output);
        cut |= crate::spec::depth::cut(&mut output);
        object.insert("outputSchema".into(), output);
    }
    if cut {
        // Only a compiled tool gets here (a run-time spec this deep is refused when built),
        // and its schema is fixed at compile time: the definition is still listed, cut, and
        // the tool still checks its whole arguments when called.
        tracing::warn!(
            target: "tool_registry::format",
            tool = tool.name(),
            limit = crate::spec::MAX_SCHEMA_DEPTH,
            "the MCP schema nests deeper than the limit; what lies deeper is not shown",
        );
    }
    object.insert(
        "annotations".into(),
        json!({
            "readOnlyHint": read_only,
            // A read-only tool destroys nothing, whatever MCP assumes of an undeclared hint.
            "destructiveHint": known.destructive.unwrap_or(!read_only),
            "idempotentHint": known.idempotent.unwrap_or(false),
            "openWorldHint": known.open_world.unwrap_or(true),
        }),
    );
    Value::Object(object)
}

/// A display title from a name: its last segment, words split at `_` and `-`, the first
/// capitalized (`file_manager.create_document` -> `Create document`).
fn title(name: &str) -> String {
    let last = name.rsplit('.').next().unwrap_or(name);
    let words = last.replace(['_', '-'], " ");
    let mut chars = words.trim().chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// The OpenAI Chat Completions `{"type": "function", "function": {...}}` object of one tool.
pub fn openai_function(tool: &crate::def::Tool) -> serde_json::Value {
    definition(tool, Provider::OpenAi)
}

#[cfg(test)]
mod tests {
    use super::title;

    #[test]
    fn titles_read_as_words() {
        assert_eq!(title("file_manager.create_document"), "Create document");
        assert_eq!(title("research"), "Research");
        assert_eq!(title("a.web-search"), "Web search");
    }
}
