//! [`Registry`]: the published snapshot readers load, the writer's lock, lookup and listing,
//! and the channel that announces changes.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use arc_swap::ArcSwap;

use super::Snapshot;
use super::writer::Writer;
use crate::call::TypeMap;
use crate::def::Tool;
use crate::exec::Policy;
use crate::scope::Scope;
use crate::spec::RegistryChange;

/// A set of tools with everything built from them once (lookup by name and alias, the sorted
/// listing, cached schemas and provider formats) and the policies every call goes through.
///
/// [`Registry::global`] holds every `#[tool]` linked into the binary with default policies;
/// [`Registry::builder`] adds application state, more tools, a gate, stores and policies.
/// Tools can also be registered, replaced, switched and removed while the registry is in use
/// ([`Registry::register`]): readers never wait for a writer and never see half a change.
pub struct Registry {
    /// What listings and calls read: replaced as a whole by each change.
    pub(super) snapshot: ArcSwap<Snapshot>,
    /// What changes build the next snapshot from; one writer at a time.
    pub(super) writer: Mutex<Writer>,
    pub(super) changes: tokio::sync::broadcast::Sender<RegistryChange>,
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

    /// Looks a tool up by name or alias, in O(1), whatever the scope and switches.
    pub fn get(&self, name: &str) -> Option<Tool> {
        let snapshot = self.current();
        match snapshot.get(name) {
            Some((_, tool)) => Some(tool.clone()),
            None => self.meta_tool(&snapshot, name).cloned(),
        }
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
