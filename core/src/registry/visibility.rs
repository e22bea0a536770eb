//! Who may see and use which tool: the one predicate ([`Registry::visible`]) that listing,
//! execution, the formats, the catalog, the parser's tool set, approvals and "did you mean"
//! all ask, and what is built on it.

use std::time::Duration;

use super::snapshot::{Snapshot, allow_bit};
use super::{Listing, Registry};
use crate::def::Tool;
use crate::scope::{AllowLists, EMBEDDING_FLAG, Scope};

impl Registry {
    /// The tool `name` names and its timeout, if `scope` may use it. Unknown and out-of-scope
    /// names take the same path and give the same answer.
    #[inline]
    pub(crate) fn resolve(&self, name: &str, scope: &Scope) -> Option<(Tool, Duration, u64)> {
        let snapshot = self.current();
        match snapshot.get(name) {
            Some((i, tool)) if self.visible(&snapshot, i, scope) => {
                let slot = &snapshot.slots[i];
                Some((tool.clone(), slot.timeout, slot.hooks))
            }
            Some(_) => None,
            None if let Some(meta) = self.meta_tool_for(&snapshot, name, scope) => {
                Some((meta.clone(), snapshot.longest_timeout, 0))
            }
            None => {
                // Run the same check on some tool, so that a miss costs what a refusal costs.
                if !snapshot.tools.is_empty() {
                    std::hint::black_box(self.visible(&snapshot, 0, scope));
                }
                None
            }
        }
    }

    /// The tools of `snapshot` that `scope` may see in a listing, with their positions.
    pub(crate) fn listed<'s>(
        &'s self,
        snapshot: &'s Snapshot,
        scope: &'s Scope,
    ) -> impl Iterator<Item = (usize, &'s Tool)> + 's {
        snapshot.tools.iter().enumerate().filter(move |(i, tool)| {
            self.visible(snapshot, *i, scope) && (scope.include_deferred || !tool.defer_loading())
        })
    }

    /// The one predicate of listing and execution: whether `scope` may see and use the tool at
    /// position `i`.
    pub(crate) fn visible(&self, snapshot: &Snapshot, i: usize, scope: &Scope) -> bool {
        !snapshot.slots[i].disabled && self.in_scope(snapshot, i, scope)
    }

    /// Whether the tool at position `i` is within `scope`, whatever its switch: what `scope`
    /// would see were the tool switched on.
    pub(crate) fn in_scope(&self, snapshot: &Snapshot, i: usize, scope: &Scope) -> bool {
        let tool = &snapshot.tools[i];
        let entry = tool.entry();
        if scope.level < entry.permission {
            return false;
        }
        if !scope.admits_module(tool.module_key(), self.policy.guest_modules.as_deref()) {
            return false;
        }
        if let Some(list) = &scope.allow_list {
            let Some(members) = snapshot.allow_sets.get(&**list) else {
                return false;
            };
            let bit = allow_bit(scope.local, scope.has_flag(EMBEDDING_FLAG));
            if members[i] & bit == 0 {
                return false;
            }
        }
        entry.predicate.is_none_or(|enabled| enabled(scope))
    }

    /// Whether `listing` holds the tool at `i` of `snapshot`: one its caller may see (every
    /// tool, without a scope), kept by its filter. What every listing of the registry asks.
    pub(crate) fn lists(&self, snapshot: &Snapshot, i: usize, listing: &mut Listing<'_>) -> bool {
        listing
            .scope
            .is_none_or(|scope| self.visible(snapshot, i, scope))
            && listing.keeps(&snapshot.tools[i])
    }

    /// The name of the tool `listing` keeps whose name or alias is closest to `name`, when one
    /// is close enough to be a typo of it (`serach` for `search`, `web_search` for
    /// `research.web_search`): the "did you mean" of an unknown name. Only names the caller
    /// may see are suggested.
    ///
    /// ```
    /// # use tool_registry::{tool, Listing, Registry, Scope};
    /// /// Search the notes.
    /// #[tool(name = "notes.search")]
    /// fn search(query: String) -> String { query }
    ///
    /// let registry = Registry::global();
    /// assert_eq!(registry.suggest("notes.serach", &Scope::guest()).as_deref(), Some("notes.search"));
    /// assert_eq!(registry.suggest("weather", Listing::every()), None);
    /// ```
    pub fn suggest<'a>(&self, name: &str, listing: impl Into<Listing<'a>>) -> Option<String> {
        let mut listing = listing.into();
        // Names longer than any tool's cannot be a typo of one; never spend time on them.
        if name.is_empty() || name.len() > 128 {
            return None;
        }
        let snapshot = self.current();
        let mut best: Option<(usize, &str)> = None;
        for (i, tool) in snapshot.tools.iter().enumerate() {
            if !self.lists(&snapshot, i, &mut listing) {
                continue;
            }
            for candidate in std::iter::once(tool.name()).chain(tool.aliases().iter().copied()) {
                let short = candidate.rsplit_once('.').map_or(candidate, |(_, t)| t);
                let distance = if short == name && short != candidate {
                    0
                } else {
                    strsim::damerau_levenshtein(name, candidate)
                };
                if best.is_none_or(|(d, _)| distance < d) {
                    best = Some((distance, tool.name()));
                }
            }
        }
        let (distance, suggestion) = best?;
        let close = (name.chars().count() / 4).clamp(1, 2);
        (distance <= close).then(|| suggestion.to_owned())
    }

    /// The module of `name` (the part before its first `.`) when `scope` may see no tool of
    /// that module: a module that does not exist and one the caller may not see read alike.
    /// `None` for a name without a module, or one of a module the caller sees.
    pub(crate) fn unknown_module(&self, name: &str, scope: &Scope) -> Option<String> {
        let (module, _) = name.split_once('.')?;
        // A name longer than any tool's is answered as any unknown name.
        if module.is_empty() || name.len() > 128 {
            return None;
        }
        let snapshot = self.current();
        let seen = (snapshot.tools.iter().enumerate())
            .any(|(i, tool)| tool.module_key() == module && self.visible(&snapshot, i, scope));
        (!seen).then(|| module.to_owned())
    }

    /// The names of the tools of any of `categories` that `listing` holds, in name order: a
    /// request's tools chosen by what they are for (`["search", "files"]`) rather than by
    /// name.
    ///
    /// ```
    /// use tool_registry::{Registry, Scope, tool};
    ///
    /// /// Find notes.
    /// #[tool(category = "search")]
    /// fn find_notes(query: String) -> String { query }
    ///
    /// let registry = Registry::global();
    /// let names = registry.resolve_categories(&["search"], &Scope::trusted());
    /// assert!(names.contains(&"find_notes".to_owned()));
    /// assert!(registry.resolve_categories(&["nothing"], &Scope::trusted()).is_empty());
    /// ```
    pub fn resolve_categories<'a>(
        &self,
        categories: &[&str],
        listing: impl Into<Listing<'a>>,
    ) -> Vec<String> {
        self.tools(listing)
            .iter()
            .filter(|tool| tool.category().is_some_and(|c| categories.contains(&c)))
            .map(|tool| tool.name().to_owned())
            .collect()
    }

    /// The allow-lists registered on this registry.
    pub fn allow_lists(&self) -> &AllowLists {
        &self.policy.allow_lists
    }

    /// The tool names allow-list `name` resolves to for a caller in `scope`'s mode (whether it
    /// [is local](Scope::is_local), whether it carries the [embedding flag](EMBEDDING_FLAG)),
    /// sorted; `None` for an unknown list. The rest of the scope does not matter here: what
    /// a caller may see is [`tools`](Registry::tools) with its scope.
    pub fn resolve_allow_list(&self, name: &str, scope: &Scope) -> Option<Vec<String>> {
        let snapshot = self.current();
        let members = snapshot.allow_sets.get(name)?;
        let bit = allow_bit(scope.is_local(), scope.has_flag(EMBEDDING_FLAG));
        let mut names: Vec<String> = (snapshot.tools.iter().zip(members.iter()))
            .filter(|(_, member)| *member & bit != 0)
            .map(|(tool, _)| tool.name().to_owned())
            .collect();
        names.sort_unstable();
        Some(names)
    }
}
