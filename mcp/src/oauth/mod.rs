//! Authorizing against a protected MCP server, as the MCP specification has it (OAuth 2.1, the
//! 2025-11-25 and 2026-07-28 revisions): the server's `401` names its protected resource
//! metadata (RFC 9728), which names its authorization servers (RFC 8414, OpenID Connect
//! discovery); a token is asked for that server alone (RFC 8707's `resource`), by client
//! credentials for a machine or by an authorization code with PKCE for a person; a `403
//! insufficient_scope` asks again for the union of the scopes held and the scopes named; an
//! expired token is refreshed. rmcp's `auth` module speaks the protocol; this file decides when.
//!
//! ```no_run
//! use tool_registry_mcp::McpModule;
//! use tool_registry_mcp::oauth::{OAuth, TokenFile};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! // A gateway: machine-to-machine, the secret from the environment, tokens kept on disk.
//! let oauth = OAuth::client_credentials("gateway", std::env::var("GATEWAY_SECRET")?)
//!     .scopes(["tools:read", "tools:call"])
//!     .store(TokenFile::new("/var/lib/gateway/remote.tokens.json"));
//! let module = McpModule::connect_oauth(
//!     tool_registry::Registry::global(),
//!     "remote",
//!     "https://mcp.example.com/mcp",
//!     oauth,
//! )
//! .await?;
//! # drop(module);
//! # Ok(())
//! # }
//! ```
//!
//! | file | what |
//! | --- | --- |
//! | `browser.rs` | [`Browser`], [`LoopbackBrowser`]: the person sent to authorize, and back |
//! | `tokens.rs` | [`TokenFile`], and the store every authorization manager of one module shares |
//! | `mod.rs` | [`OAuth`]: the grant, the client, the scopes, the store; the authorizer that asks for a token after a challenge; `McpModule::connect_oauth` |

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthClient, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, InMemoryCredentialStore,
    JwtSigningAlgorithm,
};

use rmcp::transport::StreamableHttpClientTransport;
use tool_registry_core::registry::Shared;

mod browser;
mod tokens;

pub use browser::{AUTHORIZATION_WAIT, Browser, LoopbackBrowser};
use tokens::SharedStore;
pub use tokens::TokenFile;

use crate::client::{McpModule, McpModuleError, Reauthorize, failed, http_parts, open};
use crate::http_client::BoundedHttpClient;

/// How an MCP server over HTTP is authorized: which grant, which client, which scopes, and
/// where its tokens are kept. Tokens and secrets are never logged, and `Debug` leaves them out.
#[derive(Clone)]
pub struct OAuth {
    grant: Grant,
    scopes: Vec<String>,
    store: Arc<dyn CredentialStore>,
    max_step_ups: u32,
}

#[derive(Clone)]
enum Grant {
    /// Client credentials (machine to machine).
    Client { client_id: String, proof: Proof },
    /// An authorization code with PKCE, for a person in a browser.
    Code {
        client: CodeClient,
        redirect_uri: String,
        browser: Arc<dyn Browser>,
    },
}

#[derive(Clone)]
enum Proof {
    Secret(String),
    PrivateKeyJwt {
        pem: Vec<u8>,
        algorithm: JwtSigningAlgorithm,
    },
}

#[derive(Clone, Default)]
struct CodeClient {
    client_id: Option<String>,
    client_secret: Option<String>,
    metadata_url: Option<String>,
    client_name: Option<String>,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let grant = match &self.grant {
            Grant::Client {
                client_id,
                proof: Proof::Secret(_),
            } => format!("client_credentials (client_secret) as {client_id}"),
            Grant::Client {
                client_id,
                proof: Proof::PrivateKeyJwt { algorithm, .. },
            } => format!("client_credentials (private_key_jwt {algorithm:?}) as {client_id}"),
            Grant::Code { redirect_uri, .. } => {
                format!("authorization_code back to {redirect_uri}")
            }
        };
        f.debug_struct("OAuth")
            .field("grant", &grant)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl OAuth {
    fn with_grant(grant: Grant) -> Self {
        Self {
            grant,
            scopes: Vec::new(),
            store: Arc::new(InMemoryCredentialStore::new()),
            max_step_ups: 3,
        }
    }

    /// Client credentials with a secret (`client_secret_post`, or `client_secret_basic` when the
    /// authorization server takes only that): the gateway's normal case.
    pub fn client_credentials(client_id: impl Into<String>, secret: impl Into<String>) -> Self {
        Self::with_grant(Grant::Client {
            client_id: client_id.into(),
            proof: Proof::Secret(secret.into()),
        })
    }

    /// Client credentials proven by a JWT the client signs with its private key
    /// (`private_key_jwt`, RFC 7523): `pem` is the key in PEM, `algorithm` one of `RS256`,
    /// `RS384`, `RS512`, `ES256`, `ES384`. An error names the algorithms when it is none of them.
    pub fn private_key_jwt(
        client_id: impl Into<String>,
        pem: impl Into<Vec<u8>>,
        algorithm: &str,
    ) -> Result<Self, String> {
        let algorithm = match algorithm {
            "RS256" => JwtSigningAlgorithm::RS256,
            "RS384" => JwtSigningAlgorithm::RS384,
            "RS512" => JwtSigningAlgorithm::RS512,
            "ES256" => JwtSigningAlgorithm::ES256,
            "ES384" => JwtSigningAlgorithm::ES384,
            other => {
                return Err(format!(
                    "`{other}` is not a signing algorithm for private_key_jwt; use RS256, RS384, RS512, ES256 or ES384"
                ));
            }
        };
        Ok(Self::with_grant(Grant::Client {
            client_id: client_id.into(),
            proof: Proof::PrivateKeyJwt {
                pem: pem.into(),
                algorithm,
            },
        }))
    }

    /// An authorization code with PKCE: `browser` sends a person to the authorization server,
    /// which sends them back to `redirect_uri` ([`LoopbackBrowser`] listens there on the
    /// command line). The client registers itself dynamically unless it is given an id
    /// ([`OAuth::client_id`]) or a metadata document ([`OAuth::metadata_document`]).
    pub fn authorization_code(redirect_uri: impl Into<String>, browser: impl Browser) -> Self {
        Self::with_grant(Grant::Code {
            client: CodeClient::default(),
            redirect_uri: redirect_uri.into(),
            browser: Arc::new(browser),
        })
    }

    fn code_client(&mut self) -> Option<&mut CodeClient> {
        match &mut self.grant {
            Grant::Code { client, .. } => Some(client),
            Grant::Client { .. } => None,
        }
    }

    /// A client registered beforehand with the authorization server (authorization code
    /// only; client credentials name theirs when built).
    pub fn client_id(mut self, client_id: impl Into<String>) -> Self {
        if let Some(client) = self.code_client() {
            client.client_id = Some(client_id.into());
        }
        self
    }

    /// The secret of a client registered beforehand (authorization code only).
    pub fn client_secret(mut self, secret: impl Into<String>) -> Self {
        if let Some(client) = self.code_client() {
            client.client_secret = Some(secret.into());
        }
        self
    }

    /// The HTTPS URL of the client's metadata document, its id where the authorization server
    /// takes client ID metadata documents (`client_id_metadata_document_supported`);
    /// elsewhere the client registers itself dynamically.
    pub fn metadata_document(mut self, url: impl Into<String>) -> Self {
        if let Some(client) = self.code_client() {
            client.metadata_url = Some(url.into());
        }
        self
    }

    /// The name a dynamically registered client gives itself (`toolreg` unless set).
    pub fn client_name(mut self, name: impl Into<String>) -> Self {
        if let Some(client) = self.code_client() {
            client.client_name = Some(name.into());
        }
        self
    }

    /// The scopes asked for at first. Without them, the scopes the server's challenge names,
    /// else the ones its metadata lists, else none (the specification's order).
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Where the client's registration and tokens are kept between runs ([`TokenFile`], or
    /// any of rmcp's [`CredentialStore`]s); in memory unless set.
    pub fn store(mut self, store: impl CredentialStore + 'static) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// How many times in a row a `403 insufficient_scope` may send the client to authorize
    /// again before the call fails (3 unless set); a call that succeeds starts the count anew.
    pub fn max_step_ups(mut self, times: u32) -> Self {
        self.max_step_ups = times;
        self
    }
}

/// One module's authorization: the HTTP client every request goes through (with the token of
/// the moment), and what asks for a new token when the server refuses the one it has.
pub(super) struct Authorizer {
    url: String,
    oauth: OAuth,
    client: AuthClient<BoundedHttpClient>,
    /// Step-ups since the last call that succeeded.
    step_ups: AtomicU32,
    /// One authorization at a time.
    turn: tokio::sync::Mutex<()>,
}

impl Authorizer {
    /// The authorizer of the server at `url`, over `http`, with the tokens `oauth`'s store
    /// already holds, if any.
    pub(super) async fn new(
        url: &str,
        oauth: OAuth,
        http: BoundedHttpClient,
    ) -> Result<Self, String> {
        let mut manager = manager_for(url).await?;
        manager.set_credential_store(SharedStore(Arc::clone(&oauth.store)));
        let stored = oauth.store.load().await.ok().flatten();
        if stored.is_some_and(|stored| stored.token_response.is_some()) {
            // Tokens of an earlier run: used until the server refuses them.
            if let Err(error) = manager.initialize_from_store().await {
                tracing::info!(target: "tool_registry::mcp", %url, %error, "the stored tokens cannot be used; authorizing anew");
                manager = manager_for(url).await?;
                manager.set_credential_store(SharedStore(Arc::clone(&oauth.store)));
            }
        }
        Ok(Self {
            url: url.to_owned(),
            oauth,
            client: AuthClient::new(http, manager),
            step_ups: AtomicU32::new(0),
            turn: tokio::sync::Mutex::new(()),
        })
    }

    /// The HTTP client of the module's transport.
    pub(super) fn client(&self) -> AuthClient<BoundedHttpClient> {
        self.client.clone()
    }

    /// A call succeeded: the count of step-ups starts anew.
    pub(super) fn succeeded(&self) {
        self.step_ups.store(0, Ordering::Relaxed);
    }

    /// Asks for a new token after the server's `challenge` (its `WWW-Authenticate`), for the
    /// scopes held and the ones it names. An error once [`OAuth::max_step_ups`] authorizations
    /// in a row did not make a call succeed.
    pub(super) async fn authorize_after(&self, challenge: &str) -> Result<(), String> {
        let before = self.step_ups.fetch_add(1, Ordering::Relaxed);
        if before >= self.oauth.max_step_ups {
            return Err(format!(
                "the server refused {} new tokens in a row ({challenge}); authorize a client with the scopes it asks for",
                before
            ));
        }
        self.authorize(Some(challenge)).await
    }

    /// One authorization: discovery (from `challenge` where there is one), the grant, the new
    /// token installed where every request of the module finds it.
    pub(super) async fn authorize(&self, challenge: Option<&str>) -> Result<(), String> {
        let _turn = self.turn.lock().await;
        let held = self
            .client
            .auth_manager
            .lock()
            .await
            .get_current_scopes()
            .await;
        let mut manager = manager_for(&self.url).await?;
        manager.set_credential_store(SharedStore(Arc::clone(&self.oauth.store)));
        let resolution = manager
            .resolve_metadata_from_challenge(challenge)
            .await
            .map_err(|error| {
                format!("cannot discover the server's authorization server: {error}")
            })?;
        manager.set_metadata(resolution.metadata);
        let named: Vec<String> = challenge
            .and_then(challenge_scope)
            .map(|scope| scope.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let scopes = if held.is_empty() && named.is_empty() {
            self.oauth.scopes.clone()
        } else {
            union(&held, &named)
        };
        match &self.oauth.grant {
            Grant::Client { client_id, proof } => {
                let config = match proof {
                    Proof::Secret(secret) => ClientCredentialsConfig::ClientSecret {
                        client_id: client_id.clone(),
                        client_secret: secret.clone(),
                        scopes,
                        resource: Some(self.url.clone()),
                    },
                    Proof::PrivateKeyJwt { pem, algorithm } => {
                        ClientCredentialsConfig::PrivateKeyJwt {
                            client_id: client_id.clone(),
                            signing_key: pem.clone(),
                            signing_algorithm: *algorithm,
                            token_endpoint_audience: None,
                            scopes,
                            resource: Some(self.url.clone()),
                        }
                    }
                };
                manager
                    .validate_client_credentials_metadata(&config)
                    .and_then(|()| manager.configure_client_credentials(&config))
                    .map_err(|error| format!("client credentials: {error}"))?;
                // rmcp's exchange holds a form serializer across an await, which keeps its
                // future off other threads: it runs to its end on a blocking thread of its own.
                let runtime = tokio::runtime::Handle::current();
                manager = tokio::task::spawn_blocking(move || {
                    runtime.block_on(async move {
                        let exchanged = manager.exchange_client_credentials(&config).await;
                        exchanged.map(|_| manager)
                    })
                })
                .await
                .map_err(|error| format!("client credentials: {error}"))?
                .map_err(|error| format!("client credentials: {error}"))?;
            }
            Grant::Code {
                client,
                redirect_uri,
                browser,
            } => {
                let mut request = AuthorizationRequest::new(redirect_uri.clone())
                    .with_client_name(client.client_name.as_deref().unwrap_or("toolreg"));
                if !scopes.is_empty() {
                    request = request.with_scopes(scopes);
                }
                if let Some(id) = &client.client_id {
                    request = request.with_preregistered_client(id.clone());
                    if let Some(secret) = &client.client_secret {
                        request = request.with_client_secret(secret.clone());
                    }
                }
                if let Some(url) = &client.metadata_url {
                    request = request.with_client_metadata_url(url.clone());
                }
                let session = AuthorizationSession::new(manager, request)
                    .await
                    .map_err(|(_, error)| format!("cannot start the authorization: {error}"))?;
                let back = browser
                    .visit(session.get_authorization_url().to_owned())
                    .await?;
                let callback = AuthorizationCallback::from_redirect_url(&back)
                    .map_err(|error| format!("the authorization did not come back: {error}"))?;
                session
                    .handle_callback_with_issuer(
                        &callback.code,
                        &callback.csrf_token,
                        callback.issuer.as_deref(),
                    )
                    .await
                    .map_err(|error| {
                        format!("the authorization code was not exchanged: {error}")
                    })?;
                manager = session.auth_manager;
            }
        }
        *self.client.auth_manager.lock().await = manager;
        tracing::info!(target: "tool_registry::mcp", url = %self.url, "authorized");
        Ok(())
    }
}

impl McpModule {
    /// Connects to the MCP server at `url` (streamable HTTP) as an OAuth client, as the MCP
    /// specification has it ([`OAuth`]), and mounts its tools as `name.tool`: the server's
    /// `401` leads to its authorization server and a token for it; a `403
    /// insufficient_scope` on a call asks for the scopes it names and sends the call again
    /// once; an expired token is refreshed. Answers are bounded as with
    /// [`McpModule::connect`].
    pub async fn connect_oauth(
        registry: impl Into<Shared>,
        name: &str,
        url: &str,
        oauth: OAuth,
    ) -> Result<Self, McpModuleError> {
        let registry = registry.into();
        let (config, client) = http_parts(&registry, name, url)?;
        let authorizer = Arc::new(
            Authorizer::new(url, oauth, client)
                .await
                .map_err(|reason| failed(name, reason))?,
        );
        let mut authorized = false;
        let opened = loop {
            let transport =
                StreamableHttpClientTransport::with_client(authorizer.client(), config.clone());
            match open(transport).await {
                Ok(opened) => break opened,
                Err(error) => match error.auth_challenge() {
                    Some(challenge) if !authorized => {
                        let challenge = challenge.to_owned();
                        authorizer
                            .authorize(Some(&challenge))
                            .await
                            .map_err(|reason| failed(name, reason))?;
                        authorized = true;
                    }
                    _ => return Err(failed(name, error.to_string())),
                },
            }
        };
        Self::mount(registry, name, opened, Some(authorizer)).await
    }
}

impl Reauthorize for Authorizer {
    fn after<'a>(&'a self, challenge: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.authorize_after(challenge))
    }

    fn succeeded(&self) {
        Authorizer::succeeded(self);
    }
}

/// A manager for the server at `url`: metadata at private addresses are followed only when the
/// server itself is at one (rmcp's rule for loopback; the same for private networks).
async fn manager_for(url: &str) -> Result<AuthorizationManager, String> {
    let private = reqwest::Url::parse(url)
        .ok()
        .and_then(|url| match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(ip.is_private() || ip.is_loopback()),
            Some(url::Host::Ipv6(ip)) => Some(ip.is_loopback()),
            Some(url::Host::Domain(name)) => Some(name == "localhost"),
            None => None,
        })
        .unwrap_or(false);
    let made = if private {
        AuthorizationManager::new_allowing_private_addresses(url).await
    } else {
        AuthorizationManager::new(url).await
    };
    made.map_err(|error| format!("cannot authorize against {url}: {error}"))
}

/// The `scope` parameter of a `WWW-Authenticate` challenge.
fn challenge_scope(challenge: &str) -> Option<String> {
    let base = reqwest::Url::parse("http://localhost/").ok()?;
    rmcp::transport::auth::WWWAuthenticateParams::parse(challenge, &base).scope
}

/// `held` and then what `named` adds, each once.
fn union(held: &[String], named: &[String]) -> Vec<String> {
    let mut all = held.to_vec();
    for scope in named {
        if !all.contains(scope) {
            all.push(scope.clone());
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_up_asks_for_what_is_held_and_what_is_named() {
        let held = vec!["read".to_owned(), "list".to_owned()];
        let named = vec!["list".to_owned(), "write".to_owned()];
        assert_eq!(union(&held, &named), ["read", "list", "write"]);
        assert_eq!(
            challenge_scope(r#"Bearer error="insufficient_scope", scope="a b""#).as_deref(),
            Some("a b")
        );
    }
}
