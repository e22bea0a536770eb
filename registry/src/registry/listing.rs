//! [`Listing`]: which of the registry's tools a tool list or a prompt block holds.

use std::fmt;

use crate::def::Tool;
use crate::scope::Scope;

/// Which tools a listing holds: those a scope may see, or every tool whatever the scope and
/// switches; of those, the ones a filter keeps. A `&Scope` converts into the listing of what it
/// may see, so `registry.tools_for(provider, &scope)` reads as before.
///
/// ```
/// # use tool_registry::{tool, Registry, Scope};
/// use tool_registry::registry::Listing;
///
/// /// Search the notes.
/// #[tool(category = "search")]
/// fn find(query: String) -> String { query }
///
/// let registry = Registry::global();
/// let scope = Scope::trusted();
/// let searches = |tool: &tool_registry::Tool| tool.category() == Some("search");
/// let tools = registry.openai_tools(Listing::of(&scope).keep(&searches));
/// assert_eq!(tools[0]["function"]["name"], "find");
/// assert_eq!(registry.openai_tools(Listing::every()), registry.openai_tools(&scope));
/// ```
#[derive(Clone, Copy, Default)]
pub struct Listing<'a> {
    /// `None`: every tool.
    pub(crate) scope: Option<&'a Scope>,
    keep: Option<&'a dyn Fn(&Tool) -> bool>,
}

impl<'a> Listing<'a> {
    /// The tools `scope` may see.
    pub fn of(scope: &'a Scope) -> Self {
        Self {
            scope: Some(scope),
            keep: None,
        }
    }

    /// Every tool, whatever the scope and switches: for the application itself, never for
    /// what a caller is shown.
    pub fn every() -> Self {
        Self::default()
    }

    /// Of these, only the tools `keep` accepts.
    pub fn keep(self, keep: &'a dyn Fn(&Tool) -> bool) -> Self {
        Self {
            keep: Some(keep),
            ..self
        }
    }

    /// Whether the filter keeps `tool`.
    #[inline]
    pub(crate) fn keeps(&self, tool: &Tool) -> bool {
        self.keep.is_none_or(|keep| keep(tool))
    }
}

impl<'a> From<&'a Scope> for Listing<'a> {
    fn from(scope: &'a Scope) -> Self {
        Self::of(scope)
    }
}

impl fmt::Debug for Listing<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Listing")
            .field("scope", &self.scope)
            .field("filtered", &self.keep.is_some())
            .finish()
    }
}
