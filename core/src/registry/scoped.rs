//! The registry as the parser reads it: every tool, or the tools one scope may see
//! ([`Scoped`]), each with its input schema and tag form.

use std::borrow::Cow;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::{Registry, Snapshot};
use crate::def::{Tool, ToolDef};
use crate::parse::{TagSet, TagTool, ToolSet};
use crate::scope::Scope;

/// Every tool of the registry, whatever the scope: for the application itself. Parse what a
/// user's model wrote with [`Registry::scoped`] instead, so that a tool the user may not see
/// reads exactly as an unknown one.
impl ToolSet for Registry {
    fn contains(&self, name: &str) -> bool {
        self.lookup(name).is_some()
    }
    fn schema(&self, name: &str) -> Option<Cow<'_, Value>> {
        let tool = self.lookup(name)?;
        // A compiled tool's entry lives as long as the program.
        Some(match tool.static_input_schema() {
            Some(schema) => Cow::Borrowed(schema),
            None => Cow::Owned(tool.input_schema().as_value().clone()),
        })
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        for_registry(&self.current().tools, |_| true)
    }
}

/// The tools of a registry that one [`Scope`] may see and run, as the parser sees them: a
/// hidden tool's name is unknown, its schema is not used, its tag line is plain text. Made by
/// [`Registry::scoped`].
///
/// ```
/// use tool_registry::{Registry, Scope, parse};
///
/// # #[tool_registry::tool(name = "ops.restart", permission = "admin")]
/// # /// Restart the service.
/// # fn restart() -> &'static str { "ok" }
/// let registry = Registry::global();
/// let output = r#"<tool_call>{"name": "ops.restart", "arguments": {}}</tool_call>"#;
/// let as_guest = parse::any(output, &registry.scoped(&Scope::guest()));
/// assert!(as_guest.calls.is_empty() && as_guest.unknown.len() == 1);
/// let as_owner = parse::any(output, &registry.scoped(&Scope::trusted()));
/// assert_eq!(as_owner.calls[0].name, "ops.restart");
/// ```
///
/// It reads the registry's tools as they were when it was made: tools registered or removed
/// later are not seen by it.
#[derive(Clone)]
pub struct Scoped<'r> {
    registry: &'r Registry,
    scope: &'r Scope,
    snapshot: Arc<Snapshot>,
}

impl Registry {
    /// This registry's tools as `scope` sees them, for the parser (see [`Scoped`]).
    pub fn scoped<'r>(&'r self, scope: &'r Scope) -> Scoped<'r> {
        Scoped {
            registry: self,
            scope,
            snapshot: arc_swap::Guard::into_inner(self.current()),
        }
    }
}

impl Scoped<'_> {
    fn find(&self, name: &str) -> Option<&Tool> {
        let Some((i, tool)) = self.snapshot.get(name) else {
            return self
                .registry
                .meta_tool_for(&self.snapshot, name, self.scope);
        };
        self.registry
            .visible(&self.snapshot, i, self.scope)
            .then_some(tool)
    }
}

impl ToolSet for Scoped<'_> {
    fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }
    fn schema(&self, name: &str) -> Option<Cow<'_, Value>> {
        Some(Cow::Borrowed(self.find(name)?.input_schema().as_value()))
    }
    fn tags(&self) -> Option<Arc<TagSet>> {
        for_registry(&self.snapshot.tools, |tool| {
            self.find(tool.name()).is_some()
        })
    }
}

impl fmt::Debug for Scoped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scoped").field("scope", self.scope).finish()
    }
}

/// The tag set of the tools of `snapshot` that `keep` accepts, built on first use and shared
/// by every registry (and scope) with the same tag tools.
fn for_registry(tools: &[Tool], keep: impl Fn(&Tool) -> bool) -> Option<Arc<TagSet>> {
    type Cache = Mutex<FxHashMap<Vec<usize>, Option<Arc<TagSet>>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();

    // Only compiled tools have tag forms.
    let defs: Vec<&'static ToolDef> = tools
        .iter()
        .filter(|tool| tool.tag().is_some() && keep(tool))
        .filter_map(Tool::definition)
        .collect();
    if defs.is_empty() {
        return None;
    }
    // `ToolDef`s are statics: their addresses name them for the life of the program.
    let key: Vec<usize> = defs
        .iter()
        .map(|d| std::ptr::from_ref::<ToolDef>(d) as usize)
        .collect();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    cache
        .entry(key)
        .or_insert_with(|| {
            let schemas: Vec<Option<Value>> = defs
                .iter()
                .map(|def| crate::def::linked(def).static_input_schema().cloned())
                .collect();
            let tools = defs.iter().zip(&schemas).filter_map(|(def, schema)| {
                let tool = TagTool::new(def.name(), def.tag()?)
                    .strip_from_display(def.strip_from_display());
                Some(match schema {
                    Some(schema) => tool.schema(schema),
                    None => tool,
                })
            });
            TagSet::new(tools).map(Arc::new)
        })
        .clone()
}
