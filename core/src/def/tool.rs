//! [`Tool`]: one tool of a registry, compiled (`#[tool]`, linked into the program) or
//! registered at run time from a [`ToolSpec`], behind one cheap handle.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use schemars::Schema;
use serde_json::Value;

use super::entry::{Entry, Kind, Owned};
use super::tool_def::first_sentence;
use super::{Annotations, ArgInfo, Cost, Permission, Risk, SourceLocation, TagForm, Tier, ToolDef};
use crate::call::MAX_ARGS_BYTES;
use crate::scope::Scope;
use crate::spec::ToolSpec;

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
pub struct Tool(pub(super) Handle);

#[derive(Clone)]
pub(super) enum Handle {
    Linked(&'static Entry),
    Owned(Arc<Entry>),
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

/// Each field is read from the definition of a linked tool or the spec of an owned one: once
/// as the entry's (what the registry derives from while it builds the entry, before there is a
/// handle), once as the handle's public method.
macro_rules! read {
    ($($(#[$doc:meta])* fn $name:ident(&self) -> $ty:ty { linked: $def:ident => $linked:expr, owned: $spec:ident => $owned:expr $(,)? })*) => {
        impl Entry {
            $(
                #[allow(dead_code)]
                pub(crate) fn $name(&self) -> $ty {
                    match &self.kind {
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
                    self.entry().$name()
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
    /// `cache = "5m"`: results reused for identical calls (see [`hook`](crate::hook)).
    fn cache(&self) -> Option<crate::meta::CachePolicy> { linked: def => def.cache(), owned: spec => spec.cache() }
    /// `max_result_bytes = N`: longer results are shortened to fit (see [`hook::cap`](crate::hook::cap)).
    fn max_result_bytes(&self) -> Option<usize> { linked: def => def.max_result_bytes(), owned: spec => spec.max_result_bytes() }
    /// `task = "optional" | "required"`: whether a call may outlive its request (see [`task`](crate::task)).
    fn task_support(&self) -> crate::meta::TaskSupport { linked: def => def.task_support(), owned: spec => spec.task_support() }
    /// `confirm_if`: the tool decides per call, from the arguments, whether it needs approval.
    fn confirms_conditionally(&self) -> bool { linked: def => def.confirms_conditionally(), owned: spec => spec.confirm_if().is_some() }
    /// `timeout = "30s"`.
    fn timeout(&self) -> Option<Duration> { linked: def => def.timeout(), owned: spec => spec.timeout() }
    /// `defer_loading`: left out of the upfront tool list, found through discovery.
    fn defer_loading(&self) -> bool { linked: def => def.defer_loading(), owned: spec => spec.defer_loading() }
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
}

impl Tool {
    /// The module of a `module.tool` name, if any.
    pub fn module(&self) -> Option<&str> {
        self.name().split_once('.').map(|(module, _)| module)
    }

    /// The module the scope's module list is matched against: the part before the `.`, or the
    /// whole name.
    pub(crate) fn module_key(&self) -> &str {
        &self.entry().module
    }

    /// The one line discovery results, listings and the catalog show:
    /// `#[tool(short_description = "...")]` or a spec's
    /// [`short_description`](crate::spec::ToolSpecBuilder::short_description), else the first
    /// sentence of the description.
    pub fn short_description(&self) -> &str {
        let given = match self.kind() {
            Kind::Linked(def) => def.declared_short_description(),
            Kind::Owned(owned) => owned.spec.short_description(),
        };
        given.unwrap_or_else(|| first_sentence(self.description()))
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

    /// The JSON Schema of what the tool returns: a compiled tool's returned value's, when its
    /// type implements `schemars::JsonSchema` (unless `#[tool(output_schema = false)]`), or a
    /// run-time spec's `output_schema`. Built once and cached.
    pub fn output_schema(&self) -> Option<&Value> {
        self.entry().output_schema()
    }

    /// The kinds of blocks the tool returns besides its value, as the catalog shows them: a
    /// compiled tool's from its return type ([`IntoToolResult::KINDS`](crate::content::IntoToolResult::KINDS)),
    /// a run-time tool's as its spec declares ([`ToolSpecBuilder::returns`](crate::spec::ToolSpecBuilder::returns)).
    /// Empty: a value only.
    pub fn returns(&self) -> &[crate::media::BlockKind] {
        match self.kind() {
            Kind::Linked(def) => def.returns(),
            Kind::Owned(owned) => owned.spec.returns(),
        }
    }

    /// The validator of a run-time tool's declared output schema (see
    /// [`Entry::output_validator`]).
    #[inline]
    pub(crate) fn output_validator(&self) -> Option<&jsonschema::Validator> {
        self.entry().output_validator()
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
        self.entry().effective_annotations()
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

    /// Whether a call of the tool is handed its [`Ctx`](crate::Ctx), through which it may log,
    /// report progress and ask its caller's client during the call: a compiled tool whose
    /// function takes one, and every run-time tool (its handler does).
    pub fn takes_ctx(&self) -> bool {
        match self.kind() {
            Kind::Linked(def) => def.takes_ctx(),
            Kind::Owned(_) => true,
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
            Kind::Linked(def) => ToolSpec::of_fields(declared_fields(
                def,
                self.input_schema(),
                self.output_schema(),
            )),
        }
    }

    pub(crate) fn owned(&self) -> Option<&Owned> {
        match self.kind() {
            Kind::Owned(owned) => Some(owned),
            Kind::Linked(_) => None,
        }
    }
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

/// The spec fields a compiled tool's declaration amounts to.
fn declared_fields(
    def: &ToolDef,
    input_schema: &Schema,
    output_schema: Option<&Value>,
) -> crate::spec::Fields {
    crate::spec::Fields {
        tool_name: def.name().to_owned(),
        version: def.version().map(str::to_owned),
        description: def.description().to_owned(),
        short_description: def.declared_short_description().map(str::to_owned),
        input_schema: input_schema.as_value().clone(),
        output_schema: output_schema.cloned(),
        returns: def.returns().to_vec(),
        tags: def.tags().iter().map(|t| (*t).to_owned()).collect(),
        permission: def.permission(),
        category: def.category().map(str::to_owned),
        annotations: def.annotations(),
        cooldown: def.cooldown(),
        daily_limit: def.daily_limit(),
        timeout: def.timeout(),
        requires_gate: def.requires_gate(),
        defer_loading: def.defer_loading(),
        // A compiled tool's predicate is code: its own process applies it.
        confirm_if: None,
        cache: def.cache().map(|cache| cache.ttl),
        cache_per_user: def.cache().is_none_or(|cache| cache.per_user),
        max_result_bytes: def.max_result_bytes(),
        task: def.task_support(),
    }
}

/// The handle of a linked definition: its entry is interned, one per `ToolDef` for the life of
/// the program.
pub(crate) fn linked(def: &'static ToolDef) -> Tool {
    Tool(Handle::Linked(super::entry::interned(def)))
}

/// A run-time tool, built from a checked spec.
pub(crate) fn owned(
    spec: ToolSpec,
    handler: Option<crate::spec::ToolHandler>,
    created_at: SystemTime,
) -> Result<Tool, crate::spec::SpecError> {
    super::entry::owned(spec, handler, created_at).map(|entry| Tool(Handle::Owned(entry)))
}

/// One of the registry's meta-tools (see [`discovery`](crate::discovery)).
pub(crate) fn meta(spec: ToolSpec, meta: super::Meta) -> Tool {
    Tool(Handle::Owned(super::entry::meta(spec, meta)))
}
