//! The gateway side: discover each module's manifest, keep it in the cache, and register its
//! tools in the registry as run-time tools named `module.tool` whose handler forwards the call.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::cache::{CachedManifest, FileManifestCache, MANIFEST_TTL, ManifestCache, unix_now};
use super::map::{DISCOVERY_TIMEOUT, Module, ModuleMap};
use super::remote::{Remote, read_capped};
use super::wire::ReadManifest;
use serde::de::DeserializeSeed as _;
use tool_registry_core::ToolSpec;
use tool_registry_core::registry::Shared;
use tool_registry_core::spec::ToolHandler;

/// The file a gateway keeps manifests in unless told otherwise, in the working folder: the
/// embedded default, so that a restart lists every module at once.
pub const DEFAULT_CACHE_FILE: &str = ".toolreg-modules.json";

/// How long [`Gateway::keep_fresh`] waits before it tries a module not reached again.
const RETRY_SECS: u64 = 60;

/// The most tools a gateway takes from one manifest; the rest are left out with a warning.
pub const MAX_MODULE_TOOLS: usize = 4096;

/// The largest manifest read: 16 MiB.
pub const MAX_MANIFEST_BYTES: usize = 16 << 20;

/// Uses the tools of HTTP tool modules as tools of a registry, named `module.tool` (see the
/// [module documentation](super)). Cheap to clone: clones share one state.
#[derive(Clone)]
pub struct Gateway(Arc<Inner>);

struct Inner {
    registry: Shared,
    map: ModuleMap,
    client: reqwest::Client,
    cache: Box<dyn ManifestCache>,
    ttl: Duration,
    discovery_timeout: Duration,
    /// What each module last gave; one refresh at a time changes it.
    state: tokio::sync::Mutex<BTreeMap<String, Loaded>>,
}

/// What one module last gave.
#[derive(Default, Clone)]
struct Loaded {
    /// The gateway names of its tools in the registry.
    tools: BTreeSet<String>,
    /// How many tools its manifest had past the ones a gateway takes.
    left_out: usize,
    /// The manifest they were registered from: one that comes back unchanged is not read
    /// again.
    manifest: Option<Arc<Value>>,
    fetched_at: Option<u64>,
    expires_at: Option<u64>,
    source: Source,
    error: Option<String>,
}

/// Where a module's tools came from.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Nothing usable yet: the module was not reached and had no manifest in the cache.
    #[default]
    None,
    /// The manifest kept in the cache.
    Cache,
    /// The manifest fetched from the module.
    Fetched,
}

/// How one module stands, as [`Gateway::status`] and the refresh methods report it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModuleStatus {
    /// The module's name in the map.
    pub name: String,
    /// Where it is.
    pub url: String,
    /// How many of its tools are registered.
    pub tools: usize,
    /// How many tools its manifest had past the [`MAX_MODULE_TOOLS`] a gateway takes: left
    /// out, unread.
    #[serde(skip_serializing_if = "is_zero")]
    pub left_out: usize,
    /// Where they came from.
    pub source: Source,
    /// When its manifest was fetched (seconds since the Unix epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<u64>,
    /// When its manifest expires (seconds since the Unix epoch).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// Why the last fetch failed, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Why a gateway cannot be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GatewayError {
    /// The module map is not usable.
    #[error(transparent)]
    Map(#[from] super::ModuleMapError),
    /// The HTTP client cannot start.
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
}

/// Builds a [`Gateway`]: [`Gateway::builder`].
pub struct GatewayBuilder {
    registry: Shared,
    map: ModuleMap,
    cache: Option<Box<dyn ManifestCache>>,
    ttl: Duration,
    discovery_timeout: Duration,
}

impl GatewayBuilder {
    /// Where manifests are kept between fetches (default: the file
    /// [`DEFAULT_CACHE_FILE`] in the working folder; [`MemoryManifestCache`](super::MemoryManifestCache) keeps them in
    /// memory only).
    pub fn cache(mut self, cache: impl ManifestCache + 'static) -> Self {
        self.cache = Some(Box::new(cache));
        self
    }

    /// Keeps manifests in the JSON file `path` ([`FileManifestCache`]), so that a restart lists
    /// every module at once.
    pub fn cache_file(self, path: impl Into<std::path::PathBuf>) -> Self {
        self.cache(FileManifestCache::new(path))
    }

    /// How long a fetched manifest is used: default [`MANIFEST_TTL`] (1 hour).
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// How long fetching one manifest may take: default [`DISCOVERY_TIMEOUT`] (10 s).
    pub fn discovery_timeout(mut self, timeout: Duration) -> Self {
        self.discovery_timeout = timeout;
        self
    }

    /// The gateway. Nothing is fetched yet: call [`Gateway::start`].
    pub fn build(self) -> Result<Gateway, GatewayError> {
        self.map.check()?;
        let client = reqwest::Client::builder()
            .user_agent(concat!("tool-registry/", env!("CARGO_PKG_VERSION")))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| GatewayError::Client(error.to_string()))?;
        Ok(Gateway(Arc::new(Inner {
            registry: self.registry,
            map: self.map,
            client,
            cache: self
                .cache
                .unwrap_or_else(|| Box::new(FileManifestCache::new(DEFAULT_CACHE_FILE))),
            ttl: self.ttl,
            discovery_timeout: self.discovery_timeout,
            state: tokio::sync::Mutex::new(BTreeMap::new()),
        })))
    }
}

/// What a load of one module does with the cache.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Use a fresh cached manifest; fetch the rest.
    Start,
    /// Fetch the modules whose manifest expired.
    Stale,
    /// Fetch every module.
    Refresh,
}

impl Gateway {
    /// A gateway that registers the tools of the modules in `map` in `registry` (a
    /// `&'static Registry` or an `Arc<Registry>`).
    pub fn builder(registry: impl Into<Shared>, map: ModuleMap) -> GatewayBuilder {
        GatewayBuilder {
            registry: registry.into(),
            map,
            cache: None,
            ttl: MANIFEST_TTL,
            discovery_timeout: DISCOVERY_TIMEOUT,
        }
    }

    /// Lists every module: a manifest still fresh in the cache is used as it is, without
    /// waiting on its module; the others are fetched, all at once. A module that cannot be
    /// reached is logged and left out until a later refresh; the others work.
    pub async fn start(&self) -> Vec<ModuleStatus> {
        self.load(Mode::Start).await
    }

    /// Fetches every module's manifest now.
    pub async fn refresh(&self) -> Vec<ModuleStatus> {
        self.load(Mode::Refresh).await
    }

    /// Fetches the manifests whose time is up (and the modules not reached yet).
    pub async fn refresh_stale(&self) -> Vec<ModuleStatus> {
        self.load(Mode::Stale).await
    }

    /// Keeps every manifest fresh: waits until the first one expires (a module not reached is
    /// tried again after a minute), fetches what expired, and so on, forever. Spawn it: `tokio::spawn(gateway.clone().keep_fresh())`.
    pub async fn keep_fresh(self) {
        loop {
            let wait = {
                let state = self.0.state.lock().await;
                let now = unix_now();
                state
                    .values()
                    .map(|loaded| match loaded.expires_at {
                        Some(expires) => expires.saturating_sub(now),
                        None => RETRY_SECS,
                    })
                    .min()
                    .unwrap_or(self.0.ttl.as_secs())
                    .max(1)
            };
            let wait = Duration::from_secs(wait);
            tokio::time::sleep(wait).await;
            self.refresh_stale().await;
        }
    }

    /// How each module stands.
    pub async fn status(&self) -> Vec<ModuleStatus> {
        let state = self.0.state.lock().await;
        self.0
            .map
            .iter()
            .map(|(name, module)| status_of(name, module, state.get(name)))
            .collect()
    }

    /// The module map.
    pub fn modules(&self) -> &ModuleMap {
        &self.0.map
    }

    async fn load(&self, mode: Mode) -> Vec<ModuleStatus> {
        let mut state = self.0.state.lock().await;
        let now = unix_now();
        let due: Vec<(&str, &Module)> = self
            .0
            .map
            .iter()
            .filter(|(name, _)| match mode {
                Mode::Start | Mode::Refresh => true,
                Mode::Stale => state
                    .get(*name)
                    .and_then(|loaded| loaded.expires_at)
                    .is_none_or(|expires| expires <= now),
            })
            .collect();
        let found = futures::future::join_all(
            due.iter()
                .map(|(name, module)| self.manifest_for(name, module, mode)),
        )
        .await;
        for ((name, module), found) in due.into_iter().zip(found) {
            let previous = state.remove(name).unwrap_or_default();
            let loaded = match found {
                Ok((entry, source)) => {
                    let registry = &*self.0.registry;
                    let same = previous.manifest.as_deref() == Some(&entry.manifest)
                        && previous
                            .tools
                            .iter()
                            .all(|tool| registry.registration(tool).is_some());
                    let (tools, left_out) = if same {
                        (previous.tools, previous.left_out)
                    } else {
                        self.apply(name, module, &entry.manifest, &previous.tools)
                    };
                    Loaded {
                        tools,
                        left_out,
                        manifest: Some(Arc::new(entry.manifest)),
                        fetched_at: Some(entry.fetched_at),
                        expires_at: Some(entry.expires_at),
                        source,
                        error: None,
                    }
                }
                Err(error) => {
                    tracing::warn!(target: "tool_registry::http", module = name, %error, "module unreachable; its tools are left out until a later refresh");
                    self.withdraw(&previous.tools);
                    Loaded {
                        error: Some(error),
                        ..Loaded::default()
                    }
                }
            };
            state.insert(name.to_owned(), loaded);
        }
        self.0
            .map
            .iter()
            .map(|(name, module)| status_of(name, module, state.get(name)))
            .collect()
    }

    /// The manifest to use for one module: from the cache when `mode` allows and it is fresh,
    /// else fetched (and put in the cache).
    async fn manifest_for(
        &self,
        name: &str,
        module: &Module,
        mode: Mode,
    ) -> Result<(CachedManifest, Source), String> {
        if mode == Mode::Start {
            match self.0.cache.load(name).await {
                Ok(Some(entry)) if !entry.is_expired() => return Ok((entry, Source::Cache)),
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!(target: "tool_registry::http", module = name, %error, "cannot read the manifest cache");
                }
            }
        }
        let manifest = self.fetch(module).await?;
        let entry = CachedManifest::fetched_now(manifest, self.0.ttl);
        if let Err(error) = self.0.cache.store(name, &entry).await {
            tracing::warn!(target: "tool_registry::http", module = name, %error, "cannot keep the manifest in the cache");
        }
        Ok((entry, Source::Fetched))
    }

    /// `GET {url}/manifest`, within the discovery timeout.
    async fn fetch(&self, module: &Module) -> Result<Value, String> {
        let mut request = self
            .0
            .client
            .get(module.endpoint("manifest"))
            .timeout(self.0.discovery_timeout);
        if let Some(token) = module.bearer(&self.0.client).await? {
            request = request.bearer_auth(token);
        }
        let response = request
            .send()
            .await
            .map_err(|error| super::remote::describe(&error))?;
        let status = response.status();
        let body = read_capped(response, MAX_MANIFEST_BYTES, |_| true)
            .await
            .map_err(|error| format!("the manifest cannot be read: {error}"))?;
        if !status.is_success() {
            return Err(format!(
                "GET /manifest answered {status}: {}",
                super::remote::excerpt(&body)
            ));
        }
        // Read as it is checked, element by element: the tools past the ones kept are skipped
        // unread, so the body is the most this costs.
        let manifest = READ
            .deserialize(&mut serde_json::Deserializer::from_slice(&body))
            .map_err(|error| format!("the manifest is not a module manifest: {error}"))?;
        Ok(manifest.into_value())
    }

    /// Registers the tools of `manifest` as `name.tool`, replaces the ones that changed and
    /// removes the ones it no longer has. Returns the names registered, and how many tools
    /// the manifest had past the ones a gateway takes.
    fn apply(
        &self,
        name: &str,
        module: &Module,
        manifest: &Value,
        previous: &BTreeSet<String>,
    ) -> (BTreeSet<String>, usize) {
        let registry = &*self.0.registry;
        let mut registered = BTreeSet::new();
        let raw = match READ.deserialize(manifest) {
            Ok(raw) => raw,
            Err(error) => {
                tracing::warn!(target: "tool_registry::http", module = name, %error, "the cached manifest is unusable");
                self.withdraw(previous);
                return (registered, 0);
            }
        };
        let prefix = format!("{}.", raw.name);
        if raw.left_out > 0 {
            tracing::warn!(target: "tool_registry::http", module = name, left_out = raw.left_out, "the manifest has more tools than a gateway takes ({MAX_MODULE_TOOLS}); the rest are left out");
        }
        for tool in raw.tools {
            let spec = match serde_json::from_value::<ToolSpec>(tool) {
                Ok(spec) => spec,
                Err(error) => {
                    tracing::warn!(target: "tool_registry::http", module = name, %error, "a tool of the module's manifest is not a valid spec; it is left out");
                    continue;
                }
            };
            let remote_name = spec.tool_name().to_owned();
            let own = remote_name.strip_prefix(&prefix).unwrap_or(&remote_name);
            let local = format!("{name}.{own}");
            let spec = match spec.with_name(local.clone()) {
                Ok(spec) => spec.with_timeout(Some(module.call_timeout())),
                Err(error) => {
                    tracing::warn!(target: "tool_registry::http", module = name, %error, "a tool of the module's manifest cannot be named here; it is left out");
                    continue;
                }
            };
            if registered.contains(&local) {
                continue;
            }
            let unchanged = registry
                .registration(&local)
                .is_some_and(|registration| registration.tool.spec() == spec)
                && previous.contains(&local);
            if !unchanged {
                if previous.contains(&local) {
                    let _ = registry.remove(&local);
                }
                let remote = Arc::new(Remote {
                    client: self.0.client.clone(),
                    module_name: name.to_owned(),
                    module: module.clone(),
                    remote_name,
                    local_name: local.clone(),
                    idempotent: spec.annotations().idempotent == Some(true),
                    confirms: spec.confirm_if().is_some()
                        || spec
                            .annotations()
                            .effective(&local, spec.category())
                            .requires_confirmation
                            == Some(true),
                    task: spec.task_support() != tool_registry_core::task::TaskSupport::Forbidden,
                    limits: registry.content_limits(),
                });
                let handler = ToolHandler::from_results(move |args, ctx| {
                    let remote = Arc::clone(&remote);
                    async move { remote.call(args, ctx).await }
                });
                if let Err(error) = registry.register(spec, handler) {
                    tracing::warn!(target: "tool_registry::http", module = name, %error, "a tool of the module cannot be registered; it is left out");
                    continue;
                }
            }
            registered.insert(local);
        }
        self.withdraw(&previous.difference(&registered).cloned().collect());
        (registered, raw.left_out)
    }

    /// Removes tools a module no longer gives.
    fn withdraw(&self, tools: &BTreeSet<String>) {
        for tool in tools {
            let _ = self.0.registry.remove(tool);
        }
    }
}

fn status_of(name: &str, module: &Module, loaded: Option<&Loaded>) -> ModuleStatus {
    let loaded = loaded.cloned().unwrap_or_default();
    ModuleStatus {
        name: name.to_owned(),
        url: module.url().to_owned(),
        tools: loaded.tools.len(),
        left_out: loaded.left_out,
        source: loaded.source,
        fetched_at: loaded.fetched_at,
        expires_at: loaded.expires_at,
        error: loaded.error,
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How a gateway reads a manifest, fetched or kept: at most [`MAX_MODULE_TOOLS`] tools.
const READ: ReadManifest = ReadManifest {
    keep: MAX_MODULE_TOOLS,
};
