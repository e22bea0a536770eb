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

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use tool_registry_core::{Permission, Scope};

use super::grant::{form_encode, read_within};

/// The longest access token read; a longer one is refused before it is parsed.
pub const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// How long fetched keys are used before they are fetched again.
pub const KEYS_TTL: Duration = Duration::from_secs(600);

/// The least time between two fetches of the keys prompted by a token signed with a key not
/// among them: one fetch for a rotation, never one per hostile token.
pub const KEYS_REFETCH_EVERY: Duration = Duration::from_secs(30);

/// How long an introspection's answer about an active token is kept (never past the token's
/// expiry).
pub const INTROSPECTION_TTL: Duration = Duration::from_secs(60);

/// The most introspection answers kept at once.
const MAX_INTROSPECTED: usize = 10_000;

/// The most bytes read of a JWKS or an introspection answer.
const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// How long a fetch of the keys or an introspection may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);

/// The `[oauth]` table: what an operator writes to make a server a resource server.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// This server's canonical URI (`https://mcp.example.com/mcp`): the audience a token must
    /// name, and the `resource` of its metadata.
    pub resource: String,
    /// The authorization servers' issuer URIs, as its metadata lists them. The first is the
    /// issuer a token must name unless [`issuer`](Self::issuer) says otherwise.
    pub authorization_servers: Vec<String>,
    /// The issuer a token must name, when it is not the first authorization server.
    #[serde(default)]
    pub issuer: Option<String>,
    /// Where the authorization server publishes its keys; tokens are JWTs checked against them.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// The authorization server's introspection endpoint (RFC 7662), for tokens that are not
    /// JWTs or that must be asked about each time.
    #[serde(default)]
    pub introspection: Option<IntrospectionConfig>,
    /// The audiences a token may name besides [`resource`](Self::resource).
    #[serde(default)]
    pub audiences: Vec<String>,
    /// The signature algorithms taken (`RS256` and `ES256` unless set; only asymmetric ones).
    #[serde(default)]
    pub algorithms: Vec<String>,
    /// The scopes its metadata lists, and the challenge names.
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    /// The scopes every token must grant; without them, `403 insufficient_scope`.
    #[serde(default)]
    pub required_scopes: Vec<String>,
    /// The claim that names the user (`sub` unless set).
    #[serde(default)]
    pub user_claim: Option<String>,
    /// The seconds a clock may be off when expiry and start are checked (60 unless set).
    #[serde(default)]
    pub leeway_seconds: Option<u64>,
    /// The permission level of a token no [`role`](Self::role) matches (`user` unless set).
    #[serde(default)]
    pub default_level: Option<Permission>,
    /// The least seconds between two fetches of the keys prompted by a token signed with a key
    /// not among them ([`KEYS_REFETCH_EVERY`] unless set).
    #[serde(default)]
    pub keys_refetch_seconds: Option<u64>,
    /// Whether a request without a token is served as a guest rather than refused `401`.
    #[serde(default)]
    pub allow_guests: bool,
    /// The server's name in its metadata.
    #[serde(default)]
    pub resource_name: Option<String>,
    /// The rules that turn what a token grants into a scope; the first that holds decides.
    #[serde(default)]
    pub role: Vec<RoleRule>,
}

/// How to ask the authorization server about a token (RFC 7662).
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntrospectionConfig {
    /// The introspection endpoint.
    pub endpoint: String,
    /// This server's client id at the authorization server.
    pub client_id: String,
    /// Its secret, written here …
    #[serde(default)]
    pub client_secret: Option<String>,
    /// … or read from this environment variable.
    #[serde(default)]
    pub client_secret_env: Option<String>,
}

impl std::fmt::Debug for IntrospectionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IntrospectionConfig")
            .field("endpoint", &self.endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// One rule of the mapping from a token to a scope: it holds when the token grants `scope` (if
/// named) and its claim `claim` is `value` or an array holding it (if named).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoleRule {
    /// A scope the token must grant.
    #[serde(default)]
    pub scope: Option<String>,
    /// A claim the token must carry …
    #[serde(default)]
    pub claim: Option<String>,
    /// … with this value (or holding it, for an array).
    #[serde(default)]
    pub value: Option<String>,
    /// The permission level it gives.
    #[serde(default)]
    pub level: Option<Permission>,
    /// The allow-list it names.
    #[serde(default)]
    pub allow_list: Option<String>,
    /// The modules it confines the caller to.
    #[serde(default)]
    pub modules: Option<Vec<String>>,
}

impl RoleRule {
    fn holds(&self, scopes: &[String], claims: &Map<String, Value>) -> bool {
        let scope = self
            .scope
            .as_ref()
            .is_none_or(|wanted| scopes.iter().any(|scope| scope == wanted));
        let claim = match (&self.claim, &self.value) {
            (None, _) => true,
            (Some(name), wanted) => match (claims.get(name), wanted) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(Value::String(held)), Some(wanted)) => held == wanted,
                (Some(Value::Array(held)), Some(wanted)) => {
                    held.iter().any(|item| item.as_str() == Some(wanted))
                }
                (Some(Value::Bool(held)), Some(wanted)) => held.to_string() == *wanted,
                (Some(Value::Number(held)), Some(wanted)) => held.to_string() == *wanted,
                (Some(_), Some(_)) => false,
            },
        };
        scope && claim
    }
}

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

/// The keys of the authorization server, as last fetched.
struct Keys {
    set: JwkSet,
    fetched: Instant,
}

/// A server's part as a resource server: the checks of [`OAuthConfig`], the keys it fetched, the
/// answers of introspection it keeps.
pub struct ResourceServer {
    config: OAuthConfig,
    issuer: String,
    audiences: Vec<String>,
    algorithms: Vec<Algorithm>,
    introspection_secret: Option<String>,
    http: reqwest::Client,
    keys: tokio::sync::Mutex<Option<Keys>>,
    /// When the keys were last fetched for an unknown key id.
    refetched: Mutex<Option<Instant>>,
    introspected: Mutex<HashMap<[u8; 32], (Verified, Instant)>>,
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
        let introspection_secret = match &config.introspection {
            None => None,
            Some(table) => Some(
                table
                    .client_secret
                    .clone()
                    .or_else(|| {
                        table
                            .client_secret_env
                            .as_deref()
                            .and_then(|var| std::env::var(var).ok())
                    })
                    .filter(|secret| !secret.is_empty())
                    .ok_or("[oauth.introspection] has no client secret (or its `client_secret_env` is unset)")?,
            ),
        };
        let mut audiences = vec![config.resource.clone()];
        audiences.extend(config.audiences.iter().cloned());
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|error| format!("no HTTP client can be built: {error}"))?;
        Ok(Self {
            config,
            issuer,
            audiences,
            algorithms,
            introspection_secret,
            http,
            keys: tokio::sync::Mutex::new(None),
            refetched: Mutex::new(None),
            introspected: Mutex::new(HashMap::new()),
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
        let claims = if self.config.jwks_uri.is_some() && looks_like_jwt(token) {
            self.checked_jwt(token).await?
        } else if self.config.introspection.is_some() {
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
        let key = self.key(header.kid.as_deref(), header.alg).await?;
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

    /// The key that signed a token: by its id among the keys fetched, which are fetched again
    /// when they are older than [`KEYS_TTL`], or once per [`KEYS_REFETCH_EVERY`] when the id
    /// is not among them (a rotation).
    async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Refusal> {
        let mut keys = self.keys.lock().await;
        let stale = keys
            .as_ref()
            .is_none_or(|keys| keys.fetched.elapsed() > KEYS_TTL);
        if stale && let Ok(set) = self.fetch_keys().await {
            *keys = Some(Keys {
                set,
                fetched: Instant::now(),
            });
        }
        if let Some(found) = keys.as_ref().and_then(|keys| pick(&keys.set, kid, alg)) {
            return Ok(found);
        }
        let may_refetch = {
            let mut refetched = self.refetched.lock().unwrap_or_else(|p| p.into_inner());
            let every =
                (self.config.keys_refetch_seconds).map_or(KEYS_REFETCH_EVERY, Duration::from_secs);
            let may = refetched.is_none_or(|at| at.elapsed() >= every);
            if may {
                *refetched = Some(Instant::now());
            }
            may
        };
        if may_refetch
            && !stale
            && let Ok(set) = self.fetch_keys().await
        {
            *keys = Some(Keys {
                set,
                fetched: Instant::now(),
            });
        }
        keys.as_ref()
            .and_then(|keys| pick(&keys.set, kid, alg))
            .ok_or_else(|| {
                Refusal::invalid(
                    "the token is signed with a key the authorization server does not publish",
                )
            })
    }

    async fn fetch_keys(&self) -> Result<JwkSet, String> {
        let uri = self.config.jwks_uri.as_deref().unwrap_or_default();
        let body = self.fetch(self.http.get(uri)).await?;
        let set: JwkSet = serde_json::from_slice(&body).map_err(|error| {
            tracing::warn!(target: "tool_registry::oauth", %uri, %error, "the authorization server's keys do not read");
            error.to_string()
        })?;
        Ok(set)
    }

    /// A bounded answer's body.
    async fn fetch(&self, request: reqwest::RequestBuilder) -> Result<Vec<u8>, String> {
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

    /// A token asked about at the introspection endpoint, its answer kept a while.
    async fn introspected(&self, token: &str) -> Result<Verified, Refusal> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((verified, until)) = self
            .introspected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&digest)
            && Instant::now() < *until
        {
            return Ok(verified.clone());
        }
        let Some(table) = &self.config.introspection else {
            return Err(Refusal::invalid("the token cannot be checked"));
        };
        let body = format!("token={}&token_type_hint=access_token", form_encode(token));
        let request = self
            .http
            .post(&table.endpoint)
            .basic_auth(&table.client_id, self.introspection_secret.as_deref())
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body);
        let answer = self
            .fetch(request)
            .await
            .map_err(|_| Refusal::invalid("the token cannot be checked now; try again"))?;
        let claims: Map<String, Value> = serde_json::from_slice(&answer)
            .map_err(|_| Refusal::invalid("the token cannot be checked now; try again"))?;
        if claims.get("active") != Some(&Value::Bool(true)) {
            return Err(Refusal::invalid("the token is not active"));
        }
        let now = now_seconds();
        let leeway = self.config.leeway_seconds.unwrap_or(60);
        if claims
            .get("exp")
            .and_then(Value::as_u64)
            .is_some_and(|exp| exp + leeway < now)
        {
            return Err(Refusal::invalid("the token has expired; get a new one"));
        }
        if claims
            .get("nbf")
            .and_then(Value::as_u64)
            .is_some_and(|nbf| nbf > now + leeway)
        {
            return Err(Refusal::invalid("the token is not valid yet"));
        }
        if claims
            .get("iss")
            .and_then(Value::as_str)
            .is_some_and(|iss| iss != self.issuer)
        {
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
        let verified = self.accepted(claims.clone())?;
        let until = Instant::now()
            + claims
                .get("exp")
                .and_then(Value::as_u64)
                .map(|exp| Duration::from_secs(exp.saturating_sub(now)))
                .unwrap_or(INTROSPECTION_TTL)
                .min(INTROSPECTION_TTL);
        let mut kept = self.introspected.lock().unwrap_or_else(|p| p.into_inner());
        if kept.len() >= MAX_INTROSPECTED {
            let now = Instant::now();
            kept.retain(|_, (_, until)| *until > now);
            if kept.len() >= MAX_INTROSPECTED {
                kept.clear();
            }
        }
        kept.insert(digest, (verified.clone(), until));
        Ok(verified)
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

fn now_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| elapsed.as_secs())
        .unwrap_or(0)
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
