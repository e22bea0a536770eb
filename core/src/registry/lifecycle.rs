//! Tools that come and go while the registry is in use, under the Tool Registry v2 rules:
//! register, replace, switch, remove, snapshot and restore, and the changes subscribers see.

use crate::audit::wall_now;
use std::cmp::Ordering;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use super::switches::Switches;
use super::writer::Writer;
use super::{Listing, Registry, Snapshot};
use crate::def::Tool;
use crate::format::wire_aliases;
use crate::spec::{Origin, RegisterError, RegistrySnapshot, SnapshotEntry, ToolHandler, ToolSpec};

/// A tool as the registry holds it: the tool, and whether it is switched on.
#[derive(Debug, Clone)]
pub struct Registration {
    /// The tool.
    pub tool: Tool,
    /// Switched on: listed and callable (within each caller's scope).
    pub enabled: bool,
}

impl Registry {
    /// Registers a tool from its spec, run by `handler`: a [`ToolHandler`] (an `async` closure
    /// over the arguments, validated against the spec's input schema, and the call's [`Ctx`](crate::Ctx):
    /// [`ToolHandler::new`]; or one that answers whole results: [`ToolHandler::from_results`]),
    /// or `None`: then the builder's handler of that name
    /// ([`RegistryBuilder::handler`](crate::RegistryBuilder::handler)) runs it, and without
    /// one a call gets [`ToolError::NoHandler`](crate::ToolError::NoHandler).
    ///
    /// - a new name is registered, switched on, stamped with the time;
    /// - a spec equal to the registered one returns that registration unchanged (its handler
    ///   stays the one it was registered with);
    /// - a spec of a greater version replaces it (switched on, stamped anew); calls already
    ///   running finish with the tool they started with. Versions are semantic versions compared
    ///   by precedence (`1.10.0` > `1.9.0` > `1.9.0-rc.1`; build metadata `+…` is not
    ///   compared), and a spec without a version is below every version: a versioned spec
    ///   replaces an unversioned one, never the other way;
    /// - a different spec of the same version is refused: bump the version to replace a tool
    ///   ([`RegisterError::SameVersion`]). Two unversioned specs have the same version;
    /// - a spec of a lower version is refused ([`RegisterError::Downgrade`]): to go back to an
    ///   older spec on purpose, [`remove`](Self::remove) the tool first.
    ///
    /// A name or alias of a compiled tool cannot be registered ([`RegisterError::Compiled`]),
    /// nor can a name that differs from a compiled tool's name or alias, or from another
    /// run-time tool's name, only in ASCII letter case ([`RegisterError::CaseClash`]): a model
    /// or client that normalizes case would call one for the other.
    /// Calls go through the same pipeline as a compiled tool's: scope, rate limits, gate,
    /// confirmation, timeout, audit.
    ///
    /// ```
    /// # use serde_json::json;
    /// use tool_registry::spec::ToolHandler;
    /// use tool_registry::{Registry, ToolSpec};
    ///
    /// let registry = Registry::builder().without_linked().build()?;
    /// let echo = ToolSpec::builder("echo").description("Say it back.").build()?;
    /// registry.register(echo, ToolHandler::new(|args, _ctx| async move { Ok::<_, String>(args) }))?;
    /// let listed = ToolSpec::builder("listed").description("Listed, not run.").build()?;
    /// registry.register(listed, None)?;
    /// assert_eq!(registry.len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn register(
        &self,
        spec: ToolSpec,
        handler: impl Into<Option<ToolHandler>>,
    ) -> Result<Registration, RegisterError> {
        self.put(spec, handler.into())
    }

    fn put(
        &self,
        spec: ToolSpec,
        handler: Option<ToolHandler>,
    ) -> Result<Registration, RegisterError> {
        let mut writer = self.write();
        let name = spec.tool_name().to_owned();
        if let Some(taken) = compiled(&writer, &name).or_else(|| run_time_clash(&writer, &name)) {
            return Err(taken);
        }
        if let Some(existing) = writer.owned.get(&name)
            && let Some(registered) = existing.owned().map(|owned| &owned.spec)
        {
            if *registered == spec {
                let existing = existing.clone();
                return Ok(self.registration_of(existing));
            }
            match spec.version_order(registered) {
                Ordering::Greater => {}
                Ordering::Equal => {
                    return Err(RegisterError::SameVersion {
                        tool: name,
                        version: spec.version().map(str::to_owned),
                    });
                }
                Ordering::Less => {
                    return Err(RegisterError::Downgrade {
                        tool: name,
                        registered: registered.version().unwrap_or_default().to_owned(),
                        given: spec.version().map(str::to_owned),
                    });
                }
            }
        }
        let handler = handler.or_else(|| writer.handlers.get(&name).cloned());
        let tool = crate::def::owned(spec, handler, wall_now())?;
        writer.switches.names.remove(&name);
        for claim in claims(&name) {
            let key = claim.to_ascii_lowercase();
            writer.owned_claims.insert(key, (claim, name.clone()));
        }
        writer.owned.insert(name, tool.clone());
        let snapshot = self.publish(&writer);
        Ok(registration_in(&snapshot, tool))
    }

    /// Every tool, compiled and run-time, sorted by name, each with its switch: what
    /// administering the registry starts from (a tool switched off is listed; keep
    /// `enabled` ones for what is switched on). What a caller may see is
    /// [`tools`](Self::tools)' answer.
    pub fn registrations(&self) -> Vec<Registration> {
        let snapshot = self.current();
        (snapshot.tools.iter().zip(&snapshot.slots))
            .map(|(tool, slot)| Registration {
                tool: tool.clone(),
                enabled: !slot.disabled,
            })
            .collect()
    }

    /// The registration of a name or alias, switched on or not.
    pub fn registration(&self, name: &str) -> Option<Registration> {
        let snapshot = self.current();
        let (i, tool) = snapshot.get(name)?;
        Some(Registration {
            tool: tool.clone(),
            enabled: !snapshot.slots[i].disabled,
        })
    }

    /// Removes a run-time tool; idempotent (removing a name that is not registered does
    /// nothing). Calls already running finish; later calls get `unknown_tool`. A compiled tool
    /// cannot be removed ([`RegisterError::Compiled`]): switch it off instead.
    pub fn remove(&self, name: &str) -> Result<Option<Registration>, RegisterError> {
        let mut writer = self.write();
        if let Some(compiled) = compiled(&writer, name) {
            return Err(compiled);
        }
        let Some(tool) = writer.owned.remove(name) else {
            return Ok(None);
        };
        for claim in claims(name) {
            writer.owned_claims.remove(&claim.to_ascii_lowercase());
        }
        let enabled = self.registration_of(tool.clone()).enabled;
        writer.switches.names.remove(name);
        self.publish(&writer);
        Ok(Some(Registration { tool, enabled }))
    }

    /// Every tool with its spec and switch, sorted by name: compiled tools as `linked` (their
    /// spec is what the declaration amounts to), run-time ones as `run_time` with the time they
    /// were registered. [`Registry::restore`] reads it back.
    pub fn snapshot(&self) -> RegistrySnapshot {
        self.snapshot_where(|_, _| true)
    }

    /// The snapshot of the tools `listing` keeps were every tool switched on: a tool switched
    /// off keeps its entry, with its switch, as in [`snapshot`](Self::snapshot). What
    /// `toolreg snapshot` prints for its caller's scope.
    ///
    /// ```
    /// # use tool_registry::{tool, Listing, Registry, Scope};
    /// /// Restart the service.
    /// #[tool(name = "ops.restart", permission = "admin")]
    /// fn restart() -> &'static str { "ok" }
    ///
    /// let registry = Registry::global();
    /// let names = |listing| -> Vec<String> {
    ///     registry.snapshot_for(listing).tools.into_iter().map(|entry| entry.spec.tool_name().to_owned()).collect()
    /// };
    /// assert!(names(Listing::every()).contains(&"ops.restart".to_owned()));
    /// assert!(!names(Listing::of(&Scope::guest())).contains(&"ops.restart".to_owned()));
    /// ```
    pub fn snapshot_for<'a>(&self, listing: impl Into<Listing<'a>>) -> RegistrySnapshot {
        let mut listing = listing.into();
        self.snapshot_where(|snapshot, i| {
            listing
                .scope
                .is_none_or(|scope| self.in_scope(snapshot, i, scope))
                && listing.keeps(&snapshot.tools[i])
        })
    }

    /// The snapshot of the tools `keep` keeps, by position, all read from one state.
    fn snapshot_where(&self, mut keep: impl FnMut(&Snapshot, usize) -> bool) -> RegistrySnapshot {
        let snapshot = self.current();
        RegistrySnapshot {
            tools: (snapshot.tools.iter().zip(&snapshot.slots))
                .enumerate()
                .filter(|(i, _)| keep(&snapshot, *i))
                .map(|(_, (tool, slot))| SnapshotEntry {
                    spec: tool.spec(),
                    enabled: !slot.disabled,
                    origin: if tool.is_linked() {
                        Origin::Linked
                    } else {
                        Origin::RunTime
                    },
                    created_at: tool.created_at(),
                })
                .collect(),
        }
    }

    /// Makes the registry's tools those of `snapshot`, in one change: run-time tools are
    /// registered from their specs (with the time they were first registered) and the ones not
    /// in the snapshot are removed; every tool is switched as the snapshot says (tag and
    /// category switches are replaced by per-tool ones). A run-time tool gets the handler that
    /// the tool of its name has now, or the builder's handler of that name, or none.
    ///
    /// Nothing changes when the snapshot names a compiled tool this program does not have,
    /// gives a run-time spec a compiled tool's name or alias, or has names that
    /// [`register`](Self::register) would refuse side by side: two that meet on the wire, or
    /// that differ only in ASCII letter case (from each other or from a compiled tool). Versions
    /// are not compared with the tools registered now: a restore sets the whole state, removals
    /// included, so it is how an application rolls its tools back on purpose (its specs were
    /// checked, the version's syntax included, when the snapshot was read).
    pub fn restore(&self, snapshot: &RegistrySnapshot) -> Result<(), RegisterError> {
        let mut writer = self.write();
        let mut owned = BTreeMap::new();
        let mut off = std::collections::BTreeSet::new();
        // The names the restored run-time tools claim, in lower case, with the claim as written
        // and the tool's name: to refuse two that meet on the wire or differ only in case.
        let mut claimed: FxHashMap<String, (String, String)> = FxHashMap::default();
        for entry in &snapshot.tools {
            let name = entry.spec.tool_name();
            let linked = writer.linked.iter().any(|tool| tool.name() == name);
            match entry.origin {
                Origin::Linked if !linked => {
                    return Err(RegisterError::UnknownTool {
                        name: name.to_owned(),
                    });
                }
                Origin::Linked => {}
                Origin::RunTime => {
                    if let Some(compiled) = compiled(&writer, name) {
                        return Err(compiled);
                    }
                    for claim in claims(name) {
                        match claimed.get(&claim.to_ascii_lowercase()) {
                            Some((theirs, other)) if other != name => {
                                return Err(clash(name, &claim, theirs, other, false));
                            }
                            _ => {
                                claimed
                                    .insert(claim.to_ascii_lowercase(), (claim, name.to_owned()));
                            }
                        }
                    }
                    let handler = writer
                        .owned
                        .get(name)
                        .and_then(|tool| tool.owned())
                        .and_then(|owned| owned.handler.clone())
                        .or_else(|| writer.handlers.get(name).cloned());
                    let reuse = writer.owned.get(name).filter(|tool| {
                        tool.owned().is_some_and(|o| {
                            o.spec == entry.spec && Some(o.created_at) == entry.created_at
                        })
                    });
                    let tool = match reuse {
                        Some(tool) => tool.clone(),
                        None => crate::def::owned(
                            entry.spec.clone(),
                            handler,
                            entry.created_at.unwrap_or_else(wall_now),
                        )?,
                    };
                    owned.insert(name.to_owned(), tool);
                }
            }
            if !entry.enabled {
                off.insert(name.to_owned());
            }
        }
        writer.owned = owned;
        writer.owned_claims = claimed;
        writer.switches = Switches {
            names: off,
            ..Switches::default()
        };
        self.publish(&writer);
        Ok(())
    }

    fn registration_of(&self, tool: Tool) -> Registration {
        let snapshot = self.current();
        registration_in(&snapshot, tool)
    }
}

fn registration_in(snapshot: &Snapshot, tool: Tool) -> Registration {
    let enabled = snapshot
        .get(tool.name())
        .is_some_and(|(i, _)| !snapshot.slots[i].disabled);
    Registration { tool, enabled }
}

/// A name and the wire names written for it.
fn claims(name: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::once(name.to_owned()).chain(wire_aliases(name))
}

/// Every name, alias and wire name of `tools` in ASCII lower case, with the claim as written
/// and the position of the tool that has it.
pub(super) fn claims_of(tools: &[Tool]) -> FxHashMap<String, (String, usize)> {
    let mut claimed = FxHashMap::default();
    for (i, tool) in tools.iter().enumerate() {
        let names = std::iter::once(tool.name()).chain(tool.aliases().iter().copied());
        for name in names {
            for claim in claims(name) {
                claimed
                    .entry(claim.to_ascii_lowercase())
                    .or_insert((claim, i));
            }
        }
    }
    claimed
}

/// The error for a name whose own claims (the name and its wire names) meet a compiled tool's
/// name, alias or wire name, exactly or in another letter case.
fn compiled(writer: &Writer, name: &str) -> Option<RegisterError> {
    claims(name).find_map(|claim| {
        let (theirs, i) = writer.linked_claims.get(&claim.to_ascii_lowercase())?;
        Some(if *theirs == claim {
            RegisterError::Compiled {
                name: name.to_owned(),
                at: writer.linked[*i].source().map(ToString::to_string),
            }
        } else {
            RegisterError::CaseClash {
                name: name.to_owned(),
                other: theirs.clone(),
                compiled: true,
            }
        })
    })
}

/// The error for a run-time name whose claims meet another run-time tool's name or wire name,
/// exactly (`a.b` and `a__b` are one name to a provider that refuses `.`) or in another letter
/// case: one lookup per claim in the writer's index.
fn run_time_clash(writer: &Writer, name: &str) -> Option<RegisterError> {
    claims(name).find_map(|claim| {
        let (theirs, other) = writer.owned_claims.get(&claim.to_ascii_lowercase())?;
        (other != name).then(|| clash(name, &claim, theirs, other, false))
    })
}

/// The error for `name`, whose `claim` meets `theirs`, a claim of the tool `other`: the same
/// claim is a wire clash, the same in another case a case clash.
fn clash(name: &str, claim: &str, theirs: &str, other: &str, compiled: bool) -> RegisterError {
    if claim == theirs {
        RegisterError::WireName {
            name: name.to_owned(),
            wire: claim.to_owned(),
            other: other.to_owned(),
        }
    } else {
        RegisterError::CaseClash {
            name: name.to_owned(),
            other: theirs.to_owned(),
            compiled,
        }
    }
}
