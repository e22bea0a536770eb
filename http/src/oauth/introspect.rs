//! Token introspection (RFC 7662), as a resource server asks: the token posted to the
//! authorization server's endpoint with this server's client credentials, an active token's
//! claims kept [`INTROSPECTION_TTL`] (never past its expiry, at most 10,000 at once). With
//! feature `oauth`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::keys::fetch;
use crate::grant::form_encode;

/// How long an introspection's answer about an active token is kept (never past the token's
/// expiry).
pub const INTROSPECTION_TTL: Duration = Duration::from_secs(60);

/// The most introspection answers kept at once.
const MAX_KEPT: usize = 10_000;

/// The claims of an active token, by the SHA-256 of the token, each until it is asked again.
type Kept = HashMap<[u8; 32], (Map<String, Value>, Instant)>;

/// One introspection endpoint, and the active tokens it answered for.
pub(super) struct Introspector {
    endpoint: String,
    client_id: String,
    secret: String,
    http: reqwest::Client,
    kept: Mutex<Kept>,
}

impl Introspector {
    pub(super) fn new(
        endpoint: String,
        client_id: String,
        secret: String,
        http: reqwest::Client,
    ) -> Self {
        Self {
            endpoint,
            client_id,
            secret,
            http,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// The claims of `token` when the endpoint says it is active; why not otherwise.
    pub(super) async fn claims(&self, token: &str) -> Result<Map<String, Value>, &'static str> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((claims, until)) = self
            .kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&digest)
            && Instant::now() < *until
        {
            return Ok(claims.clone());
        }
        let request = self
            .http
            .post(&self.endpoint)
            .basic_auth(
                form_encode(&self.client_id),
                Some(form_encode(&self.secret)),
            )
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(format!(
                "token={}&token_type_hint=access_token",
                form_encode(token)
            ));
        const UNCHECKED: &str = "the token cannot be checked now; try again";
        let answer = fetch(request).await.map_err(|_| UNCHECKED)?;
        let claims: Map<String, Value> = serde_json::from_slice(&answer).map_err(|_| UNCHECKED)?;
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err("the token is not active");
        }
        let now = now_seconds();
        let lasts = (claims.get("exp").and_then(Value::as_u64))
            .map(|exp| Duration::from_secs(exp.saturating_sub(now)))
            .unwrap_or(INTROSPECTION_TTL)
            .min(INTROSPECTION_TTL);
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= MAX_KEPT {
            let now = Instant::now();
            kept.retain(|_, (_, until)| *until > now);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(digest, (claims.clone(), Instant::now() + lasts));
        Ok(claims)
    }
}

/// Seconds since the Unix epoch, as tokens count them.
pub(super) fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
}
