//! The one walk over a JSON Schema that every reader of schemas takes: the provider transforms
//! (Gemini's inlining, strict mode), lenient decoding, the unknown-field check, the parser's
//! typing, and the check a run-time spec passes when it is built.
//!
//! A schema is a graph, not a tree: a `$ref` may point at a definition that many places share,
//! or that refers to itself, so a reader that follows every `$ref` as if it were a copy does
//! exponential work on a document of a kilobyte (ten definitions, each an `anyOf` of four
//! `$ref`s to the next, stand for 4^10 paths). Here:
//!
//! - a local `$ref` (`#/...`, a JSON Pointer into the root) is one lookup, and a chain of
//!   `$ref`s that leads back to itself is found ([`Walk::resolve`]);
//! - what a reader computes for a `$ref` target is kept for the rest of the walk ([`Memo`]), so
//!   a definition shared by many places is expanded once, and a target met again while it is
//!   being expanded is a circle (a recursive type) that the reader decides about;
//! - every walk spends a budget: at most [`MAX_SCHEMA_NODES`] schemas visited (and, for a
//!   transform, written), at most [`MAX_WALK_DEPTH`] levels deep counting through `$ref`s. Past
//!   either, it stops with a [`Stop`] that names the place.
//!
//! A run-time spec is measured once, when it is built ([`measure`]): a schema whose document has
//! more than [`MAX_SCHEMA_NODES`] schemas, or that nests more than [`MAX_WALK_DEPTH`] levels once
//! its `$ref`s are followed, is refused then, so no listing or call ever meets its budget.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Walk`], [`Memo`], [`Stop`], the budget, the applicator keywords and [`children`] |
//! | `kinds.rs` | the JSON types a schema admits, through `$ref`s and `anyOf`/`oneOf`/`allOf` |
//! | `cost.rs` | what validating one value against a schema can cost |
//! | `measure.rs` | [`measure`]: the check a run-time spec's schema passes when it is built |

mod cost;
pub mod kinds;
mod measure;

pub use measure::measure;

use std::collections::HashMap;
use std::fmt;

use serde_json::Value;

/// The most schemas one walk visits, and the most a transform writes: 10,000. A run-time tool
/// whose schema has more is refused when its spec is built; a Gemini definition that would take
/// more once its `$ref`s are inlined is given as `parametersJsonSchema` instead.
pub const MAX_SCHEMA_NODES: usize = 10_000;

/// The most levels of schemas one walk goes down, each `$ref` followed counting as a level: 64.
/// A run-time tool whose schema goes deeper once its `$ref`s are followed is refused when its
/// spec is built.
pub const MAX_WALK_DEPTH: usize = 64;

/// The most `$ref`s followed in a row (`{"$ref": ...}` whose target is another `$ref`).
const MAX_REF_HOPS: usize = 64;

/// Keywords whose value is one schema.
pub const ONE: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];

/// Keywords whose value maps names to schemas.
pub const NAMED: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a list of schemas (`items` too, in drafts before 2020-12).
pub const LISTED: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems", "items"];

/// Keywords that hold definitions: reached through a `$ref`, not part of the value's shape.
const DEFINITIONS: &[&str] = &["$defs", "definitions"];

/// The schemas directly inside `schema` (through the applicator keywords of JSON Schema
/// 2020-12, and `definitions`), each with the JSON Pointer segments that lead to it.
#[inline]
pub fn children(schema: &Value) -> impl Iterator<Item = (&str, Option<Segment<'_>>, &Value)> {
    let map = schema.as_object();
    map.into_iter().flatten().flat_map(|(key, value)| {
        let key = key.as_str();
        let one = (ONE.contains(&key) && value.is_object()).then_some((key, None, value));
        let named = value
            .as_object()
            .filter(|_| NAMED.contains(&key))
            .into_iter()
            .flatten()
            .map(move |(name, member)| (key, Some(Segment::Name(name)), member));
        let listed = value
            .as_array()
            .filter(|_| LISTED.contains(&key))
            .into_iter()
            .flatten()
            .enumerate()
            .map(move |(i, item)| (key, Some(Segment::Index(i)), item));
        one.into_iter().chain(named).chain(listed)
    })
}

/// The second segment of a child's place: a property (or definition) name, or a list index.
#[derive(Debug, Clone, Copy)]
pub enum Segment<'a> {
    Name(&'a str),
    Index(usize),
}

/// `path` with a child's segments appended, as a JSON Pointer.
#[inline]
pub fn child_path(path: &str, key: &str, segment: Option<Segment<'_>>) -> String {
    let mut out = format!("{path}/{}", escape(key));
    match segment {
        Some(Segment::Name(name)) => {
            out.push('/');
            out.push_str(&escape(name));
        }
        Some(Segment::Index(i)) => out.push_str(&format!("/{i}")),
        None => {}
    }
    out
}

/// A key as a JSON Pointer segment.
#[inline]
pub fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

impl Why {
    /// What to do about it, for a spec's author.
    #[inline]
    pub fn remedy(&self) -> &'static str {
        match self {
            Self::Spent => "split the tool, or share repeated parts through definitions",
            Self::TooDeep => "flatten it: fewer levels of objects inside objects",
            Self::Nowhere(_) => "point the `$ref` at a definition in `$defs`",
            Self::Circle(_) | Self::Loop(_) => {
                "remove the option that refers back, or put the reference inside a property or \
                 `items`"
            }
            Self::Costly => {
                "give fewer options per level, or options that do not share the same definitions"
            }
        }
    }
}

/// Why a walk stopped, and where (a JSON Pointer into the schema; empty when the place is not
/// tracked).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub path: String,
    pub why: Why,
}

/// What stopped a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// More than [`MAX_SCHEMA_NODES`] schemas.
    Spent,
    /// More than [`MAX_WALK_DEPTH`] levels.
    TooDeep,
    /// A `$ref` that names nothing in the schema.
    Nowhere(String),
    /// A chain of `$ref`s (or a definition) that leads back to itself.
    Circle(String),
    /// A `$ref` through which a schema applies itself to the same value (an option that is
    /// the schema again), which never decides.
    Loop(String),
    /// Validating one value could apply more than [`MAX_SCHEMA_NODES`] schemas at one place.
    Costly,
}

impl Stop {
    #[inline]
    pub fn at(path: impl Into<String>, why: Why) -> Self {
        Self {
            path: path.into(),
            why,
        }
    }
}

impl fmt::Display for Why {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Spent => write!(
                f,
                "more than {MAX_SCHEMA_NODES} schemas once its `$ref`s are followed"
            ),
            Self::TooDeep => write!(
                f,
                "schemas nested more than {MAX_WALK_DEPTH} levels deep once its `$ref`s are followed"
            ),
            Self::Nowhere(reference) => write!(f, "`{reference}` points nowhere in the schema"),
            Self::Circle(reference) => {
                write!(f, "`{reference}` refers to itself (a recursive type)")
            }
            Self::Loop(reference) => write!(
                f,
                "`{reference}` applies the schema to the same value again (an option that is \
                 the schema itself), which never decides"
            ),
            Self::Costly => write!(
                f,
                "validating one value could apply more than {MAX_SCHEMA_NODES} schemas at one \
                 place in it (options that share definitions multiply)"
            ),
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.why)
        } else {
            write!(f, "at `{}`, {}", self.path, self.why)
        }
    }
}

/// One walk over the schema `root`: its `$ref`s and its budget.
pub struct Walk<'r> {
    root: &'r Value,
    /// Schemas this walk may still visit.
    pub left: usize,
}

impl<'r> Walk<'r> {
    /// A walk over `root` with the whole budget.
    #[inline]
    pub fn new(root: &'r Value) -> Self {
        Self::with_budget(root, MAX_SCHEMA_NODES)
    }

    /// A walk over `root` that visits at most `budget` schemas.
    #[inline]
    pub fn with_budget(root: &'r Value, budget: usize) -> Self {
        Self { root, left: budget }
    }

    /// Counts one schema visited; `Err` once the budget is spent.
    #[inline]
    pub fn visit(&mut self) -> Result<(), Why> {
        self.spend(1)
    }

    /// Counts `n` schemas (a copy of a part already written); `Err` once the budget is spent.
    #[inline]
    pub fn spend(&mut self, n: usize) -> Result<(), Why> {
        #[cfg(any(test, feature = "testing"))]
        crate::testing::count(n);
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                self.left = 0;
                Err(Why::Spent)
            }
        }
    }

    /// The schema the local `$ref` `reference` names, if any.
    #[inline]
    pub fn target(&self, reference: &str) -> Option<&'r Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(pointer)
    }

    /// `schema` with its `$ref`s followed until one is not a `$ref` (each hop counted).
    #[inline]
    pub fn resolve(&mut self, mut schema: &'r Value) -> Result<&'r Value, Why> {
        for _ in 0..MAX_REF_HOPS {
            let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
                return Ok(schema);
            };
            self.visit()?;
            schema = self
                .target(reference)
                .ok_or_else(|| Why::Nowhere(reference.to_owned()))?;
        }
        let reference = schema.get("$ref").and_then(Value::as_str).unwrap_or("");
        Err(Why::Circle(reference.to_owned()))
    }
}

/// What a reader computed for each `$ref` target it met in one walk (keyed by the target's
/// place in memory: the root is borrowed for the walk, so it does not move).
pub struct Memo<T> {
    slots: HashMap<usize, Slot<T>>,
}

/// A target's state in a [`Memo`].
pub enum Slot<T> {
    /// Being computed: meeting it again is a circle.
    Open,
    /// Computed.
    Done(T),
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Self {
            slots: HashMap::new(),
        }
    }
}

impl<T> Memo<T> {
    /// Whether nothing was kept yet (a lookup would find nothing).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The state of `target`: `None` when it was never met.
    #[inline]
    pub fn get(&self, target: &Value) -> Option<&Slot<T>> {
        self.slots.get(&key(target))
    }

    /// Marks `target` as being computed.
    #[inline]
    pub fn open(&mut self, target: &Value) {
        self.slots.insert(key(target), Slot::Open);
    }

    /// Keeps what was computed for `target`.
    #[inline]
    pub fn close(&mut self, target: &Value, value: T) {
        self.slots.insert(key(target), Slot::Done(value));
    }
}

fn key(target: &Value) -> usize {
    std::ptr::from_ref(target) as usize
}

#[cfg(test)]
mod tests;
