//! `cache = "5m"`: the result of a `read_only` or `idempotent` tool reused for identical calls.
//!
//! A result is kept under a [`CacheKey`]: a SHA-256 digest of the tool's name and version, the
//! arguments in canonical form (object keys sorted, no whitespace: the arguments the handler
//! got, after any hook rewrote them) and, unless the tool declares `cache_per_user = false`,
//! who asks: the user (or, without one, the scope's anonymous key) and the permission level.
//! So two users never share a result, a guest never sees an owner's, and a new version of a
//! tool starts with nothing kept. Only successful results are kept; a failure, an error or a
//! timeout is not.
//!
//! The results live in a [`ResultCache`]: [`InMemoryResultCache`] by default (bounded in
//! entries and bytes), or Redis in a fleet (`redis::RedisResultCache`), so that every
//! instance answers from what one computed. A cache that cannot be reached is no cache: the
//! call runs its tool, and nothing wrong is ever answered.
//!
//! Within one registry, identical calls that miss at the same time run the tool once: the
//! first runs it, the others wait for its result (each within its own deadline).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::audit::wall_now;
use crate::call::{Ctx, ToolError, ToolResult};
use crate::def::Tool;
pub use crate::meta::CachePolicy;
use async_trait::async_trait;

/// What a cached result is kept under: a digest of the tool, its version, the canonical
/// arguments and (per user) who asks; 64 hexadecimal digits, which hold nothing of the call.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 64]);

impl CacheKey {
    /// The key as 64 hexadecimal digits.
    pub fn as_str(&self) -> &str {
        // Written from `HEX` alone, so always ASCII.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::fmt::Debug for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("CacheKey").field(&self.as_str()).finish()
    }
}

/// The key of a call of `tool` with `arguments` (canonical text) by `ctx`'s caller.
pub(crate) fn cache_key(tool: &Tool, arguments: &str, ctx: &Ctx, per_user: bool) -> CacheKey {
    let mut digest = Sha256::new();
    let mut field = |bytes: &[u8]| {
        digest.update((bytes.len() as u64).to_le_bytes());
        digest.update(bytes);
    };
    field(b"tool-registry result v1");
    field(tool.name().as_bytes());
    field(tool.version().unwrap_or("").as_bytes());
    field(arguments.as_bytes());
    if per_user {
        let scope = ctx.scope();
        match scope.user.as_deref() {
            Some(user) => {
                field(b"user");
                field(user.as_bytes());
            }
            None => {
                field(b"anonymous");
                field(scope.limit_key().as_bytes());
            }
        }
        field(scope.level().as_str().as_bytes());
    }
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut hex = [0; 64];
    for (pair, byte) in hex.chunks_exact_mut(2).zip(digest.finalize()) {
        pair[0] = HEX[usize::from(byte >> 4)];
        pair[1] = HEX[usize::from(byte & 15)];
    }
    CacheKey(hex)
}

/// Where cached results are kept. Errors are the store's own words; the call then runs its
/// tool as if nothing were cached.
#[async_trait]
pub trait ResultCache: Send + Sync {
    /// The result kept under `key`, if one is and it has not expired.
    async fn get(&self, key: &CacheKey) -> Result<Option<ToolResult>, String>;
    /// Keeps `result` under `key` for `ttl`.
    async fn put(&self, key: &CacheKey, result: &ToolResult, ttl: Duration) -> Result<(), String>;
}

/// The default cache: in this process's memory, at most [`max_entries`](Self::with_limits)
/// results and so many bytes (as JSON); past either, the results that expire first go.
pub struct InMemoryResultCache {
    inner: Mutex<Kept>,
    max_entries: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct Kept {
    results: FxHashMap<CacheKey, (SystemTime, usize, ToolResult)>,
    /// Keys in the order they were put, for evicting without a full scan.
    order: VecDeque<CacheKey>,
    bytes: usize,
}

impl Default for InMemoryResultCache {
    fn default() -> Self {
        Self::new()
    }
}

impl InMemoryResultCache {
    /// An empty cache of at most 10,000 results and 64 MiB.
    pub fn new() -> Self {
        Self::with_limits(10_000, 64 << 20)
    }

    /// An empty cache of at most `max_entries` results and `max_bytes` bytes of them.
    pub fn with_limits(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            inner: Mutex::new(Kept::default()),
            max_entries,
            max_bytes,
        }
    }

    /// How many results are kept (expired ones included until they are dropped).
    pub fn len(&self) -> usize {
        self.lock().results.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[async_trait]
impl ResultCache for InMemoryResultCache {
    async fn get(&self, key: &CacheKey) -> Result<Option<ToolResult>, String> {
        let mut kept = self.lock();
        let Some((expires, _, result)) = kept.results.get(key) else {
            return Ok(None);
        };
        if *expires > wall_now() {
            return Ok(Some(result.clone()));
        }
        if let Some((_, size, _)) = kept.results.remove(key) {
            kept.bytes -= size;
        }
        Ok(None)
    }

    async fn put(&self, key: &CacheKey, result: &ToolResult, ttl: Duration) -> Result<(), String> {
        let size = serde_json::to_vec(result).map_or(usize::MAX, |bytes| bytes.len());
        if size > self.max_bytes || self.max_entries == 0 {
            return Ok(());
        }
        let now = wall_now();
        let mut kept = self.lock();
        if let Some((_, old, _)) = kept.results.remove(key) {
            kept.bytes -= old;
        }
        while kept.results.len() >= self.max_entries || kept.bytes + size > self.max_bytes {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some((_, old, _)) = kept.results.remove(&oldest) {
                kept.bytes -= old;
            }
        }
        // Keys put again are in the order twice; the queue is rebuilt when it holds far more
        // keys than results.
        if kept.order.len() > 2 * self.max_entries.max(16) {
            let Kept { results, order, .. } = &mut *kept;
            order.retain(|key| results.contains_key(key));
        }
        kept.order.push_back(key.clone());
        kept.results
            .insert(key.clone(), (now + ttl, size, result.clone()));
        kept.bytes += size;
        Ok(())
    }
}

/// The calls of one registry that missed the cache and are running, by key: one flight per
/// key, which the identical calls that miss meanwhile wait for.
#[derive(Default)]
pub(crate) struct Flights {
    running: Mutex<FxHashMap<CacheKey, Arc<Flight>>>,
}

pub(crate) type Flight = tokio::sync::OnceCell<Result<ToolResult, ToolError>>;

impl Flights {
    /// The flight of `key`, joined or started.
    pub(crate) fn join(&self, key: &CacheKey) -> Arc<Flight> {
        self.lock()
            .entry(key.clone())
            .or_insert_with(|| Arc::new(Flight::new()))
            .clone()
    }

    /// Ends `flight` of `key`, if it is still the one running.
    pub(crate) fn land(&self, key: &CacheKey, flight: &Arc<Flight>) {
        let mut running = self.lock();
        if running
            .get(key)
            .is_some_and(|current| Arc::ptr_eq(current, flight))
        {
            running.remove(key);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FxHashMap<CacheKey, Arc<Flight>>> {
        self.running
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
