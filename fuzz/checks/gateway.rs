//! `gateway`: what an HTTP module answers a gateway, read by the gateway over loopback: its
//! manifest (`GET /manifest`), and its answer to each call (`POST /execute`, `/tasks/get`).
//! The input is the manifest, a `0xFF` byte, then the answer; the answer's status is the first
//! byte's pick (200, 202, 400, 401, 404, 500). A server of this program's own, on a free
//! loopback port, serves them.
//!
//! - A refresh never panics; every tool it registers is the module's (`m.`), at most as many
//!   as the manifest lists.
//! - Each call of a registered tool ends within its timeout: a result whose blocks keep to the
//!   registry's content bounds, or a typed error that reads back with the same code.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::http::{Method, StatusCode, Uri};
use serde_json::{Value, json};
use tool_registry::content::check_blocks;
use tool_registry::http::{Gateway, MemoryManifestCache, Module, ModuleMap};
use tool_registry::{Ctx, Listing, Registry, ToolError};

const STATUSES: [u16; 6] = [200, 202, 400, 401, 404, 500];

/// What the module answers now.
#[derive(Default)]
struct Answers {
    manifest: Vec<u8>,
    status: u16,
    answer: Vec<u8>,
}

/// The module: a loopback server on a thread of its own, answering what `answers` holds.
fn module() -> &'static (String, Arc<Mutex<Answers>>) {
    static MODULE: OnceLock<(String, Arc<Mutex<Answers>>)> = OnceLock::new();
    MODULE.get_or_init(|| {
        let answers = Arc::new(Mutex::new(Answers::default()));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let served = Arc::clone(&answers);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("the listener");
                let app = axum::Router::new().fallback(move |method: Method, uri: Uri| {
                    let answers = Arc::clone(&served);
                    async move {
                        let answers = answers.lock().expect("the answers");
                        match (method, uri.path()) {
                            (Method::GET, "/manifest") => {
                                (StatusCode::OK, answers.manifest.clone())
                            }
                            (Method::POST, "/execute" | "/tasks/get") => (
                                StatusCode::from_u16(answers.status).expect("a status"),
                                answers.answer.clone(),
                            ),
                            (Method::POST, "/tasks/cancel") => (StatusCode::OK, b"{}".to_vec()),
                            _ => (StatusCode::NOT_FOUND, Vec::new()),
                        }
                    }
                });
                axum::serve(listener, app).await.expect("the module serves");
            });
        });
        (url, answers)
    })
}

/// The gateway's registry and the gateway, made once: each input is a refresh.
fn gateway() -> &'static (Arc<Registry>, Gateway) {
    static GATEWAY: OnceLock<(Arc<Registry>, Gateway)> = OnceLock::new();
    GATEWAY.get_or_init(|| {
        let registry = Arc::new(
            Registry::builder()
                .without_linked()
                .default_timeout(Duration::from_millis(500))
                .build()
                .expect("a registry"),
        );
        let module = Module::new(module().0.clone()).timeout(Duration::from_millis(500));
        let gateway = Gateway::builder(Arc::clone(&registry), ModuleMap::new().with("m", module))
            .discovery_timeout(Duration::from_millis(500))
            .cache(MemoryManifestCache::new())
            .build()
            .expect("a gateway");
        (registry, gateway)
    })
}

pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let (manifest, answer) = match rest.iter().position(|&b| b == 0xFF) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &b"{}"[..]),
    };
    *module().1.lock().expect("the answers") = Answers {
        manifest: manifest.to_vec(),
        status: STATUSES[usize::from(first) % STATUSES.len()],
        answer: answer.to_vec(),
    };
    let listed = serde_json::from_slice::<Value>(manifest)
        .ok()
        .and_then(|manifest| manifest["tools"].as_array().map(Vec::len));
    let (registry, gateway) = gateway();
    super::block_on(async {
        let statuses = gateway.refresh().await;
        assert_eq!(statuses.len(), 1);
        let tools = registry.tools(Listing::every());
        for tool in &tools {
            assert!(
                tool.name().starts_with("m."),
                "{} is not the module's",
                tool.name()
            );
        }
        if let Some(listed) = listed {
            assert!(
                tools.len() <= listed,
                "{} tools from a manifest of {listed}",
                tools.len()
            );
        }
        let ctx = Ctx::trusted();
        for tool in tools.iter().take(2) {
            let name = tool.name();
            let called = tokio::time::timeout(
                Duration::from_secs(10),
                registry.call(name, json!({}), &ctx).confirmed(),
            )
            .await
            .unwrap_or_else(|_| panic!("a call of {name} did not end"));
            match called {
                Ok(result) => {
                    let limits = registry.content_limits();
                    check_blocks(&result.blocks, &limits).unwrap_or_else(|refused| {
                        panic!("{name}: blocks past the bounds: {refused:?}")
                    });
                    serde_json::to_value(&result).expect("a result writes itself");
                }
                Err(error) => read_back(name, &error),
            }
        }
    });
}

/// An error as another process reads it: the same code.
fn read_back(name: &str, error: &ToolError) {
    let written = serde_json::to_value(error).expect("an error writes itself");
    let read = ToolError::from_json(&written, name);
    assert_eq!(read.code(), error.code(), "{written}");
}
