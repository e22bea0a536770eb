//! The tools linked into the program (every `#[tool]` in the `linkme` slice), checked once:
//! sorted by name, and every name or alias claimed twice reported with both source locations.

use std::fmt;
use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use crate::def::{SourceLocation, Tool, ToolDef};
use crate::format::wire_aliases;

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
    /// The contested name is the wire name of one of them: what providers that refuse `.` in
    /// a name are given (see [`Provider::wire_name`](crate::format::Provider::wire_name)).
    pub wire_name: bool,
}

impl fmt::Display for DuplicateToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, clash) in self.clashes.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            if clash.wire_name {
                write!(
                    f,
                    "tool names meet on the wire: `{}` is what providers that refuse `.` are given for the tool at {}, and it is also a name of the tool at {}; give one of them another name with #[tool(name = \"...\")]",
                    clash.name, clash.first, clash.second
                )?;
                continue;
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

/// Sorts definitions by name and reports every name or alias claimed twice.
pub(super) fn checked(mut defs: Vec<&'static ToolDef>) -> Result<Vec<Tool>, DuplicateToolError> {
    defs.sort_by(|a, b| {
        (a.name(), a.source().file, a.source().line).cmp(&(
            b.name(),
            b.source().file,
            b.source().line,
        ))
    });
    // Each name, alias and wire name, with the position of the tool that claims it and
    // whether it is a wire name.
    let mut seen: FxHashMap<String, (usize, bool)> = FxHashMap::default();
    let mut clashes = Vec::new();
    // A name claimed twice is also a wire name claimed twice: reported once, as the name.
    let mut reported: Vec<(usize, usize)> = Vec::new();
    for (i, &def) in defs.iter().enumerate() {
        let names = || std::iter::once(def.name()).chain(def.aliases().iter().copied());
        let claims = names()
            .map(|name| (name.to_owned(), false))
            .chain(names().flat_map(|name| wire_aliases(name).map(|wire| (wire, true))));
        for (name, wire) in claims {
            match seen.get(&name) {
                // A tool's own name and wire name may meet (an alias `a.b` beside `a__b`).
                Some(&(first, _)) if first == i || (wire && reported.contains(&(first, i))) => {}
                Some(&(first, first_wire)) => {
                    reported.push((first, i));
                    clashes.push(Clash {
                        name,
                        first: *defs[first].source(),
                        second: *def.source(),
                        wire_name: wire || first_wire,
                    });
                }
                None => {
                    seen.insert(name, (i, wire));
                }
            }
        }
    }
    if !clashes.is_empty() {
        clashes.sort_by(|a, b| a.name.cmp(&b.name));
        return Err(DuplicateToolError { clashes });
    }
    Ok(defs.into_iter().map(crate::def::linked).collect())
}

/// The tools linked into the program, checked and sorted once.
pub(super) fn linked_tools() -> Result<Arc<[Tool]>, DuplicateToolError> {
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
