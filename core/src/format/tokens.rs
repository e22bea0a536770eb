//! What a tool list costs in prompt tokens, per provider: OpenAI's models read the tools
//! rendered as the TypeScript-like `namespace functions { ... }` block of the Harmony format,
//! counted exactly with the `o200k_base` tokenizer; Anthropic and Gemini publish no tokenizer,
//! so their counts are estimates (`o200k_base` over the definitions' JSON), marked as such.

use std::fmt::Write as _;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::Provider;

/// The tokenizer OpenAI's current models use (`o200k_base`; `o200k_harmony` adds only special
/// tokens, which a tool list does not hold).
static O200K: LazyLock<tiktoken_rs::CoreBPE> =
    LazyLock::new(|| tiktoken_rs::o200k_base().expect("the embedded o200k_base vocabulary"));

/// How many tokens `text` is in `o200k_base`.
pub fn o200k_tokens(text: &str) -> usize {
    O200K.encode_ordinary(text).len()
}

/// What a tool list costs: each tool's share and the whole list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct TokenCount {
    /// The provider the list is written for.
    pub provider: &'static str,
    /// Whether the count is the provider's own (its rendering and tokenizer are public), or an
    /// estimate.
    pub exact: bool,
    /// How the count is made.
    pub method: &'static str,
    /// The whole list, as one text.
    pub total: usize,
    /// Each tool's own part, by its name on the wire, in list order.
    pub tools: Vec<(String, usize)>,
    /// For OpenAI's lists, the count the OpenAI cookbook's `num_tokens_for_tools` gives a Chat
    /// Completions request to the gpt-4o family ([`chat_completions`]); `None` for the others.
    pub chat_completions: Option<usize>,
}

/// The tokens `definitions` (a provider's tool list, as [`Registry::provider_tools`](crate::Registry::provider_tools)
/// writes it) cost `provider`'s models.
pub fn count(provider: Provider, definitions: &Value) -> TokenCount {
    match provider {
        Provider::OpenAi | Provider::Responses => {
            let functions = functions(provider, definitions);
            let tools = functions
                .iter()
                .map(|(name, description, parameters)| {
                    let block = function_block(name, description, parameters.as_ref());
                    (name.clone(), o200k_tokens(&block))
                })
                .collect();
            TokenCount {
                provider: provider.as_str(),
                exact: true,
                method: "the Harmony `namespace functions` rendering, counted in o200k_base",
                total: o200k_tokens(&harmony_tools(&functions)),
                tools,
                chat_completions: Some(chat_completions(&functions)),
            }
        }
        Provider::Anthropic | Provider::Gemini | Provider::Mcp => {
            let list = match (provider, definitions) {
                (Provider::Gemini, Value::Array(tools)) => tools
                    .first()
                    .and_then(|tool| tool.get("functionDeclarations"))
                    .cloned()
                    .unwrap_or(Value::Array(Vec::new())),
                _ => definitions.clone(),
            };
            let tools = list
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .map(|tool| {
                            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
                            (name.to_owned(), o200k_tokens(&tool.to_string()))
                        })
                        .collect()
                })
                .unwrap_or_default();
            TokenCount {
                provider: provider.as_str(),
                exact: false,
                method: "o200k_base over the definitions' compact JSON; the provider publishes no tokenizer: check with its counting endpoint",
                total: o200k_tokens(&definitions.to_string()),
                tools,
                chat_completions: None,
            }
        }
    }
}

/// The cookbook's constants for the gpt-4o family: each function's start, the properties'
/// start, each property, an enum's start, each enum item, and the list's end
/// (<https://cookbook.openai.com/examples/how_to_count_tokens_with_tiktoken>, section 7).
const COOKBOOK: (usize, usize, usize, isize, usize, usize) = (7, 3, 3, -3, 3, 12);

/// The tokens a Chat Completions request's `tools` add for the gpt-4o family, as the OpenAI
/// cookbook counts them (verified there against the API's `prompt_tokens`): per function its
/// start and `name:description` (one final `.` dropped), per property `name:type:description`
/// and each enum item, then the list's end. A property without a `type` or `description` counts
/// them as empty; a list of types is written as Python writes a list (`['string', 'null']`).
fn chat_completions(functions: &[(String, String, Option<Value>)]) -> usize {
    let (func_init, prop_init, prop_key, enum_init, enum_item, func_end) = COOKBOOK;
    if functions.is_empty() {
        return 0;
    }
    let mut total: isize = 0;
    let add = |total: &mut isize, n: usize| *total += n as isize;
    for (name, description, parameters) in functions {
        add(&mut total, func_init);
        let description = description.strip_suffix('.').unwrap_or(description);
        add(&mut total, o200k_tokens(&format!("{name}:{description}")));
        let properties = parameters
            .as_ref()
            .and_then(|p| p.get("properties"))
            .and_then(Value::as_object);
        let Some(properties) = properties.filter(|p| !p.is_empty()) else {
            continue;
        };
        add(&mut total, prop_init);
        for (key, property) in properties {
            add(&mut total, prop_key);
            if let Some(items) = property.get("enum").and_then(Value::as_array) {
                total += enum_init;
                for item in items {
                    add(&mut total, enum_item + o200k_tokens(&python_str(item)));
                }
            }
            let kind = match property.get("type") {
                Some(Value::Array(kinds)) => {
                    let kinds: Vec<String> = kinds
                        .iter()
                        .map(|k| format!("'{}'", python_str(k)))
                        .collect();
                    format!("[{}]", kinds.join(", "))
                }
                Some(kind) => python_str(kind),
                None => String::new(),
            };
            let text = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let text = text.strip_suffix('.').unwrap_or(text);
            add(&mut total, o200k_tokens(&format!("{key}:{kind}:{text}")));
        }
    }
    add(&mut total, func_end);
    usize::try_from(total).unwrap_or(0)
}

/// A JSON value as Python's `str` writes the value `json.load` gives.
fn python_str(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// What `tools`, listed in this order, cost `provider`'s models: [`count`] of their list.
pub(crate) fn of_tools(provider: Provider, tools: &[crate::Tool]) -> TokenCount {
    let definitions = tools
        .iter()
        .map(|tool| super::lists::cached(tool, provider).clone())
        .collect();
    count(provider, &super::lists::wrap(provider, definitions))
}

/// The text OpenAI's models read for an OpenAI list (Chat Completions or Responses): the Harmony
/// tools section; `None` for the other providers, whose rendering is not public.
pub fn rendered(provider: Provider, definitions: &Value) -> Option<String> {
    matches!(provider, Provider::OpenAi | Provider::Responses)
        .then(|| harmony_tools(&functions(provider, definitions)))
}

/// Each function of an OpenAI list: its name, description and parameters.
fn functions(provider: Provider, definitions: &Value) -> Vec<(String, String, Option<Value>)> {
    let Some(tools) = definitions.as_array() else {
        return Vec::new();
    };
    tools
        .iter()
        .filter_map(|tool| {
            let function = match provider {
                Provider::OpenAi => tool.get("function")?,
                _ => tool,
            };
            let name = function.get("name")?.as_str()?.to_owned();
            let description = function
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            Some((name, description, function.get("parameters").cloned()))
        })
        .collect()
}

/// The tools section of a Harmony developer message, as the model reads it.
fn harmony_tools(functions: &[(String, String, Option<Value>)]) -> String {
    let mut out = String::from("# Tools\n\n## functions\n\nnamespace functions {\n\n");
    for (name, description, parameters) in functions {
        out.push_str(&function_block(name, description, parameters.as_ref()));
    }
    out.push_str("} // namespace functions");
    out
}

/// One function of the namespace: its description as comments, then its type.
fn function_block(name: &str, description: &str, parameters: Option<&Value>) -> String {
    let mut out = String::new();
    for line in description.lines() {
        let _ = writeln!(out, "// {line}");
    }
    let empty = parameters
        .and_then(|p| p.get("properties"))
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    match parameters {
        Some(parameters) if !empty => {
            let _ = writeln!(
                out,
                "type {name} = (_: {}) => any;\n",
                ts_type(parameters, "")
            );
        }
        _ => {
            let _ = writeln!(out, "type {name} = () => any;\n");
        }
    }
    out
}

/// A JSON Schema as a TypeScript type, objects spread over lines at `indent`.
fn ts_type(schema: &Value, indent: &str) -> String {
    if let Some(options) = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array)
    {
        let types: Vec<String> = options.iter().map(|o| ts_type(o, indent)).collect();
        return types.join(" | ");
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        if !values.is_empty() {
            return values.join(" | ");
        }
    }
    match schema.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| scalar(t).to_owned())
            .collect::<Vec<_>>()
            .join(" | "),
        Some(Value::String(kind)) if kind == "object" => object(schema, indent),
        Some(Value::String(kind)) if kind == "array" => match schema.get("items") {
            Some(items) => format!("{}[]", ts_type(items, indent)),
            None => "any[]".to_owned(),
        },
        Some(Value::String(kind)) => scalar(kind).to_owned(),
        _ => "any".to_owned(),
    }
}

fn scalar(kind: &str) -> &str {
    match kind {
        "integer" | "number" => "number",
        "string" => "string",
        "boolean" => "boolean",
        "null" => "null",
        _ => "any",
    }
}

/// An object type: each property with its description above it and its default after it.
fn object(schema: &Value, indent: &str) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return "object".to_owned();
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let inner = format!("{indent}    ");
    let mut out = String::from("{\n");
    for (name, property) in properties {
        if let Some(description) = property.get("description").and_then(Value::as_str) {
            for line in description.lines() {
                let _ = writeln!(out, "{indent}// {line}");
            }
        }
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = write!(
            out,
            "{indent}{name}{optional}: {},",
            ts_type(property, &inner)
        );
        if let Some(default) = property.get("default") {
            let _ = write!(out, " // default: {default}");
        }
        out.push('\n');
    }
    out.push_str(indent);
    out.push('}');
    out
}
