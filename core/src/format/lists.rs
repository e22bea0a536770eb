//! The tool list of a request, in each provider's shape: each tool's definition built once and
//! reused, and each whole list (with its JSON text) built once per set of tools and kept with
//! the registry's snapshot. Which tools a caller may see is the registry's to say.

use std::any::Any;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock, RwLock};

use rustc_hash::FxHashMap;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use super::definitions::definition;
use super::{Provider, StrictError};
use crate::def::Tool;

/// What a tool list adds for the deferred tools a caller may see (see
/// [`discovery`](crate::discovery)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extra {
    /// Nothing: no deferred tool to find, or discovery is off.
    Nothing,
    /// The meta-tools, at the end.
    MetaTools,
    /// The deferred tools flagged `defer_loading`, and the provider's search tool at the end.
    Native,
}

/// The list of the tools at `members` (positions in `tools`; `None` for every tool), then
/// `metas`, for `provider`: taken from `lists`, or built once and kept there. `meta_bits` says
/// which of the meta-tools `metas` holds, so that lists that differ only in them are kept apart.
#[allow(clippy::too_many_arguments)] // one call site, the registry's; a struct would only rename them
pub(crate) fn list(
    lists: &ListCache,
    tools: &[Tool],
    provider: Provider,
    strict: bool,
    extra: Extra,
    members: Option<Box<[u32]>>,
    metas: &[&Tool],
    meta_bits: u8,
) -> Result<ProviderTools, StrictError> {
    // The mode: strict, native, and which meta-tools end the list.
    let mode = u8::from(strict) | (u8::from(extra == Extra::Native) << 1) | (meta_bits << 2);
    let mut failed = None;
    let list = lists.get_or_build((provider, mode), members, |members| {
        let count = members.map_or(tools.len(), <[u32]>::len);
        let mut definitions = Vec::with_capacity(count + metas.len() + 1);
        let listed = (0..count).map(|k| match members {
            None => &tools[k],
            Some(members) => &tools[members[k] as usize],
        });
        for tool in listed.chain(metas.iter().copied()) {
            let mut definition = match strict {
                false => cached(tool, provider).clone(),
                true => match strict_cached(tool, provider) {
                    Ok(definition) => definition.clone(),
                    Err(error) => {
                        failed = Some(error);
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
            definitions.push(native_search_tool(provider));
        }
        Some(wrap(provider, definitions))
    });
    match (list, failed) {
        (Some(list), _) => Ok(list),
        (None, Some(error)) => Err(error),
        (None, None) => unreachable!("a list that failed says why"),
    }
}

/// The provider's own search tool, for [`Extra::Native`].
fn native_search_tool(provider: Provider) -> Value {
    match provider {
        Provider::Anthropic => json!({
            "type": "tool_search_tool_bm25_20251119",
            "name": "tool_search_tool_bm25",
        }),
        _ => json!({ "type": "tool_search" }),
    }
}

// A tool's entry keeps one definition per provider, in `Provider::ALL` order.
const _: () = assert!(Provider::ALL.len() == crate::def::PROVIDERS);

/// One tool's definition for `provider`, built on first use and kept in the tool's entry.
pub(crate) fn cached(tool: &Tool, provider: Provider) -> &Value {
    tool.entry().formats[provider.index()].get_or_init(|| definition(tool, provider))
}

/// One tool's strict definition for `provider`, or why strict mode cannot list it; built on
/// first use and kept in the tool's entry.
fn strict_cached(tool: &Tool, provider: Provider) -> Result<&Value, StrictError> {
    let kept = tool.entry().strict_formats[provider.index()].get_or_init(|| {
        super::definitions::strict_definition(tool, provider)
            .map_err(|error| Arc::new(error) as Arc<dyn Any + Send + Sync>)
    });
    match kept {
        Ok(definition) => Ok(definition),
        Err(error) => Err(error
            .downcast_ref::<StrictError>()
            .expect("a tool's strict definitions are written by this module alone")
            .clone()),
    }
}

/// The list as the provider's request takes it.
pub(crate) fn wrap(provider: Provider, definitions: Vec<Value>) -> Value {
    match provider {
        Provider::Gemini if definitions.is_empty() => json!([]),
        Provider::Gemini => json!([{ "functionDeclarations": definitions }]),
        _ => Value::Array(definitions),
    }
}

/// A request's tool list: the JSON value and its text, built once per provider and set of
/// tools and shared (cloning is a reference count). The text is what goes into a request body
/// without serializing again.
///
/// It reads as a list of tool objects: [`len`](Self::len), [`iter`](Self::iter),
/// [`get`](Self::get), `for tool in &tools`. For every provider but Gemini the list is the JSON
/// array itself; Gemini's is one object wrapping the tools (`[{"functionDeclarations":
/// [...]}]`, or `[]` without tools), and the list methods read the declarations inside it, so
/// that `len` is the number of tools whatever the provider. A tool list with a provider's own
/// search tool (for deferred tools) counts that tool too. It also reads as the JSON [`Value`]
/// it holds, as sent (`tools[0]`, `tools.as_array()`: for Gemini, the wrapping object).
///
/// ```
/// # use tool_registry::{tool, Listing, Registry};
/// use tool_registry::format::Provider;
///
/// /// Look up a word.
/// #[tool]
/// fn define(word: String) -> String { word }
///
/// let registry = Registry::global();
/// let openai = registry.provider_tools(Provider::OpenAi, Listing::every());
/// assert_eq!(openai.len(), 1);
/// assert_eq!(openai.get(0).unwrap()["function"]["name"], "define");
///
/// let gemini = registry.provider_tools(Provider::Gemini, Listing::every());
/// assert_eq!(gemini.len(), 1);
/// let names: Vec<&str> = gemini.iter().filter_map(|tool| tool["name"].as_str()).collect();
/// assert_eq!(names, ["define"]);
/// // As sent: one object wrapping the declarations.
/// assert_eq!(gemini[0]["functionDeclarations"][0]["name"], "define");
/// ```
#[derive(Clone)]
pub struct ProviderTools(Arc<Built>);

/// A list as built once: shared by every answer that hands it out, so that handing it out is
/// one reference count.
struct Built {
    value: Value,
    json: Box<str>,
    provider: Provider,
}

impl ProviderTools {
    fn new(provider: Provider, value: Value) -> Self {
        let json = value.to_string().into_boxed_str();
        Self(Arc::new(Built {
            value,
            json,
            provider,
        }))
    }

    /// The provider whose shape the list has.
    pub fn provider(&self) -> Provider {
        self.0.provider
    }

    /// Whether `self` and `other` are the one list the registry built (for the same snapshot,
    /// provider, mode and tools) and handed out twice: what a front end that keeps something
    /// made from a list (its own typed copy) checks to reuse it.
    ///
    /// ```
    /// # use tool_registry::tool;
    /// use tool_registry::format::Provider;
    /// use tool_registry::{Listing, Registry};
    ///
    /// /// Define a word.
    /// #[tool]
    /// fn define(word: String) -> String { word }
    ///
    /// let registry = Registry::global();
    /// let first = registry.provider_tools(Provider::Mcp, Listing::every());
    /// let again = registry.provider_tools(Provider::Mcp, Listing::every());
    /// assert!(first.same(&again));
    /// assert!(!first.same(&registry.provider_tools(Provider::OpenAi, Listing::every())));
    /// ```
    pub fn same(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The tool objects, in list order (Gemini's function declarations).
    pub fn as_slice(&self) -> &[Value] {
        let list = self.0.value.as_array().map_or(&[][..], Vec::as_slice);
        match (self.0.provider, list) {
            (Provider::Gemini, [wrapper]) => wrapper["functionDeclarations"]
                .as_array()
                .map_or(&[][..], Vec::as_slice),
            _ => list,
        }
    }

    /// How many tools the list holds.
    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    /// Whether the list holds no tool.
    pub fn is_empty(&self) -> bool {
        self.as_slice().is_empty()
    }

    /// The tool objects, in list order.
    pub fn iter(&self) -> std::slice::Iter<'_, Value> {
        self.as_slice().iter()
    }

    /// The tool object at `index`.
    pub fn get(&self, index: usize) -> Option<&Value> {
        self.as_slice().get(index)
    }

    /// The list as compact JSON text.
    pub fn json(&self) -> &str {
        &self.0.json
    }

    /// The list as a [`Value`] (a copy).
    pub fn to_value(&self) -> Value {
        self.0.value.clone()
    }
}

impl<'a> IntoIterator for &'a ProviderTools {
    type Item = &'a Value;
    type IntoIter = std::slice::Iter<'a, Value>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl Deref for ProviderTools {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0.value
    }
}

impl PartialEq for ProviderTools {
    fn eq(&self, other: &Self) -> bool {
        self.0.value == other.0.value
    }
}

impl PartialEq<Value> for ProviderTools {
    fn eq(&self, other: &Value) -> bool {
        self.0.value == *other
    }
}

impl PartialEq<ProviderTools> for Value {
    fn eq(&self, other: &ProviderTools) -> bool {
        *self == other.0.value
    }
}

impl Serialize for ProviderTools {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.value.serialize(serializer)
    }
}

impl fmt::Display for ProviderTools {
    /// The JSON text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.json)
    }
}

impl fmt::Debug for ProviderTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.value.fmt(f)
    }
}

/// The lists built from one snapshot, by provider and the positions of the tools in them. A
/// registry with many callers of a few kinds builds a few lists; the number kept is bounded,
/// and past it lists are built per request.
#[derive(Default)]
pub(crate) struct ListCache {
    lists: RwLock<FxHashMap<ListKey, ProviderTools>>,
    /// The list of every tool, unfiltered, by provider and strictness: read without a lock or
    /// a hash, once built.
    every: [OnceLock<ProviderTools>; 2 * Provider::ALL.len()],
}

/// A provider, the list's mode (strict, native search, which meta-tools), and the positions,
/// in the snapshot, of the tools of a list (`None`: every tool, found without hashing them).
type ListKey = ((Provider, u8), Option<Box<[u32]>>);

/// How many distinct lists one snapshot keeps.
const MAX_CACHED_LISTS: usize = 256;

impl ListCache {
    /// The list of `members` for `provider` (strict or not), built by `build` the first time;
    /// `None` when it cannot be built (then nothing is kept).
    fn get_or_build(
        &self,
        provider: (Provider, u8),
        members: Option<Box<[u32]>>,
        build: impl FnOnce(Option<&[u32]>) -> Option<Value>,
    ) -> Option<ProviderTools> {
        // Every tool, in the plain or strict mode (no meta-tools, no native search).
        let every = match (&members, provider.1) {
            (None, mode @ (0 | 1)) => Some(&self.every[2 * provider.0.index() + usize::from(mode)]),
            _ => None,
        };
        if let Some(list) = every.and_then(OnceLock::get) {
            return Some(list.clone());
        }
        let key = (provider, members);
        let read = self
            .lists
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(list) = read.get(&key) {
            return Some(list.clone());
        }
        drop(read);
        let list = ProviderTools::new(key.0.0, build(key.1.as_deref())?);
        if let Some(every) = every {
            return Some(every.get_or_init(|| list).clone());
        }
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
