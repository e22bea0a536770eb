//! A server as an OAuth 2.1 resource server, as the MCP specification has it (2025-11-25 and
//! 2026-07-28): its protected resource metadata (RFC 9728) names its authorization servers; a
//! request without a token is `401` with `WWW-Authenticate: Bearer resource_metadata="…"`; an
//! access token is a JWT checked against the authorization server's keys (JWKS, fetched, kept
//! and fetched again when they rotate) or a token asked about at its introspection endpoint
//! (RFC 7662), with its issuer, its audience (this server's URI, RFC 8707), its expiry and its
//! start checked; what it grants becomes a registry [`Scope`] by rules the operator writes.
//!
//! ```toml
//! [oauth]
//! resource = "https://mcp.example.com/mcp"          # this server's canonical URI: the audience
//! authorization_servers = ["https://auth.example.com"]
//! jwks_uri = "https://auth.example.com/jwks.json"   # or the [oauth.introspection] table
//! scopes_supported = ["tools", "admin"]
//! required_scopes = ["tools"]                       # 403 insufficient_scope without them
//!
//! [[oauth.role]]                                    # the first rule that holds decides
//! scope = "admin"                                   # a scope the token grants …
//! level = "admin"
//! allow_list = "ops"
//!
//! [[oauth.role]]
//! claim = "groups"                                  # … or a claim that is (or holds) a value
//! value = "research"
//! modules = ["kb"]
//! ```
//!
//! A token that is not accepted is refused the same way whatever is wrong with it: `401` with
//! `error="invalid_token"` and a reason in `error_description` that names what to fix and
//! nothing the server holds. A token longer than [`MAX_TOKEN_BYTES`] is refused before it is
//! read. Only asymmetric signatures are taken (`RS*`, `PS*`, `ES*`, `EdDSA`): `alg: none` and an
//! HMAC token signed with a public key are refused as an unknown algorithm.
//!
//! | file | what |
//! | --- | --- |
//! | `config.rs` | [`OAuthConfig`], [`IntrospectionConfig`], [`RoleRule`]: the `[oauth]` table |
//! | `keys.rs` | the authorization server's signing keys (JWKS): fetched, kept [`KEYS_TTL`], fetched again on a rotation at most once per [`KEYS_REFETCH_EVERY`] |
//! | `introspect.rs` | token introspection (RFC 7662): an active token's claims kept [`INTROSPECTION_TTL`] (imports `keys.rs`) |
//! | `mod.rs` | [`ResourceServer`]: its metadata and challenges, a token checked as a JWT or by introspection, its claims mapped to a scope |

use std::time::Duration;

use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tool_registry_core::{Permission, Scope};

mod config;
mod introspect;
mod keys;

pub use config::{IntrospectionConfig, OAuthConfig, RoleRule};
use introspect::{Introspector, now_seconds};
use keys::KeyCache;

/// The longest access token read; a longer one is refused before it is parsed.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

pub use introspect::INTROSPECTION_TTL;
pub use keys::{KEYS_REFETCH_EVERY, KEYS_TTL};

/// How long a fetch of the keys or an introspection may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// A token accepted: whom it speaks for and what it may do.
#[derive(Clone, Debug)]
pub struct Verified {
    /// The user its claim names.
    pub subject: String,
    /// The scopes it grants.
    pub scopes: Vec<String>,
    /// The registry scope its grants map to.
    pub scope: Scope,
    /// A number for its issuer and subject together: the same for every token of one user.
    pub owner: u64,
}

/// Why a request's token is not accepted, as the `WWW-Authenticate` challenge says it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// `401` for a token missing or not accepted, `403` for one without the scopes needed.
    pub status: u16,
    /// `invalid_token`, `insufficient_scope`, or none for a request without a token.
    pub error: Option<&'static str>,
    /// What is wrong and what to do, without anything the server holds.
    pub description: String,
}

impl Refusal {
    fn invalid(description: impl Into<String>) -> Self {
        Self {
            status: 401,
            error: Some("invalid_token"),
            description: description.into(),
        }
    }
}

/// A server's part as a resource server: the checks of [`OAuthConfig`], the keys it fetched, the
/// answers of introspection it keeps.
pub struct ResourceServer {
    config: OAuthConfig,
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    keys: Option<KeyCache>,
    introspector: Option<Introspector>,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.config.resource)
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct OAuthTable {
    oauth: OAuthConfig,
}

/// The asymmetric algorithms a token may be signed with, by name.
fn algorithm(name: &str) -> Option<Algorithm> {
    Some(match name {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

impl ResourceServer {
    /// The resource server `config` describes; an error names what is missing or wrong.
    pub fn new(config: OAuthConfig) -> Result<Self, String> {
        let issuer = config
            .issuer
            .clone()
            .or_else(|| config.authorization_servers.first().cloned())
            .ok_or("[oauth] names no authorization server; add `authorization_servers = [\"https://auth.example.com\"]`")?;
        reqwest::Url::parse(&config.resource).map_err(|error| {
            format!(
                "[oauth] resource `{}` is not a URI ({error}); write this server's own URI, such as https://mcp.example.com/mcp",
                config.resource
            )
        })?;
        if config.jwks_uri.is_none() && config.introspection.is_none() {
            return Err("[oauth] has neither `jwks_uri` nor an [oauth.introspection] table; name where the authorization server's keys are, or its introspection endpoint".into());
        }
        let names = if config.algorithms.is_empty() {
            vec!["RS256".to_owned(), "ES256".to_owned()]
        } else {
            config.algorithms.clone()
        };
        let algorithms = names
            .iter()
            .map(|name| {
                algorithm(name).ok_or_else(|| {
                    format!("[oauth] algorithm `{name}` is not taken; use RS256, RS384, RS512, PS256, PS384, PS512, ES256, ES384 or EdDSA")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("no HTTP client can be built: {error}"))?;
        let introspector = match &config.introspection {
            None => None,
            Some(table) => {
                let secret = (table.client_secret.clone())
                    .or_else(|| {
                        (table.client_secret_env.as_deref()).and_then(|var| std::env::var(var).ok())
                    })
                    .filter(|secret| !secret.is_empty())
                    .ok_or("[oauth.introspection] has no client secret (or its `client_secret_env` is unset)")?;
                Some(Introspector::new(
                    table.endpoint.clone(),
                    table.client_id.clone(),
                    secret,
                    http.clone(),
                ))
            }
        };
        let refetch_every =
            (config.keys_refetch_seconds).map_or(KEYS_REFETCH_EVERY, Duration::from_secs);
        let keys = (config.jwks_uri.clone()).map(|uri| KeyCache::new(uri, http, refetch_every));
        let mut audiences = vec![config.resource.clone()];
        audiences.extend(config.audiences.iter().cloned());
        Ok(Self {
            config,
            issuer,
            audiences,
            algorithms,
            keys,
            introspector,
        })
    }

    /// The resource server of the `[oauth]` table in TOML text (other tables are left to their
    /// readers); `None` when there is none.
    pub fn from_toml(text: &str) -> Result<Option<Self>, String> {
        let value: toml::Table = toml::from_str(text).map_err(|error| error.to_string())?;
        if !value.contains_key("oauth") {
            return Ok(None);
        }
        let table: OAuthTable = toml::from_str(text)
            .map_err(|error| format!("the [oauth] table is not valid: {error}"))?;
        Self::new(table.oauth).map(Some)
    }

    /// What it was built from.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// Whether a request without a token is a guest (else it is refused `401`).
    pub fn allows_guests(&self) -> bool {
        self.config.allow_guests
    }

    /// The path of its protected resource metadata: `/.well-known/oauth-protected-resource`
    /// followed by the resource's path (RFC 9728 §3.1).
    pub fn metadata_path(&self) -> String {
        let path = reqwest::Url::parse(&self.config.resource)
            .map(|url| url.path().trim_end_matches('/').to_owned())
            .unwrap_or_default();
        format!("/.well-known/oauth-protected-resource{path}")
    }

    /// The URL of its protected resource metadata.
    pub fn metadata_url(&self) -> String {
        match reqwest::Url::parse(&self.config.resource) {
            Ok(url) => format!(
                "{}{}",
                url.origin().ascii_serialization(),
                self.metadata_path()
            ),
            Err(_) => self.metadata_path(),
        }
    }

    /// Its protected resource metadata (RFC 9728).
    pub fn metadata(&self) -> Value {
        let mut metadata = json!({
            "resource": self.config.resource,
            "authorization_servers": self.config.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.config.scopes_supported.is_empty() {
            metadata["scopes_supported"] = json!(self.config.scopes_supported);
        }
        if let Some(name) = &self.config.resource_name {
            metadata["resource_name"] = json!(name);
        }
        metadata
    }

    /// The `WWW-Authenticate` value of a refusal (`None`: a request without a token).
    pub fn challenge(&self, refusal: Option<&Refusal>) -> String {
        let mut challenge = format!(
            "Bearer resource_metadata=\"{}\"",
            quoted(&self.metadata_url())
        );
        let scopes = if self.config.required_scopes.is_empty() {
            &self.config.scopes_supported
        } else {
            &self.config.required_scopes
        };
        if !scopes.is_empty() {
            challenge.push_str(&format!(", scope=\"{}\"", quoted(&scopes.join(" "))));
        }
        if let Some(refusal) = refusal
            && let Some(error) = refusal.error
        {
            challenge.push_str(&format!(
                ", error=\"{error}\", error_description=\"{}\"",
                quoted(&refusal.description)
            ));
        }
        challenge
    }

    /// Accepts `token` or says why not.
    pub async fn verify(&self, token: &str) -> Result<Verified, Refusal> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Refusal::invalid(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes; send the access token the authorization server issued"
            )));
        }
        let claims = if self.keys.is_some() && looks_like_jwt(token) {
            self.checked_jwt(token).await?
        } else if self.introspector.is_some() {
            return self.introspected(token).await;
        } else {
            return Err(Refusal::invalid(
                "the token is not a JWT; send an access token the authorization server issued for this server",
            ));
        };
        self.accepted(claims)
    }

    /// The claims of a JWT whose signature, issuer, audience, expiry and start hold.
    async fn checked_jwt(&self, token: &str) -> Result<Map<String, Value>, Refusal> {
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| Refusal::invalid("the token is not a JWT this server reads"))?;
        if !self.algorithms.contains(&header.alg) {
            return Err(Refusal::invalid(format!(
                "the token is signed with {:?}, which this server does not take",
                header.alg
            )));
        }
        let keys = self
            .keys
            .as_ref()
            .ok_or_else(|| Refusal::invalid("the token cannot be checked"))?;
        let key = keys
            .key(header.kid.as_deref(), header.alg)
            .await
            .ok_or_else(|| {
                Refusal::invalid(
                    "the token is signed with a key the authorization server does not publish",
                )
            })?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&self.audiences);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway_seconds.unwrap_or(60);
        match jsonwebtoken::decode::<Map<String, Value>>(token, &key, &validation) {
            Ok(data) => Ok(data.claims),
            Err(error) => {
                use jsonwebtoken::errors::ErrorKind;
                let why = match error.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired; get a new one",
                    ErrorKind::ImmatureSignature => "the token is not valid yet",
                    ErrorKind::InvalidAudience => {
                        "the token was issued for another resource; ask for a token for this server (RFC 8707 `resource`)"
                    }
                    ErrorKind::InvalidIssuer => {
                        "the token was issued by an authorization server this server does not trust"
                    }
                    ErrorKind::MissingRequiredClaim(_) => "the token lacks `exp`, `iss` or `aud`",
                    _ => "the token's signature does not hold",
                };
                Err(Refusal::invalid(why))
            }
        }
    }

    /// A token asked about at the introspection endpoint (its answer kept a while), and what
    /// the answer says checked as a JWT's claims are: expiry, start, issuer, audience.
    async fn introspected(&self, token: &str) -> Result<Verified, Refusal> {
        let introspector = (self.introspector.as_ref())
            .ok_or_else(|| Refusal::invalid("the token cannot be checked"))?;
        let claims = introspector.claims(token).await.map_err(Refusal::invalid)?;
        let now = now_seconds();
        let leeway = self.config.leeway_seconds.unwrap_or(60);
        let number = |name: &str| claims.get(name).and_then(Value::as_u64);
        if number("exp").is_some_and(|exp| exp + leeway < now) {
            return Err(Refusal::invalid("the token has expired; get a new one"));
        }
        if number("nbf").is_some_and(|nbf| nbf > now + leeway) {
            return Err(Refusal::invalid("the token is not valid yet"));
        }
        if (claims.get("iss").and_then(Value::as_str)).is_some_and(|iss| iss != self.issuer) {
            return Err(Refusal::invalid(
                "the token was issued by an authorization server this server does not trust",
            ));
        }
        if let Some(aud) = claims.get("aud")
            && !audience_holds(aud, &self.audiences)
        {
            return Err(Refusal::invalid(
                "the token was issued for another resource; ask for a token for this server (RFC 8707 `resource`)",
            ));
        }
        self.accepted(claims)
    }

    /// The caller of accepted claims: its subject, its scopes, the registry scope the rules give,
    /// or `403 insufficient_scope` without the scopes every token needs.
    fn accepted(&self, claims: Map<String, Value>) -> Result<Verified, Refusal> {
        let user_claim = self.config.user_claim.as_deref().unwrap_or("sub");
        let subject = match claims.get(user_claim) {
            Some(Value::String(subject)) if !subject.is_empty() => subject.clone(),
            _ => {
                return Err(Refusal::invalid(format!(
                    "the token names no user in its `{user_claim}` claim"
                )));
            }
        };
        let scopes = granted(&claims);
        let missing: Vec<&str> = (self.config.required_scopes.iter())
            .filter(|wanted| !scopes.contains(wanted))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(Refusal {
                status: 403,
                error: Some("insufficient_scope"),
                description: format!("the token lacks the scope {}", missing.join(" ")),
            });
        }
        let rule = self
            .config
            .role
            .iter()
            .find(|rule| rule.holds(&scopes, &claims));
        let level = rule
            .and_then(|rule| rule.level)
            .or(self.config.default_level)
            .unwrap_or(Permission::User);
        let mut scope = Scope::user(subject.clone()).with_level(level);
        if let Some(list) = rule.and_then(|rule| rule.allow_list.clone()) {
            scope = scope.with_allow_list(list);
        }
        if let Some(modules) = rule.and_then(|rule| rule.modules.clone()) {
            scope = scope.with_modules(modules);
        }
        let digest = Sha256::digest(format!("{}\u{0}{subject}", self.issuer).as_bytes());
        let owner = u64::from_le_bytes(digest[..8].try_into().unwrap_or_default());
        Ok(Verified {
            subject,
            scopes,
            scope,
            owner,
        })
    }
}

/// The scopes a token grants: `scope` (space-separated) or `scp` (a list, or a string).
fn granted(claims: &Map<String, Value>) -> Vec<String> {
    let words = |text: &str| {
        text.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    match (claims.get("scope"), claims.get("scp")) {
        (Some(Value::String(scope)), _) => words(scope),
        (_, Some(Value::String(scp))) => words(scp),
        (_, Some(Value::Array(scp))) => scp
            .iter()
            .filter_map(|item| item.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

fn audience_holds(aud: &Value, audiences: &[String]) -> bool {
    match aud {
        Value::String(aud) => audiences.contains(aud),
        Value::Array(auds) => auds.iter().any(|aud| {
            aud.as_str()
                .is_some_and(|aud| audiences.iter().any(|a| a == aud))
        }),
        _ => false,
    }
}

/// Three base64url parts separated by dots.
fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'='))
}

/// A quoted-string's content: `"` and `\` escaped, control characters left out.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c => vec![c],
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(extra: &str) -> ResourceServer {
        ResourceServer::from_toml(&format!(
            "[oauth]\nresource = \"http://127.0.0.1:9/mcp\"\nauthorization_servers = [\"http://127.0.0.1:8\"]\njwks_uri = \"http://127.0.0.1:8/jwks\"\n{extra}"
        ))
        .unwrap()
        .unwrap()
    }

    #[test]
    fn the_metadata_and_the_challenge_name_the_resource_and_its_scopes() {
        let server = config("scopes_supported = [\"tools\", \"admin\"]\nresource_name = \"ours\"");
        assert_eq!(
            server.metadata_path(),
            "/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            server.metadata_url(),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            server.metadata()["authorization_servers"][0],
            "http://127.0.0.1:8"
        );
        assert_eq!(server.metadata()["resource_name"], "ours");
        assert_eq!(
            server.challenge(None),
            "Bearer resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp\", scope=\"tools admin\""
        );
        let refusal = Refusal::invalid("a \"quoted\"\nreason");
        assert!(
            server.challenge(Some(&refusal)).ends_with(
                ", error=\"invalid_token\", error_description=\"a \\\"quoted\\\"reason\""
            )
        );
    }

    #[test]
    fn the_first_rule_that_holds_gives_the_scope() {
        let server = config(
            "required_scopes = [\"tools\"]\n[[oauth.role]]\nscope = \"admin\"\nlevel = \"admin\"\nallow_list = \"ops\"\n[[oauth.role]]\nclaim = \"groups\"\nvalue = \"research\"\nmodules = [\"kb\"]",
        );
        let claims = |value: Value| value.as_object().unwrap().clone();
        let admin = server
            .accepted(claims(json!({"sub": "ann", "scope": "tools admin"})))
            .unwrap();
        assert_eq!(admin.scope.user_id(), Some("ann"));
        assert_eq!(admin.scope.level(), Permission::Admin);
        let researcher = server
            .accepted(claims(
                json!({"sub": "bob", "scp": ["tools"], "groups": ["x", "research"]}),
            ))
            .unwrap();
        assert_eq!(researcher.scope.level(), Permission::User);
        assert_ne!(admin.owner, researcher.owner);
        let refused = server
            .accepted(claims(json!({"sub": "eve", "scope": "admin"})))
            .unwrap_err();
        assert_eq!(
            (refused.status, refused.error),
            (403, Some("insufficient_scope"))
        );
        let nameless = server
            .accepted(claims(json!({"scope": "tools"})))
            .unwrap_err();
        assert_eq!(nameless.status, 401);
    }

    #[test]
    fn a_configuration_without_keys_or_with_a_symmetric_algorithm_is_refused() {
        let base = "[oauth]\nresource = \"http://127.0.0.1:9/mcp\"\nauthorization_servers = [\"http://127.0.0.1:8\"]\n";
        let error = ResourceServer::from_toml(base).unwrap_err();
        assert!(error.contains("jwks_uri"), "{error}");
        let error = ResourceServer::from_toml(&format!(
            "{base}jwks_uri = \"http://x/jwks\"\nalgorithms = [\"HS256\"]"
        ))
        .unwrap_err();
        assert!(error.contains("HS256"), "{error}");
        assert!(
            ResourceServer::from_toml("[[caller]]\nuser = \"a\"\ntoken = \"t\"")
                .unwrap()
                .is_none()
        );
    }

    #[tokio::test]
    async fn a_token_too_long_or_not_a_jwt_is_refused_before_any_fetch() {
        let server = config("");
        let long = "a".repeat(MAX_TOKEN_BYTES + 1);
        let refused = server.verify(&long).await.unwrap_err();
        assert!(refused.description.contains("longer"), "{refused:?}");
        let refused = server.verify("not a jwt").await.unwrap_err();
        assert_eq!(refused.error, Some("invalid_token"));
        let none = "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ4In0.";
        let refused = server.verify(none).await.unwrap_err();
        assert_eq!(refused.status, 401, "{refused:?}");
    }
}
