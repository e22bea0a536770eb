//! A gateway's access tokens for a module that is an OAuth resource server: the client
//! credentials grant (RFC 6749 §4.4) with the module as the token's resource (RFC 8707), the
//! authorization server found from the module's protected resource metadata (RFC 9728) and its
//! own metadata (RFC 8414, or OpenID Connect discovery), the token kept until shortly before it
//! expires and dropped when the module refuses it.
//!
//! Only this grant is written here: it is three requests, and the crates that speak OAuth
//! (`oauth2`, rmcp's `auth`) bring their own HTTP stacks for it. The MCP client's grants,
//! authorization code included, are rmcp's (`tool_registry_mcp::oauth`).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

/// How long before its expiry a token is replaced.
const EARLY: Duration = Duration::from_secs(30);

/// How long a token without `expires_in` is used.
const UNSTATED_LIFETIME: Duration = Duration::from_secs(300);

/// The most bytes read of a metadata document or a token answer.
const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// `[modules.NAME.oauth]`: the client a gateway is at the module's authorization server.
///
/// ```toml
/// [modules.kb.oauth]
/// client_id = "gateway"
/// client_secret_env = "KB_OAUTH_SECRET"   # or client_secret = "…"
/// scopes = ["tools"]                      # optional
/// ```
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientCredentials {
    client_id: String,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    client_secret_env: Option<String>,
    #[serde(default)]
    scopes: Vec<String>,
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("client_secret_env", &self.client_secret_env)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl ClientCredentials {
    /// The client `client_id` with its secret.
    pub fn new(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self {
            client_id: client_id.into(),
            client_secret: Some(secret.into()),
            client_secret_env: None,
            scopes: Vec::new(),
        }
    }

    /// The scopes asked for.
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The secret, from `client_secret` or else the variable `client_secret_env` names.
    pub(super) fn secret(&self) -> Option<String> {
        self.client_secret
            .clone()
            .or_else(|| (self.client_secret_env.as_deref()).and_then(|var| std::env::var(var).ok()))
            .filter(|secret| !secret.is_empty())
    }
}

/// A token and when it stops being used.
#[derive(Clone)]
struct Held {
    token: String,
    until: Instant,
}

/// The tokens of one module, shared by every clone of its [`Module`](super::Module).
#[derive(Clone, Default)]
pub(super) struct Tokens(Arc<tokio::sync::Mutex<()>>, Arc<Mutex<Option<Held>>>);

impl PartialEq for Tokens {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Tokens {}

impl Tokens {
    /// A token for the module at `url`: the one held, or a new one.
    pub(super) async fn token(
        &self,
        client: &reqwest::Client,
        url: &str,
        credentials: &ClientCredentials,
    ) -> Result<String, String> {
        if let Some(held) = self.held() {
            return Ok(held);
        }
        // One request for a token at a time; the others take what it got.
        let _turn = self.0.lock().await;
        if let Some(held) = self.held() {
            return Ok(held);
        }
        let (token, lifetime) = fetch(client, url, credentials).await?;
        let until = Instant::now() + lifetime.saturating_sub(EARLY).max(Duration::from_secs(1));
        *self.1.lock().unwrap_or_else(|p| p.into_inner()) = Some(Held {
            token: token.clone(),
            until,
        });
        Ok(token)
    }

    /// The token held now, if it is still used.
    pub(super) fn held(&self) -> Option<String> {
        let held = self.1.lock().unwrap_or_else(|p| p.into_inner());
        held.as_ref()
            .filter(|held| Instant::now() < held.until)
            .map(|held| held.token.clone())
    }

    /// The module refused the token: the next request asks for a new one.
    pub(super) fn drop_token(&self) {
        *self.1.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

/// A JSON document at `url`, bounded.
async fn document(client: &reqwest::Client, url: &str) -> Result<Value, String> {
    let answer = client
        .get(url)
        .send()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    if !answer.status().is_success() {
        return Err(format!("{url} answered {}", answer.status()));
    }
    bounded(answer).await.map_err(|why| format!("{url}: {why}"))
}

/// An answer's body as JSON, read within [`MAX_ANSWER_BYTES`].
async fn bounded(answer: reqwest::Response) -> Result<Value, String> {
    let body = read_within(answer, MAX_ANSWER_BYTES).await?;
    serde_json::from_slice(&body).map_err(|error| format!("the answer is not JSON: {error}"))
}

/// An answer's body, at most `max` bytes of it: longer is an error, and the rest is not read.
pub(super) async fn read_within(
    mut answer: reqwest::Response,
    max: usize,
) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    while let Some(chunk) = answer.chunk().await.map_err(|error| error.to_string())? {
        if body.len() + chunk.len() > max {
            return Err(format!("the answer is longer than {max} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The well-known URL of `name` for `base` with its path inserted (RFC 8414 §3, RFC 9728 §3).
fn well_known(base: &str, name: &str) -> Result<String, String> {
    let url = reqwest::Url::parse(base).map_err(|error| format!("{base}: {error}"))?;
    let path = url.path().trim_end_matches('/');
    Ok(format!(
        "{}/.well-known/{name}{path}",
        url.origin().ascii_serialization()
    ))
}

/// A new token for the module at `url`, and how long it lasts.
async fn fetch(
    client: &reqwest::Client,
    url: &str,
    credentials: &ClientCredentials,
) -> Result<(String, Duration), String> {
    let resource_metadata = document(client, &well_known(url, "oauth-protected-resource")?)
        .await
        .map_err(|why| format!("the module publishes no protected resource metadata ({why})"))?;
    let resource = resource_metadata["resource"]
        .as_str()
        .ok_or("the module's metadata names no resource")?
        .to_owned();
    let issuer = resource_metadata["authorization_servers"][0]
        .as_str()
        .ok_or("the module's metadata names no authorization server")?;
    let mut metadata = None;
    for name in ["oauth-authorization-server", "openid-configuration"] {
        if let Ok(found) = document(client, &well_known(issuer, name)?).await {
            metadata = Some(found);
            break;
        }
    }
    let metadata = metadata
        .ok_or_else(|| format!("the authorization server {issuer} publishes no metadata"))?;
    if metadata["issuer"].as_str() != Some(issuer) {
        return Err(format!(
            "the authorization server's metadata names another issuer than {issuer}"
        ));
    }
    let endpoint = metadata["token_endpoint"]
        .as_str()
        .ok_or("the authorization server's metadata names no token endpoint")?;
    let secret = credentials.secret().ok_or(
        "the module's oauth table has no client secret (or its `client_secret_env` is unset)",
    )?;
    let methods: Vec<&str> = (metadata["token_endpoint_auth_methods_supported"].as_array())
        .map(|methods| methods.iter().filter_map(Value::as_str).collect())
        .unwrap_or_else(|| vec!["client_secret_basic"]);
    let mut form = vec![
        ("grant_type", "client_credentials".to_owned()),
        ("resource", resource),
    ];
    if !credentials.scopes.is_empty() {
        form.push(("scope", credentials.scopes.join(" ")));
    }
    let mut request = client.post(endpoint);
    if methods.contains(&"client_secret_basic") {
        request = request.basic_auth(
            form_encode(&credentials.client_id),
            Some(form_encode(&secret)),
        );
    } else {
        form.push(("client_id", credentials.client_id.clone()));
        form.push(("client_secret", secret));
    }
    let body = form
        .iter()
        .map(|(key, value)| format!("{key}={}", form_encode(value)))
        .collect::<Vec<_>>()
        .join("&");
    let answer = request
        .header("content-type", "application/x-www-form-urlencoded")
        .header("accept", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|error| format!("{endpoint}: {error}"))?;
    let status = answer.status();
    let answer = bounded(answer).await.unwrap_or(Value::Null);
    if !status.is_success() {
        let error = answer["error"].as_str().unwrap_or("refused");
        return Err(format!(
            "the authorization server refused the client credentials of `{}` ({status}, {error})",
            credentials.client_id
        ));
    }
    let token = answer["access_token"]
        .as_str()
        .ok_or("the authorization server's answer has no access_token")?
        .to_owned();
    let lifetime = answer["expires_in"]
        .as_u64()
        .map_or(UNSTATED_LIFETIME, Duration::from_secs);
    Ok((token, lifetime))
}

/// `application/x-www-form-urlencoded`'s escaping (RFC 6749 Appendix B).
pub(super) fn form_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            b => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_urls_insert_the_path() {
        assert_eq!(
            well_known("http://127.0.0.1:8/tenant/", "oauth-authorization-server").unwrap(),
            "http://127.0.0.1:8/.well-known/oauth-authorization-server/tenant"
        );
        assert_eq!(
            well_known("http://127.0.0.1:8", "oauth-protected-resource").unwrap(),
            "http://127.0.0.1:8/.well-known/oauth-protected-resource"
        );
        assert_eq!(form_encode("a b:c/é"), "a%20b%3Ac%2F%C3%A9");
    }
}
