//! [`Scope`]: who is asking, and so which tools they may see and run.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::meta::Permission;

/// Who is asking, and so which tools they may see and run.
///
/// Listing ([`Registry::tools`](crate::Registry::tools) and every provider format) and execution
/// use the same check: a tool outside the scope is answered exactly like a tool that does not
/// exist.
///
/// ```
/// use tool_registry::{Permission, Scope};
///
/// let scope = Scope::user("alice")
///     .with_modules(["research", "file_manager", "code_executor"])
///     .with_chat_id(42);
/// assert_eq!(scope.level(), Permission::User);
/// assert!(scope.allows_module("research.web_search", None));
/// assert!(!scope.allows_module("scheduler.add_job", None));
/// // A guest without modules of its own gets the registry's guest modules.
/// assert!(!Scope::guest().allows_module("scheduler.add_job", Some(&["research".to_owned()])));
/// ```
///
/// The default scope, [`Scope::trusted`], sees everything: it is for the application itself,
/// command lines and tests. Serve users with [`Scope::user`] or [`Scope::guest`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub(crate) user: Option<Arc<str>>,
    pub(crate) chat_id: Option<i64>,
    pub(crate) level: Permission,
    pub(crate) modules: Option<Arc<[String]>>,
    pub(crate) allow_list: Option<String>,
    pub(crate) local: bool,
    pub(crate) flags: BTreeSet<String>,
    pub(crate) include_deferred: bool,
    /// Whether this caller's tool lists end with the search flow's meta-tools (and may call
    /// them) where deferred tools are left out; `None`: as the registry's `discovery` says.
    pub(crate) tool_search: Option<bool>,
    /// What a call without a user counts under for rate limits; `None` is [`ANONYMOUS`].
    pub(crate) anonymous_key: Option<Arc<str>>,
}

/// The flag that says embedding tools can run (see `add_when_embedding_ok` in allow-lists).
pub const EMBEDDING_FLAG: &str = "embedding";

/// What a call without a user counts under for `cooldown` and `daily_limit`, unless its scope
/// says otherwise ([`Scope::with_anonymous_key`]): the application itself and the command line
/// without `--user`.
pub const ANONYMOUS: &str = "anonymous";

/// What a guest of a network server (a request without credentials, of `toolreg serve` or
/// `toolreg mcp --http`) counts under: apart from [`ANONYMOUS`], so that one client cannot use
/// up a limited tool for local use, nor local use for every guest. A user named `guest` shares
/// it.
pub const NETWORK_GUEST: &str = "guest";

impl Default for Scope {
    fn default() -> Self {
        Self::trusted()
    }
}

impl Scope {
    /// Everything: owner level, every module, deferred tools listed. For the application itself.
    pub fn trusted() -> Self {
        Self {
            user: None,
            chat_id: None,
            level: Permission::Owner,
            modules: None,
            allow_list: None,
            local: false,
            flags: BTreeSet::new(),
            include_deferred: true,
            tool_search: None,
            anonymous_key: None,
        }
    }

    /// An anonymous guest. Unless modules are set, a guest gets the registry's default guest
    /// modules (see [`RegistryBuilder::guest_modules`](crate::RegistryBuilder::guest_modules)).
    pub fn guest() -> Self {
        Self {
            level: Permission::Guest,
            include_deferred: false,
            tool_search: None,
            ..Self::trusted()
        }
    }

    /// A known user at level [`Permission::User`], every module.
    pub fn user(id: impl Into<String>) -> Self {
        Self {
            user: Some(Arc::from(id.into())),
            level: Permission::User,
            include_deferred: false,
            tool_search: None,
            ..Self::trusted()
        }
    }

    /// Sets the user id.
    pub fn with_user(mut self, id: impl Into<String>) -> Self {
        self.user = Some(Arc::from(id.into()));
        self
    }

    /// Sets the chat id.
    pub fn with_chat_id(mut self, chat_id: i64) -> Self {
        self.chat_id = Some(chat_id);
        self
    }

    /// Sets the permission level.
    pub fn with_level(mut self, level: Permission) -> Self {
        self.level = level;
        self
    }

    /// Sets the permission level by name; an unknown name counts as guest.
    pub fn with_level_name(self, name: &str) -> Self {
        self.with_level(Permission::from_name(name))
    }

    /// Restricts the caller to these modules (a persona's list). A tool `module.tool` belongs to
    /// `module`; a tool without a `.` is its own module.
    pub fn with_modules<I, S>(mut self, modules: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.modules = Some(modules.into_iter().map(Into::into).collect());
        self
    }

    /// Restricts the caller to a named allow-list registered on the registry.
    pub fn with_allow_list(mut self, name: impl Into<String>) -> Self {
        self.allow_list = Some(name.into());
        self
    }

    /// Local mode: allow-lists apply their `exclude_in_local` and skip `add_when_non_local`.
    pub fn local(mut self, local: bool) -> Self {
        self.local = local;
        self
    }

    /// Sets a flag, such as [`EMBEDDING_FLAG`].
    pub fn with_flag(mut self, flag: impl Into<String>) -> Self {
        self.flags.insert(flag.into());
        self
    }

    /// Whether listings include tools marked `defer_loading` (they stay callable either way).
    pub fn include_deferred(mut self, include: bool) -> Self {
        self.include_deferred = include;
        self
    }

    /// Whether this caller's tool lists end with the search flow's meta-tools
    /// (`search_tools`, `describe_tool`, `execute_tool`), and whether it may call them,
    /// whatever the registry's [`discovery`](crate::RegistryBuilder::discovery) says: off for a
    /// request that must see only its listed tools, on for one that should search. Where the
    /// registry is on the provider's own tool search, `true` keeps that.
    pub fn with_tool_search(mut self, on: bool) -> Self {
        self.tool_search = Some(on);
        self
    }

    /// This caller's own say on the search flow ([`with_tool_search`](Self::with_tool_search)).
    pub fn tool_search(&self) -> Option<bool> {
        self.tool_search
    }

    /// Counts this caller's calls, when it names no user, under `key` for rate limits instead
    /// of [`ANONYMOUS`]: the servers count their guests as [`NETWORK_GUEST`].
    pub fn with_anonymous_key(mut self, key: impl Into<String>) -> Self {
        self.anonymous_key = Some(Arc::from(key.into()));
        self
    }

    /// A guest of a network server: [`Scope::guest`] counted as [`NETWORK_GUEST`].
    pub fn network_guest() -> Self {
        Self::guest().with_anonymous_key(NETWORK_GUEST)
    }

    /// The user id.
    pub fn user_id(&self) -> Option<&str> {
        self.user.as_deref()
    }

    pub(crate) fn user_arc(&self) -> Option<Arc<str>> {
        self.user.clone()
    }

    /// The chat id.
    pub fn chat_id(&self) -> Option<i64> {
        self.chat_id
    }

    /// The permission level.
    pub fn level(&self) -> Permission {
        self.level
    }

    /// The modules the caller is restricted to, if any.
    pub fn modules(&self) -> Option<&[String]> {
        self.modules.as_deref()
    }

    /// The allow-list the caller is restricted to, if any.
    pub fn allow_list(&self) -> Option<&str> {
        self.allow_list.as_deref()
    }

    /// Whether the caller runs in local mode.
    pub fn is_local(&self) -> bool {
        self.local
    }

    /// Whether a flag is set.
    pub fn has_flag(&self, flag: &str) -> bool {
        self.flags.contains(flag)
    }

    /// Whether listings include deferred tools.
    pub fn includes_deferred(&self) -> bool {
        self.include_deferred
    }

    /// What this caller's calls count under for `cooldown` and `daily_limit`: its user, else
    /// its anonymous key ([`ANONYMOUS`] unless set).
    ///
    /// ```
    /// use tool_registry::Scope;
    /// use tool_registry::scope::{ANONYMOUS, NETWORK_GUEST};
    ///
    /// assert_eq!(Scope::trusted().limit_key(), ANONYMOUS);
    /// assert_eq!(Scope::guest().limit_key(), ANONYMOUS);
    /// assert_eq!(Scope::network_guest().limit_key(), NETWORK_GUEST);
    /// assert_eq!(Scope::network_guest().with_user("ann").limit_key(), "ann");
    /// ```
    pub fn limit_key(&self) -> &str {
        (self.user.as_deref())
            .or(self.anonymous_key.as_deref())
            .unwrap_or(ANONYMOUS)
    }
}
