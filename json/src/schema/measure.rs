//! The check a run-time spec's schema passes when it is built: the document's size, its depth
//! once `$ref`s are followed, and what validating a value against it can cost.

use serde_json::Value;

use super::cost;
use super::{DEFINITIONS, MAX_WALK_DEPTH, Memo, Slot, Stop, Walk, Why, child_path, children};

/// Checks that every walk over `schema` fits the budget: at most [`MAX_SCHEMA_NODES`](super::MAX_SCHEMA_NODES) schemas in
/// the document, at most [`MAX_WALK_DEPTH`] levels deep once `$ref`s are followed (each target
/// measured once; a target that leads back to itself is a recursive type, which is allowed),
/// and at most [`MAX_SCHEMA_NODES`](super::MAX_SCHEMA_NODES) schemas applied at one place of a value when one is
/// validated against it (see `cost.rs`). The `Stop` names where a bound is crossed.
pub fn measure(schema: &Value) -> Result<(), Stop> {
    // Each check runs without naming places, and again naming them only when it fails: a
    // schema that passes costs no string per schema.
    let refers = document(schema, false).or_else(|_| document(schema, true))?;
    heights(schema, false).or_else(|_| heights(schema, true))?;
    // Without a `$ref` the schema is a tree: a value's place gets each of its schemas at most
    // once, fewer than the document holds.
    if refers { cost::check(schema) } else { Ok(()) }
}

/// The document as written, within the budget (an explicit stack, since it may be arbitrarily
/// deep); whether it has a `$ref`.
fn document(schema: &Value, named: bool) -> Result<bool, Stop> {
    let mut walk = Walk::new(schema);
    let mut refers = false;
    let mut stack = vec![(schema, String::new())];
    while let Some((node, path)) = stack.pop() {
        walk.visit().map_err(|why| Stop::at(path.clone(), why))?;
        refers |= node.get("$ref").is_some();
        for (key, segment, child) in children(node) {
            let here = if named {
                child_path(&path, key, segment)
            } else {
                String::new()
            };
            stack.push((child, here));
        }
    }
    Ok(refers)
}

/// The depth of `schema` with `$ref`s followed, within the bound.
fn heights(schema: &Value, named: bool) -> Result<usize, Stop> {
    let mut heights = Heights {
        walk: Walk::new(schema),
        memo: Memo::default(),
        named,
    };
    heights.height(schema, "", 1)
}

/// How many levels lie below each schema once `$ref`s are followed.
struct Heights<'r> {
    walk: Walk<'r>,
    memo: Memo<usize>,
    /// Whether places are named (see [`measure`]).
    named: bool,
}

impl<'r> Heights<'r> {
    fn height(&mut self, schema: &'r Value, path: &str, depth: usize) -> Result<usize, Stop> {
        if depth > MAX_WALK_DEPTH {
            return Err(Stop::at(path, Why::TooDeep));
        }
        self.walk.visit().map_err(|why| Stop::at(path, why))?;
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let Some(target) = self.walk.target(reference) else {
                // The schema compiler reports a reference to nowhere; nothing lies below it.
                return Ok(0);
            };
            let here = self.place(|| format!("{path}/$ref"));
            let height = match self.memo.get(target) {
                // Measured before, from another place: does it fit below this one?
                Some(Slot::Done(height)) if depth + 1 + height > MAX_WALK_DEPTH => {
                    return Err(Stop::at(here, Why::TooDeep));
                }
                Some(Slot::Done(height)) => *height,
                // A recursive type: its depth is the value's, not the schema's.
                Some(Slot::Open) => 0,
                None => {
                    self.memo.open(target);
                    let height = self.height(target, &here, depth + 1)?;
                    self.memo.close(target, height);
                    height
                }
            };
            return Ok(height + 1);
        }
        let mut height = 0;
        for (key, segment, child) in children(schema) {
            if DEFINITIONS.contains(&key) {
                continue;
            }
            let here = self.place(|| child_path(path, key, segment));
            let below = self.height(child, &here, depth + 1)?;
            height = height.max(below + 1);
        }
        Ok(height)
    }

    /// A place's name, when places are named.
    fn place(&self, name: impl FnOnce() -> String) -> String {
        if self.named { name() } else { String::new() }
    }
}
