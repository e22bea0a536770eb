//! What validating one value against a schema can cost, measured once, before the schema is
//! compiled for a run-time tool.
//!
//! A validator applies a schema's in-place keywords (`anyOf`, `oneOf`, `allOf`, `not`, `if`,
//! `then`, `else`, `dependentSchemas`, `$ref`) to the same value, each option in full when the
//! value fails them, and it does not remember what a shared definition answered: ten
//! definitions, each an `anyOf` of four `$ref`s to the next, are 4^10 applications at one place
//! of a wrong value, and a recursive type whose options meet the same member twice doubles its
//! work with every level of the value.
//!
//! The check applies the schema to the largest value it describes, level by level: at each
//! level, the schemas applied at one place (counted with their multiplicity, through the
//! in-place keywords) and, for the next level, the schemas each member, item or other key gets.
//! More than [`MAX_SCHEMA_NODES`] at one place, or an in-place circle (a schema that applies
//! itself to the same value, which never decides), is refused. A recursive type that goes one
//! level down the value at each turn, however many members it has, passes: its cost per place
//! stays the same.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{MAX_SCHEMA_NODES, Segment, Stop, Why, child_path, children};

/// Keywords applied to the value itself.
const IN_PLACE: &[&str] = &[
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// Keywords applied to a member named by the schema.
const MEMBER: &[&str] = &["properties"];

/// Keywords applied to members or keys the schema does not name one by one.
const ANY_MEMBER: &[&str] = &[
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
];

/// Where below the value a schema applies.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Place<'r> {
    Member(&'r str),
    AnyMember,
    Item,
}

/// One step down the document: the schema holding a child, and the keys that lead to it.
type Step<'r> = (usize, &'r str, Option<Segment<'r>>);

/// The schemas of a document and how they apply to a value.
struct Graph<'r> {
    /// Where each schema is: the schema holding it and the keys that lead to it (the root has
    /// none), to name a place only when a check fails.
    places: Vec<Option<Step<'r>>>,
    refs: Vec<Option<&'r str>>,
    /// Schemas applied to the same value, once per occurrence.
    in_place: Vec<Vec<usize>>,
    /// Schemas applied below the value.
    below: Vec<Vec<(Place<'r>, usize)>>,
}

/// The most work the check itself does: schemas counted over every place it looks at.
const MAX_CHECK_WORK: usize = 100 * MAX_SCHEMA_NODES;

/// Refuses `root` when validating one value could apply more than [`MAX_SCHEMA_NODES`]
/// schemas at one place in it, or when a schema applies itself to the same value.
pub fn check(root: &Value) -> Result<(), Stop> {
    let graph = Graph::of(root);
    // The places to look at, each as the schemas that reach it with how many times, and how
    // deep in the value it is. A place seen before (the same schemas, the same counts) costs
    // what it cost then: a recursive type ends there.
    let mut places: Vec<(State, usize)> = vec![(vec![(0, 1)], 0)];
    let mut seen: HashSet<State> = HashSet::new();
    let mut work = 0;
    while let Some((state, depth)) = places.pop() {
        if depth > crate::depth::MAX_DEPTH || !seen.insert(state.clone()) {
            continue;
        }
        let applied = graph.in_place_closure(&state)?;
        work += applied.len();
        if work > MAX_CHECK_WORK {
            return Err(Stop::at(String::new(), Why::Spent));
        }
        places.extend(
            graph
                .below(&applied)
                .into_iter()
                .map(|next| (next, depth + 1)),
        );
    }
    Ok(())
}

/// Schemas applied at one place, with how many times, sorted.
type State = Vec<(usize, u64)>;

impl<'r> Graph<'r> {
    fn of(root: &'r Value) -> Self {
        let mut nodes: Vec<&'r Value> = Vec::new();
        let mut places = Vec::new();
        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut stack: Vec<(&'r Value, Option<Step<'r>>)> = vec![(root, None)];
        while let Some((node, place)) = stack.pop() {
            if !node.is_object() {
                continue;
            }
            let at = nodes.len();
            index.insert(std::ptr::from_ref(node) as usize, at);
            nodes.push(node);
            places.push(place);
            for (key, segment, child) in children(node) {
                stack.push((child, Some((at, key, segment))));
            }
        }
        let at = |value: &Value| index.get(&(std::ptr::from_ref(value) as usize)).copied();
        let mut graph = Graph {
            refs: vec![None; nodes.len()],
            in_place: vec![Vec::new(); nodes.len()],
            below: vec![Vec::new(); nodes.len()],
            places,
        };
        for (i, node) in nodes.iter().enumerate() {
            if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
                graph.refs[i] = Some(reference);
                let target = reference
                    .strip_prefix('#')
                    .and_then(|pointer| root.pointer(pointer));
                graph.in_place[i].extend(target.and_then(at));
            }
            for (key, _, child) in children(node) {
                let Some(child) = at(child) else { continue };
                if IN_PLACE.contains(&key) {
                    graph.in_place[i].push(child);
                } else if ANY_MEMBER.contains(&key) {
                    graph.below[i].push((Place::AnyMember, child));
                } else if !MEMBER.contains(&key) && !super::DEFINITIONS.contains(&key) {
                    // `items`, `prefixItems`, `contains`, `additionalItems`, `unevaluatedItems`.
                    graph.below[i].push((Place::Item, child));
                }
            }
            for (name, member) in node
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                if let Some(child) = at(member) {
                    graph.below[i].push((Place::Member(name), child));
                }
            }
        }
        graph
    }

    /// The JSON Pointer of schema `node` in the document.
    fn path(&self, mut node: usize) -> String {
        let mut steps = Vec::new();
        while let Some(step) = self.places[node] {
            steps.push(step);
            node = step.0;
        }
        steps
            .iter()
            .rev()
            .fold(String::new(), |path, &(_, key, segment)| {
                child_path(&path, key, segment)
            })
    }

    /// Every schema applied to one value when `state`'s are, with how many times.
    fn in_place_closure(&self, state: &State) -> Result<HashMap<usize, u64>, Stop> {
        // The schemas reached, and how many in-place edges lead to each.
        let mut incoming: HashMap<usize, usize> = state.iter().map(|&(n, _)| (n, 0)).collect();
        let mut stack: Vec<usize> = state.iter().map(|&(n, _)| n).collect();
        while let Some(node) = stack.pop() {
            for &next in &self.in_place[node] {
                let seen = incoming.contains_key(&next);
                *incoming.entry(next).or_default() += 1;
                if !seen {
                    stack.push(next);
                }
            }
        }
        // Counts flow along the edges in topological order.
        let mut count: HashMap<usize, u64> = state.iter().copied().collect();
        let mut ready: Vec<usize> = incoming
            .iter()
            .filter(|(_, n)| **n == 0)
            .map(|(&node, _)| node)
            .collect();
        let mut done = 0;
        let mut total: u64 = 0;
        while let Some(node) = ready.pop() {
            done += 1;
            let here = count.get(&node).copied().unwrap_or(0);
            total = total.saturating_add(here);
            if total > MAX_SCHEMA_NODES as u64 {
                return Err(Stop::at(self.path(node), Why::Costly));
            }
            for &next in &self.in_place[node] {
                let slot = count.entry(next).or_default();
                *slot = slot.saturating_add(here);
                let left = incoming.get_mut(&next).expect("reached");
                *left -= 1;
                if *left == 0 {
                    ready.push(next);
                }
            }
        }
        if done < incoming.len() {
            let (node, reference) = incoming
                .iter()
                .filter(|(_, left)| **left > 0)
                .filter_map(|(&node, _)| Some((node, self.refs[node]?)))
                .min_by_key(|(node, _)| *node)
                .unwrap_or((0, ""));
            return Err(Stop::at(
                format!("{}/$ref", self.path(node)),
                Why::Loop(reference.to_owned()),
            ));
        }
        Ok(count)
    }

    /// The places one level down: each member the schemas name (which also gets what applies
    /// to any member), any other member, and an item.
    fn below(&self, applied: &HashMap<usize, u64>) -> Vec<State> {
        let mut places: HashMap<Place<'r>, HashMap<usize, u64>> = HashMap::new();
        for (&node, &count) in applied {
            for &(place, child) in &self.below[node] {
                let slot = places.entry(place).or_default().entry(child).or_default();
                *slot = slot.saturating_add(count);
            }
        }
        let any = places.get(&Place::AnyMember).cloned().unwrap_or_default();
        places
            .into_iter()
            .map(|(place, mut counts)| {
                if matches!(place, Place::Member(_)) {
                    for (&node, &n) in &any {
                        let slot = counts.entry(node).or_default();
                        *slot = slot.saturating_add(n);
                    }
                }
                let mut state: State = counts.into_iter().collect();
                state.sort_unstable();
                state
            })
            .collect()
    }
}
