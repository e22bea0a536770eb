//! Who each request over streamable HTTP is: bearer tokens to scopes ([`Callers`]), OAuth
//! access tokens checked by a resource server (feature `oauth`), a guest without a token.

use std::path::Path;
#[cfg(feature = "oauth")]
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use tool_registry_core::Permission;
use tool_registry_core::Scope;
use tool_registry_http::auth::Secret;
#[cfg(feature = "oauth")]
use tool_registry_http::oauth::{Refusal, ResourceServer};

use super::sessions::Owner;

/// Who a bearer token speaks for, over MCP's streamable HTTP: each token maps to a user, a
/// permission level, and optionally an allow-list and modules. A request without a token is a
/// guest; a token not in the list is refused with `401`.
///
/// ```toml
/// [[caller]]
/// token_env = "MCP_ADMIN_TOKEN"   # or token = "…"
/// user = "ann"
/// level = "admin"
/// allow_list = "ops"              # optional
/// modules = ["kb", "files"]       # optional
/// ```
///
/// With an `[oauth]` table (or `Callers::with_oauth`; feature `oauth`) the server is also an
/// OAuth 2.1 resource server, as MCP specifies it (`tool_registry::http::oauth`): a token not in the list is an
/// access token, checked and mapped to a scope; a request without a token is refused `401`
/// with the challenge that leads a client to the authorization server (unless the table sets
/// `allow_guests`); the protected resource metadata is served at its well-known path.
#[derive(Clone, Default)]
pub struct Callers {
    entries: Vec<(Secret, Scope)>,
    #[cfg(feature = "oauth")]
    oauth: Option<Arc<ResourceServer>>,
}

/// Why a request names no caller.
#[derive(Debug)]
pub(super) enum Refused {
    /// Its header is not a bearer token, or its token is not in the list.
    Plain(&'static str),
    /// The resource server's refusal (no token, or a token it does not accept).
    #[cfg(feature = "oauth")]
    OAuth(Refusal),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallersFile {
    #[serde(default)]
    caller: Vec<CallerEntry>,
    /// Read by `ResourceServer::from_toml` (feature `oauth`), refused without it.
    #[serde(default)]
    #[cfg_attr(feature = "oauth", allow(dead_code))]
    oauth: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallerEntry {
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
    user: String,
    #[serde(default)]
    level: Option<Permission>,
    #[serde(default)]
    allow_list: Option<String>,
    #[serde(default)]
    modules: Option<Vec<String>>,
}

impl Callers {
    /// No tokens: every request is a guest.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes the server an OAuth resource server too: tokens not in the list are access tokens
    /// `server` checks.
    #[cfg(feature = "oauth")]
    pub fn with_oauth(mut self, server: ResourceServer) -> Self {
        self.oauth = Some(Arc::new(server));
        self
    }

    /// Its resource server, if it is one.
    #[cfg(feature = "oauth")]
    pub fn oauth(&self) -> Option<&Arc<ResourceServer>> {
        self.oauth.as_ref()
    }

    /// Adds a token and the scope it speaks for.
    pub fn with(mut self, token: &str, scope: Scope) -> Self {
        if let Some(secret) = Secret::new(token) {
            self.entries.push((secret, scope));
        }
        self
    }

    /// Reads `[[caller]]` tables, and an `[oauth]` table if there is one, from TOML text.
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let file: CallersFile = toml::from_str(text).map_err(|error| {
            format!(
                "the callers file is not valid: {error}; write one `[[caller]]` table per token with `token` or `token_env`, `user`, and optionally `level`, `allow_list`, `modules`"
            )
        })?;
        let mut callers = Self::new();
        for entry in file.caller {
            let token = entry
                .token
                .or_else(|| {
                    entry
                        .token_env
                        .as_deref()
                        .and_then(|var| std::env::var(var).ok())
                })
                .filter(|token| !token.is_empty())
                .ok_or_else(|| {
                    format!(
                        "caller `{}` has no token (or its `token_env` is unset)",
                        entry.user
                    )
                })?;
            let mut scope =
                Scope::user(entry.user).with_level(entry.level.unwrap_or(Permission::User));
            if let Some(list) = entry.allow_list {
                scope = scope.with_allow_list(list);
            }
            if let Some(modules) = entry.modules {
                scope = scope.with_modules(modules);
            }
            callers = callers.with(&token, scope);
        }
        #[cfg(feature = "oauth")]
        if let Some(server) = ResourceServer::from_toml(text)? {
            callers = callers.with_oauth(server);
        }
        #[cfg(not(feature = "oauth"))]
        if file.oauth.is_some() {
            return Err("the callers file has an [oauth] table, which needs the feature `oauth` of tool-registry (on in toolreg)".into());
        }
        Ok(callers)
    }

    /// Reads a callers file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, String> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|error| format!("cannot read the callers file {}: {error}", path.display()))?;
        Self::from_toml(&text)
    }

    /// The place and scope of a token, looked up in constant time per entry.
    fn scope_of(&self, token: &str) -> Option<(usize, Scope)> {
        let mut found = None;
        for (at, (secret, scope)) in self.entries.iter().enumerate() {
            if secret.matches(token) && found.is_none() {
                found = Some((at, scope.clone()));
            }
        }
        found
    }

    /// Who a request is, from its `Authorization` header: a guest without one (unless the
    /// resource server wants a token), the caller of a known token or of an access token the
    /// resource server accepts, and for anything else why it is refused.
    pub(super) async fn caller_of(
        &self,
        headers: &axum::http::HeaderMap,
    ) -> Result<(Owner, Scope), Refused> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            #[cfg(feature = "oauth")]
            if self
                .oauth
                .as_ref()
                .is_some_and(|server| !server.allows_guests())
            {
                return Err(Refused::OAuth(Refusal {
                    status: 401,
                    error: None,
                    description: "this server needs an access token; its protected resource metadata names the authorization server".into(),
                }));
            }
            return Ok((Owner::Guest, Scope::network_guest()));
        };
        let token = value
            .to_str()
            .map_err(|_| {
                Refused::Plain("the Authorization header is not text; send `Authorization: Bearer <token>` with a token from the server's callers file, or no header to call as a guest")
            })?
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or(Refused::Plain(
                "send the token as `Authorization: Bearer <token>`, or no header to call as a guest",
            ))?;
        if let Some((at, scope)) = self.scope_of(token) {
            return Ok((Owner::Token(at), scope));
        }
        #[cfg(feature = "oauth")]
        if let Some(server) = &self.oauth {
            return server
                .verify(token)
                .await
                .map(|verified| (Owner::Subject(verified.owner), verified.scope))
                .map_err(Refused::OAuth);
        }
        Err(Refused::Plain(
            "unknown token; send a token from the server's callers file, or none to call as a guest",
        ))
    }

    /// The answer to a refused request: `401` (or `403 insufficient_scope`) with the challenge
    /// of the resource server, or `Bearer` alone, and the reason in the body.
    pub(super) fn refusal(&self, refused: Refused) -> Response {
        #[cfg(feature = "oauth")]
        if let Some(server) = &self.oauth {
            let refusal = match refused {
                Refused::OAuth(refusal) => refusal,
                Refused::Plain(why) => Refusal {
                    status: 401,
                    error: Some("invalid_token"),
                    description: why.to_owned(),
                },
            };
            let status = StatusCode::from_u16(refusal.status).unwrap_or(StatusCode::UNAUTHORIZED);
            refused_log(status, &refusal.description);
            let body = serde_json::json!({
                "error": refusal.error.unwrap_or("invalid_request"),
                "error_description": refusal.description,
            });
            let challenge = server.challenge(Some(&refusal));
            let mut response = (status, axum::Json(body)).into_response();
            if let Ok(value) = HeaderValue::from_str(&challenge) {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, value);
            }
            return response;
        }
        let why = match refused {
            Refused::Plain(why) => why.to_owned(),
            #[cfg(feature = "oauth")]
            Refused::OAuth(refusal) => refusal.description,
        };
        refused_log(StatusCode::UNAUTHORIZED, &why);
        let mut response = (StatusCode::UNAUTHORIZED, why).into_response();
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        response
    }
}

/// A request refused for its credentials: a warning (never the credential), and the count.
fn refused_log(status: StatusCode, why: &str) {
    tracing::warn!(target: "tool_registry::mcp", status = status.as_u16(), why, "a request was refused: its credentials do not admit it");
    let reason = match status {
        StatusCode::FORBIDDEN => "forbidden",
        _ => "unauthorized",
    };
    tool_registry_telemetry::report::refused("mcp", reason);
}
