//! [`TagSet`]: the response-tag patterns of a set of tools, compiled once into one anchored
//! regex and shared, with the automaton that finds their `\nTAG:` lines beside the markers.
//! The scanner only hands the regex lines that start with a known `TAG:`, so text without tags
//! never reaches it.

use std::sync::{Arc, Mutex, OnceLock};

use regex::Regex;
use rustc_hash::FxHashMap;
use serde_json::{Map, Value};

use super::markers::Scanner;
use super::typing::{Kinds, schema_arg_kinds, typed_value};
use crate::def::{Tool, ToolDef};

/// The compiled response-tag patterns of a set of tools.
///
/// Built once per set of tag tools (a registry's is cached and shared) and used by every
/// parse; see [`ToolSet::tags`](super::ToolSet::tags).
pub struct TagSet {
    rules: Vec<Rule>,
    /// Each distinct `PREFIX`, with the byte the scanner looks for after it (`:`).
    prefixes: Vec<String>,
    combined: Option<Regex>,
    /// The index of each rule's wrapping group in `combined`.
    wrappers: Vec<usize>,
    /// Per rule, when the combined regex could not be built (two patterns with the same group
    /// name): `\A(?:PREFIX):\s+(?:pattern)\z`.
    singles: Vec<Regex>,
    /// The markers and `\nTAG:` lines, in one automaton.
    scanner: Scanner,
}

struct Rule {
    tool: String,
    prefix: String,
    pattern: String,
    example: String,
    groups: Vec<String>,
    kinds: Vec<Kinds>,
    strip: bool,
    captures: usize,
}

impl Rule {
    /// The rule of a tool's tag form; `None` without one, or when its pattern does not compile
    /// (the tag is then ignored, with a warning).
    fn of(def: &'static ToolDef, schema: Option<&Value>) -> Option<Self> {
        let tag = def.tag()?;
        let captures = match Regex::new(tag.pattern) {
            Ok(regex) => regex.captures_len() - 1,
            Err(error) => {
                tracing::warn!(tool = def.name(), %error, "the tag pattern does not compile; the tag is ignored");
                return None;
            }
        };
        let kinds = tag
            .groups
            .iter()
            .map(|g| schema.map(|s| schema_arg_kinds(s, g)).unwrap_or_default())
            .collect();
        Some(Rule {
            tool: def.name().to_owned(),
            prefix: tag.prefix.to_owned(),
            pattern: tag.pattern.to_owned(),
            example: tag.example.to_owned(),
            groups: tag.groups.iter().map(|g| (*g).to_owned()).collect(),
            kinds,
            strip: def.strip_from_display(),
            captures,
        })
    }
}

/// Every rule's `PREFIX:\s+pattern` as one alternative of one anchored regex, and the index of
/// each rule's wrapping group; `None` when the patterns cannot share one regex (two use the
/// same group name).
fn combined_regex(rules: &[Rule]) -> (Option<Regex>, Vec<usize>) {
    let mut alternatives = Vec::new();
    let mut wrappers = Vec::new();
    let mut next_group = 1;
    for rule in rules {
        alternatives.push(format!(
            r"({}:\s+(?:{}))",
            regex::escape(&rule.prefix),
            rule.pattern
        ));
        wrappers.push(next_group);
        next_group += 1 + rule.captures;
    }
    let combined = Regex::new(&format!(r"\A(?:{})\z", alternatives.join("|"))).ok();
    (combined, wrappers)
}

impl std::fmt::Debug for TagSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TagSet")
            .field("prefixes", &self.prefixes)
            .finish_non_exhaustive()
    }
}

/// A tag line read: the tool, its arguments, and whether the line leaves the display.
pub(crate) struct TagCall {
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) strip: bool,
}

impl TagSet {
    fn build(
        defs: impl IntoIterator<Item = &'static ToolDef>,
        schema: impl Fn(&'static ToolDef) -> Option<Value>,
    ) -> Option<Self> {
        let rules: Vec<Rule> = defs
            .into_iter()
            .filter_map(|def| Rule::of(def, schema(def).as_ref()))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let mut prefixes: Vec<String> = rules.iter().map(|r| r.prefix.clone()).collect();
        prefixes.sort();
        prefixes.dedup();
        let (combined, wrappers) = combined_regex(&rules);
        let singles = if combined.is_some() {
            Vec::new()
        } else {
            rules
                .iter()
                .filter_map(|r| {
                    Regex::new(&format!(
                        r"\A(?:{}):\s+(?:{})\z",
                        regex::escape(&r.prefix),
                        r.pattern
                    ))
                    .ok()
                })
                .collect()
        };
        let scanner = Scanner::new(&prefixes);
        Some(TagSet {
            rules,
            prefixes,
            combined,
            wrappers,
            singles,
            scanner,
        })
    }

    /// The tags, e.g. `RESEARCH`, each once, sorted.
    pub fn prefixes(&self) -> impl Iterator<Item = &str> {
        self.prefixes.iter().map(String::as_str)
    }

    /// Whether `line` (a whole line or the start of one) begins with `TAG:` for a known tag.
    pub(crate) fn starts_tag(&self, line: &[u8]) -> bool {
        self.prefixes
            .iter()
            .any(|p| line.starts_with(p.as_bytes()) && line.get(p.len()) == Some(&b':'))
    }

    /// The automaton that finds markers and `\nTAG:` lines.
    #[inline]
    pub(crate) fn scanner(&self) -> &Scanner {
        &self.scanner
    }

    /// Whether `partial`, the start of a line seen so far, could still become `TAG:`.
    pub(crate) fn could_start(&self, partial: &[u8]) -> bool {
        self.prefixes.iter().any(|p| {
            let tag = p.as_bytes();
            if partial.len() <= tag.len() {
                tag.starts_with(partial)
            } else {
                partial.starts_with(tag) && partial[tag.len()] == b':'
            }
        })
    }

    /// Reads a line that starts with a known `TAG:` (trailing whitespace already trimmed).
    /// `Err` carries the message for a line that does not fit its tag's pattern.
    pub(crate) fn read_line(&self, line: &str) -> Result<TagCall, String> {
        let found =
            match &self.combined {
                Some(regex) => regex.captures(line).and_then(|caps| {
                    let i = self.wrappers.iter().position(|&w| caps.get(w).is_some())?;
                    let first = self.wrappers[i] + 1;
                    Some((
                        i,
                        (0..self.rules[i].captures)
                            .map(|k| caps.get(first + k).map(|m| m.as_str()))
                            .collect::<Vec<_>>(),
                    ))
                }),
                None => self.rules.iter().zip(&self.singles).enumerate().find_map(
                    |(i, (rule, regex))| {
                        let caps = regex.captures(line)?;
                        Some((
                            i,
                            (0..rule.captures)
                                .map(|k| caps.get(1 + k).map(|m| m.as_str()))
                                .collect(),
                        ))
                    },
                ),
            };
        let Some((i, values)) = found else {
            let rule = self
                .rules
                .iter()
                .find(|r| {
                    line.starts_with(&r.prefix)
                        && line.as_bytes().get(r.prefix.len()) == Some(&b':')
                })
                .or(self.rules.first());
            return Err(match rule {
                Some(rule) => format!(
                    "the line starts with `{}:` but does not fit the tag `{}` (pattern `{}`); write it as `{}` on a line of its own",
                    rule.prefix, rule.tool, rule.pattern, rule.example
                ),
                None => "the line does not fit any tag".to_owned(),
            });
        };
        let rule = &self.rules[i];
        let mut arguments = Map::new();
        for ((group, kinds), value) in rule.groups.iter().zip(&rule.kinds).zip(values) {
            if let Some(value) = value {
                arguments.insert(group.clone(), typed_value(value, *kinds));
            }
        }
        Ok(TagCall {
            tool: rule.tool.clone(),
            arguments: Value::Object(arguments),
            strip: rule.strip,
        })
    }
}

/// The tag set of the tools of `snapshot` that `keep` accepts, built on first use and shared
/// by every registry (and scope) with the same tag tools.
pub(crate) fn for_registry(tools: &[Tool], keep: impl Fn(&Tool) -> bool) -> Option<Arc<TagSet>> {
    type Cache = Mutex<FxHashMap<Vec<usize>, Option<Arc<TagSet>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();

    // Only compiled tools have tag forms.
    let defs: Vec<&'static ToolDef> = tools
        .iter()
        .filter(|tool| tool.tag().is_some() && keep(tool))
        .filter_map(Tool::definition)
        .collect();
    if defs.is_empty() {
        return None;
    }
    // `ToolDef`s are statics: their addresses name them for the life of the program.
    let key: Vec<usize> = defs
        .iter()
        .map(|d| std::ptr::from_ref::<ToolDef>(d) as usize)
        .collect();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .entry(key)
        .or_insert_with(|| {
            TagSet::build(defs, |def| {
                crate::def::linked(def).static_input_schema().cloned()
            })
            .map(Arc::new)
        })
        .clone()
}
