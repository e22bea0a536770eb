//! [`Listing`]: which of the registry's tools a lookup, a list, a catalog or a prompt block
//! holds.

use std::fmt;

use crate::def::Tool;
use crate::scope::Scope;

/// Which tools a listing holds: those a scope may see, or every tool whatever the scope and
/// switches; of those, the ones a filter keeps. Every method of [`Registry`](crate::Registry)
/// that reads tools for someone takes one (`impl Into<Listing>`), and a `&Scope` converts into
/// the listing of what it may see, so `registry.tools(&scope)` reads as it says.
///
/// The filter is any closure over a [`Tool`], one that keeps state included; it is asked once
/// per tool the listing would otherwise hold, in name order.
///
/// ```
/// # use tool_registry::{tool, Listing, Registry, Scope};
/// use tool_registry::format::Provider;
///
/// /// Search the notes.
/// #[tool(category = "search")]
/// fn find(query: String) -> String { query }
///
/// let registry = Registry::global();
/// let scope = Scope::trusted();
/// let searches = Listing::of(&scope).keep(|tool| tool.category() == Some("search"));
/// let tools = registry.provider_tools(Provider::OpenAi, searches);
/// assert_eq!(tools[0]["function"]["name"], "find");
/// assert_eq!(
///     registry.provider_tools(Provider::OpenAi, Listing::every()),
///     registry.provider_tools(Provider::OpenAi, &scope),
/// );
///
/// // A filter may keep state: the first tool only.
/// let mut room = 1;
/// let first = Listing::every().keep(move |_| std::mem::take(&mut room) > 0);
/// assert_eq!(registry.tools(first).len(), 1);
/// ```
#[derive(Default)]
pub struct Listing<'a> {
    /// `None`: every tool.
    pub(crate) scope: Option<&'a Scope>,
    keep: Option<Box<Filter<'a>>>,
}

/// A listing's filter: whether to keep a tool, asked once per tool in name order.
type Filter<'a> = dyn FnMut(&Tool) -> bool + 'a;

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
    pub fn keep(self, keep: impl FnMut(&Tool) -> bool + 'a) -> Self {
        Self {
            keep: Some(Box::new(keep)),
            ..self
        }
    }

    /// Whether a filter narrows the listing.
    #[inline]
    pub(crate) fn filters(&self) -> bool {
        self.keep.is_some()
    }

    /// Whether the filter keeps `tool`.
    #[inline]
    pub(crate) fn keeps(&mut self, tool: &Tool) -> bool {
        self.keep.as_mut().is_none_or(|keep| keep(tool))
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
