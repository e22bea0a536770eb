//! [`Registry`]: the published snapshot readers load, the writer's lock, lookup and listing,
//! and the channel that announces changes.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;

use super::Snapshot;
use super::listing::Listing;
use super::writer::Writer;
use crate::call::TypeMap;
use crate::def::Tool;
use crate::exec::Policy;
use crate::spec::RegistryChange;

/// A set of tools with everything built from them once (lookup by name and alias, the sorted
/// listing, cached schemas and provider formats) and the policies every call goes through.
///
/// [`Registry::global`] holds every `#[tool]` linked into the binary with default policies;
/// [`Registry::builder`] adds application state, more tools, a gate, stores and policies.
/// Tools can also be registered, replaced, switched and removed while the registry is in use
/// ([`Registry::register`]): readers never wait for a writer and never see half a change.
///
/// Its methods follow one naming scheme, set out in the crate documentation's
/// [Naming](crate#naming) section.
pub struct Registry {
    /// What listings and calls read: replaced as a whole by each change.
    pub(super) snapshot: ArcSwap<Snapshot>,
    /// What changes build the next snapshot from; one writer at a time.
    pub(super) writer: Mutex<Writer>,
    pub(super) changes: tokio::sync::broadcast::Sender<RegistryChange>,
    /// The resources, resource templates and prompts: replaced as a whole by each change.
    pub(super) offers: ArcSwap<crate::offer::set::Offers>,
    pub(crate) state: TypeMap,
    pub(crate) policy: Policy,
}

impl Registry {
    /// The tools as they are now; later changes publish a new snapshot and leave this one as
    /// it is.
    #[inline]
    pub(crate) fn current(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.snapshot.load()
    }

    /// Looks a tool up by name or alias, in O(1), as `listing` holds it: with a `&Scope`, `None`
    /// when the tool does not exist, is outside the scope or is switched off (a deferred tool
    /// is found: it stays callable); with [`Listing::every`], any tool whatever the scope and
    /// switches; either way `None` when the listing's filter leaves the tool out. The
    /// meta-tools of [`discovery`](crate::discovery) are found when the registry answers them.
    ///
    /// ```
    /// # use tool_registry::{tool, Listing, Registry, Scope};
    /// /// Restart the service.
    /// #[tool(name = "ops.reboot", permission = "admin")]
    /// fn reboot() -> &'static str { "ok" }
    ///
    /// let registry = Registry::global();
    /// assert!(registry.get("ops.reboot", Listing::every()).is_some());
    /// assert!(registry.get("ops.reboot", &Scope::guest()).is_none());
    /// ```
    pub fn get<'a>(&self, name: &str, listing: impl Into<Listing<'a>>) -> Option<Tool> {
        let mut listing = listing.into();
        let tool = match listing.scope {
            Some(scope) => self.resolve(name, scope).map(|(tool, ..)| tool),
            None => self.lookup(name),
        }?;
        listing.keeps(&tool).then_some(tool)
    }

    /// The tool a name or alias names, whatever the scope and switches.
    pub(crate) fn lookup(&self, name: &str) -> Option<Tool> {
        let snapshot = self.current();
        match snapshot.get(name) {
            Some((_, tool)) => Some(tool.clone()),
            None => self.meta_tool(&snapshot, name).cloned(),
        }
    }

    /// The tools `listing` holds, sorted by name: with a `&Scope`, those it may see (tools
    /// marked `defer_loading` are left out unless the scope includes deferred tools; they stay
    /// callable); with [`Listing::every`], every tool whatever the scope and switches.
    pub fn tools<'a>(&self, listing: impl Into<Listing<'a>>) -> Vec<Tool> {
        let mut listing = listing.into();
        let snapshot = self.current();
        match listing.scope {
            Some(scope) => self
                .listed(&snapshot, scope)
                .filter(|(_, tool)| listing.keeps(tool))
                .map(|(_, tool)| tool.clone())
                .collect(),
            None => (snapshot.tools.iter())
                .filter(|tool| listing.keeps(tool))
                .cloned()
                .collect(),
        }
    }

    /// The number of tools, whatever the scope.
    pub fn len(&self) -> usize {
        self.current().tools.len()
    }

    /// Whether the registry has no tools.
    pub fn is_empty(&self) -> bool {
        self.current().tools.is_empty()
    }

    /// Every later change to the tools: registered, replaced, switched on or off (by name, tag
    /// or category), removed. A subscriber that falls more than 1,024 changes behind misses the
    /// oldest ([`tokio::sync::broadcast`]).
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<RegistryChange> {
        self.changes.subscribe()
    }

    /// The writer's lock (a panic while holding it leaves nothing half-written: the snapshot is
    /// only replaced whole).
    pub(super) fn write(&self) -> MutexGuard<'_, Writer> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Builds the snapshot of `writer`'s state and makes it the one readers see; sends the
    /// changes from the previous one to subscribers.
    pub(super) fn publish(&self, writer: &Writer) -> Arc<Snapshot> {
        let next = Arc::new(Snapshot::build(writer, &self.policy));
        let previous = self.snapshot.swap(Arc::clone(&next));
        if self.changes.receiver_count() > 0 {
            for change in super::changes::changes(&previous, &next) {
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
