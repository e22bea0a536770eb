//! Where a gateway keeps the manifests it fetched, so that a restart lists every module at
//! once: [`ManifestCache`], with a file ([`FileManifestCache`], the embedded default) and
//! memory ([`MemoryManifestCache`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use tool_registry_core::store::{JsonFile, StoreError};

/// How long a fetched manifest is used before it is fetched again: 1 hour.
pub const MANIFEST_TTL: Duration = Duration::from_secs(3600);

/// A manifest as it was fetched, and until when it is used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedManifest {
    /// The manifest's JSON as a gateway keeps it: the module's name and version, the tools it
    /// takes (at most [`MAX_MODULE_TOOLS`](super::MAX_MODULE_TOOLS)), and how many it left
    /// out (`tools_left_out`, when any).
    pub manifest: Value,
    /// When it was fetched, in seconds since the Unix epoch.
    pub fetched_at: u64,
    /// Until when it is used, in seconds since the Unix epoch.
    pub expires_at: u64,
}

impl CachedManifest {
    /// A manifest fetched now, used for `ttl`.
    pub fn fetched_now(manifest: Value, ttl: Duration) -> Self {
        let now = unix_now();
        Self {
            manifest,
            fetched_at: now,
            expires_at: now.saturating_add(ttl.as_secs().max(1)),
        }
    }

    /// Whether its time is up.
    pub fn is_expired(&self) -> bool {
        unix_now() >= self.expires_at
    }

    /// How long until it expires (zero once it has).
    pub fn expires_in(&self) -> Duration {
        Duration::from_secs(self.expires_at.saturating_sub(unix_now()))
    }
}

pub(super) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Where manifests are kept between fetches, by module name. A failure to read or write is
/// reported and the gateway goes on without the cache.
#[async_trait::async_trait]
pub trait ManifestCache: Send + Sync {
    /// The manifest kept for `module`, expired or not.
    async fn load(&self, module: &str) -> Result<Option<CachedManifest>, StoreError>;
    /// Keeps `entry` as `module`'s manifest.
    async fn store(&self, module: &str, entry: &CachedManifest) -> Result<(), StoreError>;
}

/// Manifests in process memory: gone at a restart.
#[derive(Default)]
pub struct MemoryManifestCache {
    entries: Mutex<BTreeMap<String, CachedManifest>>,
}

impl MemoryManifestCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait::async_trait]
impl ManifestCache for MemoryManifestCache {
    async fn load(&self, module: &str) -> Result<Option<CachedManifest>, StoreError> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        Ok(entries.get(module).cloned())
    }

    async fn store(&self, module: &str, entry: &CachedManifest) -> Result<(), StoreError> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.insert(module.to_owned(), entry.clone());
        Ok(())
    }
}

/// Manifests in one JSON file, changed under an OS lock like every shared file of this crate
/// ([`JsonFile`]), so that gateways in several processes can share it and a restart finds
/// what the last run fetched.
pub struct FileManifestCache {
    file: JsonFile,
}

#[derive(Default, Serialize, Deserialize)]
struct CacheFile {
    #[serde(default)]
    modules: BTreeMap<String, CachedManifest>,
    #[serde(flatten)]
    other: serde_json::Map<String, Value>,
}

impl FileManifestCache {
    /// The cache kept in `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            file: JsonFile::new(path, "module manifest cache"),
        }
    }
}

#[async_trait::async_trait]
impl ManifestCache for FileManifestCache {
    async fn load(&self, module: &str) -> Result<Option<CachedManifest>, StoreError> {
        let file: CacheFile = self.file.read()?;
        Ok(file.modules.get(module).cloned())
    }

    async fn store(&self, module: &str, entry: &CachedManifest) -> Result<(), StoreError> {
        self.file.update(|file: &mut CacheFile| {
            file.modules.insert(module.to_owned(), entry.clone());
            Ok::<_, StoreError>(())
        })
    }
}
