//! [`TagSet`]: the response-tag patterns of a set of tools, compiled once and shared, with the
//! automaton that finds their `\nTAG:` lines beside the markers. The patterns and the reading of
//! a tag line are the tag reader's ([`TagRules`]); the automaton is the marker table's
//! ([`Scanner`]). The scanner only hands the patterns lines that start with a known `TAG:`, so
//! text without tags never reaches them.

use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::formats::tags::TagRules;
use super::markers::Scanner;
use crate::def::{Tool, ToolDef};

/// The compiled response-tag patterns of a set of tools.
///
/// Built once per set of tag tools (a registry's is cached and shared) and used by every
/// parse; see [`ToolSet::tags`](super::ToolSet::tags).
pub struct TagSet {
    /// Shared with the tag lines being read.
    rules: Arc<TagRules>,
    /// The markers and `\nTAG:` lines, in one automaton.
    scanner: Scanner,
}

impl std::fmt::Debug for TagSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TagSet")
            .field("prefixes", &self.rules.prefixes)
            .finish_non_exhaustive()
    }
}

impl TagSet {
    fn build(
        defs: impl IntoIterator<Item = &'static ToolDef>,
        schema: impl Fn(&'static ToolDef) -> Option<Value>,
    ) -> Option<Self> {
        let rules = TagRules::build(defs, schema)?;
        let scanner = Scanner::new(&rules.prefixes);
        Some(TagSet {
            rules: Arc::new(rules),
            scanner,
        })
    }

    /// The tags, e.g. `RESEARCH`, each once, sorted.
    pub fn prefixes(&self) -> impl Iterator<Item = &str> {
        self.rules.prefixes.iter().map(String::as_str)
    }

    /// The patterns, which the tag reader reads a line by.
    #[inline]
    pub(crate) fn rules(&self) -> &Arc<TagRules> {
        &self.rules
    }

    /// The automaton that finds markers and `\nTAG:` lines.
    #[inline]
    pub(crate) fn scanner(&self) -> &Scanner {
        &self.scanner
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
