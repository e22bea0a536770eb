//! Run-time switches: tools turned off and on by name, tag or category, for listing and for
//! calls alike.

use std::collections::BTreeSet;

use crate::def::Tool;

#[derive(Default, Clone)]
pub(super) struct Switches {
    pub(super) names: BTreeSet<String>,
    pub(super) tags: BTreeSet<String>,
    pub(super) categories: BTreeSet<String>,
}

/// Which tools a run-time switch ([`Registry::disable`](crate::Registry::disable), [`Registry::enable`](crate::Registry::enable)) applies to.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Selector {
    /// One tool, by name or alias.
    Name(String),
    /// Every tool with this tag.
    Tag(String),
    /// Every tool of this category.
    Category(String),
}

impl Selector {
    /// One tool, by name or alias.
    pub fn name(name: impl Into<String>) -> Self {
        Self::Name(name.into())
    }
    /// Every tool with this tag.
    pub fn tag(tag: impl Into<String>) -> Self {
        Self::Tag(tag.into())
    }
    /// Every tool of this category.
    pub fn category(category: impl Into<String>) -> Self {
        Self::Category(category.into())
    }
}

/// The switches a store shared by processes keeps (the command line's switch file, a Redis
/// fleet): which tools are off, by name (or alias), tag and category. A process applies each
/// new state with [`SwitchSet::apply`], so the registry's change channel fires as for any
/// switch.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SwitchSet {
    /// Tools off by name or alias.
    #[serde(default)]
    pub names: BTreeSet<String>,
    /// Tools off by tag.
    #[serde(default)]
    pub tags: BTreeSet<String>,
    /// Tools off by category.
    #[serde(default)]
    pub categories: BTreeSet<String>,
}

impl SwitchSet {
    /// Every switch, as selectors.
    pub fn selectors(&self) -> BTreeSet<Selector> {
        let names = self.names.iter().cloned().map(Selector::Name);
        let tags = self.tags.iter().cloned().map(Selector::Tag);
        let categories = self.categories.iter().cloned().map(Selector::Category);
        names.chain(tags).chain(categories).collect()
    }

    /// Adds (`off`) or removes the switch of `selector`.
    pub fn set(&mut self, selector: &Selector, off: bool) {
        let (set, value) = match selector {
            Selector::Name(name) => (&mut self.names, name),
            Selector::Tag(tag) => (&mut self.tags, tag),
            Selector::Category(category) => (&mut self.categories, category),
        };
        if off {
            set.insert(value.clone());
        } else {
            set.remove(value);
        }
    }
}

impl Switches {
    /// Whether a switch turns `tool` off.
    pub(super) fn covers(&self, tool: &Tool) -> bool {
        (!self.names.is_empty() && self.names.contains(tool.name()))
            || (!self.tags.is_empty() && tool.tags().any(|t| self.tags.contains(t)))
            || (!self.categories.is_empty()
                && tool.category().is_some_and(|c| self.categories.contains(c)))
    }
}
