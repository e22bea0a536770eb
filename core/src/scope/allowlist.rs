//! Named allow-lists of tools and categories, with local-mode and embedding rules.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

/// One named set of tools: by name and by category, plus rules for local mode and embedding.
///
/// Resolution, for a registry's tools: the tools named in `tools` and every tool whose
/// category is in `categories`; plus `add_when_non_local` unless local; minus `exclude_in_local`
/// when local; plus `add_when_embedding_ok` when the scope has the embedding flag. The result is
/// sorted by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowList {
    /// Tool names (or aliases).
    #[serde(default)]
    pub tools: Vec<String>,
    /// Categories; every tool of these categories is included.
    #[serde(default)]
    pub categories: Vec<String>,
    /// Tools added unless the caller is in local mode.
    #[serde(default)]
    pub add_when_non_local: Vec<String>,
    /// Tools removed when the caller is in local mode.
    #[serde(default)]
    pub exclude_in_local: Vec<String>,
    /// Tools added when embedding is available (the scope's `embedding` flag).
    #[serde(default)]
    pub add_when_embedding_ok: Vec<String>,
}

impl AllowList {
    /// An allow-list of these tools.
    pub fn tools<I: IntoIterator<Item = S>, S: Into<String>>(tools: I) -> Self {
        Self {
            tools: tools.into_iter().map(Into::into).collect(),
            ..Self::default()
        }
    }
    /// Adds categories.
    pub fn with_categories<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        categories: I,
    ) -> Self {
        self.categories
            .extend(categories.into_iter().map(Into::into));
        self
    }
    /// Adds tools offered only outside local mode.
    pub fn add_when_non_local<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        tools: I,
    ) -> Self {
        self.add_when_non_local
            .extend(tools.into_iter().map(Into::into));
        self
    }
    /// Adds tools withheld in local mode.
    pub fn exclude_in_local<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        tools: I,
    ) -> Self {
        self.exclude_in_local
            .extend(tools.into_iter().map(Into::into));
        self
    }
    /// Adds tools offered when embedding is available.
    pub fn add_when_embedding_ok<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        tools: I,
    ) -> Self {
        self.add_when_embedding_ok
            .extend(tools.into_iter().map(Into::into));
        self
    }

    fn names(&self) -> impl Iterator<Item = &String> {
        self.tools
            .iter()
            .chain(&self.add_when_non_local)
            .chain(&self.exclude_in_local)
            .chain(&self.add_when_embedding_ok)
    }
}

/// A set of named allow-lists, defined in code or loaded from TOML:
///
/// ```
/// use tool_registry::scope::AllowLists;
///
/// let lists = AllowLists::from_toml(r#"
///     [explore]
///     categories = ["search"]
///     tools = ["file_manager.read"]
///
///     [execute]
///     categories = ["files"]
///     exclude_in_local = ["research"]
/// "#)?;
/// assert_eq!(lists.names().collect::<Vec<_>>(), ["execute", "explore"]);
/// # Ok::<(), tool_registry::scope::AllowListError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowLists {
    lists: BTreeMap<String, AllowList>,
}

/// An allow-list file that cannot be read, or that names tools the registry does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AllowListError {
    /// The TOML is malformed or has unknown keys.
    #[error("cannot read the allow-lists: {0}")]
    Syntax(String),
    /// Lists name tools that no linked or registered tool has.
    #[error("allow-lists name unknown tools: {}; fix the names or remove them", .unknown.iter().map(|(list, tool)| format!("`{tool}` in `{list}`")).collect::<Vec<_>>().join(", "))]
    UnknownTools {
        /// `(list, tool)` pairs, sorted.
        unknown: Vec<(String, String)>,
    },
}

impl AllowLists {
    /// No lists.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a list.
    pub fn with(mut self, name: impl Into<String>, list: AllowList) -> Self {
        self.lists.insert(name.into(), list);
        self
    }

    /// Reads lists from TOML: one table per list, with the keys of [`AllowList`].
    pub fn from_toml(text: &str) -> Result<Self, AllowListError> {
        let lists: BTreeMap<String, AllowList> =
            toml::from_str(text).map_err(|e| AllowListError::Syntax(e.to_string()))?;
        Ok(Self { lists })
    }

    /// The list names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.lists.keys().map(String::as_str)
    }

    /// One list.
    pub fn get(&self, name: &str) -> Option<&AllowList> {
        self.lists.get(name)
    }

    /// Every `(list, tool)` pair naming a tool `known` does not recognise, sorted.
    pub(crate) fn unknown_names(&self, known: impl Fn(&str) -> bool) -> Vec<(String, String)> {
        let mut unknown: Vec<(String, String)> = self
            .lists
            .iter()
            .flat_map(|(list, def)| {
                def.names()
                    .filter(|n| !known(n))
                    .map(move |n| (list.clone(), n.clone()))
            })
            .collect();
        unknown.sort();
        unknown.dedup();
        unknown
    }

    /// The tool names list `name` resolves to among `tools` (each tool's name and category),
    /// sorted; `None` for an unknown list. `canonical` maps an alias to its tool's name.
    pub(crate) fn resolve<'t>(
        &self,
        name: &str,
        tools: impl IntoIterator<Item = (&'t str, Option<&'t str>)>,
        canonical: impl Fn(&str) -> Option<&'t str>,
        local: bool,
        embedding: bool,
    ) -> Option<BTreeSet<&'t str>> {
        let list = self.lists.get(name)?;
        let mut set: BTreeSet<&'t str> = list.tools.iter().filter_map(|n| canonical(n)).collect();
        for (tool, category) in tools {
            if category.is_some_and(|c| list.categories.iter().any(|wanted| wanted == c)) {
                set.insert(tool);
            }
        }
        if local {
            for name in list.exclude_in_local.iter().filter_map(|n| canonical(n)) {
                set.remove(name);
            }
        } else {
            set.extend(list.add_when_non_local.iter().filter_map(|n| canonical(n)));
        }
        if embedding {
            set.extend(
                list.add_when_embedding_ok
                    .iter()
                    .filter_map(|n| canonical(n)),
            );
        }
        Some(set)
    }
}
