//! [`TagSet`]: the response-tag patterns of a set of tools, compiled once and shared, with the
//! automaton that finds their `\nTAG:` lines beside the markers. The patterns and the reading of
//! a tag line are the tag reader's ([`TagRules`]); the automaton is the marker table's
//! ([`Scanner`]). The scanner only hands the patterns lines that start with a known `TAG:`, so
//! text without tags never reaches them.

use std::sync::Arc;

use super::formats::tags::{TagRules, TagTool};
use super::markers::Scanner;

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
    /// The tag set of `tools`; `None` when no tool has a tag form whose pattern compiles (a
    /// pattern that does not compile is left out, with a warning).
    ///
    /// ```
    /// use tool_registry_parse::{self as parse, TagForm, TagSet, TagTool, ToolList};
    ///
    /// const SEARCH: TagForm = TagForm {
    ///     prefix: "SEARCH",
    ///     pattern: "(.+)",
    ///     groups: &["query"],
    ///     example: "SEARCH: [query]",
    /// };
    /// let tags = TagSet::new([TagTool::new("web_search", &SEARCH)]).unwrap();
    /// let tools = ToolList::default().with_tags(tags);
    /// let parsed = parse::tags("Let me look.\nSEARCH: rust borrow checker\n", &tools);
    /// assert_eq!(parsed.calls[0].name, "web_search");
    /// assert_eq!(parsed.calls[0].arguments["query"], "rust borrow checker");
    /// assert_eq!(parsed.content, "Let me look.");
    /// ```
    pub fn new<'a>(tools: impl IntoIterator<Item = TagTool<'a>>) -> Option<Self> {
        let rules = TagRules::build(tools)?;
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

    /// Whether a tag of the set calls the tool `name`.
    pub fn calls(&self, name: &str) -> bool {
        self.rules.calls(name)
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
