//! The static description of one tool: everything `#[tool]` knows at compile time.

use std::fmt;
use std::time::Duration;

use schemars::Schema;

use super::{Annotations, ArgInfo, Cost, Permission, SourceLocation, TagForm, Tier};
use crate::call::{CallFn, ToolError};
use crate::scope::Scope;

/// The fields of a [`ToolDef`], filled in by `#[tool]`. Reached by generated code as
/// `__private::ToolParts`; not part of the public API.
#[allow(missing_docs)]
pub struct ToolParts {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub description: &'static str,
    pub short_description: Option<&'static str>,
    pub version: Option<&'static str>,
    pub category: Option<&'static str>,
    pub tags: &'static [&'static str],
    pub tier: Tier,
    pub cost: Cost,
    pub permission: Permission,
    pub annotations: Annotations,
    pub requires_gate: bool,
    pub cooldown: Option<Duration>,
    pub daily_limit: Option<u32>,
    pub timeout: Option<Duration>,
    pub defer_loading: bool,
    pub sequential: bool,
    pub strip_from_display: bool,
    pub tag: Option<TagForm>,
    pub source: SourceLocation,
    pub args: &'static [ArgInfo],
    pub input_schema: fn() -> Schema,
    pub output_schema: Option<fn() -> Option<Schema>>,
    pub returns: fn() -> &'static [crate::media::BlockKind],
    pub call: CallFn,
    pub enabled: Option<fn(&Scope) -> bool>,
    pub gate_fail_closed: bool,
    pub max_args_bytes: usize,
    pub blocking: bool,
    /// `confirm_if = path`: reads the arguments into the tool's types and asks the path.
    pub confirm_if: Option<ConfirmIfFn>,
    pub cache: Option<crate::meta::CachePolicy>,
    pub max_result_bytes: Option<usize>,
    /// `task = "optional" | "required"`.
    pub task: crate::meta::TaskSupport,
    /// The formats the tool promises to fit, as bits of [`Target`](crate::format::Target).
    pub targets: u8,
    /// Whether the function takes the call's `&Ctx`.
    pub takes_ctx: bool,
}

impl ToolParts {
    /// What a tool that sets nothing has: `#[tool]` writes the fields a tool sets and takes the
    /// rest from here (`..ToolParts::DEFAULT`), so that each tool's definition is short to
    /// check. The name, description, source, arguments, schema and call are always written.
    pub const DEFAULT: ToolParts = ToolParts {
        name: "",
        aliases: &[],
        description: "",
        short_description: None,
        version: None,
        category: None,
        tags: &[],
        tier: Tier::Medium,
        cost: Cost::Free,
        permission: Permission::Guest,
        annotations: Annotations::NONE,
        requires_gate: false,
        cooldown: None,
        daily_limit: None,
        timeout: None,
        defer_loading: false,
        sequential: false,
        strip_from_display: true,
        tag: None,
        source: SourceLocation {
            crate_name: "",
            module_path: "",
            file: "",
            line: 0,
            column: 0,
        },
        args: &[],
        input_schema: Schema::default,
        output_schema: None,
        returns: || &[],
        call: |args, _| {
            crate::call::dispose_args(args);
            Err(ToolError::Misconfigured {
                tool: String::new(),
                message: "the tool has no call".to_owned(),
            })
        },
        enabled: None,
        gate_fail_closed: false,
        max_args_bytes: crate::call::MAX_ARGS_BYTES,
        blocking: false,
        confirm_if: None,
        cache: None,
        max_result_bytes: None,
        task: crate::meta::TaskSupport::Forbidden,
        targets: 0,
        takes_ctx: true,
    };
}

/// A compiled tool's `confirm_if`: the arguments read into the tool's types, then the user's
/// predicate asked whether this call needs a person's approval.
pub type ConfirmIfFn = fn(crate::call::ToolArgs<'_>) -> Result<bool, ToolError>;

/// One tool as `#[tool]` declared it. All of it is `'static`: the macro places one in a
/// [`linkme`] slice per annotated function, and nothing runs before `main`.
///
/// Read it through its methods; build one only with `#[tool]`.
pub struct ToolDef {
    parts: ToolParts,
}

impl ToolDef {
    #[doc(hidden)]
    pub const fn __new(parts: ToolParts) -> Self {
        Self { parts }
    }

    /// The tool's name, `tool` or `module.tool`.
    pub fn name(&self) -> &'static str {
        self.parts.name
    }
    /// Other names the tool answers to.
    pub fn aliases(&self) -> &'static [&'static str] {
        self.parts.aliases
    }
    /// The module of a `module.tool` name, if any.
    pub fn module(&self) -> Option<&'static str> {
        self.parts.name.split_once('.').map(|(module, _)| module)
    }
    /// The full description: the doc comment, or `description = "..."`.
    pub fn description(&self) -> &'static str {
        self.parts.description.trim()
    }
    /// The one line discovery results, listings and the catalog show:
    /// `short_description = "..."`, else the first sentence of the description.
    pub fn short_description(&self) -> &'static str {
        self.declared_short_description()
            .unwrap_or_else(|| first_sentence(self.description()))
    }
    /// `short_description = "..."`, when the tool gives one.
    pub(crate) fn declared_short_description(&self) -> Option<&'static str> {
        self.parts.short_description.map(str::trim)
    }
    /// `version = "1.2.0"`, a semantic version (`#[tool]` refuses anything else).
    pub fn version(&self) -> Option<&'static str> {
        self.parts.version
    }
    /// `category = "search"`.
    pub fn category(&self) -> Option<&'static str> {
        self.parts.category
    }
    /// `tags(a, b)`.
    pub fn tags(&self) -> &'static [&'static str] {
        self.parts.tags
    }
    /// `tier = "low" | "medium" | "high"`.
    pub fn tier(&self) -> Tier {
        self.parts.tier
    }
    /// `cost = "free" | "cheap" | "expensive"`.
    pub fn cost(&self) -> Cost {
        self.parts.cost
    }
    /// `permission = "guest" | "user" | "admin" | "owner"`.
    pub fn permission(&self) -> Permission {
        self.parts.permission
    }
    /// The annotations as declared.
    pub fn annotations(&self) -> Annotations {
        self.parts.annotations
    }
    /// `requires_gate`: an evaluation gate decides each call.
    pub fn requires_gate(&self) -> bool {
        self.parts.requires_gate
    }
    /// `cooldown = "30s"`: the least time between two calls by one user.
    pub fn cooldown(&self) -> Option<Duration> {
        self.parts.cooldown
    }
    /// `cache = "5m"` (and `cache_per_user`): results reused for identical calls.
    pub fn cache(&self) -> Option<crate::meta::CachePolicy> {
        self.parts.cache
    }
    /// `max_result_bytes = N`: longer results are shortened to fit.
    pub fn max_result_bytes(&self) -> Option<usize> {
        self.parts.max_result_bytes
    }
    /// `task = "optional" | "required"`: whether a call may outlive its request as a task.
    pub fn task_support(&self) -> crate::meta::TaskSupport {
        self.parts.task
    }
    /// Whether the function takes the call's [`Ctx`](crate::Ctx): one that does not can
    /// neither log, report progress nor ask its caller's client anything during a call.
    pub fn takes_ctx(&self) -> bool {
        self.parts.takes_ctx
    }
    /// `confirm_if = path`: whether the tool decides per call if it needs approval.
    pub fn confirms_conditionally(&self) -> bool {
        self.parts.confirm_if.is_some()
    }
    pub(crate) fn confirm_if_fn(&self) -> Option<ConfirmIfFn> {
        self.parts.confirm_if
    }
    /// `daily_limit = N`: calls per user per UTC day.
    pub fn daily_limit(&self) -> Option<u32> {
        self.parts.daily_limit
    }
    /// `timeout = "30s"`.
    pub fn timeout(&self) -> Option<Duration> {
        self.parts.timeout
    }
    /// `defer_loading`: left out of the upfront tool list, found through discovery.
    pub fn defer_loading(&self) -> bool {
        self.parts.defer_loading
    }
    /// `sequential`: never runs concurrently with other calls of a batch.
    pub fn sequential(&self) -> bool {
        self.parts.sequential
    }
    /// `strip_from_display`: tag lines are removed from the text shown to the user.
    pub fn strip_from_display(&self) -> bool {
        self.parts.strip_from_display
    }
    /// The response-tag form, when the tool declares `tag = "..."`.
    pub fn tag(&self) -> Option<&TagForm> {
        self.parts.tag.as_ref()
    }
    /// Where the tool was declared.
    pub fn source(&self) -> &SourceLocation {
        &self.parts.source
    }
    /// The model-visible arguments in declaration order.
    pub fn args(&self) -> &'static [ArgInfo] {
        self.parts.args
    }
    /// Builds the JSON Schema (2020-12) of the arguments. [`Tool::input_schema`](crate::Tool::input_schema)
    /// caches it; call this only to build a fresh copy.
    pub fn build_input_schema(&self) -> Schema {
        (self.parts.input_schema)()
    }

    /// `gate_fail_closed`: refused, not run, when the evaluation gate fails or times out.
    pub fn gate_fail_closed(&self) -> bool {
        self.parts.gate_fail_closed
    }
    /// Whether the tool's own `enabled = path` predicate admits `scope` (true without one).
    pub fn enabled_for(&self, scope: &Scope) -> bool {
        self.parts.enabled.is_none_or(|enabled| enabled(scope))
    }

    /// The tool's own `enabled = path` predicate, if it has one.
    pub(crate) fn enabled_fn(&self) -> Option<fn(&Scope) -> bool> {
        self.parts.enabled
    }

    /// The most bytes of argument text the tool accepts: `max_args_bytes = N`, else
    /// [`MAX_ARGS_BYTES`](crate::call::MAX_ARGS_BYTES).
    pub fn max_args_bytes(&self) -> usize {
        self.parts.max_args_bytes
    }
    /// `blocking`: the handler runs on Tokio's blocking pool, and the caller gets
    /// [`ToolError::TimedOut`](crate::ToolError::TimedOut) at the deadline even while it
    /// computes.
    pub fn blocking(&self) -> bool {
        self.parts.blocking
    }

    /// The formats the tool promises to fit (`#[tool(targets(...))]`), checked when a
    /// registry is built.
    pub fn targets(&self) -> impl Iterator<Item = crate::meta::Target> {
        let bits = self.parts.targets;
        (crate::meta::Target::ALL.into_iter()).filter(move |target| bits & target.bit() != 0)
    }

    /// The kinds of blocks the tool returns besides its value.
    pub fn returns(&self) -> &'static [crate::media::BlockKind] {
        (self.parts.returns)()
    }

    /// Builds the JSON Schema of the value the tool returns, when it has one.
    pub fn build_output_schema(&self) -> Option<Schema> {
        self.parts.output_schema.and_then(|schema| schema())
    }

    pub(crate) fn call_fn(&self) -> CallFn {
        self.parts.call
    }
}

impl fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name())
            .field("source", self.source())
            .finish_non_exhaustive()
    }
}

/// The first sentence of `text`: up to the first `.`, `!` or `?` followed by whitespace, or the
/// first blank line, whichever comes first.
pub(crate) fn first_sentence(text: &str) -> &str {
    let paragraph = text.split("\n\n").next().unwrap_or(text);
    let bytes = paragraph.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if matches!(b, b'.' | b'!' | b'?')
            && bytes
                .get(i + 1)
                .is_none_or(|next| next.is_ascii_whitespace())
        {
            return paragraph[..=i].trim();
        }
    }
    paragraph.trim()
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn first_sentence_stops_at_sentence_end_or_paragraph() {
        assert_eq!(
            first_sentence("Search notes. Newest first."),
            "Search notes."
        );
        assert_eq!(first_sentence("Use v1.2 of it. Then"), "Use v1.2 of it.");
        assert_eq!(first_sentence("Title line\n\nBody. More"), "Title line");
        assert_eq!(first_sentence("Ends here!"), "Ends here!");
        assert_eq!(first_sentence("No stop"), "No stop");
    }
}
