//! [`RegistryBuilder`]: the linked tools, more tools, application state and policies, checked
//! and indexed into a [`Registry`].

use crate::media::ContentLimits;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use rustc_hash::FxHashMap;

use super::linked::{DuplicateToolError, checked, linked_tools};
use super::switches::{Selector, Switches};
use super::writer::Writer;
use super::{Registry, Snapshot};
use crate::audit::{AuditSink, TracingAuditSink};
use crate::call::TypeMap;
use crate::def::ToolDef;
use crate::discovery::Discovery;
use crate::exec::{
    APPROVAL_TTL, DEFAULT_TIMEOUT, GATE_TIMEOUT, MAX_CALLS, MAX_CONCURRENCY, Policy, SLOW_TIMEOUT,
    Timeouts,
};
use crate::gate::{
    ApprovalKey, ApprovalStore, Gate, Gates, InMemoryApprovals, InMemoryRateLimits, RateLimitStore,
};
use crate::hook::{Flights, Hook, HookSet, InMemoryResultCache, ResultCache, ToolFilter};
use crate::offer::set::Offers;
use crate::scope::{AllowListError, AllowLists};
use crate::spec::ToolHandler;

/// How many changes a subscriber may fall behind before it misses some
/// ([`tokio::sync::broadcast`]).
const CHANGES_CAPACITY: usize = 1024;

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

    /// A builder starting from every linked `#[tool]`.
    pub fn builder() -> RegistryBuilder {
        RegistryBuilder {
            extra: Vec::new(),
            linked: true,
            handlers: FxHashMap::default(),
            state: TypeMap::default(),
            guest_modules: None,
            allow_lists: AllowLists::new(),
            gate: None,
            gate_timeout: GATE_TIMEOUT,
            rate_limits: None,
            approvals: None,
            approval_key: None,
            approval_ttl: APPROVAL_TTL,
            default_timeout: DEFAULT_TIMEOUT,
            slow_timeout: SLOW_TIMEOUT,
            slow: BTreeSet::new(),
            audit: None,
            log_annotations: true,
            max_concurrency: MAX_CONCURRENCY,
            max_calls: MAX_CALLS,
            strict_arguments: false,
            content_limits: ContentLimits::DEFAULT,
            discovery: Discovery::default(),
            hooks: HookSet::default(),
            too_many_hooks: false,
            results: None,
        }
    }
}

/// Why [`RegistryBuilder::build`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two tools claim one name.
    #[error(transparent)]
    Duplicates(#[from] DuplicateToolError),
    /// An allow-list names tools the registry does not have.
    #[error(transparent)]
    AllowLists(#[from] AllowListError),
    /// A tool declares a target (`#[tool(targets(...))]`) its arguments do not fit.
    #[error(transparent)]
    Targets(#[from] crate::format::TargetError),
    /// More hooks than a registry holds.
    #[error(
        "more than {} hooks were registered; combine hooks that do related work into one",
        crate::hook::MAX_HOOKS
    )]
    TooManyHooks,
    /// Two linked `#[resource]`s of one URI, or two `#[prompt]`s of one name.
    #[error("{0}")]
    Offers(String),
}

/// Builds a [`Registry`] from the linked tools, more tools, application state and policies.
///
/// ```
/// # use std::time::Duration;
/// # use tool_registry::Registry;
/// # use tool_registry::scope::{AllowList, AllowLists};
/// struct Db;
/// let registry = Registry::builder()
///     .state(Db)
///     .guest_modules(["research"])
///     .allow_lists(AllowLists::new().with("explore", AllowList::tools(Vec::<String>::new())))
///     .slow(["deployer"])
///     .approval_ttl(Duration::from_secs(300))
///     .build()?;
/// # Ok::<(), tool_registry::registry::BuildError>(())
/// ```
#[must_use]
pub struct RegistryBuilder {
    extra: Vec<&'static ToolDef>,
    linked: bool,
    handlers: FxHashMap<String, ToolHandler>,
    state: TypeMap,
    guest_modules: Option<Vec<String>>,
    allow_lists: AllowLists,
    gate: Option<Arc<dyn Gate>>,
    gate_timeout: Duration,
    rate_limits: Option<Arc<dyn RateLimitStore>>,
    approvals: Option<Arc<dyn ApprovalStore>>,
    approval_key: Option<ApprovalKey>,
    approval_ttl: Duration,
    default_timeout: Duration,
    slow_timeout: Duration,
    slow: BTreeSet<String>,
    audit: Option<Arc<dyn AuditSink>>,
    log_annotations: bool,
    max_concurrency: usize,
    max_calls: usize,
    strict_arguments: bool,
    content_limits: ContentLimits,
    discovery: Discovery,
    hooks: HookSet,
    too_many_hooks: bool,
    results: Option<Arc<dyn ResultCache>>,
}

impl RegistryBuilder {
    /// Adds a hook around every call of every tool (see [`hook`](crate::hook)): `before`
    /// sides run in the order hooks are added, `after` sides in the reverse order. A hook
    /// narrows itself with [`Hook::applies_to`](crate::hook::Hook::applies_to); at most
    /// [`MAX_HOOKS`](crate::hook::MAX_HOOKS).
    pub fn hook(self, hook: impl Hook) -> Self {
        self.add_hook(Arc::new(hook), None)
    }

    /// Adds a hook for the tools `selector` names (one tool by name or alias, a tag, a
    /// category), in the same order as [`hook`](Self::hook)'s.
    pub fn hook_on(self, selector: Selector, hook: impl Hook) -> Self {
        let on: ToolFilter = match selector {
            Selector::Name(name) => {
                Box::new(move |tool| tool.name() == name || tool.aliases().contains(&&*name))
            }
            Selector::Tag(tag) => Box::new(move |tool| tool.tags().any(|t| t == tag)),
            Selector::Category(category) => {
                Box::new(move |tool| tool.category() == Some(category.as_str()))
            }
        };
        self.add_hook(Arc::new(hook), Some(on))
    }

    fn add_hook(mut self, hook: Arc<dyn Hook>, on: Option<ToolFilter>) -> Self {
        if self.hooks.push(hook, on).is_err() {
            self.too_many_hooks = true;
        }
        self
    }

    /// Where `cache` tools keep their results: in this process's memory by default
    /// ([`InMemoryResultCache`](crate::hook::InMemoryResultCache)); a store shared by a fleet
    /// (`redis::RedisResultCache`) lets every instance answer from what one computed.
    pub fn result_cache(mut self, cache: impl ResultCache + 'static) -> Self {
        self.results = Some(Arc::new(cache));
        self
    }

    /// Adds application state, injected into tools that take a `State<T>` parameter.
    pub fn state<T: Send + Sync + 'static>(mut self, value: T) -> Self {
        self.state.insert(value);
        self
    }

    /// Adds application state that is already shared.
    pub fn state_arc<T: Send + Sync + 'static>(mut self, value: Arc<T>) -> Self {
        self.state.insert_arc(value);
        self
    }

    /// Adds one more tool definition.
    pub fn tool(mut self, def: &'static ToolDef) -> Self {
        self.extra.push(def);
        self
    }

    /// A handler for run-time specs of this name that come without one: specs read back by
    /// [`Registry::restore`] (or registered with [`Registry::register`]) run it.
    pub fn handler(mut self, tool: impl Into<String>, handler: ToolHandler) -> Self {
        self.handlers.insert(tool.into(), handler);
        self
    }

    /// Leaves out the tools linked into the binary: the registry holds only what [`tool`]
    /// added.
    ///
    /// [`tool`]: RegistryBuilder::tool
    pub fn without_linked(mut self) -> Self {
        self.linked = false;
        self
    }

    /// The modules a guest scope without its own module list may use (by default: all).
    pub fn guest_modules<I: IntoIterator<Item = S>, S: Into<String>>(mut self, modules: I) -> Self {
        self.guest_modules = Some(modules.into_iter().map(Into::into).collect());
        self
    }

    /// Named allow-lists scopes can refer to. Names they mention that no tool has make
    /// [`build`](RegistryBuilder::build) fail.
    pub fn allow_lists(mut self, lists: AllowLists) -> Self {
        self.allow_lists = lists;
        self
    }

    /// The evaluation gate consulted for `requires_gate` tools (none by default: such tools
    /// run unconditionally).
    pub fn gate(mut self, gate: impl Gate + 'static) -> Self {
        self.gate = Some(Arc::new(gate));
        self
    }

    /// How long the gate may take (2 s by default).
    pub fn gate_timeout(mut self, timeout: Duration) -> Self {
        self.gate_timeout = timeout;
        self
    }

    /// Where rate-limit counts live (in memory by default).
    pub fn rate_limit_store(mut self, store: impl RateLimitStore + 'static) -> Self {
        self.rate_limits = Some(Arc::new(store));
        self
    }

    /// Where calls awaiting approval wait (in memory by default).
    pub fn approval_store(mut self, store: impl ApprovalStore + 'static) -> Self {
        self.approvals = Some(Arc::new(store));
        self
    }

    /// The secret that binds each pending call to its tool, user, arguments and expiry (at
    /// least 32 random bytes; keep it out of the approvals store). Without one, the approval
    /// store's own key is used ([`JsonFileApprovals`](crate::gate::JsonFileApprovals) keeps one
    /// beside its file), or else a key drawn once per registry.
    pub fn approval_key(mut self, secret: impl AsRef<[u8]>) -> Self {
        self.approval_key = Some(ApprovalKey::new(secret));
        self
    }

    /// How long an approval token stays valid (15 minutes by default).
    pub fn approval_ttl(mut self, ttl: Duration) -> Self {
        self.approval_ttl = ttl;
        self
    }

    /// The timeout of tools without their own (30 s by default).
    pub fn default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// The timeout of slow tools and modules (120 s by default).
    pub fn slow_timeout(mut self, timeout: Duration) -> Self {
        self.slow_timeout = timeout;
        self
    }

    /// Tools (`module.tool`) or whole modules that get the slow timeout.
    pub fn slow<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.slow.extend(names.into_iter().map(Into::into));
        self
    }

    /// Where audit records go (a `tracing` event per call by default).
    pub fn audit_sink(mut self, sink: impl AuditSink + 'static) -> Self {
        self.audit = Some(Arc::new(sink));
        self
    }

    /// Another place audit records go, after the ones set so far (the `tracing` event by
    /// default): an audit trail, a metrics sink.
    pub fn also_audit(mut self, sink: impl AuditSink + 'static) -> Self {
        let before: Arc<dyn AuditSink> = match self.audit.take() {
            Some(before) => before,
            None => Arc::new(crate::audit::TracingAuditSink),
        };
        self.audit = Some(Arc::new((before, sink)));
        self
    }

    /// Whether every invocation logs the tool's annotations as a `tracing` event (on by
    /// default; target `tool_registry::annotations`).
    pub fn log_annotations(mut self, on: bool) -> Self {
        self.log_annotations = on;
        self
    }

    /// How many calls of one batch run at once (8 by default).
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = limit.max(1);
        self
    }

    /// Reads arguments strictly (off by default). By default they are read leniently, as real
    /// models send them: an object or array sent as a JSON string, a number as a numeric
    /// string (`"5"`), `"true"`/`"false"` for a boolean, and `null` for an argument that is
    /// not required are read as meant, guided by the tool's input schema. Strict, each of these
    /// is an [`InvalidArguments`](crate::ToolError::InvalidArguments) error naming its path.
    /// The size and depth limits apply either way.
    pub fn strict_arguments(mut self, strict: bool) -> Self {
        self.strict_arguments = strict;
        self
    }

    /// How a model finds the tools marked `defer_loading`, which tool lists leave out:
    /// the three meta-tools `search_tools`, `describe_tool` and `execute_tool` (the default),
    /// the provider's own tool search where it has one, or nothing (see
    /// [`discovery`](crate::discovery)).
    pub fn discovery(mut self, discovery: Discovery) -> Self {
        self.discovery = discovery;
        self
    }

    /// How many calls of one batch ([`Registry::execute`], `toolreg run`: one model output)
    /// run at all ([`MAX_CALLS`], 32, by default). The calls after that many are not run; each
    /// is answered with [`ToolError::TooManyCalls`](crate::ToolError::TooManyCalls), so the
    /// model learns to spread its work over turns.
    pub fn max_calls(mut self, limit: usize) -> Self {
        self.max_calls = limit;
        self
    }

    /// The bounds on what tools return ([`ContentLimits::DEFAULT`]: 10 MiB a block, 20 MiB a
    /// result). A result past them, or with a block whose bytes are not of its MIME type, or a
    /// link to a `file:` or `javascript:` URI, is refused with
    /// [`ToolError::InvalidOutput`](crate::ToolError::InvalidOutput).
    pub fn content_limits(mut self, limits: ContentLimits) -> Self {
        self.content_limits = limits;
        self
    }

    /// Builds the registry; reports any name claimed twice, any unknown name in the
    /// allow-lists, and any tool whose arguments do not fit a target it declares
    /// (`#[tool(targets(...))]`).
    pub fn build(self) -> Result<Registry, BuildError> {
        if self.too_many_hooks {
            return Err(BuildError::TooManyHooks);
        }
        let linked = match (self.linked, self.extra.is_empty()) {
            (true, true) => linked_tools()?,
            (true, false) => Arc::from(checked(
                crate::__private::TOOLS.iter().chain(self.extra).collect(),
            )?),
            (false, _) => Arc::from(checked(self.extra)?),
        };
        let policy = Policy {
            guest_modules: self.guest_modules,
            allow_lists: self.allow_lists,
            timeouts: Timeouts {
                default: self.default_timeout,
                slow: self.slow_timeout,
                slow_names: self.slow,
            },
            gates: Gates {
                gate: self.gate,
                gate_timeout: self.gate_timeout,
                rate_limits: self
                    .rate_limits
                    .unwrap_or_else(|| Arc::new(InMemoryRateLimits::new())),
                approvals: self
                    .approvals
                    .unwrap_or_else(|| Arc::new(InMemoryApprovals::new())),
                approval_key: self.approval_key,
                own_approval_key: OnceLock::new(),
                approval_ttl: self.approval_ttl,
            },
            audit: self.audit.unwrap_or_else(|| Arc::new(TracingAuditSink)),
            log_annotations: self.log_annotations,
            max_concurrency: self.max_concurrency,
            max_calls: self.max_calls,
            strict_arguments: self.strict_arguments,
            content_limits: self.content_limits,
            discovery: self.discovery,
            hooks: self.hooks,
            results: self
                .results
                .unwrap_or_else(|| Arc::new(InMemoryResultCache::new())),
            flights: Flights::default(),
        };
        let writer = Writer {
            linked_claims: super::lifecycle::claims_of(&linked),
            linked,
            owned: BTreeMap::new(),
            owned_claims: FxHashMap::default(),
            switches: Switches::default(),
            handlers: self.handlers,
        };
        let snapshot = Snapshot::build(&writer, &policy);
        let unknown = policy
            .allow_lists
            .unknown_names(|name| snapshot.get(name).is_some());
        if !unknown.is_empty() {
            return Err(AllowListError::UnknownTools { unknown }.into());
        }
        crate::format::check_targets(&snapshot.tools)?;
        let offers = if self.linked {
            Offers::linked().map_err(|error| BuildError::Offers(error.to_string()))?
        } else {
            Offers::default()
        };
        Ok(Registry {
            offers: ArcSwap::from_pointee(offers),
            snapshot: ArcSwap::from_pointee(snapshot),
            writer: Mutex::new(writer),
            changes: tokio::sync::broadcast::channel(CHANGES_CAPACITY).0,
            state: self.state,
            policy,
        })
    }
}
