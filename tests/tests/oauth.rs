//! The MCP server and the HTTP module server as OAuth 2.1 resource servers, and `McpModule` and
//! the module gateway as OAuth clients, against an
//! authorization server this test starts on loopback: it publishes its keys as a JWKS, registers
//! clients, approves at once (its redirect names the code), checks PKCE, and signs ES256 access
//! tokens for the resource a client names. Its keys (`fixtures/oauth/*.pem`) were made for these
//! tests alone with `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
//!
//! - The official MCP Python SDK's OAuth client gets `401` and the metadata, a token, and its
//!   tools listed under the scope its claims map to.
//! - Hostile tokens (wrong audience or issuer, expired, not yet valid, `alg: none`, an HMAC token
//!   keyed with the public key, an unknown key id, 50 KB, another resource's) are each `401` with
//!   the reason in `error_description` and nothing of the tool list; an unknown key id prompts
//!   one fetch of the keys, rate-limited, and a rotated key is taken once it is published.
//! - `McpModule::connect_oauth` with client credentials mounts the protected server; with an
//!   authorization code, a person sent through `LoopbackBrowser`'s redirect authorizes it, the
//!   token is refreshed once it runs out, and the token file serves the next run.
//! - A session is its user's: another user's token is answered as for an unknown session.
//! - A module server with an `[oauth]` table refuses a gateway without a token, and serves one
//!   whose client credentials got it a token: as the gateway's own user, or, where the rules
//!   make the gateway's client an owner, as the user each call names.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::extract::{Form, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::Digest;
use tool_registry::mcp::oauth::OAuth;
use tool_registry::mcp::{Callers, McpModule, McpServer};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Permission, Registry, Scope, ToolSpec};

#[path = "../../tools/tests/common/venv.rs"]
mod venv;

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/oauth")
            .join(name),
    )
    .unwrap()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// The authorization server's state.
struct Authority {
    issuer: String,
    signing: EncodingKey,
    rotated: EncodingKey,
    /// The keys it publishes.
    published: Mutex<Vec<Jwk>>,
    /// How many times its keys were fetched.
    fetched: AtomicUsize,
    /// The protected server's URI, the audience of the tokens it introspects.
    resource: Mutex<String>,
    /// The seconds an access token lasts (`expires_in`).
    lifetime: std::sync::atomic::AtomicU64,
    /// How many times a refresh token was used.
    refreshed: AtomicUsize,
    /// How many times a token was asked about at its introspection endpoint.
    introspected: AtomicUsize,
    /// Codes issued: (PKCE challenge, scope, resource).
    codes: Mutex<HashMap<String, (String, String, String)>>,
}

impl Authority {
    /// A token signed with `key` (kid `kid`) over `claims`.
    fn sign(&self, key: &EncodingKey, kid: &str, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, claims, key).unwrap()
    }

    /// Claims for `sub` on `resource`, valid for an hour.
    fn claims(&self, sub: &str, scope: &str, resource: &str) -> Value {
        json!({
            "iss": self.issuer, "aud": resource, "sub": sub, "scope": scope,
            "iat": now(), "exp": now() + 3600,
            "groups": if sub == "ann" { json!(["research"]) } else { json!([]) },
        })
    }

    fn publish(&self, key: &EncodingKey, kid: &str) {
        let mut jwk = Jwk::from_encoding_key(key, Algorithm::ES256).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        self.published.lock().unwrap().push(jwk);
    }
}

type Shared = Arc<Authority>;

async fn metadata(State(authority): State<Shared>) -> Json<Value> {
    let issuer = &authority.issuer;
    Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/authorize"),
        "token_endpoint": format!("{issuer}/token"),
        "registration_endpoint": format!("{issuer}/register"),
        "jwks_uri": format!("{issuer}/jwks"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "client_credentials", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post", "client_secret_basic"],
    }))
}

async fn jwks(State(authority): State<Shared>) -> Json<JwkSet> {
    authority.fetched.fetch_add(1, Ordering::SeqCst);
    Json(JwkSet {
        keys: authority.published.lock().unwrap().clone(),
    })
}

async fn register(Json(asked): Json<Value>) -> (StatusCode, Json<Value>) {
    let mut registered = asked.clone();
    registered["client_id"] = json!("registered-client");
    (StatusCode::CREATED, Json(registered))
}

async fn authorize(
    State(authority): State<Shared>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let (Some(redirect), Some(challenge)) =
        (query.get("redirect_uri"), query.get("code_challenge"))
    else {
        return (
            StatusCode::BAD_REQUEST,
            "redirect_uri and code_challenge are needed",
        )
            .into_response();
    };
    let code = format!("code-{}", authority.codes.lock().unwrap().len());
    authority.codes.lock().unwrap().insert(
        code.clone(),
        (
            challenge.clone(),
            query.get("scope").cloned().unwrap_or_default(),
            query.get("resource").cloned().unwrap_or_default(),
        ),
    );
    let state = query.get("state").cloned().unwrap_or_default();
    Redirect::to(&format!("{redirect}?code={code}&state={state}")).into_response()
}

async fn token(
    State(authority): State<Shared>,
    headers: axum::http::HeaderMap,
    Form(mut form): Form<HashMap<String, String>>,
) -> Response {
    // client_secret_basic: the client's id and secret from the header, as the form would carry them.
    let basic = (headers
        .get("authorization")
        .and_then(|value| value.to_str().ok()))
    .and_then(|value| value.strip_prefix("Basic "))
    .and_then(|encoded| {
        base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .ok()
    })
    .and_then(|decoded| String::from_utf8(decoded).ok());
    if let Some((id, secret)) = basic.as_deref().and_then(|pair| pair.split_once(':')) {
        form.insert("client_id".into(), id.to_owned());
        form.insert("client_secret".into(), secret.to_owned());
    }
    let refuse = |why: &str| {
        (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant", "error_description": why})),
        )
            .into_response()
    };
    let (sub, scope, resource) = match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((challenge, scope, resource)) = form
                .get("code")
                .and_then(|code| authority.codes.lock().unwrap().remove(code))
            else {
                return refuse("unknown code");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(verifier.as_bytes()));
            if computed != challenge {
                return refuse("PKCE verifier does not match");
            }
            if form.get("resource") != Some(&resource) {
                return refuse("the resource differs from the authorization's");
            }
            ("ann".to_owned(), scope, resource)
        }
        Some("refresh_token")
            if form.get("refresh_token").map(String::as_str) == Some("refresh-ann") =>
        {
            authority.refreshed.fetch_add(1, Ordering::SeqCst);
            let resource = form.get("resource").cloned().unwrap_or_default();
            ("ann".to_owned(), "tools".to_owned(), resource)
        }
        Some("client_credentials") => {
            if form.get("client_id").map(String::as_str) != Some("gateway")
                || form.get("client_secret").map(String::as_str) != Some("gateway-secret")
            {
                return (
                    StatusCode::UNAUTHORIZED,
                    Json(json!({"error": "invalid_client"})),
                )
                    .into_response();
            }
            let scope = form.get("scope").cloned().unwrap_or_else(|| "tools".into());
            (
                "gateway".to_owned(),
                scope,
                form.get("resource").cloned().unwrap_or_default(),
            )
        }
        _ => return refuse("unsupported grant"),
    };
    let claims = authority.claims(&sub, &scope, &resource);
    let access = authority.sign(&authority.signing, "signing", &claims);
    let lifetime = authority.lifetime.load(Ordering::SeqCst);
    let mut answer = json!({"access_token": access, "token_type": "Bearer", "expires_in": lifetime, "scope": scope});
    if sub == "ann" {
        answer["refresh_token"] = json!("refresh-ann");
    }
    Json(answer).into_response()
}

/// RFC 7662: `opaque-carl` is carl's active token for the resource it is asked about by the
/// resource server `rs` (with its secret); any other token is inactive.
async fn introspect(
    State(authority): State<Shared>,
    headers: axum::http::HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    authority.introspected.fetch_add(1, Ordering::SeqCst);
    let basic = base64::engine::general_purpose::STANDARD.encode("rs:rs-secret");
    if headers.get("authorization").and_then(|v| v.to_str().ok()) != Some(&format!("Basic {basic}"))
    {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "invalid_client"})),
        )
            .into_response();
    }
    match form.get("token").map(String::as_str) {
        Some("opaque-carl") => Json(json!({
            "active": true, "sub": "carl", "scope": "tools", "iss": authority.issuer,
            "aud": authority.resource.lock().unwrap().clone(),
            "exp": now() + 3600,
        }))
        .into_response(),
        _ => Json(json!({"active": false})).into_response(),
    }
}

/// The three tools of the protected servers: one a guest may use, one a user, one an admin;
/// each answers whom it ran for.
fn three_tools() -> Arc<Registry> {
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    for (name, level) in [
        ("open_tool", Permission::Guest),
        ("user_tool", Permission::User),
        ("admin_tool", Permission::Admin),
    ] {
        let spec = ToolSpec::builder(name)
            .description("A tool of the test.")
            .permission(level)
            .build()
            .unwrap();
        let handler = ToolHandler::new(move |_: Value, ctx: Ctx| async move {
            Ok::<_, String>(format!(
                "{name} for {}",
                ctx.scope().user_id().unwrap_or("?")
            ))
        });
        registry.register(spec, handler).unwrap();
    }
    registry
}

/// The authorization server, and the protected MCP server of three tools (one a guest may
/// use, one a user, one an admin) whose `[oauth]` table maps the `research` group to admin.
async fn protected(extra: &str) -> (Shared, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let authority = Arc::new(Authority {
        issuer: issuer.clone(),
        signing: EncodingKey::from_ec_pem(&fixture("signing.pem")).unwrap(),
        rotated: EncodingKey::from_ec_pem(&fixture("rotated.pem")).unwrap(),
        published: Mutex::new(Vec::new()),
        fetched: AtomicUsize::new(0),
        introspected: AtomicUsize::new(0),
        lifetime: std::sync::atomic::AtomicU64::new(3600),
        refreshed: AtomicUsize::new(0),
        resource: Mutex::new(String::new()),
        codes: Mutex::new(HashMap::new()),
    });
    authority.publish(&authority.signing, "signing");
    let router = Router::new()
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/jwks", get(jwks))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/introspect", post(introspect))
        .with_state(Arc::clone(&authority));
    tokio::spawn(async move { axum::serve(listener, router).await });

    let registry = three_tools();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    *authority.resource.lock().unwrap() = url.clone();
    let extra = extra.replace("ISSUER", &issuer);
    let callers = Callers::from_toml(&format!(
        r#"
        [oauth]
        resource = "{url}"
        authorization_servers = ["{issuer}"]
        jwks_uri = "{issuer}/jwks"
        scopes_supported = ["tools", "admin"]
        required_scopes = ["tools"]
        {extra}

        [[oauth.role]]
        claim = "groups"
        value = "research"
        level = "admin"
        "#
    ))
    .unwrap();
    let origins = vec![format!("http://127.0.0.1:{port}")];
    let router = McpServer::new(registry, Scope::guest()).router(callers, origins);
    tokio::spawn(async move {
        axum::serve(
            listener,
            router.into_make_service_with_connect_info::<std::net::SocketAddr>(),
        )
        .await
    });
    (authority, url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdks_oauth_client_gets_a_token_and_the_tools_its_claims_map_to() {
    let python = venv::python(&venv::MCP_SDK);
    let (authority, url) = protected("").await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_oauth.py");
    let output = tokio::task::spawn_blocking(move || {
        Command::new(python).arg(script).arg(&url).output().unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("resource_metadata=") && stdout.contains("scope=\"tools\""),
        "{stdout}"
    );
    // `ann` is in the research group: an admin, who sees the admin's tool too.
    assert!(
        stdout.contains("tools: admin_tool,open_tool,user_tool"),
        "{stdout}\n{stderr}"
    );
    assert!(stdout.contains("all checks passed"), "{stdout}");
    assert!(
        authority.fetched.load(Ordering::SeqCst) >= 1,
        "the keys were fetched"
    );
}

/// `tools/list` with `token`: the status, the challenge and the body.
async fn list_with(url: &str, token: &str) -> (u16, String, String, Duration) {
    let http = reqwest::Client::new();
    let started = Instant::now();
    let answer = http
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            }}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    let took = started.elapsed();
    let status = answer.status().as_u16();
    let challenge = answer
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge, answer.text().await.unwrap(), took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_tokens_are_refused_with_a_reason_and_nothing_of_the_tools() {
    let (authority, url) = protected("keys_refetch_seconds = 1").await;
    let good = authority.claims("bob", "tools", &url);
    let signed = |claims: &Value| authority.sign(&authority.signing, "signing", claims);
    let with = |change: &dyn Fn(&mut Value)| {
        let mut claims = good.clone();
        change(&mut claims);
        signed(&claims)
    };

    // A good token first: `bob` is a user, who sees two tools.
    let (status, _, body, _) = list_with(&url, &signed(&good)).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("user_tool") && !body.contains("admin_tool"),
        "{body}"
    );
    let fetched = authority.fetched.load(Ordering::SeqCst);

    let public = fixture("signing.pub.pem");
    let hmac = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &good,
        &EncodingKey::from_secret(&public),
    )
    .unwrap();
    let b64 =
        |value: &Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string());
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&good)
    );
    let hostile: Vec<(&str, String, &str)> = vec![
        (
            "wrong audience",
            with(&|c| c["aud"] = json!("https://elsewhere.example/mcp")),
            "another resource",
        ),
        (
            "another resource of this host",
            with(&|c| c["aud"] = json!(url.replace("/mcp", "/other"))),
            "another resource",
        ),
        (
            "wrong issuer",
            with(&|c| c["iss"] = json!("https://evil.example")),
            "does not trust",
        ),
        (
            "expired",
            with(&|c| c["exp"] = json!(now() - 3600)),
            "expired",
        ),
        (
            "not yet valid",
            with(&|c| c["nbf"] = json!(now() + 3600)),
            "not valid yet",
        ),
        ("alg none", none, "not a JWT this server reads"),
        ("HMAC with the public key", hmac, "does not take"),
        (
            "unknown key id",
            authority.sign(&authority.rotated, "rotated", &good),
            "does not publish",
        ),
        ("50 KB", "a".repeat(50 * 1024), "longer than"),
        (
            "unknown token",
            "not-a-token-at-all".to_owned(),
            "not a JWT",
        ),
    ];
    let mut timings = Vec::new();
    for (what, token, reason) in &hostile {
        let (status, challenge, body, took) = list_with(&url, token).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(
            challenge.contains("error=\"invalid_token\""),
            "{what}: {challenge}"
        );
        assert!(
            challenge.contains("resource_metadata="),
            "{what}: {challenge}"
        );
        assert!(
            challenge.contains("error_description=") && challenge.contains(reason),
            "{what}: {challenge}"
        );
        for tool in ["open_tool", "user_tool", "admin_tool"] {
            assert!(
                !body.contains(tool) && !challenge.contains(tool),
                "{what}: {body}"
            );
        }
        timings.push((what.to_string(), took));
    }
    // The unknown key prompted one fetch of the keys; a second within the interval, none.
    assert_eq!(authority.fetched.load(Ordering::SeqCst), fetched + 1);
    let (status, _, _, _) =
        list_with(&url, &authority.sign(&authority.rotated, "another", &good)).await;
    assert_eq!(status, 401);
    assert_eq!(
        authority.fetched.load(Ordering::SeqCst),
        fetched + 1,
        "rate-limited"
    );

    // Without a token: the challenge alone, no error.
    let (status, challenge, _, _) = list_with(&url, "").await;
    assert_eq!(status, 401);
    assert!(challenge.starts_with("Bearer "), "{challenge}");

    // A token without the required scope: 403 insufficient_scope.
    let (status, challenge, _, _) = list_with(&url, &with(&|c| c["scope"] = json!("other"))).await;
    assert_eq!(status, 403);
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );

    // The rotated key, once published, is taken after the refetch interval.
    authority.publish(&authority.rotated, "rotated");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, _, body, _) =
        list_with(&url, &authority.sign(&authority.rotated, "rotated", &good)).await;
    assert_eq!(status, 200, "{body}");

    // Each refusal's time, for the record (the keys are held in memory; none waits on them).
    for (what, took) in timings {
        eprintln!("{what}: {} µs", took.as_micros());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_mounts_the_protected_server_with_client_credentials() {
    let (_authority, url) = protected("").await;
    let gateway = Arc::new(Registry::builder().without_linked().build().unwrap());
    let refused = McpModule::connect(gateway.clone(), "remote", &url, None).await;
    assert!(
        refused.is_err(),
        "a server that wants a token refuses a module without one"
    );
    let module = McpModule::connect_oauth(
        gateway.clone(),
        "remote",
        &url,
        OAuth::client_credentials("gateway", "gateway-secret"),
    )
    .await
    .unwrap();
    assert_eq!(module.tools(), ["remote.open_tool", "remote.user_tool"]);
    let ctx = Ctx::for_scope(Scope::trusted());
    let result = gateway.call("remote.user_tool", "{}", &ctx).await.unwrap();
    assert!(
        result.content.to_string().contains("user_tool for gateway"),
        "{}",
        result.content
    );
    let wrong = McpModule::connect_oauth(
        gateway,
        "wrong",
        &url,
        OAuth::client_credentials("gateway", "not-the-secret"),
    )
    .await;
    let error = wrong.err().unwrap().to_string();
    assert!(error.contains("client credentials"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opaque_token_is_asked_about_at_the_introspection_endpoint_and_the_answer_kept() {
    let (authority, url) = protected(
        "[oauth.introspection]\nendpoint = \"ISSUER/introspect\"\nclient_id = \"rs\"\nclient_secret = \"rs-secret\"",
    )
    .await;
    let (status, _, body, _) = list_with(&url, "opaque-carl").await;
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains("user_tool") && !body.contains("admin_tool"),
        "{body}"
    );
    let (status, _, _, _) = list_with(&url, "opaque-carl").await;
    assert_eq!(status, 200);
    assert_eq!(
        authority.introspected.load(Ordering::SeqCst),
        1,
        "the answer was kept"
    );
    let (status, challenge, body, _) = list_with(&url, "opaque-mallory").await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.contains("not active"), "{challenge}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_reaches_a_protected_module_with_client_credentials() {
    use tool_registry::http::oauth::ResourceServer;
    use tool_registry::http::{
        ClientCredentials, Gateway, MemoryManifestCache, Module, ModuleMap, Server,
    };
    // The authorization server of `protected`; its MCP server is not used here.
    let (authority, _) = protected("").await;
    let issuer = authority.issuer.clone();
    let module = |owner_rule: &'static str| {
        let issuer = issuer.clone();
        async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
            let oauth = ResourceServer::from_toml(&format!(
                "[oauth]\nresource = \"{url}\"\nauthorization_servers = [\"{issuer}\"]\njwks_uri = \"{issuer}/jwks\"\nrequired_scopes = [\"tools\"]\n{owner_rule}"
            ))
            .unwrap()
            .unwrap();
            let server = Server::new(three_tools()).name("kb").oauth(oauth);
            tokio::spawn(server.serve_on(listener, std::future::pending()));
            url
        }
    };

    // Without a token: 401 with the challenge, and nothing of the manifest.
    let plain = module("").await;
    let answer = reqwest::get(format!("{plain}/manifest")).await.unwrap();
    assert_eq!(answer.status(), 401);
    let challenge = answer.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert!(challenge.contains("resource_metadata="), "{challenge}");
    assert!(!answer.text().await.unwrap().contains("open_tool"));
    let metadata: Value = reqwest::get(format!("{plain}/.well-known/oauth-protected-resource"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(metadata["resource"], json!(plain));

    // A gateway of the module at `url` with `credentials`: its registry, and what `start` said.
    let gateway = |url: String, credentials: ClientCredentials| async move {
        let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
        let map = ModuleMap::new().with("kb", Module::new(url).oauth(credentials));
        let gateway = Gateway::builder(registry.clone(), map)
            .cache(MemoryManifestCache::new())
            .build()
            .unwrap();
        let statuses = gateway.start().await;
        (registry, statuses)
    };
    let ctx = Ctx::for_scope(Scope::user("alice").with_level(Permission::Admin));
    let credentials = ClientCredentials::new("gateway", "gateway-secret").scopes(["tools"]);
    // The gateway's client is a user there: calls run as `gateway`, who sees no admin tool.
    let (registry, statuses) = gateway(plain.clone(), credentials.clone()).await;
    assert!(statuses[0].error.is_none(), "{statuses:?}");
    let result = registry.call("kb.user_tool", "{}", &ctx).await.unwrap();
    assert!(
        result.content.to_string().contains("user_tool for gateway"),
        "{}",
        result.content
    );
    let refused = registry
        .call("kb.admin_tool", "{}", &ctx)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("admin_tool"), "{refused}");

    // Where the rules make the gateway's client an owner, each call runs as the user it names.
    let trusting =
        module("[[oauth.role]]\nclaim = \"sub\"\nvalue = \"gateway\"\nlevel = \"owner\"").await;
    let (registry, statuses) = gateway(trusting, credentials).await;
    assert!(statuses[0].error.is_none(), "{statuses:?}");
    let result = registry.call("kb.admin_tool", "{}", &ctx).await.unwrap();
    assert!(
        result.content.to_string().contains("admin_tool for alice"),
        "{}",
        result.content
    );

    // Wrong credentials: the module cannot be reached, and the reason says why.
    let wrong = ClientCredentials::new("gateway", "not-the-secret");
    let (_, statuses) = gateway(plain, wrong).await;
    let error = statuses[0].error.clone().unwrap_or_default();
    assert!(error.contains("refused the client credentials"), "{error}");
}

/// A browser that is a person: it opens the authorization URL and follows every redirect, which
/// ends at `LoopbackBrowser`'s listener; the listener hears the code.
struct Person(tool_registry::mcp::oauth::LoopbackBrowser);

impl tool_registry::mcp::oauth::Browser for Person {
    fn visit(&self, url: String) -> futures::future::BoxFuture<'static, Result<String, String>> {
        let listening = self.0.visit(url.clone());
        Box::pin(async move {
            let person = tokio::spawn(async move {
                // The listener binds before it prints; a moment for it.
                tokio::time::sleep(Duration::from_millis(200)).await;
                reqwest::get(url)
                    .await
                    .map(|answer| answer.status().as_u16())
            });
            let back = listening.await;
            assert_eq!(
                person.await.unwrap().unwrap(),
                200,
                "the person saw the listener's page"
            );
            back
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_authorizes_a_module_through_the_loopback_redirect() {
    let (authority, url) = protected("").await;
    // Tokens of 2 s: the module refreshes before its next call once one has run out.
    authority.lifetime.store(2, Ordering::SeqCst);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let redirect = format!("http://127.0.0.1:{port}/callback");
    let tokens = tempfile::tempdir().unwrap();
    let file = tokens.path().join("remote.json");
    let oauth = OAuth::authorization_code(
        redirect,
        Person(tool_registry::mcp::oauth::LoopbackBrowser::new()),
    )
    .store(tool_registry::mcp::oauth::TokenFile::new(&file));
    let gateway = Arc::new(Registry::builder().without_linked().build().unwrap());
    let module = McpModule::connect_oauth(gateway.clone(), "remote", &url, oauth)
        .await
        .unwrap();
    // `ann`, in the research group: an admin there.
    assert_eq!(
        module.tools(),
        ["remote.admin_tool", "remote.open_tool", "remote.user_tool"]
    );
    let kept = std::fs::read_to_string(&file).unwrap();
    assert!(
        kept.contains("access_token"),
        "the token file holds the token"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let ctx = Ctx::for_scope(Scope::trusted());
    let result = gateway.call("remote.admin_tool", "{}", &ctx).await.unwrap();
    assert!(
        result.content.to_string().contains("admin_tool for ann"),
        "{}",
        result.content
    );
    assert_eq!(
        authority.refreshed.load(Ordering::SeqCst),
        1,
        "the token was refreshed once"
    );
    authority.lifetime.store(3600, Ordering::SeqCst);
    drop(module);

    // Another run with the same file: the tokens kept are used, no one is sent to authorize.
    struct Nobody;
    impl tool_registry::mcp::oauth::Browser for Nobody {
        fn visit(&self, _: String) -> futures::future::BoxFuture<'static, Result<String, String>> {
            Box::pin(async { Err("no one is there to authorize".to_owned()) })
        }
    }
    let again = OAuth::authorization_code("http://127.0.0.1:9/callback", Nobody)
        .store(tool_registry::mcp::oauth::TokenFile::new(&file));
    let gateway = Arc::new(Registry::builder().without_linked().build().unwrap());
    let module = McpModule::connect_oauth(gateway, "remote", &url, again)
        .await
        .unwrap();
    assert_eq!(module.tools().len(), 3);
}

/// A POST of `body` to `url` with `token` and, if any, the session `session`: the status and
/// the session id the answer names.
async fn post_in_session(
    url: &str,
    token: &str,
    session: Option<&str>,
    body: Value,
) -> (u16, Option<String>) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("authorization", format!("Bearer {token}"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let answer = request.send().await.unwrap();
    let id = answer
        .headers()
        .get("mcp-session-id")
        .map(|value| value.to_str().unwrap().to_owned());
    (answer.status().as_u16(), id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_is_its_users_and_another_users_token_is_answered_as_for_an_unknown_one() {
    let (authority, url) = protected("").await;
    let token = |sub: &str| {
        authority.sign(
            &authority.signing,
            "signing",
            &authority.claims(sub, "tools", &url),
        )
    };
    let (bob, carl) = (token("bob"), token("carl"));
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}});
    let (status, session) = post_in_session(&url, &bob, None, initialize).await;
    assert_eq!(status, 200);
    let session = session.expect("a session was opened");
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = post_in_session(&url, &bob, Some(&session), initialized).await;
    assert_eq!(status, 202);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (status, _) = post_in_session(&url, &carl, Some(&session), list.clone()).await;
    assert_eq!(
        status, 404,
        "another user's token does not reach the session"
    );
    let (status, _) = post_in_session(&url, &bob, Some(&session), list).await;
    assert_eq!(status, 200, "its own user's does");
}
