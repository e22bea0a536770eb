//! Who each request over streamable HTTP is: bearer tokens to scopes ([`Callers`]), a guest
//! without a token.

use std::path::Path;

use axum::http::header;
use serde::Deserialize;
use tool_registry_core::Permission;
use tool_registry_core::Scope;
use tool_registry_http::auth::Secret;

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
#[derive(Clone, Default)]
pub struct Callers {
    entries: Vec<(Secret, Scope)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallersFile {
    #[serde(default)]
    caller: Vec<CallerEntry>,
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

    /// Adds a token and the scope it speaks for.
    pub fn with(mut self, token: &str, scope: Scope) -> Self {
        if let Some(secret) = Secret::new(token) {
            self.entries.push((secret, scope));
        }
        self
    }

    /// Reads `[[caller]]` tables from TOML text.
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

    /// Who a request is, from its `Authorization` header: a guest without one, the caller of
    /// a known token, and for anything else why it is refused (with `401`).
    pub(super) fn caller_of(
        &self,
        headers: &axum::http::HeaderMap,
    ) -> Result<(Owner, Scope), &'static str> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Ok((Owner::Guest, Scope::network_guest()));
        };
        let token = value
            .to_str()
            .map_err(|_| {
                "the Authorization header is not text; send `Authorization: Bearer <token>` with a token from the server's callers file, or no header to call as a guest"
            })?
            .split_once(' ')
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim())
            .ok_or(
                "send the token as `Authorization: Bearer <token>`, or no header to call as a guest",
            )?;
        self.scope_of(token)
            .map(|(at, scope)| (Owner::Token(at), scope))
            .ok_or(
                "unknown token; send a token from the server's callers file, or none to call as a guest",
            )
    }
}
