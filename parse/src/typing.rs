//! Typing values written as text by a schema: the JSON kinds an argument may have, and the
//! value a text becomes for them. Every reader types its values here, by one rule:
//!
//! - **With a schema, the declared type decides.** A declared string keeps the text as written
//!   (`count=5`, `True`, `None` in pythonic or Gemma stay text); a declared integer, number or
//!   boolean is read from a quoted value when it parses as one (`'25'`, `<|"|>158348<|"|>`, a
//!   JSON `"12"`); an object or array is read from JSON, from JSON encoded twice, or from a
//!   Python literal. Text that fits none of the declared kinds stays a string, so that
//!   validation reports it against the schema.
//! - **Without one, each syntax's own typing stands**: with no tool list ([`Kinds::JSON`]) a
//!   value written as text is the JSON it spells (or the Python literal), else the text; a
//!   quoted value is a string; JSON is as the model wrote it.
//!
//! The readers of text values (`<parameter=…>`, `<arg_value>`, `<parameter name=…>`, tag
//! groups) call [`typed_value`]; the readers whose syntax tells strings from other values
//! (pythonic, Gemma) call [`typed_written`]; calls read from JSON are typed by
//! [`type_json_arguments`] as the scanner takes them. A tool's schema is looked up once per
//! call ([`ToolTypes`]) and an argument's kinds once per value.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::block::ToolLookup;
pub(crate) use super::formats::pythonic::{TypeArgs, Written};
pub(crate) use tool_registry_json::schema::kinds::Kinds;
pub(crate) use tool_registry_json::schema::kinds::Typing;

/// What a tool set says of one tool's arguments: its schema, looked up once per call.
pub(crate) struct ToolTypes<'t> {
    schema: Option<Cow<'t, Value>>,
    /// No schema, and values are typed by JSON ([`ToolSet::types_by_json`](super::ToolSet::types_by_json)).
    json: bool,
}

impl<'t> ToolTypes<'t> {
    pub(crate) fn of(tools: &'t dyn ToolLookup, tool: &str) -> Self {
        let schema = tools.tool_schema(tool);
        Self {
            json: schema.is_none() && tools.json_typed(),
            schema,
        }
    }

    /// Whether the tool has a schema, whose declared names and types then decide.
    pub(crate) fn has_schema(&self) -> bool {
        self.schema.is_some()
    }

    /// The kinds of every value when the tool has no schema: [`Kinds::JSON`] when values are
    /// typed by JSON, unknown (kept as text) otherwise; unknown when it has one.
    pub(crate) fn without_schema(&self) -> Kinds {
        if self.json {
            Kinds::JSON
        } else {
            Kinds::default()
        }
    }

    /// The tool's schema, when it has one.
    pub(crate) fn schema(&self) -> Option<&Value> {
        self.schema.as_deref()
    }

    /// The kinds of argument `arg`: its schema's, unknown when the schema does not declare it,
    /// [`Kinds::JSON`] when there is no schema and values are typed by JSON.
    pub(crate) fn kinds(&self, arg: &str) -> Kinds {
        match &self.schema {
            Some(schema) => schema_arg_kinds(schema, arg),
            None if self.json => Kinds::JSON,
            None => Kinds::default(),
        }
    }

    /// Whether a parameter named `key`, met inside the value of `current`, starts the next
    /// parameter by the tool's declared names: one the schema declares that the call has not
    /// given yet. A name the tool does not declare belongs to the value it appears in (vLLM's
    /// Qwen3-Coder rule); false without a schema.
    pub(crate) fn starts_next(&self, key: &str, current: &str, given: &Map<String, Value>) -> bool {
        key != current && !given.contains_key(key) && self.declares(key)
    }

    /// Whether the schema declares argument `arg` (in its `properties`, or those of its
    /// `anyOf`/`oneOf`/`allOf` options); false without a schema.
    pub(crate) fn declares(&self, arg: &str) -> bool {
        self.schema
            .as_deref()
            .is_some_and(|root| Typing::new(root).property(root, arg).is_some())
    }
}

/// The kinds of argument `arg` of tool `tool`, from the tool set's schema.
pub(crate) fn arg_kinds(tools: &dyn ToolLookup, tool: &str, arg: &str) -> Kinds {
    ToolTypes::of(tools, tool).kinds(arg)
}

/// The kinds of property `arg` of an object schema (found in its `anyOf`/`oneOf`/`allOf`
/// options too), by the one schema walk and its budget.
pub(crate) fn schema_arg_kinds(root: &Value, arg: &str) -> Kinds {
    let mut typing = Typing::new(root);
    match typing.property(root, arg) {
        Some(property) => typing.kinds(property),
        None => Kinds::default(),
    }
}

/// Turns a value written as text into JSON of the argument's kinds.
///
/// Strings keep the text verbatim except for one surrounding newline on each side (the
/// `<parameter=k>\nvalue\n</parameter>` layout); other kinds are read from the trimmed text.
/// Text that fits none of the kinds stays a string, so that validation reports it against the
/// schema.
pub(crate) fn typed_value(raw: &str, kinds: Kinds) -> Value {
    typed_text(raw, kinds, trim_one_newline(raw))
}

/// [`typed_value`] for a syntax that writes nothing around a value (GLM's
/// `<arg_value>VALUE</arg_value>`): a string is the text exactly, its newlines and all.
pub(crate) fn typed_exact(raw: &str, kinds: Kinds) -> Value {
    typed_text(raw, kinds, raw)
}

/// A value written as text, typed by `kinds`; `string` is the text a string keeps.
fn typed_text(raw: &str, kinds: Kinds, string: &str) -> Value {
    let verbatim = || Value::String(string.to_owned());
    if kinds.is_unknown() {
        return verbatim();
    }
    let t = raw.trim();
    if kinds == Kinds::JSON {
        return tool_registry_json::unique::from_str(t)
            .ok()
            .or_else(|| {
                let python =
                    t.starts_with(['{', '[', '(']) || matches!(t, "True" | "False" | "None");
                python
                    .then(|| super::formats::pythonic::literal(t).ok())
                    .flatten()
            })
            .unwrap_or_else(verbatim);
    }
    read_as(t, kinds).unwrap_or_else(verbatim)
}

/// A value the model wrote as a string (quoted, or a JSON string): kept, unless the declared
/// kinds admit no string and its text reads as one of them (`'25'` for an integer, a Python
/// dict for an object).
pub(crate) fn typed_string(text: String, kinds: Kinds) -> Value {
    if kinds.is_unknown() || kinds.has(Kinds::JSON) || kinds.has(Kinds::STRING) {
        return Value::String(text);
    }
    read_as(text.trim(), kinds).unwrap_or(Value::String(text))
}

/// A value as a pythonic or Gemma call wrote it, typed by the argument's kinds: without them
/// a bare value is what the syntax reads it as (a bare word, the word).
pub(crate) fn typed_written(written: Written<'_>, kinds: Kinds) -> Value {
    match written {
        Written::Bare { text, literal } if kinds.is_unknown() || kinds.has(Kinds::JSON) => {
            literal.unwrap_or_else(|| Value::String(text.to_owned()))
        }
        Written::Bare { text, .. } => typed_value(text, kinds),
        Written::Quoted(text) => typed_string(text, kinds),
        Written::Nested(value) => value,
    }
}

/// Types the arguments of a call read from JSON by the tool's schema: a string where the
/// declared kinds admit none is read as them ([`typed_string`]); every other value stays as
/// the model wrote it.
///
/// Answers `Some(true)` when the tool has a schema (the set holds it, so a caller need not ask
/// again), `Some(false)` when it has none, and `None` when the arguments hold no string and
/// nothing was looked up.
pub(crate) fn type_json_arguments(
    arguments: &mut Value,
    tools: &dyn ToolLookup,
    tool: &str,
) -> Option<bool> {
    let Value::Object(map) = arguments else {
        return None;
    };
    // Only strings can change: a call without any costs no schema lookup.
    if !map.values().any(Value::is_string) {
        return None;
    }
    let types = ToolTypes::of(tools, tool);
    if !types.has_schema() {
        return Some(false);
    }
    type_json_map(map, &types);
    Some(true)
}

fn type_json_map(map: &mut Map<String, Value>, types: &ToolTypes<'_>) {
    for (key, value) in map.iter_mut() {
        if value.is_string() {
            *value = typed_json(std::mem::take(value), types.kinds(key));
        }
    }
}

/// A value written in JSON, typed by the argument's kinds: a string by [`typed_string`], any
/// other value as it is.
pub(crate) fn typed_json(value: Value, kinds: Kinds) -> Value {
    match value {
        Value::String(text) => typed_string(text, kinds),
        value => value,
    }
}

/// The pythonic reader's arguments typed by a tool set: the tool's schema looked up once per
/// call, each value typed by [`typed_written`], and arguments written inside a `properties`
/// object (the schema's shape copied into the call) taken out of it when the tool declares no
/// `properties` argument and declares every key inside.
pub(crate) struct ByTools<'t> {
    tools: &'t dyn ToolLookup,
    types: Option<ToolTypes<'t>>,
}

impl<'t> ByTools<'t> {
    pub(crate) fn new(tools: &'t dyn ToolLookup) -> Self {
        Self { tools, types: None }
    }
}

impl TypeArgs for ByTools<'_> {
    fn call(&mut self, tool: &str) {
        self.types = Some(ToolTypes::of(self.tools, tool));
    }

    fn value(&mut self, key: &str, written: Written<'_>) -> Value {
        let kinds = self
            .types
            .as_ref()
            .map(|t| t.kinds(key))
            .unwrap_or_default();
        typed_written(written, kinds)
    }

    fn done(&mut self, arguments: &mut Map<String, Value>) {
        let Some(types) = self.types.take() else {
            return;
        };
        let wrapped = arguments.len() == 1
            && types.has_schema()
            && matches!(arguments.get("properties"), Some(Value::Object(inner))
                if !inner.is_empty() && inner.keys().all(|k| types.declares(k)))
            && !types.declares("properties");
        if wrapped && let Some(Value::Object(inner)) = arguments.remove("properties") {
            *arguments = inner;
            type_json_map(arguments, &types);
        }
    }
}

/// `t` (trimmed) read as one of `kinds` other than a string: null, an integer, a number, a
/// boolean, or an object or array (from JSON or from a Python literal); a JSON string holding
/// one of them (`"4"`, JSON encoded twice) is read once more. `None` when it reads as none of
/// them.
fn read_as(t: &str, kinds: Kinds) -> Option<Value> {
    read_plain(t, kinds).or_else(|| {
        if !t.starts_with('"') {
            return None;
        }
        match tool_registry_json::unique::from_str(t).ok()? {
            Value::String(inner) => read_plain(inner.trim(), kinds),
            _ => None,
        }
    })
}

fn read_plain(t: &str, kinds: Kinds) -> Option<Value> {
    if kinds.has(Kinds::NULL) && (t == "null" || t == "None") {
        return Some(Value::Null);
    }
    if kinds.has(Kinds::INTEGER)
        && let Some(n) = integer(t)
    {
        return Some(n);
    }
    if kinds.has(Kinds::NUMBER)
        && let Some(n) = number(t)
    {
        return Some(n);
    }
    if kinds.has(Kinds::BOOLEAN) {
        if t.eq_ignore_ascii_case("true") {
            return Some(Value::Bool(true));
        }
        if t.eq_ignore_ascii_case("false") {
            return Some(Value::Bool(false));
        }
    }
    if kinds.has(Kinds::OBJECT) || kinds.has(Kinds::ARRAY) {
        let parsed = tool_registry_json::unique::from_str(t)
            .ok()
            .or_else(|| super::formats::pythonic::literal(t).ok());
        match parsed {
            Some(v @ Value::Object(_)) if kinds.has(Kinds::OBJECT) => return Some(v),
            Some(v @ Value::Array(_)) if kinds.has(Kinds::ARRAY) => return Some(v),
            _ => {}
        }
    }
    None
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
    use proptest::prelude::*;
    use serde_json::json;
    use tool_registry_json::schema::MAX_SCHEMA_NODES;
    use tool_registry_json::testing::{chain, graph, many_definitions, self_referring, visits_of};

    use super::*;

    /// The schema walk's budget, with room for a reader that asks twice.
    const BOUND: usize = 2 * MAX_SCHEMA_NODES;

    #[test]
    fn typing_stays_within_the_walk_budget_on_the_hostile_shapes() {
        let shapes = (1..=10)
            .map(|k| chain(10, k))
            .chain((1..=8).map(self_referring))
            .chain([many_definitions(10_000)]);
        for schema in shapes {
            let (_, visited) = visits_of(|| schema_arg_kinds(&schema, "value"));
            assert!(visited <= BOUND, "typing visited {visited}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn typing_stays_within_the_walk_budget_on_random_graphs(schema in graph()) {
            let (_, visited) = visits_of(|| schema_arg_kinds(&schema, "value"));
            prop_assert!(visited <= BOUND, "typing visited {}", visited);
        }
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
        // No schema at all: JSON, or a Python literal, or the text.
        assert_eq!(typed_value("\n7\n", Kinds::JSON), json!(7));
        assert_eq!(
            typed_value(" {\"a\": [true]} ", Kinds::JSON),
            json!({"a": [true]})
        );
        assert_eq!(typed_value("{'a': None}", Kinds::JSON), json!({"a": null}));
        assert_eq!(typed_value("True", Kinds::JSON), json!(true));
        assert_eq!(typed_value("\nParis\n", Kinds::JSON), json!("Paris"));
        assert_eq!(typed_value("[not json", Kinds::JSON), json!("[not json"));
    }

    #[test]
    fn the_declared_type_decides_for_quoted_and_bare_values() {
        let quoted = |text: &str, kinds| typed_written(Written::Quoted(text.to_owned()), kinds);
        assert_eq!(quoted("25", Kinds::INTEGER), json!(25));
        assert_eq!(quoted("twenty", Kinds::INTEGER), json!("twenty"));
        assert_eq!(quoted(" 0.5", Kinds::NUMBER), json!(0.5));
        assert_eq!(quoted("false", Kinds::BOOLEAN), json!(false));
        assert_eq!(
            quoted("25", Kinds::STRING.union(Kinds::INTEGER)),
            json!("25")
        );
        assert_eq!(quoted("{'k': None}", Kinds::OBJECT), json!({"k": null}));
        assert_eq!(quoted("\"[1]\"", Kinds::ARRAY), json!([1]));
        assert_eq!(quoted("25", Kinds::JSON), json!("25"));
        assert_eq!(quoted("25", Kinds::default()), json!("25"));
        let bare = |text: &'static str, literal: Option<Value>, kinds| {
            typed_written(Written::Bare { text, literal }, kinds)
        };
        assert_eq!(bare("5", Some(json!(5)), Kinds::STRING), json!("5"));
        assert_eq!(
            bare("True", Some(json!(true)), Kinds::STRING),
            json!("True")
        );
        assert_eq!(
            bare("None", Some(json!(null)), Kinds::STRING.union(Kinds::NULL)),
            json!(null)
        );
        assert_eq!(bare("True", Some(json!(true)), Kinds::BOOLEAN), json!(true));
        assert_eq!(bare("fast", None, Kinds::STRING), json!("fast"));
        assert_eq!(bare("007", None, Kinds::JSON), json!("007"));
        assert_eq!(bare("1_000", Some(json!(1000)), Kinds::JSON), json!(1000));
        assert_eq!(bare("3", Some(json!(3)), Kinds::default()), json!(3));
    }

    #[test]
    fn json_strings_are_read_by_the_declared_type() {
        let tools = crate::ToolList::from_json_str(
            r#"[{"name": "f", "parameters": {"type": "object", "properties": {
                "n": {"type": "integer"}, "s": {"type": "string"},
                "o": {"anyOf": [{"type": "object"}, {"type": "null"}]}}}}]"#,
        )
        .unwrap();
        let mut arguments = json!({"n": "12", "s": "12", "o": "{'a': 1}", "x": "7", "m": 3});
        type_json_arguments(&mut arguments, &tools, "f");
        assert_eq!(
            arguments,
            json!({"n": 12, "s": "12", "o": {"a": 1}, "x": "7", "m": 3})
        );
        let mut untyped = json!({"n": "12"});
        type_json_arguments(&mut untyped, &crate::AnyTool, "f");
        assert_eq!(untyped, json!({"n": "12"}));
    }

    #[test]
    fn a_properties_wrapper_is_taken_off_only_for_declared_keys() {
        let tools = crate::ToolList::from_json_str(
            r#"[{"name": "f", "parameters": {"type": "object", "properties": {
                "city": {"type": "string"}, "days": {"type": "integer"}}}}]"#,
        )
        .unwrap();
        let unwrap = |arguments: Value| {
            let Value::Object(mut map) = arguments else {
                unreachable!()
            };
            let mut by_tools = ByTools::new(&tools);
            by_tools.call("f");
            by_tools.done(&mut map);
            Value::Object(map)
        };
        assert_eq!(
            unwrap(json!({"properties": {"city": "Lima", "days": "2"}})),
            json!({"city": "Lima", "days": 2})
        );
        assert_eq!(
            unwrap(json!({"properties": {"town": "Lima"}})),
            json!({"properties": {"town": "Lima"}})
        );
        assert_eq!(
            unwrap(json!({"properties": {"city": "Lima"}, "days": 2})),
            json!({"properties": {"city": "Lima"}, "days": 2})
        );
    }
}
