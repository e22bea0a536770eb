//! The registry: every linked `#[tool]`, indexed once; who may see what; run-time switches.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use rustc_hash::FxHashMap;
use schemars::Schema;
use serde_json::Value;

use crate::allowlist::{AllowListError, AllowLists};
use crate::approval::{ApprovalKey, ApprovalStore};
use crate::audit::AuditSink;
use crate::ctx::TypeMap;
use crate::gate::Gate;
use crate::limits::RateLimitStore;
use crate::scope::{EMBEDDING_FLAG, module_of};
use crate::{Scope, SourceLocation, ToolDef};

mod builder;

pub use builder::RegistryBuilder;

/// A set of tools with everything built from them once (lookup by name and alias, the sorted
/// listing, cached schemas and provider formats) and the policies every call goes through.
///
/// [`Registry::global`] holds every `#[tool]` linked into the binary with default policies;
/// [`Registry::builder`] adds application state, more tools, a gate, stores and policies.
pub struct Registry {
    pub(crate) index: Arc<Index>,
    pub(crate) state: TypeMap,
    pub(crate) policy: Policy,
}

pub(crate) struct Index {
    entries: Vec<Entry>,
    by_name: FxHashMap<&'static str, usize>,
    openai_all: OnceLock<Value>,
}

pub(crate) struct Entry {
    pub(crate) def: &'static ToolDef,
    /// Computed once: the risk level and whether calls wait for approval.
    pub(crate) risk: crate::Risk,
    pub(crate) confirm: bool,
    /// No rate limits, no gate and no confirmation: calls go straight from validation to the
    /// handler.
    pub(crate) direct: bool,
    /// The module the scope's module list is matched against.
    module: &'static str,
    input_schema: OnceLock<Schema>,
    pub(crate) openai: OnceLock<Value>,
}

/// What the builder configured: every stage of the pipeline reads it.
pub(crate) struct Policy {
    /// One flag per entry: switched off at run time by name, tag or category.
    disabled: Vec<AtomicBool>,
    switches: Mutex<Switches>,
    guest_modules: Option<Vec<String>>,
    allow_lists: AllowLists,
    /// Resolved allow-lists: one byte per entry, whose bit `local + 2 * embedding` says whether
    /// the list holds the tool in that mode.
    allow_sets: FxHashMap<String, Box<[u8]>>,
    pub(crate) gate: Option<Arc<dyn Gate>>,
    pub(crate) gate_timeout: Duration,
    pub(crate) rate_limits: Arc<dyn RateLimitStore>,
    pub(crate) approvals: Arc<dyn ApprovalStore>,
    /// The application's approval key; without one, the store's, or else `own_approval_key`.
    pub(crate) approval_key: Option<ApprovalKey>,
    pub(crate) own_approval_key: OnceLock<ApprovalKey>,
    pub(crate) approval_ttl: Duration,
    /// The timeout of each entry, from its own, the slow list, or the default.
    timeouts: Vec<Duration>,
    pub(crate) audit: Arc<dyn AuditSink>,
    pub(crate) log_annotations: bool,
    pub(crate) max_concurrency: usize,
    pub(crate) max_calls: usize,
}

#[derive(Default)]
struct Switches {
    names: BTreeSet<String>,
    tags: BTreeSet<String>,
    categories: BTreeSet<String>,
}

/// Which tools a run-time switch ([`Registry::disable`], [`Registry::enable`]) applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Two tools claim one name (or alias). Tool names must be unique across every crate linked
/// into the binary; within one crate the compiler already refuses a second definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateToolError {
    /// Every clash found, sorted by name.
    pub clashes: Vec<Clash>,
}

/// One name claimed by two tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// The contested name.
    pub name: &'static str,
    /// Where the first claimant was declared.
    pub first: SourceLocation,
    /// Where the second claimant was declared.
    pub second: SourceLocation,
}

impl fmt::Display for DuplicateToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, clash) in self.clashes.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(
                f,
                "tool name `{}` is defined twice: at {} and at {}; give one of them another name with #[tool(name = \"...\")]",
                clash.name, clash.first, clash.second
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for DuplicateToolError {}

/// Why [`RegistryBuilder::build`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools claim one name.
    #[error(transparent)]
    Duplicates(#[from] DuplicateToolError),
    /// An allow-list names tools the registry does not have.
    #[error(transparent)]
    AllowLists(#[from] AllowListError),
}

impl Index {
    fn build(defs: impl IntoIterator<Item = &'static ToolDef>) -> Result<Self, DuplicateToolError> {
        let mut defs: Vec<&'static ToolDef> = defs.into_iter().collect();
        defs.sort_by(|a, b| {
            (a.name(), a.source().file, a.source().line).cmp(&(
                b.name(),
                b.source().file,
                b.source().line,
            ))
        });
        let mut by_name = FxHashMap::with_capacity_and_hasher(defs.len(), Default::default());
        let mut clashes = Vec::new();
        for (i, def) in defs.iter().enumerate() {
            for name in std::iter::once(def.name()).chain(def.aliases().iter().copied()) {
                if let Some(&first) = by_name.get(name) {
                    let first: &ToolDef = defs[first];
                    clashes.push(Clash {
                        name,
                        first: *first.source(),
                        second: *def.source(),
                    });
                } else {
                    by_name.insert(name, i);
                }
            }
        }
        if !clashes.is_empty() {
            clashes.sort_by(|a, b| a.name.cmp(b.name));
            return Err(DuplicateToolError { clashes });
        }
        let entries = defs
            .into_iter()
            .map(|def| Entry {
                def,
                risk: def.risk(),
                confirm: def.needs_confirmation(),
                direct: !def.needs_confirmation()
                    && !def.requires_gate()
                    && def.cooldown().is_none()
                    && def.daily_limit().is_none(),
                module: module_of(def.name()),
                input_schema: OnceLock::new(),
                openai: OnceLock::new(),
            })
            .collect();
        Ok(Self {
            entries,
            by_name,
            openai_all: OnceLock::new(),
        })
    }

    pub(crate) fn get(&self, name: &str) -> Option<(usize, &Entry)> {
        self.by_name.get(name).map(|&i| (i, &self.entries[i]))
    }
}

fn linked_index() -> Result<Arc<Index>, DuplicateToolError> {
    static LINKED: OnceLock<Result<Arc<Index>, DuplicateToolError>> = OnceLock::new();
    LINKED
        .get_or_init(|| {
            if crate::__private::TOOLS.is_empty() {
                tracing::warn!(
                    target: "tool_registry",
                    "no #[tool] is linked into this program: a crate of tools is linked only when \
                     the program names it; add `tool_registry::link!(my_tools);` to main.rs"
                );
            }
            Index::build(crate::__private::TOOLS.iter()).map(Arc::new)
        })
        .clone()
}

/// The timeout of tools without one of their own.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// The timeout of tools and modules listed as slow.
pub const SLOW_TIMEOUT: Duration = Duration::from_secs(120);
/// How long an evaluation gate may take before the call goes on without it.
pub const GATE_TIMEOUT: Duration = Duration::from_secs(2);
/// How long an approval token stays valid.
pub const APPROVAL_TTL: Duration = Duration::from_secs(15 * 60);
/// How many calls of one batch run at once.
pub const MAX_CONCURRENCY: usize = 8;
/// How many calls of one batch (one model output) run at all; the rest are answered with
/// [`ToolError::TooManyCalls`](crate::ToolError::TooManyCalls).
pub const MAX_CALLS: usize = 32;

impl Registry {
    /// Every `#[tool]` in every crate linked into the binary, with default policies. Built on
    /// first use.
    ///
    /// # Panics
    ///
    /// When two linked crates define a tool of the same name; the message names both source
    /// locations. Use [`Registry::try_global`] to handle that as an error.
    pub fn global() -> &'static Registry {
        match Self::try_global() {
            Ok(registry) => registry,
            Err(error) => panic!("{error}"),
        }
    }

    /// Like [`Registry::global`], but reports duplicate names as an error.
    pub fn try_global() -> Result<&'static Registry, DuplicateToolError> {
        static GLOBAL: OnceLock<Result<Registry, DuplicateToolError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| match Self::builder().build() {
                Ok(registry) => Ok(registry),
                Err(BuildError::Duplicates(error)) => Err(error),
                Err(BuildError::AllowLists(_)) => {
                    unreachable!("the default builder has no allow-lists")
                }
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Looks a tool up by name or alias, in O(1), whatever the scope.
    pub fn get(&self, name: &str) -> Option<&'static ToolDef> {
        self.index.get(name).map(|(_, entry)| entry.def)
    }

    /// Looks a tool up by name or alias as `scope` sees it: `None` when it does not exist, is
    /// outside the scope, or is switched off.
    pub fn get_for(&self, name: &str, scope: &Scope) -> Option<&'static ToolDef> {
        self.resolve(name, scope).map(|(_, entry)| entry.def)
    }

    /// The tools `scope` may see, sorted by name. Tools marked `defer_loading` are left out
    /// unless the scope includes deferred tools; they stay callable.
    pub fn tools(&self, scope: &Scope) -> Vec<&'static ToolDef> {
        self.listed(scope).map(|(_, entry)| entry.def).collect()
    }

    /// Every tool, whatever the scope and switches, sorted by name.
    pub fn all_tools(&self) -> impl ExactSizeIterator<Item = &'static ToolDef> + '_ {
        self.index.entries.iter().map(|entry| entry.def)
    }

    /// The number of tools, whatever the scope.
    pub fn len(&self) -> usize {
        self.index.entries.len()
    }

    /// Whether the registry has no tools.
    pub fn is_empty(&self) -> bool {
        self.index.entries.is_empty()
    }

    /// The JSON Schema (2020-12) of a tool's arguments, built once and cached.
    pub fn input_schema(&self, name: &str) -> Option<&Schema> {
        self.index.get(name).map(|(_, entry)| entry.input_schema())
    }

    /// Switches tools off at once, for listing and for calls: one tool by name (or alias), or
    /// every tool with a tag or of a category. Returns how many tools are now off because of
    /// this switch.
    pub fn disable(&self, selector: Selector) -> usize {
        self.switch(selector, true)
    }

    /// Switches tools back on (undoes [`Registry::disable`] with the same selector). A tool
    /// stays off while another switch still covers it. Returns how many tools the selector
    /// covers.
    pub fn enable(&self, selector: Selector) -> usize {
        self.switch(selector, false)
    }

    fn switch(&self, selector: Selector, off: bool) -> usize {
        let mut switches = self
            .policy
            .switches
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (set, key): (_, String) = match &selector {
            Selector::Name(name) => (
                &mut switches.names,
                self.get(name).map_or(name.clone(), |d| d.name().to_owned()),
            ),
            Selector::Tag(tag) => (&mut switches.tags, tag.clone()),
            Selector::Category(category) => (&mut switches.categories, category.clone()),
        };
        if off {
            set.insert(key.clone());
        } else {
            set.remove(&key);
        }
        let mut covered = 0;
        for (entry, flag) in self.index.entries.iter().zip(&self.policy.disabled) {
            let def = entry.def;
            let disabled = switches.names.contains(def.name())
                || def.tags().iter().any(|t| switches.tags.contains(*t))
                || def
                    .category()
                    .is_some_and(|c| switches.categories.contains(c));
            flag.store(disabled, Ordering::Release);
            let matches = match &selector {
                Selector::Name(_) => def.name() == key.as_str(),
                Selector::Tag(tag) => def.tags().contains(&tag.as_str()),
                Selector::Category(category) => def.category() == Some(category.as_str()),
            };
            covered += usize::from(matches);
        }
        covered
    }

    /// The allow-lists registered on this registry.
    pub fn allow_lists(&self) -> &AllowLists {
        &self.policy.allow_lists
    }

    /// The tool names allow-list `name` resolves to, sorted; `None` for an unknown list.
    pub fn resolve_allow_list(
        &self,
        name: &str,
        local: bool,
        embedding: bool,
    ) -> Option<Vec<&'static str>> {
        let members = self.policy.allow_sets.get(name)?;
        let bit = allow_bit(local, embedding);
        let mut names: Vec<&'static str> = (self.index.entries.iter().zip(members.iter()))
            .filter(|(_, member)| *member & bit != 0)
            .map(|(entry, _)| entry.def.name())
            .collect();
        names.sort_unstable();
        Some(names)
    }

    /// The entry of `name` if `scope` may use it. Unknown and out-of-scope names take the same
    /// path and give the same answer.
    pub(crate) fn resolve(&self, name: &str, scope: &Scope) -> Option<(usize, &Entry)> {
        match self.index.get(name) {
            Some((i, entry)) if self.visible(i, entry, scope) => Some((i, entry)),
            Some(_) => None,
            None => {
                // Run the same check on some tool, so that a miss costs what a refusal costs.
                if let Some(first) = self.index.entries.first() {
                    std::hint::black_box(self.visible(0, first, scope));
                }
                None
            }
        }
    }

    /// The name or alias `scope` may use that is closest to `name`, when one is close enough
    /// to be a typo of it (`serach` for `search`, `web_search` for `research.web_search`).
    /// Only names the caller may see are suggested.
    pub(crate) fn suggest(&self, name: &str, scope: &Scope) -> Option<String> {
        // Names longer than any tool's cannot be a typo of one; never spend time on them.
        if name.is_empty() || name.len() > 128 {
            return None;
        }
        let mut best: Option<(usize, &'static str)> = None;
        for (i, entry) in self.index.entries.iter().enumerate() {
            if !self.visible(i, entry, scope) {
                continue;
            }
            let def = entry.def;
            for candidate in std::iter::once(def.name()).chain(def.aliases().iter().copied()) {
                let short = candidate.rsplit_once('.').map_or(candidate, |(_, t)| t);
                let distance = if short == name && short != candidate {
                    0
                } else {
                    strsim::damerau_levenshtein(name, candidate)
                };
                if best.is_none_or(|(d, _)| distance < d) {
                    best = Some((distance, def.name()));
                }
            }
        }
        let (distance, suggestion) = best?;
        let close = (name.chars().count() / 4).clamp(1, 2);
        (distance <= close).then(|| suggestion.to_owned())
    }

    pub(crate) fn listed<'r>(
        &'r self,
        scope: &'r Scope,
    ) -> impl Iterator<Item = (usize, &'r Entry)> + 'r {
        self.index
            .entries
            .iter()
            .enumerate()
            .filter(move |(i, entry)| {
                self.visible(*i, entry, scope)
                    && (scope.include_deferred || !entry.def.defer_loading())
            })
    }

    /// The one predicate of listing and execution.
    fn visible(&self, i: usize, entry: &Entry, scope: &Scope) -> bool {
        let def = entry.def;
        if self.policy.disabled[i].load(Ordering::Acquire) || scope.level < def.permission() {
            return false;
        }
        if !scope.admits_module(entry.module, self.policy.guest_modules.as_deref()) {
            return false;
        }
        if let Some(list) = &scope.allow_list {
            let Some(members) = self.policy.allow_sets.get(&**list) else {
                return false;
            };
            let bit = allow_bit(scope.local, scope.has_flag(EMBEDDING_FLAG));
            if members[i] & bit == 0 {
                return false;
            }
        }
        def.enabled_for(scope)
    }

    /// The timeout of entry `i`: its own, or the slow timeout for listed tools and modules, or
    /// the default.
    pub(crate) fn timeout_of(&self, i: usize) -> Duration {
        self.policy.timeouts[i]
    }

    pub(crate) fn entries(&self) -> &[Entry] {
        &self.index.entries
    }

    pub(crate) fn openai_all_cache(&self) -> &OnceLock<Value> {
        &self.index.openai_all
    }
}

impl Entry {
    pub(crate) fn input_schema(&self) -> &Schema {
        self.input_schema
            .get_or_init(|| self.def.build_input_schema())
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.index.entries.len())
            .finish_non_exhaustive()
    }
}

/// The bit of an allow-list mode in a member byte.
fn allow_bit(local: bool, embedding: bool) -> u8 {
    1 << (usize::from(local) + 2 * usize::from(embedding))
}
