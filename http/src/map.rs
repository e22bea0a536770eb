//! The module map: which modules a gateway uses, where they are, and how long their calls may
//! take.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::grant::{ClientCredentials, Tokens};

/// How long a call to a module may take: 30 s.
pub const MODULE_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a call to a module configured `slow` may take: 120 s.
pub const SLOW_MODULE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long fetching a manifest may take: 10 s.
pub const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// The modules a gateway uses, by name. Build one in code or read it from TOML:
///
/// ```toml
/// [modules.kb]
/// url = "http://127.0.0.1:8001"
/// token = "…"            # the module's shared secret (or token_env = "KB_TOKEN")
///
/// [modules.deployer]
/// url = "http://127.0.0.1:8002"
/// slow = true             # calls may take 120 s instead of 30 s
///
/// [modules.hosted]
/// url = "http://127.0.0.1:8003"
/// [modules.hosted.oauth]  # an OAuth resource server: client credentials (see ClientCredentials)
/// client_id = "gateway"
/// client_secret_env = "HOSTED_SECRET"
/// ```
///
/// ```
/// use tool_registry::http::{Module, ModuleMap};
///
/// let map = ModuleMap::from_toml(r#"
///     [modules.kb]
///     url = "http://127.0.0.1:8001"
///     slow = true
/// "#)?;
/// assert_eq!(map.get("kb").unwrap().url(), "http://127.0.0.1:8001");
/// let same = ModuleMap::new().with("kb", Module::new("http://127.0.0.1:8001").slow(true));
/// assert_eq!(map, same);
/// # Ok::<(), tool_registry::http::ModuleMapError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModuleMap {
    modules: BTreeMap<String, Module>,
}

/// One module of a [`ModuleMap`].
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Module {
    url: String,
    #[serde(default)]
    token: Option<String>,
    #[serde(default)]
    token_env: Option<String>,
    #[serde(default)]
    slow: bool,
    /// `timeout = "45s"`: durations as people write them, as a spec's.
    #[serde(default, with = "humantime_serde::option")]
    timeout: Option<Duration>,
    /// The client the gateway is at the module's authorization server.
    #[serde(default)]
    oauth: Option<ClientCredentials>,
    /// Its access tokens, shared by the module's clones.
    #[serde(skip)]
    tokens: Tokens,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("url", &self.url)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("token_env", &self.token_env)
            .field("slow", &self.slow)
            .field("timeout", &self.timeout)
            .field("oauth", &self.oauth)
            .finish()
    }
}

impl Module {
    /// A module at `url` (`http://host:port`, no trailing path). An `https://` address needs a
    /// TLS feature of `reqwest` turned on in the application's own dependencies
    /// (`reqwest = { version = "0.13", features = ["rustls"] }`); without one, its calls
    /// answer `module_unreachable`.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            token: None,
            token_env: None,
            slow: false,
            timeout: None,
            oauth: None,
            tokens: Tokens::default(),
        }
    }

    /// A module that is an OAuth resource server: the gateway asks its authorization server
    /// for tokens for it with these client credentials, instead of sending a shared secret.
    pub fn oauth(mut self, credentials: ClientCredentials) -> Self {
        self.oauth = Some(credentials);
        self
    }

    /// The module's shared secret, sent as `Authorization: Bearer <secret>`: the module then
    /// believes the user and level of each call. Without it every call runs there as a guest.
    pub fn token(mut self, secret: impl Into<String>) -> Self {
        self.token = Some(secret.into());
        self
    }

    /// A slow module: its calls may take [`SLOW_MODULE_TIMEOUT`] instead of
    /// [`MODULE_TIMEOUT`].
    pub fn slow(mut self, slow: bool) -> Self {
        self.slow = slow;
        self
    }

    /// How long its calls may take, instead of the 30 s (or 120 s when slow) default.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Where the module is.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether it is configured slow.
    pub fn is_slow(&self) -> bool {
        self.slow
    }

    /// How long its calls may take.
    pub fn call_timeout(&self) -> Duration {
        self.timeout.unwrap_or(if self.slow {
            SLOW_MODULE_TIMEOUT
        } else {
            MODULE_TIMEOUT
        })
    }

    /// The secret, from `token` or else the variable `token_env` names.
    pub(super) fn secret(&self) -> Option<String> {
        self.token
            .clone()
            .or_else(|| {
                self.token_env
                    .as_deref()
                    .and_then(|var| std::env::var(var).ok())
            })
            .filter(|secret| !secret.is_empty())
    }

    /// What its requests carry as `Authorization: Bearer`: an access token where it has an
    /// `oauth` table, else its secret; an error says why no token could be had.
    pub(super) async fn bearer(&self, client: &reqwest::Client) -> Result<Option<String>, String> {
        match &self.oauth {
            Some(credentials) => self
                .tokens
                .token(client, &self.url, credentials)
                .await
                .map(Some),
            None => Ok(self.secret()),
        }
    }

    /// What its requests carry without waiting: its secret, or the access token held now.
    pub(super) fn bearer_held(&self) -> Option<String> {
        match &self.oauth {
            Some(_) => self.tokens.held(),
            None => self.secret(),
        }
    }

    /// The module refused the access token it was sent: the next request asks for another.
    pub(super) fn refused_token(&self) {
        self.tokens.drop_token();
    }

    /// The address of one of its endpoints (`manifest`, `execute`, `health`).
    pub(super) fn endpoint(&self, path: &str) -> String {
        format!("{}/{path}", self.url.trim_end_matches('/'))
    }
}

/// Why a module map cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleMapError {
    /// The file cannot be read.
    #[error("cannot read the module map {path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The text is not a module map.
    #[error(
        "the module map is not valid: {0}; write one `[modules.NAME]` table per module with `url = \"http://host:port\"`, and optionally `token`, `token_env`, an `[modules.NAME.oauth]` table (`client_id`, `client_secret_env`, `scopes`), `slow = true` or `timeout = \"45s\"`"
    )]
    Toml(String),
    /// A module's name or address is unusable.
    #[error("module `{module}`: {problem}")]
    Module {
        /// The module.
        module: String,
        /// What is wrong.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MapFile {
    #[serde(default)]
    modules: BTreeMap<String, Module>,
    /// MCP servers mounted as modules (`[mcp.NAME]`), read by `tool_registry::mcp` with the
    /// `mcp` feature; taken here so that one file can name both kinds.
    #[serde(default, rename = "mcp")]
    _mcp: Option<toml::Value>,
}

impl ModuleMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) the module `name`.
    pub fn with(mut self, name: impl Into<String>, module: Module) -> Self {
        self.modules.insert(name.into(), module);
        self
    }

    /// Reads a map from TOML text: one `[modules.NAME]` table per module.
    pub fn from_toml(text: &str) -> Result<Self, ModuleMapError> {
        let file: MapFile =
            toml::from_str(text).map_err(|error| ModuleMapError::Toml(error.to_string()))?;
        let map = Self {
            modules: file.modules,
        };
        map.check()?;
        Ok(map)
    }

    /// Reads a map from a TOML file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, ModuleMapError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ModuleMapError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_toml(&text)
    }

    /// The module `name`.
    pub fn get(&self, name: &str) -> Option<&Module> {
        self.modules.get(name)
    }

    /// Every module, by name.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Module)> {
        self.modules
            .iter()
            .map(|(name, module)| (name.as_str(), module))
    }

    /// How many modules there are.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// Each name is one segment of the tool-name rule, each address `http://` or `https://`.
    pub(super) fn check(&self) -> Result<(), ModuleMapError> {
        for (name, module) in &self.modules {
            let problem = |problem: &str| ModuleMapError::Module {
                module: name.clone(),
                problem: problem.to_owned(),
            };
            let valid = !name.is_empty()
                && name.len() <= 64
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            if !valid {
                return Err(problem(
                    "a module name is 1 to 64 of `A-Z a-z 0-9 _ -` (it becomes the first segment of its tools' names)",
                ));
            }
            if !(module.url.starts_with("http://") || module.url.starts_with("https://")) {
                return Err(problem("`url` must start with http:// or https://"));
            }
            if module.url.parse::<reqwest::Url>().is_err() {
                return Err(problem("`url` is not a valid address"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{Module, ModuleMap};

    #[test]
    fn a_module_table_reads_its_timeout_and_secret() {
        let map = ModuleMap::from_toml(
            "[modules.kb]\nurl = \"http://127.0.0.1:9\"\ntimeout = \"1m 30s\"\ntoken = \"t\"\n\
             [modules.slow]\nurl = \"https://example.invalid\"\nslow = true\n",
        )
        .unwrap();
        assert_eq!(
            map.get("kb").unwrap().call_timeout(),
            Duration::from_secs(90)
        );
        assert_eq!(map.get("kb").unwrap().secret().as_deref(), Some("t"));
        assert_eq!(
            map.get("slow").unwrap().call_timeout(),
            Duration::from_secs(120)
        );
        assert!(
            !format!("{:?}", map.get("kb").unwrap()).contains("\"t\""),
            "the secret is not printed"
        );
        assert_eq!(
            Module::new("http://h:1/").endpoint("manifest"),
            "http://h:1/manifest"
        );
        let error =
            ModuleMap::from_toml("[modules.kb]\nurl = \"http://h:1\"\ntimeout = \"soon\"\n");
        assert!(
            error
                .unwrap_err()
                .to_string()
                .contains("module map is not valid")
        );
    }
}
