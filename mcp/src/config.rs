//! A module map's `[mcp.NAME]` tables: how to reach each MCP server (a command, or a URL with a
//! token or an `oauth` table), read from TOML and mounted.

use tool_registry_core::registry::Shared;

use super::client::{McpModule, McpModuleError, failed};
#[cfg(feature = "oauth")]
use super::oauth::OAuth;

/// How to reach one MCP server of a module map: `[mcp.NAME]` with `command = ["prog", "arg"]`
/// (a stdio server) or `url = "http://host:port/mcp"` (streamable HTTP), and for a URL
/// optionally `token` or `token_env`, or an `[mcp.NAME.oauth]` table (`McpOAuthConfig`, feature `oauth`).
///
/// ```toml
/// [mcp.files]
/// command = ["toolreg", "--modules", "file_manager", "mcp"]
///
/// [mcp.remote]
/// url = "http://127.0.0.1:8002/mcp"
/// token_env = "REMOTE_MCP_TOKEN"
///
/// [mcp.hosted]
/// url = "https://mcp.example.com/mcp"
/// [mcp.hosted.oauth]
/// grant = "client_credentials"
/// client_id = "gateway"
/// client_secret_env = "HOSTED_SECRET"
/// token_file = ".toolreg/hosted.tokens.json"
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerConfig {
    #[serde(default)]
    command: Option<Vec<String>>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
    #[cfg(feature = "oauth")]
    #[serde(default)]
    oauth: Option<McpOAuthConfig>,
    /// Read, to be refused with the feature it needs.
    #[cfg(not(feature = "oauth"))]
    #[serde(default)]
    oauth: Option<NeedsFeature>,
}

/// An `oauth` table read by a build without the feature `oauth`: refused, naming it.
#[cfg(not(feature = "oauth"))]
#[derive(Debug, Clone, PartialEq, Eq)]
struct NeedsFeature;

#[cfg(not(feature = "oauth"))]
impl<'de> serde::Deserialize<'de> for NeedsFeature {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| NeedsFeature)
    }
}

/// How `toolreg` authorizes against a protected MCP server ([`OAuth`]): `[mcp.NAME.oauth]`
/// (feature `oauth`).
///
/// ```toml
/// [mcp.hosted.oauth]
/// grant = "authorization_code"       # or "client_credentials" (the default)
/// client_id = "…"                    # pre-registered; else a metadata document or registration
/// client_secret_env = "HOSTED_SECRET"
/// private_key_file = "gateway.pem"   # client credentials by private_key_jwt, with `algorithm`
/// algorithm = "ES256"
/// metadata_document = "https://gateway.example.com/client.json"
/// redirect_uri = "http://127.0.0.1:8914/callback"
/// open_browser = true
/// scopes = ["tools"]
/// token_file = ".toolreg/hosted.tokens.json"   # owner-only; in memory without it
/// ```
#[cfg(feature = "oauth")]
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpOAuthConfig {
    #[serde(default)]
    grant: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
    #[serde(default)]
    client_secret_env: Option<String>,
    #[serde(default)]
    private_key_file: Option<std::path::PathBuf>,
    #[serde(default)]
    algorithm: Option<String>,
    #[serde(default)]
    metadata_document: Option<String>,
    #[serde(default)]
    redirect_uri: Option<String>,
    #[serde(default)]
    open_browser: bool,
    #[serde(default)]
    scopes: Vec<String>,
    #[serde(default)]
    token_file: Option<std::path::PathBuf>,
}

#[cfg(feature = "oauth")]
impl McpOAuthConfig {
    /// Where its tokens are kept, when it names a file.
    pub fn token_file(&self) -> Option<&std::path::Path> {
        self.token_file.as_deref()
    }

    /// What the table must hold whatever the environment: a grant toolreg asks for, and for
    /// client credentials a client id with a secret or a key named.
    fn check(&self) -> Result<(), String> {
        match self.grant.as_deref().unwrap_or("client_credentials") {
            "client_credentials" => {
                let proof = self.client_secret.is_some()
                    || self.client_secret_env.is_some()
                    || self.private_key_file.is_some();
                if self.client_id.is_none() || !proof {
                    return Err("client credentials need `client_id`, and `client_secret_env` or `private_key_file`".into());
                }
                Ok(())
            }
            "authorization_code" => Ok(()),
            other => Err(format!(
                "grant `{other}` is not one toolreg asks for; use \"client_credentials\" or \"authorization_code\""
            )),
        }
    }

    /// The [`OAuth`] this table describes; an error names what is missing (a secret's variable
    /// unset, a key file that cannot be read).
    pub fn oauth(&self) -> Result<OAuth, String> {
        let secret = self.client_secret.clone().or_else(|| {
            (self.client_secret_env.as_deref()).and_then(|var| std::env::var(var).ok())
        });
        self.check()?;
        let oauth = match self.grant.as_deref().unwrap_or("client_credentials") {
            "client_credentials" => {
                let id = self.client_id.clone().unwrap_or_default();
                match (&self.private_key_file, secret) {
                    (Some(file), _) => {
                        let pem = std::fs::read(file).map_err(|error| {
                            format!("cannot read the private key {}: {error}", file.display())
                        })?;
                        OAuth::private_key_jwt(
                            id,
                            pem,
                            self.algorithm.as_deref().unwrap_or("ES256"),
                        )?
                    }
                    (None, Some(secret)) => OAuth::client_credentials(id, secret),
                    (None, None) => {
                        return Err(format!(
                            "the client secret's variable `{}` is unset",
                            self.client_secret_env.as_deref().unwrap_or_default()
                        ));
                    }
                }
            }
            "authorization_code" => {
                let redirect = (self.redirect_uri.clone())
                    .unwrap_or_else(|| "http://127.0.0.1:8914/callback".into());
                let browser = if self.open_browser {
                    super::oauth::LoopbackBrowser::new().opening()
                } else {
                    super::oauth::LoopbackBrowser::new()
                };
                let mut oauth = OAuth::authorization_code(redirect, browser);
                if let Some(id) = &self.client_id {
                    oauth = oauth.client_id(id.clone());
                }
                if let Some(secret) = secret {
                    oauth = oauth.client_secret(secret);
                }
                if let Some(url) = &self.metadata_document {
                    oauth = oauth.metadata_document(url.clone());
                }
                oauth
            }
            other => {
                return Err(format!(
                    "grant `{other}` is not one toolreg asks for; use \"client_credentials\" or \"authorization_code\""
                ));
            }
        };
        let mut oauth = oauth.scopes(self.scopes.clone());
        if let Some(file) = &self.token_file {
            oauth = oauth.store(super::oauth::TokenFile::new(file));
        }
        Ok(oauth)
    }
}

#[derive(serde::Deserialize)]
struct McpTables {
    #[serde(default)]
    mcp: std::collections::BTreeMap<String, McpServerConfig>,
}

impl McpServerConfig {
    /// Its URL, for a server over streamable HTTP.
    pub fn url(&self) -> Option<&str> {
        self.url.as_deref()
    }

    /// Its `oauth` table, for a protected server.
    #[cfg(feature = "oauth")]
    pub fn oauth(&self) -> Option<&McpOAuthConfig> {
        self.oauth.as_ref()
    }

    /// The `[mcp.NAME]` tables of a module map's TOML text (other tables are left to their
    /// readers).
    pub fn from_toml(text: &str) -> Result<std::collections::BTreeMap<String, Self>, String> {
        let tables: McpTables = toml::from_str(text).map_err(|error| {
            format!("the MCP servers of the module map are not valid: {error}; write `[mcp.NAME]` with `command = [\"prog\", \"arg\"]` or `url = \"http://host:port/mcp\"`")
        })?;
        for (name, config) in &tables.mcp {
            if config.command.is_some() == config.url.is_some() {
                return Err(format!(
                    "MCP server `{name}`: give exactly one of `command` and `url`"
                ));
            }
            if config.oauth.is_some()
                && (config.url.is_none() || config.token.is_some() || config.token_env.is_some())
            {
                return Err(format!(
                    "MCP server `{name}`: an `oauth` table goes with `url`, and instead of `token` or `token_env`"
                ));
            }
            #[cfg(feature = "oauth")]
            if let Some(oauth) = &config.oauth {
                oauth
                    .check()
                    .map_err(|why| format!("MCP server `{name}`: {why}"))?;
            }
            #[cfg(not(feature = "oauth"))]
            if config.oauth.is_some() {
                return Err(format!(
                    "MCP server `{name}`: an `oauth` table needs the feature `oauth` of tool-registry (on in toolreg)"
                ));
            }
            if config.command.as_ref().is_some_and(Vec::is_empty) {
                return Err(format!("MCP server `{name}`: `command` names no program"));
            }
        }
        Ok(tables.mcp)
    }
}

impl McpModule {
    /// Mounts the server `config` describes as the module `name`.
    pub async fn mount_config(
        registry: impl Into<Shared>,
        name: &str,
        config: &McpServerConfig,
    ) -> Result<Self, McpModuleError> {
        match (&config.command, &config.url) {
            (Some(command), _) => {
                let mut process = tokio::process::Command::new(&command[0]);
                process.args(&command[1..]);
                Self::spawn(registry, name, process).await
            }
            #[cfg(feature = "oauth")]
            (None, Some(url)) if config.oauth.is_some() => {
                let oauth = (config.oauth.as_ref())
                    .map(McpOAuthConfig::oauth)
                    .transpose()
                    .map_err(|why| failed(name, why))?
                    .ok_or_else(|| failed(name, "no oauth table".into()))?;
                Self::connect_oauth(registry, name, url, oauth).await
            }
            (None, Some(url)) => {
                let token = config.token.clone().or_else(|| {
                    config
                        .token_env
                        .as_deref()
                        .and_then(|var| std::env::var(var).ok())
                });
                Self::connect(registry, name, url, token.as_deref()).await
            }
            (None, None) => Err(failed(name, "give `command` or `url`".to_owned())),
        }
    }
}

#[cfg(all(test, feature = "oauth"))]
mod tests {
    use super::McpServerConfig;

    #[test]
    fn an_oauth_table_goes_with_a_url_and_names_its_grant() {
        let read = |text: &str| McpServerConfig::from_toml(text);
        let servers = read(
            "[mcp.a]\nurl = \"http://127.0.0.1:1/mcp\"\n[mcp.a.oauth]\nclient_id = \"gw\"\nclient_secret = \"s\"\nscopes = [\"tools\"]",
        )
        .unwrap();
        let oauth = servers["a"].oauth.as_ref().unwrap().oauth().unwrap();
        assert!(format!("{oauth:?}").contains("client_credentials (client_secret) as gw"));
        assert!(
            !format!("{oauth:?}").contains("\"s\""),
            "the secret is not shown"
        );
        let code = read(
            "[mcp.a]\nurl = \"http://127.0.0.1:1/mcp\"\n[mcp.a.oauth]\ngrant = \"authorization_code\"",
        )
        .unwrap();
        let oauth = code["a"].oauth.as_ref().unwrap().oauth().unwrap();
        assert!(
            format!("{oauth:?}")
                .contains("authorization_code back to http://127.0.0.1:8914/callback")
        );
        for (wrong, says) in [
            (
                "[mcp.a]\ncommand = [\"x\"]\n[mcp.a.oauth]\nclient_id = \"gw\"\nclient_secret = \"s\"",
                "goes with `url`",
            ),
            (
                "[mcp.a]\nurl = \"http://x/mcp\"\ntoken = \"t\"\n[mcp.a.oauth]\nclient_id = \"gw\"\nclient_secret = \"s\"",
                "instead of `token`",
            ),
            (
                "[mcp.a]\nurl = \"http://x/mcp\"\n[mcp.a.oauth]\nclient_id = \"gw\"",
                "client_secret_env",
            ),
            (
                "[mcp.a]\nurl = \"http://x/mcp\"\n[mcp.a.oauth]\ngrant = \"password\"",
                "not one toolreg asks for",
            ),
        ] {
            let error = read(wrong).unwrap_err();
            assert!(error.contains(says), "{error}");
        }
    }
}
