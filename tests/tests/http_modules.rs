//! HTTP tool modules across real processes on loopback: two module servers (this crate's
//! `module` binary, on free ports) and a gateway registry in the test.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_registry::Listing;
use tool_registry::format::Provider;
use tool_registry::http::{Gateway, MemoryManifestCache, Module, ModuleMap, Source};
use tool_registry::{Ctx, Registry, Scope, ToolError};

const SECRET: &str = "module-secret-for-tests";

/// A module server process, killed when dropped (also when a test fails).
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    /// `module [scope flags] serve --http ADDR --module NAME`, with the secret unless `token`
    /// is empty; waits for the address it prints.
    fn start(name: &str, scope: &[&str], addr: &str, token: &str, dir: &Path) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_module"));
        command
            .args(scope)
            .args(["serve", "--http", addr, "--module", name])
            .current_dir(dir)
            .env("TOOLREG_MODULE_TOKEN", token)
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().expect("the module binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the module prints its address");
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the module did not start: {line:?}"))
            .to_owned();
        Self { child, addr }
    }

    fn port(&self) -> String {
        self.addr.rsplit(':').next().unwrap().to_owned()
    }

    /// SIGTERM, as a service manager stops it.
    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `util` module: every `util.*` tool, trusting the secret.
fn util_module(dir: &Path) -> Server {
    Server::start("util", &["--modules", "util"], "127.0.0.1:0", SECRET, dir)
}

/// The `lab` module: the research and code-executor tools up to admin level (`run_shell`),
/// trusting the secret.
fn lab_module(dir: &Path) -> Server {
    Server::start(
        "lab",
        &["--modules", "research,code_executor", "--level", "admin"],
        "127.0.0.1:0",
        SECRET,
        dir,
    )
}

fn map_of(modules: &[(&str, &Server)]) -> ModuleMap {
    modules
        .iter()
        .fold(ModuleMap::new(), |map, (name, server)| {
            map.with(*name, Module::new(&server.addr).token(SECRET))
        })
}

fn gateway_registry() -> Arc<Registry> {
    Arc::new(Registry::builder().without_linked().build().unwrap())
}

/// Serves `app` on a free loopback port: its address, and the task serving it.
async fn serve(app: axum::Router) -> (String, tokio::task::JoinHandle<()>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (addr, task)
}

/// A gateway's registry with `modules` mounted (manifests cached in memory), and what the
/// start found of each module.
async fn mount(modules: ModuleMap) -> (Arc<Registry>, Vec<tool_registry::http::ModuleStatus>) {
    let registry = gateway_registry();
    let status = Gateway::builder(registry.clone(), modules)
        .cache(MemoryManifestCache::new())
        .build()
        .unwrap()
        .start()
        .await;
    (registry, status)
}

fn names(registry: &Registry, scope: &Scope) -> Vec<String> {
    registry
        .tools(scope)
        .iter()
        .map(|tool| tool.name().to_owned())
        .collect()
}

async fn call(
    registry: &Registry,
    name: &str,
    args: Value,
    scope: Scope,
) -> Result<Value, ToolError> {
    let ctx = Ctx::for_scope(scope);
    registry
        .call(name, args, &ctx)
        .await
        .map(|result| result.content)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modules_list_as_module_tool_with_scopes_and_route_calls_for_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let util = util_module(dir.path());
    let lab = lab_module(dir.path());
    let registry = gateway_registry();
    let gateway = Gateway::builder(registry.clone(), map_of(&[("util", &util), ("lab", &lab)]))
        .cache(MemoryManifestCache::new())
        .build()
        .unwrap();
    let statuses = gateway.start().await;
    assert!(
        statuses
            .iter()
            .all(|s| s.source == Source::Fetched && s.error.is_none()),
        "{statuses:?}"
    );

    let all = names(&registry, &Scope::trusted());
    for expected in [
        "lab.research.web_search",
        "lab.code_executor.run_python",
        "lab.code_executor.run_shell",
        "util.util.identity",
        "util.util.linger",
    ] {
        assert!(all.contains(&expected.to_owned()), "{expected} in {all:?}");
    }
    assert!(
        all.iter()
            .all(|name| name.starts_with("util.") || name.starts_with("lab."))
    );

    // Permission levels apply to remote tools as to local ones.
    let guest = names(&registry, &Scope::guest());
    assert!(guest.contains(&"lab.research.web_search".to_owned()));
    assert!(!guest.contains(&"lab.code_executor.run_python".to_owned()));
    let user = names(&registry, &Scope::user("bob"));
    assert!(user.contains(&"lab.code_executor.run_python".to_owned()));
    assert!(!user.contains(&"lab.code_executor.run_shell".to_owned()));
    // The module rule: a caller limited to `util` sees no `lab` tool and cannot run one.
    let util_only = Scope::user("bob").with_modules(["util"]);
    assert!(
        names(&registry, &util_only)
            .iter()
            .all(|n| n.starts_with("util."))
    );
    let refused = call(
        &registry,
        "lab.research.web_search",
        json!({"query": "x"}),
        util_only,
    )
    .await;
    assert_eq!(refused.unwrap_err().code(), "unknown_tool");

    // Provider formats carry the wire names.
    let openai = registry.provider_tools(Provider::OpenAi, &Scope::user("bob"));
    let wire: Vec<&str> = openai
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(wire.contains(&"lab__research__web_search"), "{wire:?}");

    // The call reaches the module for the caller's user and level.
    let who = call(
        &registry,
        "util.util.identity",
        json!({}),
        Scope::user("bob"),
    )
    .await
    .unwrap();
    assert_eq!(who, json!({"user": "bob", "level": "user"}));
    let admin = Scope::user("ann").with_level(tool_registry::Permission::Admin);
    let who = call(&registry, "util.util.identity", json!({}), admin.clone())
        .await
        .unwrap();
    assert_eq!(who, json!({"user": "ann", "level": "admin"}));
    // A tool that needs a person's approval asks at the gateway; once approved there, the
    // module runs it without asking again.
    let asked = call(
        &registry,
        "lab.code_executor.run_shell",
        json!({"command": "ls"}),
        admin.clone(),
    )
    .await;
    let Err(ToolError::NeedsApproval { token, .. }) = asked else {
        panic!("{asked:?}")
    };
    let ran = registry
        .approve(&token, &Ctx::for_scope(admin))
        .await
        .unwrap();
    assert_eq!(ran.content, json!("would run `ls`"));
    let hits = call(
        &registry,
        "lab.research.web_search",
        json!({"query": "rust"}),
        Scope::guest(),
    )
    .await
    .unwrap();
    assert_eq!(hits[0]["title"], "rust #1");

    // Bad arguments are refused by the gateway's copy of the schema, with the path.
    let bad = call(
        &registry,
        "util.util.linger",
        json!({"ms": "soon"}),
        Scope::user("bob"),
    )
    .await
    .unwrap_err();
    assert_eq!(bad.code(), "invalid_arguments");

    // Names no module gives: no `.` at all, or a module not in the map, are unknown tools.
    for name in ["identity", "nowhere.util.identity", "util.util.nothing"] {
        let error = call(&registry, name, json!({}), Scope::user("bob"))
            .await
            .unwrap_err();
        assert_eq!(error.code(), "unknown_tool", "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cache_lists_modules_at_a_restart_until_its_ttl_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("manifests.json");
    let util = util_module(dir.path());
    let map = map_of(&[("util", &util)]);
    let first = Gateway::builder(gateway_registry(), map.clone())
        .cache_file(&cache)
        .ttl(Duration::from_secs(2))
        .build()
        .unwrap();
    assert_eq!(first.start().await[0].source, Source::Fetched);
    drop(util);

    // A restart within the TTL lists the module from the cache, without reaching it.
    let registry = gateway_registry();
    let second = Gateway::builder(registry.clone(), map.clone())
        .cache_file(&cache)
        .ttl(Duration::from_secs(2))
        .build()
        .unwrap();
    let started = Instant::now();
    let status = second.start().await;
    assert_eq!(status[0].source, Source::Cache);
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        registry
            .get("util.util.identity", Listing::every())
            .is_some()
    );
    // Listed, but the module is gone: the call says so.
    let error = call(
        &registry,
        "util.util.identity",
        json!({}),
        Scope::user("bob"),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), "module_unreachable", "{error}");
    assert!(error.to_string().contains("connection refused"), "{error}");

    // After the TTL the cache is not used: the module is fetched, and left out when down.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let registry = gateway_registry();
    let third = Gateway::builder(registry.clone(), map)
        .cache_file(&cache)
        .ttl(Duration::from_secs(2))
        .build()
        .unwrap();
    let status = third.start().await;
    assert_eq!(status[0].source, Source::None);
    assert!(
        status[0]
            .error
            .as_deref()
            .unwrap()
            .contains("connection refused")
    );
    assert!(
        registry
            .get("util.util.identity", Listing::every())
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_down_leaves_the_other_working_and_comes_back_after_a_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let util = util_module(dir.path());
    let lab = lab_module(dir.path());
    let registry = gateway_registry();
    let gateway = Gateway::builder(registry.clone(), map_of(&[("util", &util), ("lab", &lab)]))
        .cache(MemoryManifestCache::new())
        .build()
        .unwrap();
    gateway.start().await;
    let port = lab.port();
    drop(lab);

    let status = gateway.refresh().await;
    let lab_status = status.iter().find(|s| s.name == "lab").unwrap();
    assert_eq!(lab_status.tools, 0);
    assert!(lab_status.error.is_some());
    let listed = names(&registry, &Scope::user("bob"));
    assert!(listed.iter().all(|n| n.starts_with("util.")), "{listed:?}");
    let who = call(
        &registry,
        "util.util.identity",
        json!({}),
        Scope::user("bob"),
    )
    .await
    .unwrap();
    assert_eq!(who["user"], "bob");

    // The module comes back on its address; the next refresh lists it again.
    let lab = Server::start(
        "lab",
        &["--modules", "research,code_executor", "--level", "admin"],
        &format!("127.0.0.1:{port}"),
        SECRET,
        dir.path(),
    );
    let status = gateway.refresh().await;
    assert!(
        status.iter().all(|s| s.error.is_none() && s.tools > 0),
        "{status:?}"
    );
    let hits = call(
        &registry,
        "lab.research.web_search",
        json!({"query": "back"}),
        Scope::user("bob"),
    )
    .await
    .unwrap();
    assert_eq!(hits[0]["title"], "back #1");
    drop(lab);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_module_times_out_with_its_own_limit() {
    let dir = tempfile::tempdir().unwrap();
    let util = util_module(dir.path());
    let map = ModuleMap::new().with(
        "util",
        Module::new(&util.addr)
            .token(SECRET)
            .timeout(Duration::from_millis(500)),
    );
    let registry = gateway_registry();
    Gateway::builder(registry.clone(), map)
        .cache(MemoryManifestCache::new())
        .build()
        .unwrap()
        .start()
        .await;
    let started = Instant::now();
    let error = call(
        &registry,
        "util.util.linger",
        json!({"ms": 5000}),
        Scope::user("bob"),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code(), "timed_out", "{error}");
    assert!(started.elapsed() < Duration::from_secs(4));
    // A call within the limit still answers.
    let done = call(
        &registry,
        "util.util.linger",
        json!({"ms": 10}),
        Scope::user("bob"),
    )
    .await
    .unwrap();
    assert_eq!(done, json!(10));
    // The default limits of the design.
    assert_eq!(
        Module::new("http://127.0.0.1:1").call_timeout(),
        Duration::from_secs(30)
    );
    assert_eq!(
        Module::new("http://127.0.0.1:1").slow(true).call_timeout(),
        Duration::from_secs(120)
    );
}

/// A stand-in module that serves a manifest and answers every call with an HTTP error.
/// A module answering every call with `status` and `body`, and the sender that stops it: its
/// task ends once every connection is closed, so that a client's pooled connection cannot
/// outlive it.
async fn failing_module(
    status: u16,
    body: &'static str,
) -> (
    String,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    use axum::routing::{get, post};
    let manifest = json!({
        "name": "broken",
        "tools": [{
            "tool_name": "broken.echo",
            "description": "Echo.",
            "input_schema": {"type": "object"},
            "annotations": {"idempotent": true},
        }],
    })
    .to_string();
    let app = axum::Router::new()
        .route("/manifest", get(move || async move { manifest }))
        .route(
            "/execute",
            post(move || async move { (axum::http::StatusCode::from_u16(status).unwrap(), body) }),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    (addr, stop, task)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failure_of_a_forwarded_call_is_a_typed_error() {
    // An HTTP error status: the code and the start of the body.
    let long = "internal trouble ".repeat(40).leak();
    let (addr, stop, task) = failing_module(500, long).await;
    let registry = gateway_registry();
    let gateway = Gateway::builder(
        registry.clone(),
        ModuleMap::new().with("broken", Module::new(&addr)),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap();
    gateway.start().await;
    let error = call(&registry, "broken.echo", json!({}), Scope::guest())
        .await
        .unwrap_err();
    match tool_registry::http::ModuleError::of(&error) {
        Some(tool_registry::http::ModuleError::Status {
            status,
            body,
            module,
            ..
        }) => {
            assert_eq!(status, 500);
            assert_eq!(module, "broken");
            assert!(body.starts_with("internal trouble"));
            assert!(body.chars().count() <= 201, "{body}");
        }
        other => panic!("{other:?} in {error:?}"),
    }
    // Stopped, its connections closed: connection refused, after one retry of an idempotent
    // tool.
    let _ = stop.send(());
    task.await.unwrap();
    let error = call(&registry, "broken.echo", json!({}), Scope::guest())
        .await
        .unwrap_err();
    assert_eq!(error.code(), "module_unreachable");
    assert!(error.to_string().contains("connection refused"), "{error}");
    assert!(
        !error.to_string().contains("127.0.0.1"),
        "no address in what a model reads: {error}"
    );

    // A module that cannot be reached at discovery is left out with the reason.
    let registry = gateway_registry();
    let gateway = Gateway::builder(
        registry.clone(),
        ModuleMap::new().with("gone", Module::new("http://127.0.0.1:1")),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap();
    let status = gateway.start().await;
    assert_eq!(status[0].error.as_deref(), Some("connection refused"));
    assert!(registry.is_empty());

    // A module map that names no usable address or module is refused when read.
    assert!(ModuleMap::from_toml("[modules.x]\nurl = \"ftp://h\"").is_err());
    assert!(ModuleMap::from_toml("[modules.\"a.b\"]\nurl = \"http://h:1\"").is_err());
    assert!(ModuleMap::from_toml("[modules.x]\nurl = \"http://h:1\"\nsecret = \"typo\"").is_err());
}

async fn post(addr: &str, token: Option<&str>, body: impl Into<reqwest::Body>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
        .post(format!("{addr}/execute"))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_module_refuses_bad_requests_and_treats_a_client_without_the_secret_as_a_guest() {
    let dir = tempfile::tempdir().unwrap();
    let lab = lab_module(dir.path());
    let addr = &lab.addr;

    // Malformed, mistyped, incomplete and oversized requests: typed error bodies.
    let (status, body) = post(addr, Some(SECRET), "{\"tool_name\": ").await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_arguments"))
    );
    let (status, body) = post(addr, Some(SECRET), r#"{"tool_name": 7}"#).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("invalid_arguments"))
    );
    let (status, _) = post(addr, Some(SECRET), r#"{"arguments": {}}"#).await;
    assert_eq!(status, 422);
    let huge = format!(
        r#"{{"tool_name": "lab.research.web_search", "arguments": {{"query": "{}"}}}}"#,
        "a".repeat(2 << 20)
    );
    let (status, body) = post(addr, Some(SECRET), huge).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (413, Some("arguments_too_large"))
    );
    let deep = format!(
        r#"{{"tool_name": "lab.research.web_search", "arguments": {{"query": {}{}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let (status, body) = post(addr, Some(SECRET), deep).await;
    assert_eq!(status, 200);
    assert_eq!(
        body["content"]["error"]["code"], "arguments_too_deep",
        "{body}"
    );

    // Without the secret, the caller is a guest whatever it claims.
    let claim = json!({"tool_name": "lab.code_executor.run_shell", "arguments": {"command": "id"}, "user_id": "root", "level": "owner"});
    let (status, body) = post(addr, None, claim.to_string()).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("unknown_tool"))
    );
    let (status, body) = post(addr, Some("wrong secret"), claim.to_string()).await;
    assert_eq!(status, 404, "{body}");
    // With it, the user and level are believed, and every gate of the module applies: this
    // tool waits for approval, and the token of that answer runs it once.
    let (status, body) = post(addr, Some(SECRET), claim.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(body["content"]["error"]["code"], "needs_approval", "{body}");
    assert_eq!(body["audit"]["user"], "root");
    let mut approved = claim.clone();
    approved["approval_token"] = body["content"]["error"]["token"].clone();
    let (status, body) = post(addr, Some(SECRET), approved.to_string()).await;
    assert_eq!(
        (status, body["content"].as_str()),
        (200, Some("would run `id`")),
        "{body}"
    );
    let (_, again) = post(addr, Some(SECRET), approved.to_string()).await;
    assert_eq!(
        again["content"]["error"]["code"], "approval_refused",
        "a token runs once: {again}"
    );
    let manifest: Value = reqwest::get(format!("{addr}/manifest"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let listed: Vec<&str> = manifest["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["tool_name"].as_str().unwrap())
        .collect();
    assert!(listed.contains(&"lab.research.web_search"));
    assert!(
        !listed.iter().any(|n| n.contains("code_executor")),
        "{listed:?}"
    );

    // A guest cannot tell a tool it may not see from one that does not exist.
    let hidden = post(
        addr,
        None,
        json!({"tool_name": "lab.code_executor.run_shell", "arguments": {}}).to_string(),
    )
    .await;
    let missing = post(
        addr,
        None,
        json!({"tool_name": "lab.code_executor.run_shelx", "arguments": {}}).to_string(),
    )
    .await;
    assert_eq!(hidden.0, missing.0);
    let same = serde_json::to_string(&missing.1)
        .unwrap()
        .replace("run_shelx", "run_shell");
    assert_eq!(serde_json::to_string(&hidden.1).unwrap(), same);
    // The same through a gateway without the secret.
    let registry = gateway_registry();
    Gateway::builder(
        registry.clone(),
        ModuleMap::new().with("lab", Module::new(addr)),
    )
    .cache(MemoryManifestCache::new())
    .build()
    .unwrap()
    .start()
    .await;
    assert!(
        registry
            .get("lab.code_executor.run_shell", Listing::every())
            .is_none()
    );
    let ran = call(
        &registry,
        "lab.research.web_search",
        json!({"query": "q"}),
        Scope::trusted(),
    )
    .await;
    assert!(ran.is_ok());

    let health: Value = reqwest::get(format!("{addr}/health"))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(health, json!({"status": "ok", "name": "lab"}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_slow_call_lets_it_finish_and_refuses_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut util = util_module(dir.path());
    let addr = util.addr.clone();
    let slow = {
        let addr = addr.clone();
        tokio::spawn(async move {
            post(
                &addr,
                Some(SECRET),
                json!({"tool_name": "util.util.linger", "arguments": {"ms": 1500}}).to_string(),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    util.terminate();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let refused = reqwest::Client::new()
        .get(format!("{addr}/health"))
        .send()
        .await;
    assert!(
        refused.is_err(),
        "a new connection after SIGTERM is refused"
    );
    let (status, body) = slow.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(body["content"], json!(1500), "{body}");
    let exit = util.child.wait().unwrap();
    assert!(exit.success(), "{exit:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_module_gets_only_its_valid_tools_listed_and_its_oversized_answers_refused() {
    use axum::routing::{get, post};
    // Options that multiply: validating one wrong value would take minutes.
    let mut defs = serde_json::Map::new();
    for i in 0..8 {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert("d8".to_owned(), json!({"type": "string"}));
    let manifest = json!({
        "name": "evil",
        "tools": [
            {"tool_name": "evil.fine", "description": "Fine.", "input_schema": {"type": "object"}},
            {"tool_name": "evil.bad\nname", "description": "x", "input_schema": {"type": "object"}},
            {"tool_name": "evil.costly", "description": "x", "input_schema": {"type": "object", "properties": {"v": {"$ref": "#/$defs/d0"}}, "$defs": defs}},
            {"tool_name": "evil.unknown_key", "description": "x", "input_schema": {"type": "object"}, "runs_as": "root"},
            {"tool_name": "evil.not_a_schema", "description": "x", "input_schema": {"type": 12}},
            "not even an object",
        ],
    })
    .to_string();
    let huge = "x".repeat(17 << 20);
    let app = axum::Router::new()
        .route("/manifest", get(move || async move { manifest }))
        .route("/execute", post(move || async move { huge }));
    let (addr, task) = serve(app).await;

    let (registry, status) = mount(ModuleMap::new().with("evil", Module::new(&addr))).await;
    assert_eq!(status[0].tools, 1, "{status:?}");
    assert_eq!(names(&registry, &Scope::trusted()), ["evil.fine"]);
    let error = call(&registry, "evil.fine", json!({}), Scope::guest())
        .await
        .unwrap_err();
    assert_eq!(error.code(), "module_unreachable");
    assert!(error.to_string().contains("larger than"), "{error}");
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_fresh_fetches_again_when_the_ttl_runs_out() {
    let dir = tempfile::tempdir().unwrap();
    let util = util_module(dir.path());
    let registry = gateway_registry();
    let gateway = Gateway::builder(registry.clone(), map_of(&[("util", &util)]))
        .cache(MemoryManifestCache::new())
        .ttl(Duration::from_secs(1))
        .build()
        .unwrap();
    gateway.start().await;
    let fetched = gateway.status().await[0].fetched_at.unwrap();
    let refresher = tokio::spawn(gateway.clone().keep_fresh());
    // Fetched again within a few seconds, while the module is up.
    let deadline = Instant::now() + Duration::from_secs(10);
    while gateway.status().await[0].fetched_at == Some(fetched) {
        assert!(Instant::now() < deadline, "not fetched again after the TTL");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        registry
            .get("util.util.identity", Listing::every())
            .is_some()
    );
    // Once the module is gone, the next expiry leaves its tools out.
    drop(util);
    while registry
        .get("util.util.identity", Listing::every())
        .is_some()
    {
        assert!(
            Instant::now() < deadline,
            "the tools of a module gone stayed listed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gateway.status().await[0].error.is_some());
    refresher.abort();
}

/// The smallest PNG signature and header, enough for the MIME check.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";

/// A module served in this process by the library's own server, with one run-time tool that
/// answers a value, an image and a link; its address and server task.
async fn media_module() -> (String, tokio::task::JoinHandle<()>) {
    use tool_registry::ToolSpec;
    use tool_registry::content::{Content, Image, ResourceLink};
    use tool_registry::spec::ToolHandler;
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let spec = ToolSpec::builder("picture")
        .description("A picture and where it comes from.")
        .output_schema(json!({"type": "object", "required": ["width"]}))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|_, _| async {
                Ok::<_, ToolError>(
                    Content::value(json!({"width": 1}))
                        .image(Image::png(PNG))
                        .link(ResourceLink::new("https://example.com/p/1", "picture 1")),
                )
            }),
        )
        .unwrap();
    let app = tool_registry::http::Server::new(registry)
        .name("media")
        .router();
    serve(app).await
}

/// A stand-in module whose one tool, declared with an output schema, answers the result its
/// `case` argument names: a value that breaks the schema, or blocks no module may send.
async fn lying_module() -> (String, tokio::task::JoinHandle<()>) {
    use axum::routing::{get, post};
    let manifest = json!({
        "name": "liar",
        "tools": [{
            "tool_name": "liar.answer",
            "description": "Answers.",
            "input_schema": {"type": "object", "properties": {"case": {"type": "string"}}},
            "output_schema": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
        }],
    })
    .to_string();
    let execute = |axum::Json(request): axum::Json<Value>| async move {
        let image =
            |mime: &str, data: &str| json!({"type": "image", "mimeType": mime, "data": data});
        let blocks = match request["arguments"]["case"].as_str().unwrap_or_default() {
            "wrong_type" => return axum::Json(json!({"success": true, "content": {"n": "many"}})),
            "bad_base64" => json!([image("image/png", "not base64 at all!")]),
            "not_png" => json!([image("image/png", "R0lGODlhAQABAAAAACw=")]),
            "file_link" => {
                json!([{"type": "resource_link", "uri": "file:///etc/shadow", "name": "s"}])
            }
            "unknown_kind" => json!([{"type": "hologram", "data": ""}]),
            _ => json!([]),
        };
        axum::Json(json!({"success": true, "content": {"n": 1}, "blocks": blocks}))
    };
    let app = axum::Router::new()
        .route("/manifest", get(move || async move { manifest }))
        .route("/execute", post(execute));
    serve(app).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_cross_a_module_and_what_breaks_its_promises_is_invalid_output() {
    use tool_registry::content::{Block, BlockKind};
    let (media, media_task) = media_module().await;
    let (liar, liar_task) = lying_module().await;
    let (registry, status) = mount(
        ModuleMap::new()
            .with("media", Module::new(&media))
            .with("liar", Module::new(&liar)),
    )
    .await;
    assert!(status.iter().all(|s| s.error.is_none()), "{status:?}");
    let ctx = Ctx::for_scope(Scope::guest());

    // The image's bytes and the link come through the wire as they left the tool.
    let picture = registry
        .call("media.picture", json!({}), &ctx)
        .await
        .unwrap();
    assert_eq!(picture.content, json!({"width": 1}));
    let kinds: Vec<BlockKind> = picture.blocks.iter().map(Block::kind).collect();
    assert_eq!(kinds, [BlockKind::Image, BlockKind::ResourceLink]);
    match &picture.blocks[0] {
        Block::Image(image) => {
            assert_eq!(image.data().as_ref(), PNG);
            assert_eq!(image.mime_type(), "image/png");
        }
        other => panic!("{other:?}"),
    }
    // The module's declared output schema came with its manifest.
    let tool = registry.get("media.picture", Listing::every()).unwrap();
    assert_eq!(tool.output_schema().unwrap()["required"], json!(["width"]));

    // What the liar answers is checked at the gateway, whatever the module says of it.
    for (case, path, says) in [
        ("wrong_type", "n", "`type` rule"),
        ("bad_base64", "blocks[0]", "invalid base64"),
        ("not_png", "blocks[0]", "not image/png"),
        ("file_link", "blocks[0]", "`file:` scheme"),
        ("unknown_kind", "blocks[0]", "hologram"),
    ] {
        let error = registry
            .call("liar.answer", json!({"case": case}), &ctx)
            .await
            .unwrap_err();
        match &error {
            ToolError::InvalidOutput {
                tool,
                path: at,
                message,
            } => {
                assert_eq!(tool, "liar.answer", "{case}");
                assert_eq!(at, path, "{case}: {message}");
                assert!(message.contains(says), "{case}: {message}");
            }
            other => panic!("{case}: {other:?}"),
        }
    }
    // And the gateway goes on.
    let fine = registry
        .call("liar.answer", json!({"case": "none"}), &ctx)
        .await
        .unwrap();
    assert_eq!(fine.content, json!({"n": 1}));
    media_task.abort();
    liar_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_module_server_and_the_gateway_run_the_same_hooks_as_a_call() {
    let module = Arc::new(tool_registry_tests::hooked_registry());
    let app = tool_registry::http::Server::new(module.clone())
        .name("hooked")
        .router();
    let (addr, server) = serve(app).await;

    let (gateway, status) = mount(ModuleMap::new().with("hooked", Module::new(&addr))).await;
    assert!(status.iter().all(|s| s.error.is_none()), "{status:?}");
    let ctx = Ctx::for_scope(Scope::guest());
    for (mode, code) in tool_registry_tests::HOOK_CASES {
        let body = json!({"tool_name": "echo", "arguments": {"mode": mode}}).to_string();
        let direct = module
            .call("echo", json!({"mode": mode}), &Ctx::new())
            .for_model()
            .await;
        let (_, served) = post(&addr, None, body).await;
        let forwarded = gateway
            .call("hooked.echo", json!({"mode": mode}), &ctx)
            .for_model()
            .await;
        for (front, result) in [
            ("call", serde_json::to_value(&direct).unwrap()),
            ("module server", served),
            ("gateway", serde_json::to_value(&forwarded).unwrap()),
        ] {
            let got = if result["success"] == true {
                "ok"
            } else {
                result["content"]["error"]["code"].as_str().unwrap_or("?")
            };
            assert_eq!(got, code, "{mode} through the {front}: {result}");
            if code == "ok" {
                let text = result["content"].as_str().unwrap();
                assert!(!text.contains("secret"), "{front}: {text}");
                if mode == "secret" {
                    assert!(text.contains("[redacted]"), "{front}: {text}");
                }
            }
        }
    }
    server.abort();
}

/// Dropped with the future of a call of `hang`: says the call was dropped.
struct Dropped(Arc<std::sync::atomic::AtomicBool>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

/// A module whose tools may run as tasks (`slow`, 600 ms, `task = "optional"`; `hang`, a
/// minute, `task = "required"`), tasks made after 100 ms; its address, its tasks, and whether a
/// call of `hang` was dropped.
async fn task_module() -> (
    String,
    tool_registry::task::Tasks,
    Arc<std::sync::atomic::AtomicBool>,
) {
    use tool_registry::ToolSpec;
    use tool_registry::spec::ToolHandler;
    use tool_registry::task::{InMemoryTaskStore, TaskLimits, TaskSupport, Tasks};
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let slow = ToolSpec::builder("slow")
        .description("Answers after 600 ms.")
        .task(TaskSupport::Optional)
        .build()
        .unwrap();
    registry
        .register(
            slow,
            ToolHandler::new(|args: Value, _| async move {
                tokio::time::sleep(Duration::from_millis(600)).await;
                Ok::<_, ToolError>(json!({"echo": args["word"]}))
            }),
        )
        .unwrap();
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let hang = ToolSpec::builder("hang")
        .description("Answers after a minute.")
        .task(TaskSupport::Required)
        .build()
        .unwrap();
    let flag = dropped.clone();
    registry
        .register(
            hang,
            ToolHandler::new(move |_: Value, _| {
                let guard = Dropped(flag.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(60)).await;
                    drop(guard);
                    Ok::<_, ToolError>(json!("late"))
                }
            }),
        )
        .unwrap();
    let limits = TaskLimits {
        after: Duration::from_millis(100),
        poll_interval: Duration::from_millis(50),
        ..TaskLimits::default()
    };
    let tasks = Tasks::new(Arc::new(InMemoryTaskStore::new()), limits);
    let app = tool_registry::http::Server::new(registry)
        .name("jobs")
        .token(SECRET)
        .tasks(tasks.clone())
        .router();
    let (addr, _) = serve(app).await;
    (addr, tasks, dropped)
}

async fn post_to(addr: &str, path: &str, body: Value) -> (u16, Value) {
    let response = reqwest::Client::new()
        .post(format!("{addr}/{path}"))
        .bearer_auth(SECRET)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_str(&response.text().await.unwrap()).unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_answers_202_with_a_task_and_the_gateway_follows_it_or_cancels_it() {
    use tool_registry::task::{TaskStatus, owner_of};
    let (addr, tasks, dropped) = task_module().await;

    // A client that follows tasks: 202, then the task read to its end, by its caller only.
    let body = json!({"tool_name": "jobs.slow", "arguments": {"word": "hi"}, "user_id": "ann", "task": true});
    let (status, answer) = post_to(&addr, "execute", body).await;
    assert_eq!(status, 202, "{answer}");
    let id = answer["task"]["id"].as_str().unwrap().to_owned();
    assert_eq!(answer["task"]["status"], "working");
    let done = loop {
        let (status, answer) =
            post_to(&addr, "tasks/get", json!({"task_id": id, "user_id": "ann"})).await;
        assert_eq!(status, 200, "{answer}");
        if answer["task"]["status"] != "working" {
            break answer;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(done["task"]["status"], "completed");
    assert_eq!(done["task"]["result"]["content"], json!({"echo": "hi"}));
    let theirs = post_to(&addr, "tasks/get", json!({"task_id": id, "user_id": "bob"})).await;
    let forged = post_to(
        &addr,
        "tasks/get",
        json!({"task_id": "f00d", "user_id": "ann"}),
    )
    .await;
    assert_eq!(theirs.0, 404);
    assert_eq!(theirs, forged, "another caller's task is an unknown one");
    assert_eq!(theirs.1["error"]["code"], "task_not_found");
    // Without `task`, the same call answers within its request.
    let plain = json!({"tool_name": "jobs.slow", "arguments": {"word": "yo"}, "user_id": "ann"});
    let (status, answer) = post_to(&addr, "execute", plain).await;
    assert_eq!((status, &answer["content"]), (200, &json!({"echo": "yo"})));

    // Through a gateway: the call follows the module's task to its result.
    let map = ModuleMap::new().with("jobs", Module::new(&addr).token(SECRET));
    let (gateway, _) = mount(map).await;
    let carol = Scope::user("carol");
    let result = call(&gateway, "jobs.slow", json!({"word": "via"}), carol.clone()).await;
    assert_eq!(result.unwrap(), json!({"echo": "via"}));
    let owner = owner_of(&carol);
    let carols = tasks.list(&owner).await.unwrap();
    assert_eq!(carols.len(), 1, "the gateway's call ran as a task");
    assert_eq!(carols[0].status, TaskStatus::Completed);

    // A gateway call dropped before its end cancels the module's task, and the tool's call.
    let ctx = Ctx::for_scope(carol.clone());
    let dropped_call = tokio::time::timeout(
        Duration::from_millis(400),
        gateway.call("jobs.hang", json!({}), &ctx),
    )
    .await;
    assert!(dropped_call.is_err(), "the call was still running");
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let hung = tasks.list(&owner).await.unwrap();
        let hang = hung.iter().find(|task| task.tool == "hang");
        if hang.is_some_and(|task| task.status == TaskStatus::Cancelled)
            && dropped.load(std::sync::atomic::Ordering::SeqCst)
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the module's task was not cancelled: {hung:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
