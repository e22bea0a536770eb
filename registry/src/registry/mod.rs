//! The registry: the tools, indexed into an immutable snapshot that readers share and writers
//! replace; who may see what; run-time switches; and the tools registered at run time.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::allowlist::{AllowListError, AllowLists};
use crate::approval::{ApprovalKey, ApprovalStore};
use crate::audit::AuditSink;
use crate::ctx::TypeMap;
use crate::gate::Gate;
use crate::limits::RateLimitStore;
use crate::scope::{EMBEDDING_FLAG, module_of};
use crate::spec::{RegistryChange, ToolHandler};
use crate::{Scope, SourceLocation, Tool, ToolDef};

mod builder;
mod lifecycle;

pub use builder::RegistryBuilder;

/// A set of tools with everything built from them once (lookup by name and alias, the sorted
/// listing, cached schemas and provider formats) and the policies every call goes through.
///
/// [`Registry::global`] holds every `#[tool]` linked into the binary with default policies;
/// [`Registry::builder`] adds application state, more tools, a gate, stores and policies.
/// Tools can also be registered, replaced, switched and removed while the registry is in use
/// ([`Registry::register`]): readers never wait for a writer and never see half a change.
pub struct Registry {
    /// What listings and calls read: replaced as a whole by each change.
    snapshot: ArcSwap<Snapshot>,
    /// What changes build the next snapshot from; one writer at a time.
    writer: Mutex<Writer>,
    changes: tokio::sync::broadcast::Sender<RegistryChange>,
    pub(crate) state: TypeMap,
    pub(crate) policy: Policy,
}

/// The registry's tools at one moment, indexed: immutable once published.
pub(crate) struct Snapshot {
    /// Every tool, sorted by name.
    pub(crate) tools: Vec<Tool>,
    /// Names and aliases to positions in `tools`.
    by_name: FxHashMap<Cow<'static, str>, usize>,
    /// What this registry decided for each tool.
    slots: Vec<Slot>,
    /// Resolved allow-lists: one byte per tool, whose bit `local + 2 * embedding` says whether
    /// the list holds the tool in that mode.
    allow_sets: FxHashMap<String, Box<[u8]>>,
    openai_all: OnceLock<Arc<Value>>,
}

/// What one registry decided for one tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    /// Switched off by name, tag or category.
    pub(crate) disabled: bool,
    /// Its own timeout, the slow timeout for listed tools and modules, or the default.
    pub(crate) timeout: Duration,
}

/// What a change starts from: the compiled tools, the run-time ones, the switches.
struct Writer {
    /// The compiled tools, sorted by name (shared with other registries of the same tools).
    linked: Arc<[Tool]>,
    /// The tools registered at run time, by name.
    owned: BTreeMap<String, Tool>,
    switches: Switches,
    /// Handlers given to the builder by name, attached to specs that come without one
    /// ([`Registry::restore`]).
    handlers: FxHashMap<String, ToolHandler>,
}

/// How long calls may take: one policy, applied to every tool as it joins.
pub(crate) struct Timeouts {
    default: Duration,
    slow: Duration,
    slow_names: BTreeSet<String>,
}

/// What the builder configured: every stage of the pipeline reads it.
pub(crate) struct Policy {
    guest_modules: Option<Vec<String>>,
    allow_lists: AllowLists,
    timeouts: Timeouts,
    pub(crate) gate: Option<Arc<dyn Gate>>,
    pub(crate) gate_timeout: Duration,
    pub(crate) rate_limits: Arc<dyn RateLimitStore>,
    pub(crate) approvals: Arc<dyn ApprovalStore>,
    /// The application's approval key; without one, the store's, or else `own_approval_key`.
    pub(crate) approval_key: Option<ApprovalKey>,
    pub(crate) own_approval_key: OnceLock<ApprovalKey>,
    pub(crate) approval_ttl: Duration,
    pub(crate) audit: Arc<dyn AuditSink>,
    pub(crate) log_annotations: bool,
    pub(crate) max_concurrency: usize,
    pub(crate) max_calls: usize,
}

#[derive(Default, Clone)]
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
    pub name: String,
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

/// Sorts definitions by name and reports every name or alias claimed twice.
fn checked(mut defs: Vec<&'static ToolDef>) -> Result<Vec<Tool>, DuplicateToolError> {
    defs.sort_by(|a, b| {
        (a.name(), a.source().file, a.source().line).cmp(&(
            b.name(),
            b.source().file,
            b.source().line,
        ))
    });
    let mut seen: FxHashMap<&'static str, &'static ToolDef> = FxHashMap::default();
    let mut clashes = Vec::new();
    for &def in &defs {
        for name in std::iter::once(def.name()).chain(def.aliases().iter().copied()) {
            if let Some(first) = seen.get(name) {
                clashes.push(Clash {
                    name: name.to_owned(),
                    first: *first.source(),
                    second: *def.source(),
                });
            } else {
                seen.insert(name, def);
            }
        }
    }
    if !clashes.is_empty() {
        clashes.sort_by(|a, b| a.name.cmp(&b.name));
        return Err(DuplicateToolError { clashes });
    }
    Ok(defs.into_iter().map(crate::tool::linked).collect())
}

/// The tools linked into the program, checked and sorted once.
fn linked_tools() -> Result<Arc<[Tool]>, DuplicateToolError> {
    static LINKED: OnceLock<Result<Arc<[Tool]>, DuplicateToolError>> = OnceLock::new();
    LINKED
        .get_or_init(|| {
            if crate::__private::TOOLS.is_empty() {
                tracing::warn!(
                    target: "tool_registry",
                    "no #[tool] is linked into this program: a crate of tools is linked only when \
                     the program names it; add `tool_registry::link!(my_tools);` to main.rs"
                );
            }
            checked(crate::__private::TOOLS.iter().collect()).map(Arc::from)
        })
        .clone()
}

impl Snapshot {
    /// Indexes the compiled and run-time tools (whose names do not overlap) under the
    /// registry's switches and policies.
    fn build(writer: &Writer, policy: &Policy) -> Self {
        let mut tools = Vec::with_capacity(writer.linked.len() + writer.owned.len());
        let (mut linked, mut owned) = (
            writer.linked.iter().peekable(),
            writer.owned.values().peekable(),
        );
        loop {
            let next = match (linked.peek(), owned.peek()) {
                (Some(a), Some(b)) if a.name() <= b.name() => linked.next(),
                (Some(_), Some(_)) | (None, _) => owned.next(),
                (Some(_), None) => linked.next(),
            };
            let Some(tool) = next else { break };
            tools.push(tool.clone());
        }
        let mut by_name = FxHashMap::with_capacity_and_hasher(tools.len(), Default::default());
        for (i, tool) in tools.iter().enumerate() {
            match tool.definition() {
                Some(def) => {
                    for name in std::iter::once(def.name()).chain(def.aliases().iter().copied()) {
                        by_name.entry(Cow::Borrowed(name)).or_insert(i);
                    }
                }
                None => {
                    by_name.insert(Cow::Owned(tool.name().to_owned()), i);
                }
            }
        }
        let slots = tools
            .iter()
            .map(|tool| Slot {
                disabled: writer.switches.covers(tool),
                timeout: policy.timeouts.of(tool),
            })
            .collect();
        let mut snapshot = Self {
            tools,
            by_name,
            slots,
            allow_sets: FxHashMap::default(),
            openai_all: OnceLock::new(),
        };
        snapshot.allow_sets = snapshot.allow_sets(&policy.allow_lists);
        snapshot
    }

    /// Each allow-list resolved against these tools.
    fn allow_sets(&self, lists: &AllowLists) -> FxHashMap<String, Box<[u8]>> {
        let canonical = |name: &str| self.get(name).map(|(_, tool)| tool.name());
        lists
            .names()
            .map(|list| {
                let mut members = vec![0_u8; self.tools.len()].into_boxed_slice();
                for (local, embedding) in
                    [(false, false), (true, false), (false, true), (true, true)]
                {
                    let names = lists
                        .resolve(list, &self.tools, canonical, local, embedding)
                        .unwrap_or_default();
                    for name in names {
                        if let Some((i, _)) = self.get(name) {
                            members[i] |= allow_bit(local, embedding);
                        }
                    }
                }
                (list.to_owned(), members)
            })
            .collect()
    }

    /// The position and tool of a name or alias.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<(usize, &Tool)> {
        self.by_name.get(name).map(|&i| (i, &self.tools[i]))
    }
}

impl Switches {
    /// Whether a switch turns `tool` off.
    fn covers(&self, tool: &Tool) -> bool {
        (!self.names.is_empty() && self.names.contains(tool.name()))
            || (!self.tags.is_empty() && tool.tags().any(|t| self.tags.contains(t)))
            || (!self.categories.is_empty()
                && tool.category().is_some_and(|c| self.categories.contains(c)))
    }
}

impl Timeouts {
    fn of(&self, tool: &Tool) -> Duration {
        tool.timeout().unwrap_or_else(|| {
            let name = tool.name();
            if self.slow_names.contains(name) || self.slow_names.contains(module_of(name)) {
                self.slow
            } else {
                self.default
            }
        })
    }
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

    /// The tools as they are now; later changes publish a new snapshot and leave this one as
    /// it is.
    #[inline]
    pub(crate) fn current(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.snapshot.load()
    }

    /// Looks a tool up by name or alias, in O(1), whatever the scope and switches.
    pub fn get(&self, name: &str) -> Option<Tool> {
        self.current().get(name).map(|(_, tool)| tool.clone())
    }

    /// Looks a tool up by name or alias as `scope` sees it: `None` when it does not exist, is
    /// outside the scope, or is switched off.
    pub fn get_for(&self, name: &str, scope: &Scope) -> Option<Tool> {
        self.resolve(name, scope).map(|(tool, _)| tool)
    }

    /// The tools `scope` may see, sorted by name. Tools marked `defer_loading` are left out
    /// unless the scope includes deferred tools; they stay callable.
    pub fn tools(&self, scope: &Scope) -> Vec<Tool> {
        let snapshot = self.current();
        self.listed(&snapshot, scope)
            .map(|(_, tool)| tool.clone())
            .collect()
    }

    /// Every tool, whatever the scope and switches, sorted by name.
    pub fn all_tools(&self) -> impl ExactSizeIterator<Item = Tool> + use<> {
        let snapshot = self.snapshot.load_full();
        (0..snapshot.tools.len()).map(move |i| snapshot.tools[i].clone())
    }

    /// The number of tools, whatever the scope.
    pub fn len(&self) -> usize {
        self.current().tools.len()
    }

    /// Whether the registry has no tools.
    pub fn is_empty(&self) -> bool {
        self.current().tools.is_empty()
    }

    /// The JSON Schema (2020-12) of a tool's arguments (a copy; [`Tool::input_schema`] borrows
    /// the cached one).
    pub fn input_schema(&self, name: &str) -> Option<schemars::Schema> {
        self.get(name).map(|tool| tool.input_schema().clone())
    }

    /// Switches tools off at once, for listing and for calls: one tool by name (or alias), or
    /// every tool with a tag or of a category. Returns how many tools the selector covers.
    /// Subscribers get one [`RegistryChange::Disabled`] naming the tools that were on.
    pub fn disable(&self, selector: Selector) -> usize {
        self.switch(&selector, true)
    }

    /// Switches tools back on (undoes [`Registry::disable`] with the same selector). A tool
    /// stays off while another switch still covers it. Returns how many tools the selector
    /// covers.
    pub fn enable(&self, selector: Selector) -> usize {
        self.switch(&selector, false)
    }

    fn switch(&self, selector: &Selector, off: bool) -> usize {
        let mut writer = self.write();
        let key = match selector {
            Selector::Name(name) => self.get(name).map_or(name.clone(), |t| t.name().to_owned()),
            Selector::Tag(tag) => tag.clone(),
            Selector::Category(category) => category.clone(),
        };
        let switches = &mut writer.switches;
        let set = match selector {
            Selector::Name(_) => &mut switches.names,
            Selector::Tag(_) => &mut switches.tags,
            Selector::Category(_) => &mut switches.categories,
        };
        if off {
            set.insert(key.clone());
        } else {
            set.remove(&key);
        }
        let published = self.publish(&writer);
        published
            .tools
            .iter()
            .filter(|tool| match selector {
                Selector::Name(_) => tool.name() == key,
                Selector::Tag(tag) => tool.tags().any(|t| t == tag),
                Selector::Category(category) => tool.category() == Some(category.as_str()),
            })
            .count()
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
    ) -> Option<Vec<String>> {
        let snapshot = self.current();
        let members = snapshot.allow_sets.get(name)?;
        let bit = allow_bit(local, embedding);
        let mut names: Vec<String> = (snapshot.tools.iter().zip(members.iter()))
            .filter(|(_, member)| *member & bit != 0)
            .map(|(tool, _)| tool.name().to_owned())
            .collect();
        names.sort_unstable();
        Some(names)
    }

    /// The tool `name` names and its timeout, if `scope` may use it. Unknown and out-of-scope
    /// names take the same path and give the same answer.
    #[inline]
    pub(crate) fn resolve(&self, name: &str, scope: &Scope) -> Option<(Tool, Duration)> {
        let snapshot = self.current();
        match snapshot.get(name) {
            Some((i, tool)) if self.visible(&snapshot, i, scope) => {
                Some((tool.clone(), snapshot.slots[i].timeout))
            }
            Some(_) => None,
            None => {
                // Run the same check on some tool, so that a miss costs what a refusal costs.
                if !snapshot.tools.is_empty() {
                    std::hint::black_box(self.visible(&snapshot, 0, scope));
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
        let snapshot = self.current();
        let mut best: Option<(usize, &str)> = None;
        for (i, tool) in snapshot.tools.iter().enumerate() {
            if !self.visible(&snapshot, i, scope) {
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
        let tool = &snapshot.tools[i];
        if snapshot.slots[i].disabled || scope.level < tool.permission() {
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
        tool.enabled_for(scope)
    }

    pub(crate) fn openai_all_cache<'s>(&self, snapshot: &'s Snapshot) -> &'s OnceLock<Arc<Value>> {
        &snapshot.openai_all
    }

    /// The writer's lock (a panic while holding it leaves nothing half-written: the snapshot is
    /// only replaced whole).
    fn write(&self) -> MutexGuard<'_, Writer> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Builds the snapshot of `writer`'s state and makes it the one readers see; sends the
    /// changes from the previous one to subscribers.
    fn publish(&self, writer: &Writer) -> Arc<Snapshot> {
        let next = Arc::new(Snapshot::build(writer, &self.policy));
        let previous = self.snapshot.swap(Arc::clone(&next));
        if self.changes.receiver_count() > 0 {
            for change in lifecycle::changes(&previous, &next) {
                let _ = self.changes.send(change);
            }
        }
        next
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.len())
            .finish_non_exhaustive()
    }
}

/// The bit of an allow-list mode in a member byte.
fn allow_bit(local: bool, embedding: bool) -> u8 {
    1 << (usize::from(local) + 2 * usize::from(embedding))
}
