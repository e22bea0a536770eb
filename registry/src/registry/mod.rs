//! The registry: the tools, indexed into an immutable snapshot that readers share and writers
//! replace; lookup and listing; who may see what; run-time switches; the tools registered at
//! run time.
//!
//! Readers load the current snapshot (`Registry::current`, an `arc_swap` load that never blocks
//! and never sees half a change); a call keeps the [`Tool`] handle it resolved, so it finishes
//! with the tool it started with. Writers take one lock, change the write side (`Writer`) and
//! publish a new snapshot (`Registry::publish`), announcing the difference to subscribers.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Registry`]: the global registry, lookup and listing, the write side |
//! | `snapshot.rs` | the immutable index: sorted tools, names and aliases, resolved allow-lists |
//! | `linked.rs` | the linked tools, checked once; duplicate names with both source locations |
//! | `visibility.rs` | the one predicate of listing and execution, resolve, "did you mean" |
//! | `switches.rs` | [`Selector`]: switching tools off and on by name, tag or category; [`SwitchSet`], the switches a shared store keeps |
//! | `policy.rs` | what every stage reads (gate, stores, sink, timeouts, batch limits) and the defaults |
//! | `builder.rs` | [`RegistryBuilder`], [`BuildError`] |
//! | `lifecycle.rs` | run-time tools: register, replace, remove, snapshot, restore |
//! | `changes.rs` | what changed between two snapshots, for subscribers |
//! | `shared.rs` | [`Shared`]: a registry kept by a server or a gateway |

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use arc_swap::ArcSwap;
use rustc_hash::FxHashMap;

use crate::call::TypeMap;
use crate::def::Tool;
use crate::scope::Scope;
use crate::spec::{RegistryChange, ToolHandler};

mod builder;
mod calls;
mod changes;
mod discovery;
mod formats;
mod lifecycle;
mod linked;
mod listing;
mod scoped;
mod shared;
mod snapshot;
mod switches;
mod visibility;

use crate::exec::Policy;
pub use crate::exec::{
    APPROVAL_TTL, DEFAULT_TIMEOUT, GATE_TIMEOUT, MAX_CALLS, MAX_CONCURRENCY, SLOW_TIMEOUT,
};
pub use builder::{BuildError, RegistryBuilder};
pub use lifecycle::Registration;
pub use linked::{Clash, DuplicateToolError};
pub use listing::Listing;
pub use scoped::Scoped;
pub use shared::Shared;
pub(crate) use snapshot::Snapshot;
use switches::Switches;
pub use switches::{Selector, SwitchSet};

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

/// What a change starts from: the compiled tools, the run-time ones, the switches.
struct Writer {
    /// The compiled tools, sorted by name (shared with other registries of the same tools).
    linked: Arc<[Tool]>,
    /// Every name, alias and wire name of a compiled tool in ASCII lower case, with the name as
    /// written and the tool's position in `linked`: what a run-time spec may not take, in any
    /// letter case.
    linked_claims: FxHashMap<String, (String, usize)>,
    /// The tools registered at run time, by name.
    owned: BTreeMap<String, Tool>,
    /// Every name and wire name of a tool in `owned`, in ASCII lower case, with the claim as
    /// written and the tool's name: what another run-time spec may not take, in any letter
    /// case, found in one lookup.
    owned_claims: FxHashMap<String, (String, String)>,
    switches: Switches,
    /// Handlers given to the builder by name, attached to specs that come without one
    /// ([`Registry::restore`]).
    handlers: FxHashMap<String, ToolHandler>,
}

impl Registry {
    /// Every `#[tool]` in every crate linked into the binary, with default policies. Built on
    /// first use.
    ///
    /// # Panics
    ///
    /// When two linked crates define a tool of the same name (the message names both source
    /// locations), or a tool's arguments do not fit a target it declares. Use
    /// [`Registry::try_global`] to handle these as errors.
    pub fn global() -> &'static Registry {
        match Self::try_global() {
            Ok(registry) => registry,
            Err(error) => panic!("{error}"),
        }
    }

    /// Like [`Registry::global`], but reports what stops it as an error.
    pub fn try_global() -> Result<&'static Registry, BuildError> {
        static GLOBAL: OnceLock<Result<Registry, BuildError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| Self::builder().build())
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
            for change in changes::changes(&previous, &next) {
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
