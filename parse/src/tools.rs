//! What the parser needs to know about the tools: which names exist, and the types of their
//! arguments, so that values written as text become numbers, booleans or objects. Every
//! [`ToolSet`] answers the readers' [`ToolLookup`]; since a set hands out its compiled
//! [`TagSet`], which holds the marker table's automaton, the sets stand above the readers.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::block::ToolLookup;
use super::tag_set::TagSet;

/// The tools a model may call, as the parser sees them.
///
/// Implemented by the registry's `Registry` and `Scoped` (every tool, with its input schema and
/// tag form), by [`ToolList`] (an OpenAI-format tool list, e.g. the `tools` of a request, and
/// optionally a [`TagSet`]), and by slices and arrays of names (known names, no schemas).
pub trait ToolSet {
    /// Whether a tool of this name (or alias) exists.
    fn contains(&self, name: &str) -> bool;

    /// The JSON Schema of the tool's arguments, if known. Values are typed by the types its
    /// `properties` declare (see [the rule](super#types)); without it, values written as text
    /// stay strings, and other values are as their syntax writes them. Borrowed when the set holds it (a copy
    /// only for a run-time tool read through the registry itself, whose schema may be replaced
    /// meanwhile; a registry's scoped view holds one snapshot and borrows from it).
    ///
    /// A name the set does not [contain](Self::contains) has no schema: the parser takes a
    /// schema found as the tool's being known, and asks `contains` only when there is none.
    fn schema(&self, name: &str) -> Option<Cow<'_, Value>>;

    /// The compiled response-tag patterns of the tools that declare a tag: a registry's tools
    /// declared with `#[tool(tag = "...")]`, or the [`TagSet`] given to
    /// [`ToolList::with_tags`]; the default is none.
    fn tags(&self) -> Option<Arc<TagSet>> {
        None
    }

    /// Whether a value written as text for a tool without a schema is read as the JSON it
    /// spells (`3`, `true`, `{"a": 1}`, and Python's `True`, `None`, `{'a': 1}`), rather than
    /// kept as a string. Only [`AnyTool`] says yes: it has no schemas at all.
    fn types_by_json(&self) -> bool {
        false
    }
}

/// No tool list: every name is a tool, and values are typed by JSON alone. Every syntactically
/// valid call is a call, as an inference server's parser without the request's tools reads
/// it; a bare JSON object or array of calls, or a pythonic call list, that is the whole message
/// counts whatever it names.
///
/// ```
/// use tool_registry_parse::{self as parse, AnyTool};
///
/// let output = "<tool_call>\n<function=lookup>\n<parameter=id>\n42\n</parameter>\n</function>\n</tool_call>";
/// let parsed = parse::text(output, &AnyTool);
/// assert_eq!(parsed.calls[0].name, "lookup");
/// assert_eq!(parsed.calls[0].arguments["id"], 42);
///
/// let bare = r#"{"name": "lookup", "arguments": {"id": 7}}"#;
/// assert_eq!(parse::text(bare, &AnyTool).calls[0].arguments["id"], 7);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct AnyTool;

impl ToolSet for AnyTool {
    fn contains(&self, _: &str) -> bool {
        true
    }
    fn schema(&self, _: &str) -> Option<Cow<'_, Value>> {
        None
    }
    fn types_by_json(&self) -> bool {
        true
    }
}

impl<T: ToolSet + ?Sized> ToolSet for &T {
    fn contains(&self, name: &str) -> bool {
        (**self).contains(name)
    }
    fn schema(&self, name: &str) -> Option<Cow<'_, Value>> {
        (**self).schema(name)
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        (**self).tags()
    }
    fn types_by_json(&self) -> bool {
        (**self).types_by_json()
    }
}

impl ToolSet for [&str] {
    fn contains(&self, name: &str) -> bool {
        self.contains(&name)
    }
    fn schema(&self, _: &str) -> Option<Cow<'_, Value>> {
        None
    }
}

impl<const N: usize> ToolSet for [&str; N] {
    fn contains(&self, name: &str) -> bool {
        self.as_slice().contains(&name)
    }
    fn schema(&self, _: &str) -> Option<Cow<'_, Value>> {
        None
    }
}

impl ToolSet for Vec<String> {
    fn contains(&self, name: &str) -> bool {
        self.iter().any(|n| n == name)
    }
    fn schema(&self, _: &str) -> Option<Cow<'_, Value>> {
        None
    }
}

/// An OpenAI-format tool list: which names exist and their parameter schemas.
///
/// Reads the `tools` array of a Chat Completions request (`[{"type": "function", "function":
/// {"name", "parameters"}}]`), a whole request body with a `tools` key, bare function objects
/// (`[{"name", "parameters"}]`), and the Anthropic and MCP shapes (`input_schema`,
/// `inputSchema`).
///
/// ```
/// use tool_registry_parse::{self as parse, ToolList};
///
/// let tools = ToolList::from_json_str(r#"[{"type": "function", "function": {
///     "name": "set_volume",
///     "parameters": {"type": "object", "properties": {"level": {"type": "integer"}}}}}]"#)?;
/// let parsed = parse::text(
///     "<tool_call>\n<function=set_volume>\n<parameter=level>\n7\n</parameter>\n</function>\n</tool_call>",
///     &tools,
/// );
/// assert_eq!(parsed.calls[0].arguments["level"], 7);
/// # Ok::<(), parse::ToolListError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolList {
    names: Vec<String>,
    schemas: FxHashMap<String, Value>,
    tags: Option<Arc<TagSet>>,
}

/// Why a tool list could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolListError {
    message: String,
}

impl fmt::Display for ToolListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ToolListError {}

impl ToolList {
    /// Reads a tool list from JSON text.
    pub fn from_json_str(text: &str) -> Result<Self, ToolListError> {
        let value: Value = serde_json::from_str(text).map_err(|e| ToolListError {
            message: format!(
                "the tool list is not valid JSON ({e}); give an OpenAI-format `tools` array"
            ),
        })?;
        Self::from_json(&value)
    }

    /// Reads a tool list from a JSON value.
    pub fn from_json(value: &Value) -> Result<Self, ToolListError> {
        let items = match value {
            Value::Array(items) => items,
            Value::Object(map) => match map.get("tools").or_else(|| map.get("functions")) {
                Some(Value::Array(items)) => items,
                _ => {
                    return Err(ToolListError {
                        message: "the tool list must be a JSON array of tools, or an object with a `tools` array".into(),
                    });
                }
            },
            _ => {
                return Err(ToolListError {
                    message: "the tool list must be a JSON array of tools, such as [{\"type\": \"function\", \"function\": {\"name\": \"...\", \"parameters\": {...}}}]".into(),
                });
            }
        };
        let mut list = ToolList::default();
        for (i, item) in items.iter().enumerate() {
            let function = item
                .get("function")
                .filter(|f| f.is_object())
                .unwrap_or(item);
            let Some(name) = function.get("name").and_then(Value::as_str) else {
                return Err(ToolListError {
                    message: format!(
                        "tool {i} of the list has no `name`; each tool needs {{\"type\": \"function\", \"function\": {{\"name\": \"...\"}}}}"
                    ),
                });
            };
            let schema = ["parameters", "input_schema", "inputSchema"]
                .iter()
                .find_map(|key| function.get(*key))
                .cloned()
                .unwrap_or(Value::Null);
            list.add(name, schema);
        }
        Ok(list)
    }

    /// Adds a tool with its parameter schema (`Value::Null` when there is none).
    pub fn add(&mut self, name: impl Into<String>, schema: Value) {
        let name = name.into();
        if !self.schemas.contains_key(&name) {
            self.names.push(name.clone());
        }
        self.schemas.insert(name, schema);
    }

    /// The tools' names, in list order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// With response tags: `TAG: argument` lines become calls of the tools `tags` names (see
    /// [`TagSet::new`]), which the list then contains.
    #[must_use]
    pub fn with_tags(mut self, tags: TagSet) -> Self {
        self.tags = Some(Arc::new(tags));
        self
    }
}

impl ToolSet for ToolList {
    fn contains(&self, name: &str) -> bool {
        self.schemas.contains_key(name) || self.tags.as_ref().is_some_and(|tags| tags.calls(name))
    }
    fn schema(&self, name: &str) -> Option<Cow<'_, Value>> {
        self.schemas
            .get(name)
            .filter(|s| !s.is_null())
            .map(Cow::Borrowed)
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        self.tags.clone()
    }
}

/// What the readers ask of a tool set, answered by it.
impl<T: ToolSet + ?Sized> ToolLookup for T {
    fn is_tool(&self, name: &str) -> bool {
        self.contains(name)
    }
    fn tool_schema(&self, name: &str) -> Option<Cow<'_, Value>> {
        self.schema(name)
    }
    fn json_typed(&self) -> bool {
        self.types_by_json()
    }
}
