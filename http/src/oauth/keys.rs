//! The authorization server's signing keys, as a resource server keeps them: fetched (a JWKS),
//! used for [`KEYS_TTL`], fetched again at most once per [`KEYS_REFETCH_EVERY`] when a token
//! names a key not among them (a rotation, never one fetch per hostile token). With feature
//! `oauth`.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey};

use crate::grant::read_within;

/// How long fetched keys are used before they are fetched again.
pub const KEYS_TTL: Duration = Duration::from_secs(600);

/// The least time between two fetches of the keys prompted by a token signed with a key not
/// among them: one fetch for a rotation, never one per hostile token.
pub const KEYS_REFETCH_EVERY: Duration = Duration::from_secs(30);

/// The most bytes read of a JWKS or an introspection answer.
pub(super) const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// The keys, as last fetched.
struct Fetched {
    set: JwkSet,
    at: Instant,
}

/// The keys at one JWKS URI.
pub(super) struct KeyCache {
    uri: String,
    http: reqwest::Client,
    refetch_every: Duration,
    keys: tokio::sync::Mutex<Option<Fetched>>,
    /// When the keys were last fetched for an unknown key id.
    refetched: Mutex<Option<Instant>>,
}

impl KeyCache {
    /// The keys at `uri`, fetched with `http`, fetched again for an unknown key id at most once
    /// per `refetch_every`. Nothing is fetched before the first token.
    pub(super) fn new(uri: String, http: reqwest::Client, refetch_every: Duration) -> Self {
        Self {
            uri,
            http,
            refetch_every,
            keys: tokio::sync::Mutex::new(None),
            refetched: Mutex::new(None),
        }
    }

    /// The key with id `kid` for `alg` (the only key, when the token names none), or `None`
    /// when the authorization server does not publish it.
    pub(super) async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
        let mut keys = self.keys.lock().await;
        let stale = keys
            .as_ref()
            .is_none_or(|keys| keys.at.elapsed() > KEYS_TTL);
        if stale && let Ok(set) = self.fetch().await {
            *keys = Some(Fetched {
                set,
                at: Instant::now(),
            });
        }
        if let Some(found) = keys.as_ref().and_then(|keys| pick(&keys.set, kid, alg)) {
            return Some(found);
        }
        let may_refetch = {
            let mut refetched = self.refetched.lock().unwrap_or_else(|p| p.into_inner());
            let may = refetched.is_none_or(|at| at.elapsed() >= self.refetch_every);
            if may {
                *refetched = Some(Instant::now());
            }
            may
        };
        if may_refetch
            && !stale
            && let Ok(set) = self.fetch().await
        {
            *keys = Some(Fetched {
                set,
                at: Instant::now(),
            });
        }
        keys.as_ref().and_then(|keys| pick(&keys.set, kid, alg))
    }

    async fn fetch(&self) -> Result<JwkSet, String> {
        let body = fetch(self.http.get(&self.uri)).await?;
        serde_json::from_slice(&body).map_err(|error| {
            tracing::warn!(target: "tool_registry::oauth", uri = %self.uri, %error, "the authorization server's keys do not read");
            error.to_string()
        })
    }
}

/// An authorization server's answer, within [`MAX_ANSWER_BYTES`]; why not, logged.
pub(super) async fn fetch(request: reqwest::RequestBuilder) -> Result<Vec<u8>, String> {
    let answer = request.send().await.map_err(|error| {
        tracing::warn!(target: "tool_registry::oauth", %error, "the authorization server cannot be reached");
        error.to_string()
    })?;
    if !answer.status().is_success() {
        tracing::warn!(target: "tool_registry::oauth", status = %answer.status(), "the authorization server refused");
        return Err(answer.status().to_string());
    }
    read_within(answer, MAX_ANSWER_BYTES).await
}

/// The key of `set` with id `kid` for `alg` (the only key, when the token names none).
fn pick(set: &JwkSet, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
    let jwk = match kid {
        Some(kid) => set.find(kid)?,
        None if set.keys.len() == 1 => &set.keys[0],
        None => return None,
    };
    // A key that names its algorithm is used for that one only.
    if let Some(named) = jwk.common.key_algorithm
        && format!("{named:?}") != format!("{alg:?}")
    {
        return None;
    }
    DecodingKey::from_jwk(jwk).ok()
}
