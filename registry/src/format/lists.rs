//! The tool list of a request, in each provider's shape: the tools a scope may see, each
//! tool's definition built once and reused, and each whole list (with its JSON text) built once
//! per set of tools and kept with the registry's snapshot.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use super::definitions::definition;
use super::{Provider, StrictError};
use crate::def::Tool;
use crate::discovery::Extra;
use crate::registry::Registry;
use crate::scope::Scope;

impl Registry {
    /// The `tools` of a request to `provider` for the tools `scope` may see, in name order:
    /// an array of tool objects (for Gemini, one `{"functionDeclarations": [...]}` object). Names
    /// are the provider's wire names ([`Provider::wire_name`]), which the registry resolves back
    /// wherever a call comes in.
    ///
    /// ```
    /// # use tool_registry::{tool, Registry, Scope};
    /// # use tool_registry::format::Provider;
    /// /// Create a document.
    /// #[tool(name = "files.create")]
    /// fn create(path: String) -> String { path }
    ///
    /// let registry = Registry::global();
    /// let tools = registry.tools_for(Provider::Anthropic, &Scope::trusted());
    /// assert_eq!(tools[0]["name"], "files__create");
    /// assert!(registry.get("files__create").is_some());
    /// ```
    pub fn tools_for(&self, provider: Provider, scope: &Scope) -> ProviderTools {
        self.tools_for_where(provider, scope, |_| true)
    }

    /// [`tools_for`](Self::tools_for) for the tools `scope` may see and `keep` accepts.
    pub fn tools_for_where(
        &self,
        provider: Provider,
        scope: &Scope,
        keep: impl FnMut(&Tool) -> bool,
    ) -> ProviderTools {
        self.provider_list(provider, false, scope, keep)
            .expect("a plain list always builds")
    }

    /// [`tools_for`](Self::tools_for) in strict mode: each tool's schema in the provider's
    /// strict subset and `"strict": true`, for OpenAI Chat Completions and Responses (every
    /// property required, optional ones admitting `null`, no other keys) and for Anthropic
    /// (no other keys, `required` as declared, constraints it does not check moved into the
    /// descriptions, no recursive schemas); Gemini and MCP have no strict mode and get their
    /// plain list. A tool whose schema strict mode cannot express is an error naming the tool, the
    /// place in its schema and the construct.
    pub fn tools_for_strict(
        &self,
        provider: Provider,
        scope: &Scope,
    ) -> Result<ProviderTools, StrictError> {
        self.provider_list(provider, true, scope, |_| true)
    }

    /// The list of the tools `scope` may see and `keep` accepts, with what
    /// [`discovery`](crate::discovery) adds for deferred tools, built once per snapshot,
    /// provider, mode and set of tools.
    fn provider_list(
        &self,
        provider: Provider,
        strict: bool,
        scope: &Scope,
        mut keep: impl FnMut(&Tool) -> bool,
    ) -> Result<ProviderTools, StrictError> {
        let snapshot = self.current();
        let extra = self.extra(&snapshot, provider, scope);
        let members: Box<[u32]> = match extra {
            // Deferred tools are in the list, flagged for the provider's own search.
            Extra::Native => (snapshot.tools.iter().enumerate())
                .filter(|(i, tool)| self.visible(&snapshot, *i, scope) && keep(tool))
                .map(|(i, _)| i as u32)
                .collect(),
            _ => self
                .listed(&snapshot, scope)
                .filter(|(_, tool)| keep(tool))
                .map(|(i, _)| i as u32)
                .collect(),
        };
        let metas: Vec<&'static Tool> = match extra {
            Extra::MetaTools => self.meta_tools_of(&snapshot).filter(|t| keep(t)).collect(),
            _ => Vec::new(),
        };
        // The mode: strict, native, and which meta-tools end the list.
        let mut mode = u8::from(strict) | (u8::from(extra == Extra::Native) << 1);
        for (bit, meta) in self.meta_tools_of(&snapshot).enumerate() {
            if metas.iter().any(|m| m.same(meta)) {
                mode |= 1 << (2 + bit);
            }
        }
        let mut failed = None;
        let list = snapshot
            .lists
            .get_or_build((provider, mode), members, |members| {
                let mut definitions = Vec::with_capacity(members.len() + metas.len() + 1);
                let tools = members.iter().map(|&i| &snapshot.tools[i as usize]);
                for tool in tools.chain(metas.iter().copied()) {
                    let mut definition = match strict {
                        false => cached(tool, provider).clone(),
                        true => match strict_cached(tool, provider) {
                            Ok(definition) => definition.clone(),
                            Err(error) => {
                                failed = Some(error.clone());
                                return None;
                            }
                        },
                    };
                    if extra == Extra::Native && tool.defer_loading() {
                        definition["defer_loading"] = true.into();
                    }
                    definitions.push(definition);
                }
                if extra == Extra::Native {
                    definitions.push(crate::discovery::native_search_tool(provider));
                }
                Some(wrap(provider, definitions))
            });
        match (list, failed) {
            (Some(list), _) => Ok(list),
            (None, Some(error)) => Err(error),
            (None, None) => unreachable!("a list that failed says why"),
        }
    }

    /// The OpenAI Chat Completions `tools` array of the tools `scope` may see, in name order
    /// (`tools_for(Provider::OpenAi, scope)`).
    pub fn openai_tools(&self, scope: &Scope) -> ProviderTools {
        self.tools_for(Provider::OpenAi, scope)
    }

    /// The OpenAI `tools` array of the tools `scope` may see and `keep` accepts, in name order.
    pub fn openai_tools_where(
        &self,
        scope: &Scope,
        keep: impl FnMut(&Tool) -> bool,
    ) -> ProviderTools {
        self.tools_for_where(Provider::OpenAi, scope, keep)
    }

    /// The OpenAI `tools` array of every tool, whatever the scope, built once per set of tools
    /// and reused.
    pub fn openai_tools_all(&self) -> Arc<Value> {
        let snapshot = self.current();
        Arc::clone(snapshot.openai_all.get_or_init(|| {
            Arc::new(Value::Array(
                (snapshot.tools.iter())
                    .map(|tool| cached(tool, Provider::OpenAi).clone())
                    .collect(),
            ))
        }))
    }
}

/// One tool's definition for `provider`, built on first use.
fn cached(tool: &Tool, provider: Provider) -> &Value {
    tool.entry().formats[provider.index()].get_or_init(|| definition(tool, provider))
}

/// One tool's strict definition for `provider`, built on first use.
fn strict_cached(tool: &Tool, provider: Provider) -> &Result<Value, StrictError> {
    tool.entry().strict_formats[provider.index()]
        .get_or_init(|| super::definitions::strict_definition(tool, provider))
}

/// The list as the provider's request takes it.
fn wrap(provider: Provider, definitions: Vec<Value>) -> Value {
    match provider {
        Provider::Gemini if definitions.is_empty() => json!([]),
        Provider::Gemini => json!([{ "functionDeclarations": definitions }]),
        _ => Value::Array(definitions),
    }
}

/// A request's tool list: the JSON value and its text, built once per provider and set of
/// tools and shared (cloning is a reference count). Reads as the [`Value`] it holds; the text is
/// what goes into a request body without serializing again.
#[derive(Clone)]
pub struct ProviderTools {
    value: Arc<Value>,
    json: Arc<str>,
}

impl ProviderTools {
    fn new(value: Value) -> Self {
        let json = Arc::from(value.to_string());
        Self {
            value: Arc::new(value),
            json,
        }
    }

    /// The list as compact JSON text.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The list as a [`Value`] (a copy).
    pub fn to_value(&self) -> Value {
        (*self.value).clone()
    }
}

impl Deref for ProviderTools {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl PartialEq for ProviderTools {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl PartialEq<Value> for ProviderTools {
    fn eq(&self, other: &Value) -> bool {
        *self.value == *other
    }
}

impl PartialEq<ProviderTools> for Value {
    fn eq(&self, other: &ProviderTools) -> bool {
        *self == *other.value
    }
}

impl Serialize for ProviderTools {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl fmt::Display for ProviderTools {
    /// The JSON text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.json)
    }
}

impl fmt::Debug for ProviderTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

/// The lists built from one snapshot, by provider and the positions of the tools in them. A
/// registry with many callers of a few kinds builds a few lists; the number kept is bounded,
/// and past it lists are built per request.
#[derive(Default)]
pub(crate) struct ListCache {
    lists: RwLock<FxHashMap<ListKey, ProviderTools>>,
}

/// A provider, the list's mode (strict, native search, which meta-tools), and the positions,
/// in the snapshot, of the tools of a list.
type ListKey = ((Provider, u8), Box<[u32]>);

/// How many distinct lists one snapshot keeps.
const MAX_CACHED_LISTS: usize = 256;

impl ListCache {
    /// The list of `members` for `provider` (strict or not), built by `build` the first time;
    /// `None` when it cannot be built (then nothing is kept).
    fn get_or_build(
        &self,
        provider: (Provider, u8),
        members: Box<[u32]>,
        build: impl FnOnce(&[u32]) -> Option<Value>,
    ) -> Option<ProviderTools> {
        let key = (provider, members);
        let read = self
            .lists
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(list) = read.get(&key) {
            return Some(list.clone());
        }
        drop(read);
        let list = ProviderTools::new(build(&key.1)?);
        let mut write = self
            .lists
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if write.len() < MAX_CACHED_LISTS {
            write.entry(key).or_insert_with(|| list.clone());
        }
        Some(list)
    }
}
