//! What the parser needs to know about the tools: which names exist, and the types of their
//! arguments, so that values written as text become numbers, booleans or objects.

use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::tags::TagSet;
use crate::{Registry, Scope};

/// The tools a model may call, as the parser sees them.
///
/// Implemented by [`Registry`] (every tool, with its input schema and tag form), by
/// [`ToolList`] (an OpenAI-format tool list, e.g. the `tools` of a request), and by slices and
/// arrays of names (known names, no schemas).
pub trait ToolSet {
    /// Whether a tool of this name (or alias) exists.
    fn contains(&self, name: &str) -> bool;

    /// The JSON Schema of the tool's arguments, if known. Values written as text are typed by
    /// its `properties`; without it they stay strings.
    fn schema(&self, name: &str) -> Option<&Value>;

    /// The compiled response-tag patterns of the tools that declare a tag. Only a
    /// [`Registry`] has tag forms; the default is none.
    fn tags(&self) -> Option<Arc<TagSet>> {
        None
    }
}

impl<T: ToolSet + ?Sized> ToolSet for &T {
    fn contains(&self, name: &str) -> bool {
        (**self).contains(name)
    }
    fn schema(&self, name: &str) -> Option<&Value> {
        (**self).schema(name)
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        (**self).tags()
    }
}

/// Every tool of the registry, whatever the scope: for the application itself. Parse what a
/// user's model wrote with [`Registry::scoped`] instead, so that a tool the user may not see
/// reads exactly as an unknown one.
impl ToolSet for Registry {
    fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    fn schema(&self, name: &str) -> Option<&Value> {
        self.input_schema(name).map(schemars::Schema::as_value)
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        super::tags::for_registry(self, |_| true)
    }
}

/// The tools of a registry that one [`Scope`] may see and run, as the parser sees them: a
/// hidden tool's name is unknown, its schema is not used, its tag line is plain text. Made by
/// [`Registry::scoped`].
///
/// ```
/// use tool_registry::{Registry, Scope, parse};
///
/// # #[tool_registry::tool(name = "ops.restart", permission = "admin")]
/// # /// Restart the service.
/// # fn restart() -> &'static str { "ok" }
/// let registry = Registry::global();
/// let output = r#"<tool_call>{"name": "ops.restart", "arguments": {}}</tool_call>"#;
/// let as_guest = parse::any(output, &registry.scoped(&Scope::guest()));
/// assert!(as_guest.calls.is_empty() && as_guest.unknown.len() == 1);
/// let as_owner = parse::any(output, &registry.scoped(&Scope::trusted()));
/// assert_eq!(as_owner.calls[0].name, "ops.restart");
/// ```
#[derive(Clone, Copy)]
pub struct Scoped<'r> {
    registry: &'r Registry,
    scope: &'r Scope,
}

impl Registry {
    /// This registry's tools as `scope` sees them, for the parser (see [`Scoped`]).
    pub fn scoped<'r>(&'r self, scope: &'r Scope) -> Scoped<'r> {
        Scoped {
            registry: self,
            scope,
        }
    }
}

impl ToolSet for Scoped<'_> {
    fn contains(&self, name: &str) -> bool {
        self.registry.get_for(name, self.scope).is_some()
    }
    fn schema(&self, name: &str) -> Option<&Value> {
        let def = self.registry.get_for(name, self.scope)?;
        self.registry
            .input_schema(def.name())
            .map(schemars::Schema::as_value)
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        super::tags::for_registry(self.registry, |def| {
            self.registry.get_for(def.name(), self.scope).is_some()
        })
    }
}

impl fmt::Debug for Scoped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scoped").field("scope", self.scope).finish()
    }
}

impl ToolSet for [&str] {
    fn contains(&self, name: &str) -> bool {
        self.contains(&name)
    }
    fn schema(&self, _: &str) -> Option<&Value> {
        None
    }
}

impl<const N: usize> ToolSet for [&str; N] {
    fn contains(&self, name: &str) -> bool {
        self.as_slice().contains(&name)
    }
    fn schema(&self, _: &str) -> Option<&Value> {
        None
    }
}

impl ToolSet for Vec<String> {
    fn contains(&self, name: &str) -> bool {
        self.iter().any(|n| n == name)
    }
    fn schema(&self, _: &str) -> Option<&Value> {
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
/// use tool_registry::parse::{self, ToolList};
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
}

impl ToolSet for ToolList {
    fn contains(&self, name: &str) -> bool {
        self.schemas.contains_key(name)
    }
    fn schema(&self, name: &str) -> Option<&Value> {
        self.schemas.get(name).filter(|s| !s.is_null())
    }
}

/// The JSON types an argument may have, from its schema. Empty means "not known".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Kinds(u8);

impl Kinds {
    pub(crate) const STRING: Kinds = Kinds(1);
    pub(crate) const INTEGER: Kinds = Kinds(2);
    pub(crate) const NUMBER: Kinds = Kinds(4);
    pub(crate) const BOOLEAN: Kinds = Kinds(8);
    pub(crate) const NULL: Kinds = Kinds(16);
    pub(crate) const OBJECT: Kinds = Kinds(32);
    pub(crate) const ARRAY: Kinds = Kinds(64);

    pub(crate) fn has(self, other: Kinds) -> bool {
        self.0 & other.0 != 0
    }
    fn union(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }
    pub(crate) fn is_unknown(self) -> bool {
        self.0 == 0
    }
}

/// The kinds of argument `arg` of tool `tool`, from the tool set's schema.
pub(crate) fn arg_kinds(tools: &dyn ToolSet, tool: &str, arg: &str) -> Kinds {
    match tools.schema(tool) {
        Some(schema) => schema_arg_kinds(schema, arg),
        None => Kinds::default(),
    }
}

/// The kinds of property `arg` of an object schema.
pub(crate) fn schema_arg_kinds(root: &Value, arg: &str) -> Kinds {
    let object = resolve(root, root, 0);
    let property = object
        .and_then(|o| o.get("properties"))
        .and_then(|p| p.get(arg))
        .or_else(|| {
            // `allOf` / `anyOf` of objects: look in each branch.
            ["allOf", "anyOf", "oneOf"].iter().find_map(|key| {
                object?
                    .get(*key)?
                    .as_array()?
                    .iter()
                    .find_map(|branch| resolve(branch, root, 0)?.get("properties")?.get(arg))
            })
        });
    match property {
        Some(p) => kinds_of(p, root, 0),
        None => Kinds::default(),
    }
}

fn resolve<'a>(node: &'a Value, root: &'a Value, depth: u32) -> Option<&'a Value> {
    if depth > 16 {
        return None;
    }
    match node.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let path = reference.strip_prefix("#/")?;
            let mut target = root;
            for part in path.split('/') {
                target = target.get(part.replace("~1", "/").replace("~0", "~"))?;
            }
            resolve(target, root, depth + 1)
        }
        None => Some(node),
    }
}

fn kinds_of(node: &Value, root: &Value, depth: u32) -> Kinds {
    let Some(node) = resolve(node, root, depth) else {
        return Kinds::default();
    };
    if depth > 16 {
        return Kinds::default();
    }
    let mut kinds = Kinds::default();
    match node.get("type") {
        Some(Value::String(t)) => kinds = kinds.union(kind_named(t)),
        Some(Value::Array(types)) => {
            for t in types.iter().filter_map(Value::as_str) {
                kinds = kinds.union(kind_named(t));
            }
        }
        _ => {}
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(branches) = node.get(key).and_then(Value::as_array) {
            for branch in branches {
                kinds = kinds.union(kinds_of(branch, root, depth + 1));
            }
        }
    }
    if kinds.is_unknown() {
        let values = node
            .get("enum")
            .and_then(Value::as_array)
            .map(|v| v.as_slice())
            .or_else(|| node.get("const").map(std::slice::from_ref))
            .unwrap_or(&[]);
        for value in values {
            kinds = kinds.union(kind_of_value(value));
        }
    }
    kinds
}

fn kind_named(name: &str) -> Kinds {
    match name {
        "string" | "str" | "text" => Kinds::STRING,
        "integer" | "int" => Kinds::INTEGER,
        "number" | "float" | "double" => Kinds::NUMBER,
        "boolean" | "bool" => Kinds::BOOLEAN,
        "null" => Kinds::NULL,
        "object" | "dict" => Kinds::OBJECT,
        "array" | "list" | "tuple" => Kinds::ARRAY,
        _ => Kinds::default(),
    }
}

fn kind_of_value(value: &Value) -> Kinds {
    match value {
        Value::Null => Kinds::NULL,
        Value::Bool(_) => Kinds::BOOLEAN,
        Value::Number(n) if n.is_f64() => Kinds::NUMBER,
        Value::Number(_) => Kinds::INTEGER,
        Value::String(_) => Kinds::STRING,
        Value::Array(_) => Kinds::ARRAY,
        Value::Object(_) => Kinds::OBJECT,
    }
}

/// Turns a value written as text into JSON of the argument's kinds.
///
/// Strings keep the text verbatim except for one surrounding newline on each side (the
/// `<parameter=k>\nvalue\n</parameter>` layout); other kinds are read from the trimmed text.
/// Text that fits none of the kinds stays a string, so that validation reports it against the
/// schema.
pub(crate) fn typed_value(raw: &str, kinds: Kinds) -> Value {
    let verbatim = || Value::String(trim_one_newline(raw).to_owned());
    if kinds.is_unknown() {
        return verbatim();
    }
    let t = raw.trim();
    if kinds.has(Kinds::NULL) && (t == "null" || t == "None") {
        return Value::Null;
    }
    if kinds.has(Kinds::INTEGER)
        && let Some(n) = integer(t)
    {
        return n;
    }
    if kinds.has(Kinds::NUMBER)
        && let Some(n) = number(t)
    {
        return n;
    }
    if kinds.has(Kinds::BOOLEAN) {
        if t.eq_ignore_ascii_case("true") {
            return Value::Bool(true);
        }
        if t.eq_ignore_ascii_case("false") {
            return Value::Bool(false);
        }
    }
    if kinds.has(Kinds::OBJECT) || kinds.has(Kinds::ARRAY) {
        let parsed = serde_json::from_str::<Value>(t)
            .ok()
            .or_else(|| super::pythonic::literal(t).ok());
        match parsed {
            Some(v @ Value::Object(_)) if kinds.has(Kinds::OBJECT) => return v,
            Some(v @ Value::Array(_)) if kinds.has(Kinds::ARRAY) => return v,
            _ => {}
        }
    }
    verbatim()
}

fn integer(t: &str) -> Option<Value> {
    if let Ok(i) = t.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = t.parse::<u64>() {
        return Some(Value::from(u));
    }
    // `3.0` for an integer: the model wrote a whole number as a float.
    let f = t.parse::<f64>().ok()?;
    (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
}

fn number(t: &str) -> Option<Value> {
    if let Ok(n) = serde_json::from_str::<serde_json::Number>(t) {
        return Some(Value::Number(n));
    }
    let f = t.parse::<f64>().ok().filter(|f| f.is_finite())?;
    serde_json::Number::from_f64(f).map(Value::Number)
}

/// `raw` without one leading and one trailing newline (`\n` or `\r\n`).
pub(crate) fn trim_one_newline(raw: &str) -> &str {
    let s = raw
        .strip_prefix("\r\n")
        .or_else(|| raw.strip_prefix('\n'))
        .unwrap_or(raw);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kinds_follow_refs_unions_and_enums() {
        let schema = json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer"},
                "maybe": {"type": ["number", "null"]},
                "cat": {"$ref": "#/$defs/Cat"},
                "any": {"anyOf": [{"type": "boolean"}, {"type": "string"}]},
                "free": {}
            },
            "$defs": {"Cat": {"enum": ["a", "b"]}}
        });
        assert_eq!(schema_arg_kinds(&schema, "n"), Kinds::INTEGER);
        assert!(schema_arg_kinds(&schema, "maybe").has(Kinds::NULL));
        assert_eq!(schema_arg_kinds(&schema, "cat"), Kinds::STRING);
        assert!(schema_arg_kinds(&schema, "any").has(Kinds::BOOLEAN));
        assert!(schema_arg_kinds(&schema, "free").is_unknown());
        assert!(schema_arg_kinds(&schema, "missing").is_unknown());
    }

    #[test]
    fn values_are_typed_by_kind() {
        assert_eq!(typed_value("\n42\n", Kinds::INTEGER), json!(42));
        assert_eq!(typed_value("3.0", Kinds::INTEGER), json!(3));
        assert_eq!(typed_value("2.5", Kinds::NUMBER), json!(2.5));
        assert_eq!(typed_value(" True ", Kinds::BOOLEAN), json!(true));
        assert_eq!(
            typed_value("null", Kinds::STRING.union(Kinds::NULL)),
            json!(null)
        );
        assert_eq!(typed_value("null", Kinds::STRING), json!("null"));
        assert_eq!(
            typed_value("{'a': [1, None]}", Kinds::OBJECT),
            json!({"a": [1, null]})
        );
        assert_eq!(
            typed_value("\n\nline\n\n", Kinds::STRING),
            json!("\nline\n")
        );
        assert_eq!(typed_value("five", Kinds::INTEGER), json!("five"));
        assert_eq!(typed_value("\n7\n", Kinds::default()), json!("7"));
    }
}
