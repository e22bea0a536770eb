//! [`Tool`]: one tool of a registry, compiled (`#[tool]`, linked into the program) or
//! registered at run time from a [`ToolSpec`], behind one cheap handle.

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, SystemTime};

use rustc_hash::FxHashMap;
use schemars::Schema;
use serde_json::Value;

use crate::call::{BoxFuture, CallEnv};
use crate::def::first_sentence;
use crate::spec::{ToolHandler, ToolSpec};
use crate::{
    Annotations, ArgInfo, Cost, Ctx, MAX_ARGS_BYTES, Permission, Risk, Scope, SourceLocation,
    TagForm, Tier, ToolArgs, ToolDef, ToolError, ToolResult,
};

/// One tool of a registry: what [`Registry::get`](crate::Registry::get) and
/// [`Registry::tools`](crate::Registry::tools) hand out, what formats, the catalog, gates and
/// the parser read.
///
/// A tool is either *linked* (declared with `#[tool]`: static, lives as long as the program)
/// or *owned* (registered at run time with [`Registry::register`](crate::Registry::register):
/// freed when the last handle to it goes). Cloning is free for a linked tool and one reference
/// count for an owned one. A handle keeps its tool as it was: a call in flight finishes with the
/// tool it started with, even when the registry replaces or removes it meanwhile.
#[derive(Clone)]
pub struct Tool(Handle);

#[derive(Clone)]
enum Handle {
    Linked(&'static Entry),
    Owned(Arc<Entry>),
}

/// A tool with what the registry derives from it once: the risk level, whether calls wait for
/// approval, whether any gate stage applies, and the cached schema and provider format.
pub(crate) struct Entry {
    pub(crate) kind: Kind,
    pub(crate) risk: Risk,
    /// Calls wait for a person's approval.
    pub(crate) confirm: bool,
    /// No rate limits, no gate and no confirmation: calls go straight from validation to the
    /// handler.
    pub(crate) direct: bool,
    /// The length of the module part of the name (the whole name without a `.`).
    module_len: usize,
    input_schema: OnceLock<Schema>,
    pub(crate) openai: OnceLock<Value>,
}

pub(crate) enum Kind {
    Linked(&'static ToolDef),
    Owned(Owned),
}

/// A tool registered at run time: its spec, its handler if it has one, and the compiled
/// validator of its input schema.
pub(crate) struct Owned {
    pub(crate) spec: ToolSpec,
    pub(crate) handler: Option<ToolHandler>,
    pub(crate) created_at: SystemTime,
    validator: Arc<jsonschema::Validator>,
}

impl Entry {
    fn new(kind: Kind) -> Self {
        let mut entry = Self {
            kind,
            risk: Risk::Low,
            confirm: false,
            direct: false,
            module_len: 0,
            input_schema: OnceLock::new(),
            openai: OnceLock::new(),
        };
        let tool = TempTool(&entry);
        let (risk, confirm) = (tool.risk(), tool.needs_confirmation());
        let direct = !confirm
            && !tool.requires_gate()
            && tool.cooldown().is_none()
            && tool.daily_limit().is_none();
        let module_len = crate::scope::module_of(tool.name()).len();
        entry.risk = risk;
        entry.confirm = confirm;
        entry.direct = direct;
        entry.module_len = module_len;
        entry
    }
}

impl Entry {
    fn input_schema(&self) -> &Schema {
        self.input_schema.get_or_init(|| match &self.kind {
            Kind::Linked(def) => def.build_input_schema(),
            Kind::Owned(owned) => Schema::try_from(owned.spec.input_schema().clone())
                .unwrap_or_else(|_| Schema::default()),
        })
    }
}

/// The interned entry of a linked definition: one per `ToolDef` for the life of the program,
/// like the definition itself, shared by every registry that holds it.
pub(crate) fn linked(def: &'static ToolDef) -> Tool {
    type Interned = Mutex<FxHashMap<usize, &'static Entry>>;
    static INTERNED: OnceLock<Interned> = OnceLock::new();
    let mut interned = INTERNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let entry = *interned
        .entry(std::ptr::from_ref(def) as usize)
        // One allocation per static definition, never per registration: bounded by the
        // number of `ToolDef`s, which are themselves static.
        .or_insert_with(|| Box::leak(Box::new(Entry::new(Kind::Linked(def)))));
    Tool(Handle::Linked(entry))
}

/// A run-time tool, built from a checked spec.
pub(crate) fn owned(
    spec: ToolSpec,
    handler: Option<ToolHandler>,
    created_at: SystemTime,
) -> Result<Tool, crate::spec::SpecError> {
    let validator = spec.validator()?;
    Ok(Tool(Handle::Owned(Arc::new(Entry::new(Kind::Owned(
        Owned {
            spec,
            handler,
            created_at,
            validator,
        },
    ))))))
}

impl Tool {
    #[inline]
    pub(crate) fn entry(&self) -> &Entry {
        match &self.0 {
            Handle::Linked(entry) => entry,
            Handle::Owned(entry) => entry,
        }
    }

    #[inline]
    fn kind(&self) -> &Kind {
        &self.entry().kind
    }

    /// Whether two handles are the same registration (not merely the same name).
    pub fn same(&self, other: &Tool) -> bool {
        std::ptr::eq(self.entry(), other.entry())
    }
}

/// The read side of an entry under construction, before it has a handle.
struct TempTool<'e>(&'e Entry);

macro_rules! read {
    ($($(#[$doc:meta])* fn $name:ident(&self) -> $ty:ty { linked: $def:ident => $linked:expr, owned: $spec:ident => $owned:expr $(,)? })*) => {
        impl TempTool<'_> {
            $(
                #[allow(dead_code)]
                fn $name(&self) -> $ty {
                    match &self.0.kind {
                        Kind::Linked($def) => $linked,
                        Kind::Owned(owned) => {
                            let $spec = &owned.spec;
                            $owned
                        }
                    }
                }
            )*
        }
        impl Tool {
            $(
                $(#[$doc])*
                #[inline]
                pub fn $name(&self) -> $ty {
                    match self.kind() {
                        Kind::Linked($def) => $linked,
                        Kind::Owned(owned) => {
                            let $spec = &owned.spec;
                            $owned
                        }
                    }
                }
            )*
        }
    };
}

read! {
    /// The tool's name, `tool` or `module.tool`.
    fn name(&self) -> &str { linked: def => def.name(), owned: spec => spec.tool_name() }
    /// `version = "1.2.0"`.
    fn version(&self) -> Option<&str> { linked: def => def.version(), owned: spec => spec.version() }
    /// `category = "search"`.
    fn category(&self) -> Option<&str> { linked: def => def.category(), owned: spec => spec.category() }
    /// `tier = "low" | "medium" | "high"` (run-time tools: `medium`).
    fn tier(&self) -> Tier { linked: def => def.tier(), owned: _spec => Tier::Medium }
    /// `cost = "free" | "cheap" | "expensive"` (run-time tools: `free`).
    fn cost(&self) -> Cost { linked: def => def.cost(), owned: _spec => Cost::Free }
    /// `permission = "guest" | "user" | "admin" | "owner"`.
    fn permission(&self) -> Permission { linked: def => def.permission(), owned: spec => spec.permission() }
    /// The annotations as declared.
    fn annotations(&self) -> Annotations { linked: def => def.annotations(), owned: spec => spec.annotations() }
    /// `requires_gate`: an evaluation gate decides each call.
    fn requires_gate(&self) -> bool { linked: def => def.requires_gate(), owned: spec => spec.requires_gate() }
    /// `cooldown = "30s"`: the least time between two calls by one user.
    fn cooldown(&self) -> Option<Duration> { linked: def => def.cooldown(), owned: spec => spec.cooldown() }
    /// `daily_limit = N`: calls per user per UTC day.
    fn daily_limit(&self) -> Option<u32> { linked: def => def.daily_limit(), owned: spec => spec.daily_limit() }
    /// `timeout = "30s"`.
    fn timeout(&self) -> Option<Duration> { linked: def => def.timeout(), owned: spec => spec.timeout() }
    /// `defer_loading`: left out of the upfront tool list, found through discovery.
    fn defer_loading(&self) -> bool { linked: def => def.defer_loading(), owned: _spec => false }
    /// `sequential`: never runs concurrently with other calls of a batch.
    fn sequential(&self) -> bool { linked: def => def.sequential(), owned: _spec => false }
    /// `strip_from_display`: tag lines are removed from the text shown to the user.
    fn strip_from_display(&self) -> bool { linked: def => def.strip_from_display(), owned: _spec => false }
    /// `gate_fail_closed`: refused, not run, when the evaluation gate fails or times out.
    fn gate_fail_closed(&self) -> bool { linked: def => def.gate_fail_closed(), owned: _spec => false }
    /// The most bytes of argument text the tool accepts: `max_args_bytes = N`, else
    /// [`MAX_ARGS_BYTES`].
    fn max_args_bytes(&self) -> usize { linked: def => def.max_args_bytes(), owned: _spec => MAX_ARGS_BYTES }
    /// `blocking`: the handler runs on Tokio's blocking pool (see
    /// [`ToolDef::blocking`](crate::def::ToolDef::blocking)).
    fn blocking(&self) -> bool { linked: def => def.blocking(), owned: _spec => false }
    /// The full description: the doc comment, or `description = "..."`.
    fn description(&self) -> &str { linked: def => def.description(), owned: spec => spec.description() }
    /// Other names the tool answers to (run-time tools have none).
    fn aliases(&self) -> &[&'static str] { linked: def => def.aliases(), owned: _spec => &[] }
    /// The response-tag form, when the tool declares `tag = "..."` (run-time tools: none).
    fn tag(&self) -> Option<&TagForm> { linked: def => def.tag(), owned: _spec => None }
    /// Where a compiled tool was declared; `None` for a tool registered at run time.
    fn source(&self) -> Option<&SourceLocation> { linked: def => Some(def.source()), owned: _spec => None }
    /// The model-visible arguments of a compiled tool in declaration order (a run-time tool's
    /// are in its input schema only).
    fn args(&self) -> &[ArgInfo] { linked: def => def.args(), owned: _spec => &[] }
    /// The JSON Schema of what the tool returns, when its spec gives one.
    fn output_schema(&self) -> Option<&Value> { linked: _def => None, owned: spec => spec.output_schema() }
}

impl TempTool<'_> {
    fn effective_annotations(&self) -> Annotations {
        crate::annotations::effective(self.name(), self.category(), self.annotations())
    }
    fn risk(&self) -> Risk {
        crate::annotations::risk(&self.effective_annotations(), self.tier())
    }
    fn needs_confirmation(&self) -> bool {
        self.effective_annotations().requires_confirmation == Some(true)
    }
}

impl Tool {
    /// The module of a `module.tool` name, if any.
    pub fn module(&self) -> Option<&str> {
        self.name().split_once('.').map(|(module, _)| module)
    }

    /// The module the scope's module list is matched against: the part before the `.`, or the
    /// whole name.
    pub(crate) fn module_key(&self) -> &str {
        &self.name()[..self.entry().module_len]
    }

    /// The first sentence of the description, for discovery listings.
    pub fn short_description(&self) -> &str {
        first_sentence(self.description())
    }

    /// The labels of `tags(a, b)` (metadata for discovery and switches).
    pub fn tags(&self) -> impl Iterator<Item = &str> + '_ {
        let (linked, owned): (&[&'static str], &[String]) = match self.kind() {
            Kind::Linked(def) => (def.tags(), &[]),
            Kind::Owned(owned) => (&[], owned.spec.tags()),
        };
        linked
            .iter()
            .copied()
            .chain(owned.iter().map(String::as_str))
    }

    /// The JSON Schema (2020-12) of the arguments, built once and cached.
    pub fn input_schema(&self) -> &Schema {
        self.entry().input_schema()
    }

    /// The input schema of a linked tool, borrowed for the life of the program.
    pub(crate) fn static_input_schema(&self) -> Option<&'static Value> {
        match self.0 {
            Handle::Linked(entry) => Some(entry.input_schema().as_value()),
            Handle::Owned(_) => None,
        }
    }

    /// The annotations that apply: each declared one as declared, the others derived from the
    /// category (`search` is read-only; `code_changes` tools that write or delete are
    /// destructive; `terminal` is destructive and needs confirmation), the rest `false`.
    pub fn effective_annotations(&self) -> Annotations {
        TempTool(self.entry()).effective_annotations()
    }

    /// The risk level of a call.
    pub fn risk(&self) -> Risk {
        self.entry().risk
    }

    /// Whether calls wait for a person's approval (declared or derived).
    pub fn needs_confirmation(&self) -> bool {
        self.entry().confirm
    }

    /// Whether the tool's own `enabled = path` predicate admits `scope` (true without one).
    pub fn enabled_for(&self, scope: &Scope) -> bool {
        match self.kind() {
            Kind::Linked(def) => def.enabled_for(scope),
            Kind::Owned(_) => true,
        }
    }

    /// The compiled definition of a linked tool; `None` for a run-time tool.
    pub fn definition(&self) -> Option<&'static ToolDef> {
        match self.kind() {
            Kind::Linked(def) => Some(def),
            Kind::Owned(_) => None,
        }
    }

    /// Whether the tool was declared with `#[tool]` and linked into the program.
    pub fn is_linked(&self) -> bool {
        matches!(self.kind(), Kind::Linked(_))
    }

    /// Whether a call can run: always for a compiled tool; for a run-time tool, whether it was
    /// registered with a handler.
    pub fn has_handler(&self) -> bool {
        match self.kind() {
            Kind::Linked(_) => true,
            Kind::Owned(owned) => owned.handler.is_some(),
        }
    }

    /// When the registry registered a run-time tool; `None` for a compiled one.
    pub fn created_at(&self) -> Option<SystemTime> {
        match self.kind() {
            Kind::Linked(_) => None,
            Kind::Owned(owned) => Some(owned.created_at),
        }
    }

    /// The tool as a [`ToolSpec`]: the spec it was registered with, or for a compiled tool the
    /// spec its declaration amounts to.
    pub fn spec(&self) -> ToolSpec {
        match self.kind() {
            Kind::Owned(owned) => owned.spec.clone(),
            Kind::Linked(def) => ToolSpec::of_linked(def, self.input_schema()),
        }
    }

    pub(crate) fn owned(&self) -> Option<&Owned> {
        match self.kind() {
            Kind::Owned(owned) => Some(owned),
            Kind::Linked(_) => None,
        }
    }

    /// Validation: the arguments are read into what the handler takes, and the handler is
    /// returned, not yet started. A compiled tool's shim deserializes into its argument type; a
    /// run-time tool's arguments are checked against its input schema.
    #[inline]
    pub(crate) fn prepare<'a>(
        &self,
        args: ToolArgs<'a>,
        ctx: &'a Ctx,
        state: &'a crate::ctx::TypeMap,
    ) -> Result<BoxFuture<'a, Result<ToolResult, ToolError>>, ToolError> {
        match self.kind() {
            Kind::Linked(def) => (def.call_fn())(args, CallEnv { ctx, state }),
            Kind::Owned(owned) => owned.prepare(args, ctx),
        }
    }
}

impl Owned {
    fn prepare(
        &self,
        args: ToolArgs<'_>,
        ctx: &Ctx,
    ) -> Result<BoxFuture<'static, Result<ToolResult, ToolError>>, ToolError> {
        let Some(handler) = &self.handler else {
            crate::call::dispose_args(args);
            return Err(ToolError::NoHandler {
                tool: self.spec.tool_name().to_owned(),
            });
        };
        let value = crate::call::args_value(args)?;
        let error =
            self.validator
                .iter_errors(&value)
                .next()
                .map(|error| ToolError::InvalidArguments {
                    tool: String::new(),
                    path: json_path(&error.instance_path().to_string()),
                    message: error.to_string(),
                });
        if let Some(error) = error {
            crate::call::dispose(value);
            return Err(error);
        }
        Ok(handler.start(value, ctx.clone()))
    }
}

/// A JSON Pointer (`/items/2/name`) as the path a compiled tool's error names (`items[2].name`).
fn json_path(pointer: &str) -> String {
    let mut path = String::new();
    for segment in pointer.split('/').skip(1) {
        let segment = segment.replace("~1", "/").replace("~0", "~");
        if !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()) {
            path.push('[');
            path.push_str(&segment);
            path.push(']');
        } else {
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(&segment);
        }
    }
    path
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("Tool");
        s.field("name", &self.name());
        match self.kind() {
            Kind::Linked(def) => s.field("source", def.source()),
            Kind::Owned(owned) => s
                .field("version", &owned.spec.version())
                .field("handler", &owned.handler.is_some()),
        };
        s.finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::json_path;

    #[test]
    fn json_pointers_read_as_paths() {
        assert_eq!(json_path(""), "");
        assert_eq!(json_path("/limit"), "limit");
        assert_eq!(json_path("/items/2/name"), "items[2].name");
        assert_eq!(json_path("/a~1b/0"), "a/b[0]");
    }
}
