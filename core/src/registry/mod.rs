//! The registry: the tools, indexed into an immutable snapshot that readers share and writers
//! replace; lookup and listing; who may see what; run-time switches; the tools registered at
//! run time.
//!
//! Readers load the current snapshot (`Registry::current`, an `arc_swap` load that never blocks
//! and never sees half a change); a call keeps the [`Tool`](crate::Tool) handle it resolved, so it finishes
//! with the tool it started with. Writers take one lock, change the write side (`Writer`) and
//! publish a new snapshot (`Registry::publish`), announcing the difference to subscribers.
//!
//! Every public method of [`Registry`] is defined in this folder; the layers below take what
//! they need (a tool, a scope, a list of tools, the policy) as arguments.
//!
//! | file | what |
//! | --- | --- |
//! | `index.rs` | [`Registry`]: the published snapshot, lookup and listing, the writer's lock, [`Registry::subscribe`] |
//! | `writer.rs` | the write side: what each change starts from |
//! | `snapshot.rs` | the immutable index: sorted tools, names, aliases and wire names, resolved allow-lists |
//! | `changes.rs` | what changed between two snapshots, for subscribers |
//! | `linked.rs` | the linked tools, checked once; duplicate names with both source locations |
//! | `builder.rs` | [`RegistryBuilder`](crate::RegistryBuilder), [`BuildError`], [`Registry::global`] |
//! | `visibility.rs` | the one predicate of listing and execution, resolve, "did you mean" |
//! | `switches.rs` | [`Selector`], [`SwitchSet`]: which tools are switched off |
//! | `switching.rs` | [`Registry::disable`], [`Registry::enable`], [`SwitchSet::apply`] |
//! | `lifecycle.rs` | run-time tools: register, replace, remove, snapshot, restore; [`Registration`] |
//! | `calls.rs` | calling tools ([`Registry::call`] and its [`Call`], batches, approvals), through the pipeline of [`exec`](crate::exec) |
//! | `listing.rs` | [`Listing`]: which tools a lookup, a list, a catalog or a prompt block holds |
//! | `formats.rs` | what each provider is given: tool lists, the prompt block, result messages, the catalog |
//! | `offers.rs` | the resources, templates and prompts: who sees which, reading, getting, completion, run-time registration |
//! | `discovery.rs` | the meta-tools a snapshot answers, and their answers |
//! | `scoped.rs` | the registry as the parser reads it: [`Scoped`] |
//! | `shared.rs` | [`Shared`]: a registry kept by a server or a gateway |

pub(crate) mod builder;
mod calls;
mod changes;
mod discovery;
mod formats;
pub(crate) mod index;
mod lifecycle;
mod linked;
pub(crate) mod listing;
mod offers;
mod scoped;
mod shared;
mod snapshot;
mod switches;
mod switching;
mod visibility;
mod writer;

pub use builder::BuildError;
pub use calls::Call;
pub(crate) use index::Registry;
pub use lifecycle::Registration;
pub use linked::{Clash, DuplicateToolError};
pub(crate) use listing::Listing;
pub use scoped::Scoped;
pub use shared::Shared;
pub(crate) use snapshot::Snapshot;
pub use switches::{Selector, SwitchSet};
