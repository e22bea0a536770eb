//! Arguments written as child elements named by the key, MiniMax M3's form:
//!
//! ```text
//! <query>weather</query>
//! <limit>3</limit>
//! <reminder><minutes>15</minutes><channel>email</channel></reminder>
//! <attendees><item>mei</item><item>tom</item></attendees>
//! ```
//!
//! M3's chat template (<https://huggingface.co/MiniMaxAI/MiniMax-M3/blob/main/chat_template.jinja>,
//! its `to_xml` macro) writes a mapping as one child per key, a list as `<item>` children, a
//! boolean as JSON and any other scalar as it is, escaping nothing; in M3's own output every
//! start and end tag follows the namespace token `]<]minimax[>[`. A leaf is typed like the other
//! XML families' values ([`typed_value`]): by its schema (the property's, or the items' of an
//! array) with a tool list, JSON-first without one. A value whose schema admits only a string
//! is its text as written, tags and all; any other value that is nothing but child elements is
//! an array when every child is an `<item>` (and the schema does not want an object), else an
//! object.

use serde_json::{Map, Value};

use crate::typing::{Kinds, Typing, typed_value};
use crate::vocab::MAX_DEPTH;
use tool_registry_json::unique;

/// The longest element name read.
const MAX_NAME: usize = 256;

/// Reads child elements with one namespace token before each tag, typed by one tool's schema.
pub(crate) struct Elements<'r> {
    ns: &'static str,
    /// The tool's schema and the walk over it; `None` without one.
    schema: Option<(&'r Value, Typing<'r>)>,
    /// The kinds of every value without a schema: [`Kinds::JSON`] when values are typed by
    /// JSON, unknown (kept as text) otherwise.
    bare: Kinds,
}

impl<'r> Elements<'r> {
    /// A reader of elements whose tags follow `ns`, typed by `schema` or else by `bare`.
    pub(crate) fn new(ns: &'static str, schema: Option<&'r Value>, bare: Kinds) -> Self {
        Self {
            ns,
            schema: schema.map(|root| (root, Typing::new(root))),
            bare,
        }
    }

    /// Whether `text` (an invoke's inside) begins with a child element's start tag.
    pub(crate) fn begins(&self, text: &str) -> bool {
        text.trim_start()
            .strip_prefix(self.ns)
            .and_then(|t| t.strip_prefix('<'))
            .is_some_and(|t| !t.starts_with(['/', '>']))
    }

    /// The arguments in `text`: one child element per key. `Err` with what is wrong when the
    /// text is not a run of elements, or a key comes twice.
    pub(crate) fn arguments(&mut self, text: &str) -> Result<Map<String, Value>, String> {
        let children = children(text, self.ns).ok_or_else(|| {
            format!(
                "the arguments are not written as {0}<KEY>VALUE{0}</KEY> elements",
                self.ns
            )
        })?;
        let root = self.schema.as_ref().map(|(root, _)| *root);
        let mut arguments = Map::new();
        for (key, content) in children {
            let schema = root.and_then(|root| self.property(root, key));
            let value = self.value(content, root.map(|_| schema), 1);
            unique::insert(&mut arguments, key.to_owned(), value)
                .map_err(|repeated| format!("{repeated}; give each parameter once"))?;
        }
        Ok(arguments)
    }

    /// One element's content typed by `schema`: `None` without a tool schema, `Some(None)`
    /// for a value the schema does not declare. `depth` is its level below the arguments'
    /// object (an argument's is 1): at [`MAX_DEPTH`], a list or an object would be one level
    /// too deep, so the content is kept as text.
    fn value(&mut self, content: &str, schema: Option<Option<&'r Value>>, depth: usize) -> Value {
        let kinds = match schema {
            None => self.bare,
            Some(None) => Kinds::default(),
            Some(Some(schema)) => self.kinds(schema),
        };
        let text_only = kinds.has(Kinds::STRING)
            && !kinds.has(Kinds::OBJECT)
            && !kinds.has(Kinds::ARRAY)
            && !kinds.has(Kinds::JSON);
        if text_only || depth >= MAX_DEPTH {
            return typed_value(content, kinds);
        }
        let wants = |k| kinds.has(k) && !kinds.has(Kinds::STRING);
        if content.trim().is_empty() {
            if wants(Kinds::ARRAY) {
                return Value::Array(Vec::new());
            }
            if wants(Kinds::OBJECT) {
                return Value::Object(Map::new());
            }
            return typed_value(content, kinds);
        }
        if !self.begins(content) {
            return typed_value(content, kinds);
        }
        let Some(children) = children(content, self.ns) else {
            return typed_value(content, kinds);
        };
        let object_only = kinds.has(Kinds::OBJECT) && !kinds.has(Kinds::ARRAY);
        if !object_only && children.iter().all(|(name, _)| *name == "item") {
            let items = schema.map(|s| s.and_then(|s| self.items(s)));
            return Value::Array(
                children
                    .into_iter()
                    .map(|(_, content)| self.value(content, items, depth + 1))
                    .collect(),
            );
        }
        let mut object = Map::new();
        for (key, content) in children {
            let property = schema.map(|s| s.and_then(|s| self.property(s, key)));
            let value = self.value(content, property, depth + 1);
            if unique::insert(&mut object, key.to_owned(), value).is_err() {
                // A key twice inside a value: the value is kept as written, for validation to
                // report.
                return typed_value(content, Kinds::default());
            }
        }
        Value::Object(object)
    }

    fn kinds(&mut self, schema: &'r Value) -> Kinds {
        self.schema
            .as_mut()
            .map_or(Kinds::default(), |(_, typing)| typing.kinds(schema))
    }

    fn property(&mut self, schema: &'r Value, key: &str) -> Option<&'r Value> {
        let (_, typing) = self.schema.as_mut()?;
        typing.property(schema, key)
    }

    fn items(&mut self, schema: &'r Value) -> Option<&'r Value> {
        let (_, typing) = self.schema.as_mut()?;
        typing.items(schema)
    }
}

/// The child elements `text` is made of, each as its name and content, with only whitespace
/// between them; `None` when it is anything else. An element's end tag is the one that
/// balances the start tags of the same name inside it.
fn children<'t>(text: &'t str, ns: &str) -> Option<Vec<(&'t str, &'t str)>> {
    let mut children = Vec::new();
    let mut rest = text.trim_start();
    while !rest.is_empty() {
        let after = rest.strip_prefix(ns)?.strip_prefix('<')?;
        let close = memchr::memchr(b'>', &after.as_bytes()[..after.len().min(MAX_NAME + 1)])?;
        let name = &after[..close];
        if name.is_empty() || name.starts_with('/') || name.contains(['<', ' ', '\n', '\t']) {
            return None;
        }
        let content = &after[close + 1..];
        let (len, next) = balanced_end(content, ns, name)?;
        children.push((name, &content[..len]));
        rest = content[next..].trim_start();
    }
    Some(children)
}

/// Where the content of element `name` ends (its end tag) and where reading goes on after
/// that tag, counting start tags of the same name inside it.
fn balanced_end(content: &str, ns: &str, name: &str) -> Option<(usize, usize)> {
    let tag = |end: bool| {
        let mut tag = String::with_capacity(ns.len() + name.len() + 3);
        tag.push_str(ns);
        tag.push_str(if end { "</" } else { "<" });
        tag.push_str(name);
        tag.push('>');
        tag
    };
    let (start, end) = (tag(false), tag(true));
    let finder = memchr::memmem::Finder::new(end.as_bytes());
    let mut depth = 0usize;
    let mut from = 0;
    loop {
        let at = from + finder.find(&content.as_bytes()[from..])?;
        depth += memchr::memmem::find_iter(&content.as_bytes()[from..at], start.as_bytes()).count();
        if depth == 0 {
            return Some((at, at + end.len()));
        }
        depth -= 1;
        from = at + end.len();
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn nested_elements_balance_by_name() {
        let text = "<a><a>1</a></a><b>2</b>";
        assert_eq!(
            children(text, ""),
            Some(vec![("a", "<a>1</a>"), ("b", "2")])
        );
        assert_eq!(children("<a>1</a> junk", ""), None);
        assert_eq!(children("<a>1", ""), None);
    }

    #[test]
    fn a_schema_decides_text_arrays_and_objects() {
        let schema = json!({"type": "object", "properties": {
            "html": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "opts": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "none": {"type": "array"}
        }});
        let mut reader = Elements::new("", Some(&schema), Kinds::JSON);
        let read = reader
            .arguments("<html><b>x</b></html><tags><item>1</item></tags><opts><item>4</item></opts><none></none>")
            .unwrap();
        assert_eq!(
            Value::Object(read),
            json!({"html": "<b>x</b>", "tags": ["1"], "opts": {"item": "4"}, "none": []})
        );
        let mut bare = Elements::new("", None, Kinds::JSON);
        assert_eq!(
            Value::Object(
                bare.arguments("<tags><item>1</item></tags><n>2</n>")
                    .unwrap()
            ),
            json!({"tags": [1], "n": 2})
        );
        assert!(bare.arguments("<n>1</n><n>2</n>").is_err());
    }

    /// Elements nest [`MAX_DEPTH`] levels, the arguments' object the first; below that, an
    /// element's content is kept as text.
    #[test]
    fn deep_nesting_stops_at_the_bound() {
        // `levels` elements inside one another: the arguments and `levels - 1` objects.
        let read = |levels: usize| {
            let text = format!("{}x{}", "<a>".repeat(levels), "</a>".repeat(levels));
            let mut reader = Elements::new("", None, Kinds::JSON);
            let mut value = Value::Object(reader.arguments(&text).unwrap());
            let mut objects = 0;
            while let Some(inner) = value.get_mut("a") {
                value = inner.take();
                objects += 1;
            }
            (objects, value)
        };
        assert_eq!(read(MAX_DEPTH), (MAX_DEPTH, Value::from("x")));
        assert_eq!(read(MAX_DEPTH + 1), (MAX_DEPTH, Value::from("<a>x</a>")));
    }
}
