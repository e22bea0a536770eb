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

mod builder;
mod calls;
mod changes;
mod discovery;
mod formats;
mod index;
mod lifecycle;
mod linked;
mod listing;
mod scoped;
mod shared;
mod snapshot;
mod switches;
mod switching;
mod visibility;
mod writer;

pub use crate::exec::{
    APPROVAL_TTL, DEFAULT_TIMEOUT, GATE_TIMEOUT, MAX_CALLS, MAX_CONCURRENCY, SLOW_TIMEOUT,
};
pub use builder::{BuildError, RegistryBuilder};
pub use index::Registry;
pub use lifecycle::Registration;
pub use linked::{Clash, DuplicateToolError};
pub use listing::Listing;
pub use scoped::Scoped;
pub use shared::Shared;
pub(crate) use snapshot::Snapshot;
pub use switches::{Selector, SwitchSet};
