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

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, InMemoryCredentialStore,
    JwtSigningAlgorithm, StoredCredentials,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_registry_core::store::JsonFile;

use rmcp::transport::StreamableHttpClientTransport;
use tool_registry_core::registry::Shared;

use super::client::{McpModule, McpModuleError, Reauthorize, failed, http_parts, open};
use super::http_client::BoundedHttpClient;

/// How long [`LoopbackBrowser`] waits for the authorization server to send the person back.
pub const AUTHORIZATION_WAIT: Duration = Duration::from_secs(300);

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

/// Sends a person (or an agent acting for one) to an authorization URL and gives back the URL
/// the authorization server redirected to: the code, the state and, where the server sends
/// it, the issuer (RFC 9207), which are checked before the code is exchanged.
pub trait Browser: Send + Sync + 'static {
    /// Visits `url`; the redirect URL it ended on, or why there is none.
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, String>>;
}

/// The command line's browser: prints the authorization URL (and opens it with `xdg-open` or
/// `open` where asked), then listens on the redirect URI's loopback port for the person to be
/// sent back, at most [`AUTHORIZATION_WAIT`]. The redirect URI must be `http://127.0.0.1:PORT/…`
/// or `http://localhost:PORT/…`.
#[derive(Clone, Debug, Default)]
pub struct LoopbackBrowser {
    open: bool,
}

impl LoopbackBrowser {
    /// Prints the URL only.
    pub fn new() -> Self {
        Self::default()
    }

    /// Also opens the URL in the desktop's browser.
    pub fn opening(mut self) -> Self {
        self.open = true;
        self
    }
}

impl Browser for LoopbackBrowser {
    fn visit(&self, url: String) -> BoxFuture<'static, Result<String, String>> {
        let open = self.open;
        Box::pin(async move {
            let redirect = redirect_of(&url)?;
            let (port, path) = loopback_target(&redirect)?;
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
                .await
                .map_err(|error| {
                    format!("cannot listen on 127.0.0.1:{port} for the redirect: {error}")
                })?;
            eprintln!("To authorize, open this URL in a browser:\n\n  {url}\n");
            if open {
                let opener = if cfg!(target_os = "macos") {
                    "open"
                } else {
                    "xdg-open"
                };
                let _ = std::process::Command::new(opener)
                    .arg(&url)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn();
            }
            tokio::time::timeout(AUTHORIZATION_WAIT, wait_for_redirect(listener, &path))
                .await
                .map_err(|_| {
                    format!(
                        "no one came back to {redirect} within {} s",
                        AUTHORIZATION_WAIT.as_secs()
                    )
                })?
                .map(|query| format!("http://127.0.0.1:{port}{path}?{query}"))
        })
    }
}

/// The `redirect_uri` of an authorization URL.
fn redirect_of(url: &str) -> Result<String, String> {
    let parsed = reqwest::Url::parse(url).map_err(|error| format!("{url}: {error}"))?;
    parsed
        .query_pairs()
        .find(|(key, _)| key == "redirect_uri")
        .map(|(_, value)| value.into_owned())
        .ok_or_else(|| "the authorization URL names no redirect_uri".to_owned())
}

/// The port and path of a loopback redirect URI.
fn loopback_target(redirect: &str) -> Result<(u16, String), String> {
    let parsed = reqwest::Url::parse(redirect).map_err(|error| format!("{redirect}: {error}"))?;
    let loopback = matches!(parsed.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    match (parsed.scheme(), loopback, parsed.port()) {
        ("http", true, Some(port)) => Ok((port, parsed.path().to_owned())),
        _ => Err(format!(
            "the redirect URI {redirect} is not a loopback address with a port; use http://127.0.0.1:PORT/callback"
        )),
    }
}

/// Answers requests on `listener` until one comes to `path` with a query; that query.
async fn wait_for_redirect(
    listener: tokio::net::TcpListener,
    path: &str,
) -> Result<String, String> {
    loop {
        let (mut stream, _) = listener
            .accept()
            .await
            .map_err(|error| format!("the redirect listener failed: {error}"))?;
        let mut head = vec![0u8; 8192];
        let mut read = 0;
        while read < head.len() && !head[..read].windows(4).any(|w| w == b"\r\n\r\n") {
            match tokio::time::timeout(Duration::from_secs(10), stream.read(&mut head[read..]))
                .await
            {
                Ok(Ok(0)) | Ok(Err(_)) | Err(_) => break,
                Ok(Ok(n)) => read += n,
            }
        }
        let head = String::from_utf8_lossy(&head[..read]);
        let target = head
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("GET "))
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default();
        let (at, query) = target.split_once('?').unwrap_or((target, ""));
        let ours = at == path && !query.is_empty();
        let page = if ours {
            "Authorized. You may close this window."
        } else {
            "Not found."
        };
        let status = if ours { "200 OK" } else { "404 Not Found" };
        let _ = stream
            .write_all(
                format!(
                    "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                    page.len()
                )
                .as_bytes(),
            )
            .await;
        if ours {
            return Ok(query.to_owned());
        }
    }
}

/// A client's registration and tokens in a JSON file that only its owner may read or write
/// (mode `0600` on Unix when it creates it), kept as the registry's shared files are
/// ([`JsonFile`]): replaced whole on each save under a lock, so that a reader never sees half
/// of one and processes that save at once lose nothing; a path that is not a regular file (a
/// FIFO, a device) is refused, never waited on. Several processes may share one file; each then
/// refreshes on its own (a fleet's Redis store refreshes once for all).
#[derive(Clone, Debug)]
pub struct TokenFile {
    file: JsonFile,
}

impl TokenFile {
    /// The file at `path` (created, with its folders, on the first save).
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            file: JsonFile::new(path.as_ref(), "OAuth token file").private(),
        }
    }

    /// Runs `work` on the file on a blocking thread.
    async fn on_file<T: Send + 'static>(
        &self,
        work: impl FnOnce(&JsonFile) -> Result<T, tool_registry_core::store::StoreError>
        + Send
        + 'static,
    ) -> Result<T, AuthError> {
        let file = self.file.clone();
        tokio::task::spawn_blocking(move || work(&file))
            .await
            .map_err(|error| AuthError::InternalError(error.to_string()))?
            .map_err(|error| AuthError::InternalError(error.to_string()))
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.on_file(|file| file.read::<Option<StoredCredentials>>())
            .await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.on_file(move |file| {
            file.update(|kept: &mut Option<StoredCredentials>| {
                *kept = Some(credentials);
                Ok(())
            })
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.on_file(|file| {
            file.update(|kept: &mut Option<StoredCredentials>| {
                *kept = None;
                Ok(())
            })
        })
        .await
    }
}

/// rmcp's stores are owned; ours is shared by every manager one module makes.
struct SharedStore(Arc<dyn CredentialStore>);

#[async_trait::async_trait]
impl CredentialStore for SharedStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.load().await
    }
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.save(credentials).await
    }
    async fn clear(&self) -> Result<(), AuthError> {
        self.0.clear().await
    }
    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        self.0.on_refresh_token_rejected(credentials).await
    }
    async fn acquire_refresh_guard(
        &self,
    ) -> Result<Option<rmcp::transport::auth::CredentialRefreshGuard>, AuthError> {
        self.0.acquire_refresh_guard().await
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

    #[test]
    fn the_loopback_redirect_must_be_a_loopback_address_with_a_port() {
        assert_eq!(
            loopback_target("http://127.0.0.1:8914/callback").unwrap(),
            (8914, "/callback".to_owned())
        );
        for refused in [
            "https://127.0.0.1:8914/callback",
            "http://example.com:8914/callback",
            "http://127.0.0.1/callback",
        ] {
            assert!(loopback_target(refused).is_err(), "{refused}");
        }
        let url =
            "https://as.example/authorize?client_id=x&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb";
        assert_eq!(redirect_of(url).unwrap(), "http://127.0.0.1:9/cb");
    }

    #[tokio::test]
    async fn the_loopback_browser_returns_the_query_of_the_redirect() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let waiting = tokio::spawn(async move { wait_for_redirect(listener, "/cb").await });
        let send = |target: &'static str| async move {
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            stream
                .write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                .await
                .unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).await.unwrap();
            answer
        };
        assert!(send("/favicon.ico").await.starts_with("HTTP/1.1 404"));
        assert!(
            send("/cb?code=abc&state=xyz")
                .await
                .starts_with("HTTP/1.1 200")
        );
        assert_eq!(waiting.await.unwrap().unwrap(), "code=abc&state=xyz");
    }

    #[tokio::test]
    async fn a_token_file_is_owner_only_and_replaced_whole() {
        let dir = std::env::temp_dir().join(format!("toolreg-tokens-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = TokenFile::new(dir.join("remote.json"));
        assert!(file.load().await.unwrap().is_none());
        let stored = StoredCredentials::new("client-1".into(), None, vec!["read".into()], Some(7));
        file.save(stored.clone()).await.unwrap();
        file.save(StoredCredentials::new(
            "client-2".into(),
            None,
            vec![],
            None,
        ))
        .await
        .unwrap();
        assert_eq!(file.load().await.unwrap().unwrap().client_id, "client-2");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join("remote.json"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| !name.ends_with(".lock"))
            .collect();
        assert_eq!(left, ["remote.json"], "no temporary file is left");
        // A FIFO in its place is refused at once, never waited on.
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo.json");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap();
            assert!(made.success());
            let refused = TokenFile::new(&fifo).load().await.unwrap_err();
            assert!(refused.to_string().contains("fifo"), "{refused}");
        }
        file.clear().await.unwrap();
        assert!(file.load().await.unwrap().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
