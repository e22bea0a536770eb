//! The write side of a registry: what each change starts from (the compiled tools, the
//! run-time ones, the switches, the handlers given by name), changed under one lock.

use std::collections::BTreeMap;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::switches::Switches;
use crate::def::Tool;
use crate::spec::ToolHandler;

/// What a change starts from: the compiled tools, the run-time ones, the switches.
pub(super) struct Writer {
    /// The compiled tools, sorted by name (shared with other registries of the same tools).
    pub(super) linked: Arc<[Tool]>,
    /// Every name, alias and wire name of a compiled tool in ASCII lower case, with the name as
    /// written and the tool's position in `linked`: what a run-time spec may not take, in any
    /// letter case.
    pub(super) linked_claims: FxHashMap<String, (String, usize)>,
    /// The tools registered at run time, by name.
    pub(super) owned: BTreeMap<String, Tool>,
    /// Every name and wire name of a tool in `owned`, in ASCII lower case, with the claim as
    /// written and the tool's name: what another run-time spec may not take, in any letter
    /// case, found in one lookup.
    pub(super) owned_claims: FxHashMap<String, (String, String)>,
    pub(super) switches: Switches,
    /// Handlers given to the builder by name, attached to specs that come without one
    /// ([`Registry::restore`]).
    pub(super) handlers: FxHashMap<String, ToolHandler>,
}
