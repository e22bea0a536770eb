//! The `[oauth]` table an operator writes: the resource, its authorization servers, how tokens
//! are checked, and the rules from a token to a scope.

use serde::Deserialize;
use serde_json::{Map, Value};
use tool_registry_core::Permission;

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
    /// not among them (`KEYS_REFETCH_EVERY`, 30 s, unless set).
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
    pub(super) fn holds(&self, scopes: &[String], claims: &Map<String, Value>) -> bool {
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
