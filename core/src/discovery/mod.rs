//! Deferred tools and how a model finds them.
//!
//! A tool marked `defer_loading` (`#[tool(defer_loading)]`, [`ToolSpecBuilder::defer_loading`])
//! is left out of the tool list a request carries, and stays callable. How a model learns of
//! it is the registry's [`Discovery`] setting:
//!
//! - [`Discovery::MetaTools`] (the default): when a caller may see at least one deferred tool,
//!   its list ends with three ordinary tools, answered by the registry itself:
//!   - `search_tools(query, limit?)`: the caller's tools ranked by BM25 over their name, short
//!     description, tags, category and argument names, each with its name and short
//!     description;
//!   - `describe_tool(name)`: a tool's full description and argument schema;
//!   - `execute_tool(name, arguments)`: a call of the tool, through every stage a direct call
//!     goes through (scope, limits, gate, confirmation, timeout, audit).
//!
//!   All three answer within the caller's scope: a tool it may not see is never found, and
//!   describing or executing one answers exactly as for a name no tool has.
//! - [`Discovery::Native`]: where the provider searches deferred tools itself, its own way, as
//!   it documents it; the meta-tools elsewhere.
//!   - Anthropic: the deferred tools listed with `"defer_loading": true` and the server tool
//!     `{"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}`
//!     (<https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/tool-search-tool>).
//!   - OpenAI Responses: the deferred functions listed with `"defer_loading": true` and
//!     `{"type": "tool_search"}` (<https://platform.openai.com/docs/guides/tools-tool-search>;
//!     `gpt-5.4` and later).
//!
//!   The model then calls a deferred tool by its name, as any other.
//! - [`Discovery::Off`]: deferred tools are reachable by name only.
//!
//! A tool of the registry's own that takes one of the meta-tools' names wins over it: that
//! meta-tool is then neither listed nor answered.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Discovery`], the meta-tools, what a list adds for deferred tools |
//! | `search.rs` | the BM25 index of a snapshot's tools |
//!
//! [`ToolSpecBuilder::defer_loading`]: crate::spec::ToolSpecBuilder::defer_loading

use std::sync::LazyLock;

use serde_json::{Map, Value, json};

use crate::call::{ToolArgs, ToolError, args_value};
pub(crate) use crate::def::Meta;
use crate::def::Tool;
use crate::spec::ToolSpec;

pub(crate) mod search;

/// How a model finds the tools marked `defer_loading` (see the [module](self) documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Discovery {
    /// Deferred tools are left out of lists and reachable by name only.
    Off,
    /// `search_tools`, `describe_tool` and `execute_tool` end the list of a caller who may see
    /// a deferred tool, for every provider.
    #[default]
    MetaTools,
    /// The provider's own tool search where it has one (Anthropic, OpenAI Responses); the
    /// meta-tools for the others.
    Native,
}

/// The name of the meta-tool that searches the caller's tools.
pub const SEARCH_TOOLS: &str = "search_tools";
/// The name of the meta-tool that describes one tool.
pub const DESCRIBE_TOOL: &str = "describe_tool";
/// The name of the meta-tool that calls one tool.
pub const EXECUTE_TOOL: &str = "execute_tool";

/// How many tools `search_tools` returns unless asked for another number, and at most.
const DEFAULT_LIMIT: usize = 5;
const MAX_LIMIT: usize = 20;

/// The three meta-tools, built once for the program.
pub(crate) fn meta_tools() -> &'static [Tool; 3] {
    static TOOLS: LazyLock<[Tool; 3]> = LazyLock::new(|| {
        let spec = |name: &str, description: &str, schema: Value| {
            ToolSpec::builder(name)
                .description(description)
                .input_schema(schema)
                .build()
                .expect("the meta-tools' specs are valid")
        };
        [
            crate::def::meta(
                spec(
                    SEARCH_TOOLS,
                    "Search the tools you may use that are not listed here, by what they do. \
                     Returns the best matches, each with its name and what it does; then call \
                     `describe_tool` for a tool's arguments and `execute_tool` to run it.",
                    json!({
                        "type": "object",
                        "properties": {
                            "query": {
                                "type": "string",
                                "description": "What the tool should do, in a few words."
                            },
                            "limit": {
                                "type": "integer",
                                "description": "How many tools to return (1 to 20, default 5)."
                            }
                        },
                        "required": ["query"],
                        "additionalProperties": false
                    }),
                ),
                Meta::Search,
            ),
            crate::def::meta(
                spec(
                    DESCRIBE_TOOL,
                    "Describe one tool found with `search_tools`: what it does in full and the \
                     JSON Schema of its arguments.",
                    json!({
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "description": "The tool's name." }
                        },
                        "required": ["name"],
                        "additionalProperties": false
                    }),
                ),
                Meta::Describe,
            ),
            crate::def::meta(
                spec(
                    EXECUTE_TOOL,
                    "Run one tool found with `search_tools`, with arguments that fit the schema \
                     `describe_tool` gave, and return its result.",
                    json!({
                        "type": "object",
                        "properties": {
                            "name": { "type": "string", "description": "The tool's name." },
                            "arguments": {
                                "type": "string",
                                "description": "The tool's arguments as a JSON object, e.g. {\"city\": \"Oslo\"}."
                            }
                        },
                        "required": ["name", "arguments"],
                        "additionalProperties": false
                    }),
                ),
                Meta::Execute,
            ),
        ]
    });
    &TOOLS
}

/// A meta-tool's call, its arguments read.
pub(crate) enum MetaCall {
    /// `search_tools`.
    Search {
        /// What to look for.
        query: String,
        /// How many tools at most.
        limit: usize,
    },
    /// `describe_tool`.
    Describe {
        /// The tool to describe.
        name: String,
    },
    /// `execute_tool`.
    Execute {
        /// The tool to call.
        name: String,
        /// Its arguments.
        arguments: Value,
    },
}

/// Reads a meta-tool's arguments (validation of its call).
pub(crate) fn read(meta: Meta, args: ToolArgs<'_>) -> Result<MetaCall, ToolError> {
    let tool = match meta {
        Meta::Search => SEARCH_TOOLS,
        Meta::Describe => DESCRIBE_TOOL,
        Meta::Execute => EXECUTE_TOOL,
    };
    let mut args = Arguments {
        tool,
        map: match args_value(args) {
            Ok(Value::Object(map)) => map,
            Ok(_) => Map::new(),
            Err(error) => return Err(error),
        },
    };
    match meta {
        Meta::Search => {
            let query = args.string("query")?;
            let limit = args.limit()?;
            args.done()?;
            Ok(MetaCall::Search { query, limit })
        }
        Meta::Describe => {
            let name = args.string("name")?;
            args.done()?;
            Ok(MetaCall::Describe { name })
        }
        Meta::Execute => {
            let name = args.string("name")?;
            let arguments = args.arguments()?;
            if meta_tools().iter().any(|tool| tool.name() == name) {
                return Err(args.invalid(
                    "name",
                    format!("`{name}` is called directly, not through `execute_tool`"),
                ));
            }
            args.done()?;
            Ok(MetaCall::Execute { name, arguments })
        }
    }
}

/// `search_tools`' answer: the tools found, best first.
pub(crate) fn found<'t>(tools: impl Iterator<Item = &'t Tool>) -> Value {
    let tools: Vec<Value> = tools
        .map(|tool| json!({ "name": tool.name(), "description": tool.short_description() }))
        .collect();
    json!({ "tools": tools })
}

/// `describe_tool`'s answer: one tool's name, description, parameters and output schema.
pub(crate) fn described(tool: &Tool) -> Value {
    let mut answer = Map::new();
    answer.insert("name".into(), tool.name().into());
    answer.insert("description".into(), tool.description().into());
    answer.insert(
        "parameters".into(),
        Value::Object(crate::format::parameters(tool)),
    );
    if let Some(output) = tool.output_schema() {
        answer.insert("output_schema".into(), output.clone());
    }
    Value::Object(answer)
}

/// A meta-tool's arguments, read one by one.
struct Arguments {
    tool: &'static str,
    map: Map<String, Value>,
}

impl Arguments {
    fn invalid(&self, path: &str, message: String) -> ToolError {
        ToolError::InvalidArguments {
            tool: self.tool.to_owned(),
            path: path.to_owned(),
            message,
        }
    }

    fn string(&mut self, key: &str) -> Result<String, ToolError> {
        match self.map.remove(key) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => {
                Err(self.invalid(key, format!("expected a string, found {}", kind(&other))))
            }
            None => Err(self.invalid("", format!("missing field `{key}`"))),
        }
    }

    /// `limit`: absent or `null` for the default; a number, or a numeric string, from 1 to 20.
    fn limit(&mut self) -> Result<usize, ToolError> {
        let limit = match self.map.remove("limit") {
            None | Some(Value::Null) => return Ok(DEFAULT_LIMIT),
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(text)) => text.trim().parse().ok(),
            Some(_) => None,
        };
        match limit {
            Some(n @ 1..=20) => Ok(n as usize),
            _ => Err(self.invalid(
                "limit",
                format!("expected a whole number from 1 to {MAX_LIMIT}"),
            )),
        }
    }

    /// `arguments`: a JSON object, or its text.
    fn arguments(&mut self) -> Result<Value, ToolError> {
        match self.map.remove("arguments") {
            None | Some(Value::Null) => Ok(Value::Object(Map::new())),
            Some(object @ Value::Object(_)) => Ok(object),
            Some(Value::String(text)) => match args_value(ToolArgs::Text(&text)) {
                Ok(value) => Ok(value),
                Err(ToolError::InvalidArguments { message, .. }) => {
                    Err(self.invalid("arguments", message))
                }
                Err(error) => Err(error),
            },
            Some(other) => Err(self.invalid(
                "arguments",
                format!("expected a JSON object, found {}", kind(&other)),
            )),
        }
    }

    /// Refuses what is left: a key the tool does not take.
    fn done(&self) -> Result<(), ToolError> {
        match self.map.keys().next() {
            Some(key) => Err(self.invalid(key, format!("unknown field `{key}`"))),
            None => Ok(()),
        }
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
