//! What an operator of `toolreg` sees, checked on the real binary: its logs, the audit trail
//! (`--audit`), the spans it exports over OTLP to a receiver that decodes the protocol with its
//! official definitions, and `/metrics` as Python's Prometheus parser reads it. Every output is
//! searched for the secrets the calls used.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
#[path = "common/serve.rs"]
#[allow(dead_code, reason = "only `execute` is used here")]
mod serve;
#[path = "common/venv.rs"]
mod venv;
use common::{toolreg_command, workspace};
use serve::execute;

/// The token of the module servers these tests start.
const MODULE_TOKEN: &str = "module-token-6b1f0e";
/// A wrong token a caller tries.
const WRONG_TOKEN: &str = "wrong-token-93c2aa";
/// An argument value no output may hold.
const ARGUMENT: &str = "argument-value-5d7e41";

/// A `toolreg … --http` server, stopped with SIGTERM (so that it flushes what it exports) when
/// dropped, and killed if it does not stop.
struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT` (with `/mcp` for an MCP server).
    addr: String,
    /// `http://127.0.0.1:PORT/metrics`, with `--metrics`.
    metrics: Option<String>,
}

impl Server {
    /// `toolreg args` in `root`, its log (standard error) written to `log`, with `env`.
    fn start(root: &Path, args: &[&str], env: &[(&str, &str)], log: &Path) -> Self {
        let mut command = toolreg_command(root, args);
        command.env_remove("RUST_LOG");
        command.env("TOOLREG_MODULE_TOKEN", MODULE_TOKEN);
        command.envs(env.iter().copied());
        let log = std::fs::File::create(log).unwrap();
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("toolreg starts");
        let mut lines = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        lines.read_line(&mut line).unwrap();
        let addr = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("toolreg did not start: {line:?}"))
            .to_owned();
        let metrics = args.contains(&"--metrics").then(|| {
            line.clear();
            lines.read_line(&mut line).unwrap();
            line.trim()
                .strip_prefix("metrics on ")
                .unwrap_or_else(|| panic!("no metrics address: {line:?}"))
                .to_owned()
        });
        Self {
            child,
            addr,
            metrics,
        }
    }

    /// Stops it as an operator would (SIGTERM), and waits.
    fn stop(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `GET url` over a plain socket: the status line and the body.
fn get(url: &str) -> (String, String) {
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (
        head.lines().next().unwrap_or("").to_owned(),
        body.to_owned(),
    )
}

/// The lines of the audit trail at `path`, each read as JSON.
fn trail(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("a torn line ({e}): {line:?}"))
        })
        .collect()
}

/// Fails naming every line of `lines` that breaks the documented schema of the audit trail.
fn assert_schema(lines: &[Value]) {
    let schema: Value = serde_json::from_str(tool_registry::telemetry::AUDIT_SCHEMA).unwrap();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for line in lines {
        let errors: Vec<String> = validator.iter_errors(line).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{line} breaks the schema: {errors:?}");
    }
}

/// Fails if `text` (an output named `what`) holds one of `secrets`.
fn assert_no_secret(what: &str, text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{what} holds the secret {secret:?}:\n{text}"
        );
    }
}

#[test]
fn a_server_logs_its_tools_a_refused_token_and_refused_calls() {
    let dir = workspace();
    let log = dir.path().join("serve.log");
    let mut server = Server::start(
        dir.path(),
        &["serve", "--http", "127.0.0.1:0"],
        &[("RUST_LOG", "info")],
        &log,
    );
    let call = json!({"tool_name": "research", "arguments": {"query": ARGUMENT}});
    assert_eq!(execute(&server.addr, None, &call)["success"], true);
    // A wrong token: the call runs as a guest's, and the refused token is logged, not shown.
    let wrong = execute(&server.addr, Some(WRONG_TOKEN), &call);
    assert_eq!(wrong["success"], true);
    // Arguments the tool refuses: a call the validation stage refused.
    let refused = json!({"tool_name": "research", "arguments": {"query": 5}});
    assert_eq!(execute(&server.addr, None, &refused)["success"], false);
    server.stop();
    let logs = std::fs::read_to_string(&log).unwrap();
    assert!(logs.contains("Loaded tool tool=\"research\""), "{logs}");
    assert!(logs.contains("serving tools over HTTP"), "{logs}");
    assert!(logs.contains("a request carried a wrong token"), "{logs}");
    let line = logs
        .lines()
        .find(|line| line.contains("outcome=invalid_arguments"))
        .unwrap_or_else(|| panic!("no line for the refused call: {logs}"));
    assert!(line.contains("gate=\"validate\""), "{line}");
    assert!(line.contains("level=\"guest\""), "{line}");
    assert!(logs.contains("stopped serving tools over HTTP"), "{logs}");
    assert_no_secret("the log", &logs, &[MODULE_TOKEN, WRONG_TOKEN, ARGUMENT]);
}

#[test]
fn twenty_processes_append_whole_lines_to_one_audit_trail_in_the_documented_schema() {
    let dir = workspace();
    let path = dir.path().join("audit.jsonl");
    let audit = path.to_str().unwrap();
    const PROCESSES: usize = 20;
    const ROUNDS: usize = 3;
    for round in 0..ROUNDS {
        let children: Vec<Child> = (0..PROCESSES)
            .map(|i| {
                let user = format!("user{i}");
                let query = format!(r#"{{"query": "{ARGUMENT} {round}"}}"#);
                toolreg_command(
                    dir.path(),
                    &[
                        "--audit", audit, "--user", &user, "call", "research", &query,
                    ],
                )
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap()
            })
            .collect();
        for mut child in children {
            assert!(child.wait().unwrap().success());
        }
        let lines = trail(&path);
        assert_eq!(
            lines.len(),
            PROCESSES * (round + 1),
            "one whole line per call"
        );
    }
    let lines = trail(&path);
    assert_schema(&lines);
    for i in 0..PROCESSES {
        let user = format!("user{i}");
        let calls = lines
            .iter()
            .filter(|line| line["user"] == user.as_str())
            .count();
        assert_eq!(calls, ROUNDS, "{user}");
    }
    let first = &lines[0];
    assert_eq!(first["tool"], "research");
    assert_eq!(first["version"], "1.0.0");
    assert_eq!(first["level"], "user");
    assert_eq!(first["outcome"], "ok");
    assert_eq!(first["cache"], "miss");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "owner-only: {mode:o}");
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert_no_secret("the audit trail", &text, &[ARGUMENT]);
}

#[test]
fn a_cache_hit_is_in_the_result_and_in_the_audit_line() {
    let dir = workspace();
    let path = dir.path().join("audit.jsonl");
    let server = Server::start(
        dir.path(),
        &[
            "--audit",
            path.to_str().unwrap(),
            "serve",
            "--http",
            "127.0.0.1:0",
        ],
        &[],
        &dir.path().join("serve.log"),
    );
    let call = json!({"tool_name": "research", "arguments": {"query": "caching"}});
    let first = execute(&server.addr, None, &call);
    let second = execute(&server.addr, None, &call);
    assert_eq!(first["audit"]["cache"], "miss", "{first}");
    assert_eq!(second["audit"]["cache"], "hit", "{second}");
    assert_eq!(first["content"], second["content"]);
    drop(server);
    let lines = trail(&path);
    assert_schema(&lines);
    let cached: Vec<&Value> = lines.iter().map(|line| &line["cache"]).collect();
    assert_eq!(cached, [&json!("miss"), &json!("hit")]);
    assert_eq!(
        lines[1]["hooks"],
        json!([{"hook": "cache", "action": "hit"}])
    );
    assert_eq!(lines[1]["level"], "guest");
}

#[test]
fn an_approval_is_named_by_its_id_in_the_trail_never_by_its_token() {
    let dir = workspace();
    std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
    std::fs::write(dir.path().join("sandbox/a.txt"), "x").unwrap();
    let path = dir.path().join("audit.jsonl");
    let audit = path.to_str().unwrap();
    let run = |args: &[&str]| {
        let mut command = toolreg_command(
            dir.path(),
            &[&["--audit", audit, "--user", "alice"], args].concat(),
        );
        command.env("RUST_LOG", "trace");
        command.output().unwrap()
    };
    let held = run(&["call", "file_manager.delete_file", r#"{"path": "a.txt"}"#]);
    let result: Value = serde_json::from_slice(&held.stdout).unwrap();
    let token = result["content"]["error"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let approved = run(&["approve", &token]);
    assert!(approved.status.success(), "{approved:?}");
    let lines = trail(&path);
    assert_schema(&lines);
    assert_eq!(lines[0]["outcome"], "needs_approval");
    assert_eq!(lines[0]["gate"], "confirmation");
    let id = lines[0]["approval"].as_str().unwrap();
    assert_eq!(id, tool_registry::audit::approval_id(&token));
    assert_eq!(lines[1]["outcome"], "ok");
    assert_eq!(
        lines[1]["approval"], id,
        "the approved call names the same approval"
    );
    let logs = [held.stderr, approved.stderr].concat();
    assert_no_secret("the log", &String::from_utf8_lossy(&logs), &[&token]);
    assert_no_secret(
        "the audit trail",
        &std::fs::read_to_string(&path).unwrap(),
        &[&token],
    );
}

/// What Python's Prometheus parser reads in `text`: each sample as `[name, labels, value]`.
fn parsed_by_prometheus_client(text: &str) -> Vec<(String, Value, f64)> {
    const PARSE: &str = "import sys, json\n\
        from prometheus_client.parser import text_string_to_metric_families\n\
        print(json.dumps([[s.name, s.labels, s.value] for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]))\n";
    let output = venv::run(&venv::PROMETHEUS, PARSE, text, &[]);
    let samples: Vec<(String, Value, f64)> = serde_json::from_str(&output).unwrap();
    samples
}

/// The value of the sample `name` whose labels include `labels`; `None` when there is none.
fn sample(samples: &[(String, Value, f64)], name: &str, labels: &Value) -> Option<f64> {
    samples
        .iter()
        .find(|(n, l, _)| {
            n == name
                && labels
                    .as_object()
                    .unwrap()
                    .iter()
                    .all(|(key, value)| &l[key] == value)
        })
        .map(|(.., value)| *value)
}

#[test]
fn metrics_count_the_calls_as_pythons_prometheus_parser_reads_them() {
    let dir = workspace();
    let server = Server::start(
        dir.path(),
        &["--metrics", "127.0.0.1:0", "serve", "--http", "127.0.0.1:0"],
        &[],
        &dir.path().join("serve.log"),
    );
    let call = json!({"tool_name": "research", "arguments": {"query": ARGUMENT}});
    execute(&server.addr, None, &call);
    execute(&server.addr, None, &call);
    execute(
        &server.addr,
        Some(WRONG_TOKEN),
        &json!({"tool_name": "research", "arguments": {"query": "other"}}),
    );
    execute(
        &server.addr,
        None,
        &json!({"tool_name": "research", "arguments": {"query": 5}}),
    );
    let (status, text) = get(server.metrics.as_deref().unwrap());
    assert!(status.contains("200"), "{status}");
    assert_no_secret("/metrics", &text, &[MODULE_TOKEN, WRONG_TOKEN, ARGUMENT]);
    let samples = parsed_by_prometheus_client(&text);
    // Each counter as the calls above make it: three answered (one from the cache), one
    // refused by validation, one with a refused token.
    let expected = [
        (
            "tool_registry_tool_calls_total",
            json!({"tool": "research", "outcome": "ok"}),
            3.0,
        ),
        (
            "tool_registry_tool_calls_total",
            json!({"tool": "research", "outcome": "invalid_arguments"}),
            1.0,
        ),
        (
            "tool_registry_tool_call_duration_seconds_count",
            json!({"tool": "research"}),
            4.0,
        ),
        (
            "tool_registry_tool_call_duration_seconds_bucket",
            json!({"tool": "research", "le": "+Inf"}),
            4.0,
        ),
        (
            "tool_registry_gate_refusals_total",
            json!({"gate": "validate"}),
            1.0,
        ),
        (
            "tool_registry_cache_requests_total",
            json!({"tool": "research", "result": "hit"}),
            1.0,
        ),
        (
            "tool_registry_cache_requests_total",
            json!({"tool": "research", "result": "miss"}),
            2.0,
        ),
        (
            "tool_registry_refused_requests_total",
            json!({"server": "modules", "reason": "wrong_token"}),
            1.0,
        ),
    ];
    for (name, labels, value) in expected {
        assert_eq!(
            sample(&samples, name, &labels),
            Some(value),
            "{name} {labels}"
        );
    }
    // The calls' connections were counted, and are let go once the server sees them close
    // (the scrape's own is the metrics server's, not counted).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, text) = get(server.metrics.as_deref().unwrap());
        let open = sample(
            &parsed_by_prometheus_client(&text),
            "tool_registry_connections_open",
            &json!({}),
        );
        if open == Some(0.0) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "connections still open: {open:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Spans an OTLP receiver was sent: `(service.name, span)`, as the official definitions decode
/// them.
type Received = Arc<Mutex<Vec<(String, opentelemetry_proto::tonic::trace::v1::Span)>>>;

fn keep(
    received: &Received,
    request: opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest,
) {
    let mut kept = received.lock().unwrap();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .as_ref()
            .and_then(|r| r.attributes.iter().find(|kv| kv.key == "service.name"))
            .and_then(|kv| kv.value.as_ref())
            .map(any_text)
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                kept.push((service.clone(), span));
            }
        }
    }
}

fn any_text(value: &opentelemetry_proto::tonic::common::v1::AnyValue) -> String {
    use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
    match &value.value {
        Some(V::StringValue(text)) => text.clone(),
        Some(V::IntValue(n)) => n.to_string(),
        Some(V::BoolValue(b)) => b.to_string(),
        Some(V::DoubleValue(d)) => d.to_string(),
        _ => String::new(),
    }
}

fn attribute(span: &opentelemetry_proto::tonic::trace::v1::Span, key: &str) -> Option<String> {
    span.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .map(any_text)
}

/// Whether `span` is a tool call's (`execute_tool {tool}`, by the GenAI conventions).
fn is_call(span: &opentelemetry_proto::tonic::trace::v1::Span) -> bool {
    attribute(span, "gen_ai.operation.name").as_deref() == Some("execute_tool")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An OTLP/HTTP receiver (`POST /v1/traces`, protobuf) on a free loopback port, on its own
/// runtime: its address, and what it received.
fn http_receiver() -> (String, Received, tokio::runtime::Runtime) {
    use prost::Message;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let received: Received = Arc::default();
    let kept = received.clone();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                let request =
                    opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest::decode(body)
                        .expect("an OTLP protobuf body");
                keep(&kept, request);
                (
                    [(axum::http::header::CONTENT_TYPE, "application/x-protobuf")],
                    opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceResponse::default()
                        .encode_to_vec(),
                )
            }
        }),
    );
    runtime.spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}"), received, runtime)
}

/// `pairs` as [`Server::start`] takes them.
fn borrowed<'a>(pairs: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    pairs.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// Waits until `received` holds spans of every one of `services`, for at most 20 s.
fn spans_of(
    received: &Received,
    services: &[&str],
) -> Vec<(String, opentelemetry_proto::tonic::trace::v1::Span)> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let spans = received.lock().unwrap().clone();
        let all = services
            .iter()
            .all(|service| spans.iter().any(|(s, span)| s == service && is_call(span)));
        if all || Instant::now() > deadline {
            return spans;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn one_trace_runs_through_a_gateway_its_module_and_a_mounted_mcp_server() {
    let (endpoint, received, _runtime) = http_receiver();
    let otel = |service: &'static str| {
        vec![
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.clone()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf".to_owned()),
            ("OTEL_SERVICE_NAME", service.to_owned()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100".to_owned()),
        ]
    };
    // A server of the chain, in a folder of its own, with `map` as its module map.
    let hop = |args: &[&str], map: Option<String>, service: &'static str| {
        let dir = workspace();
        if let Some(map) = map {
            std::fs::write(dir.path().join("map.toml"), map).unwrap();
        }
        let env = otel(service);
        let server = Server::start(dir.path(), args, &borrowed(&env), &dir.path().join("log"));
        (dir, server)
    };
    // The mounted MCP server, and the module that mounts it, served over HTTP.
    let (_mcp_dir, mut mcp) = hop(
        &["--modules", "research", "mcp", "--http", "127.0.0.1:0"],
        None,
        "mcp-server",
    );
    let (_module_dir, mut module) = hop(
        &["--module-map", "map.toml", "serve", "--http", "127.0.0.1:0"],
        Some(format!("[mcp.kb]\nurl = \"{}\"\n", mcp.addr)),
        "module",
    );
    // The gateway: one call of the MCP server's tool, through the module.
    let gateway_dir = workspace();
    std::fs::write(
        gateway_dir.path().join("map.toml"),
        format!(
            "[modules.mod]\nurl = \"{}\"\ntoken_env = \"MOD_TOKEN\"\n",
            module.addr
        ),
    )
    .unwrap();
    let trail_path = gateway_dir.path().join("audit.jsonl");
    let mut gateway = toolreg_command(
        gateway_dir.path(),
        &[
            "--module-map",
            "map.toml",
            "--audit",
            trail_path.to_str().unwrap(),
            "call",
            "mod.kb.research",
            &format!(r#"{{"query": "{ARGUMENT}"}}"#),
        ],
    );
    gateway.env("MOD_TOKEN", MODULE_TOKEN);
    gateway.envs(otel("gateway"));
    let called = gateway.output().unwrap();
    assert!(
        called.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&called.stdout),
        String::from_utf8_lossy(&called.stderr)
    );
    module.stop();
    mcp.stop();
    let spans = spans_of(&received, &["gateway", "module", "mcp-server"]);
    let tool_span = |service: &str| {
        spans
            .iter()
            .find(|(s, span)| s == service && is_call(span))
            .map(|(_, span)| span.clone())
            .unwrap_or_else(|| {
                let seen: Vec<_> = spans
                    .iter()
                    .map(|(s, span)| format!("{s}: {}", span.name))
                    .collect();
                panic!("no execute_tool span from {service}: {seen:?}")
            })
    };
    let (gateway_span, module_span, mcp_span) = (
        tool_span("gateway"),
        tool_span("module"),
        tool_span("mcp-server"),
    );
    // One trace, rooted at the gateway's call.
    let trace = hex(&gateway_span.trace_id);
    assert!(
        gateway_span.parent_span_id.is_empty(),
        "the gateway's call is the root"
    );
    assert_eq!(
        hex(&module_span.trace_id),
        trace,
        "the module's call is in the trace"
    );
    assert_eq!(
        hex(&mcp_span.trace_id),
        trace,
        "the MCP server's call is in the trace"
    );
    // The GenAI attributes, with each process's name for the tool.
    assert_eq!(gateway_span.name, "execute_tool mod.kb.research");
    assert_eq!(
        attribute(&gateway_span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(
        attribute(&gateway_span, "gen_ai.tool.name").as_deref(),
        Some("mod.kb.research")
    );
    assert_eq!(
        attribute(&module_span, "gen_ai.tool.name").as_deref(),
        Some("kb.research")
    );
    assert_eq!(
        attribute(&mcp_span, "gen_ai.tool.name").as_deref(),
        Some("research")
    );
    // Each hop's server span is the child of the caller's call span.
    let child_of =
        |service: &str, name: &str, parent: &opentelemetry_proto::tonic::trace::v1::Span| {
            let (_, span) = spans
                .iter()
                .find(|(s, span)| s == service && span.name == name)
                .unwrap_or_else(|| panic!("no {name} span from {service}"));
            assert_eq!(hex(&span.trace_id), trace);
            assert_eq!(
                span.parent_span_id, parent.span_id,
                "{service}'s {name} continues its caller's span"
            );
        };
    child_of("module", "POST /execute", &gateway_span);
    child_of("mcp-server", "tools/call research", &module_span);
    // The gateway's audit line names the trace.
    let lines = trail(&trail_path);
    assert_schema(&lines);
    assert_eq!(lines[0]["trace_id"], trace.as_str());
    // No secret in any span.
    for (service, span) in &spans {
        let text = format!("{span:?}");
        assert_no_secret(
            &format!("a span of {service}"),
            &text,
            &[MODULE_TOKEN, ARGUMENT],
        );
    }
}

#[test]
fn spans_are_exported_over_grpc_too() {
    use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
        TraceService, TraceServiceServer,
    };
    use opentelemetry_proto::tonic::collector::trace::v1::{
        ExportTraceServiceRequest, ExportTraceServiceResponse,
    };

    struct Receiver(Received);

    #[tonic::async_trait]
    impl TraceService for Receiver {
        async fn export(
            &self,
            request: tonic::Request<ExportTraceServiceRequest>,
        ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
            keep(&self.0, request.into_inner());
            Ok(tonic::Response::new(ExportTraceServiceResponse::default()))
        }
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let received: Received = Arc::default();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let service = TraceServiceServer::new(Receiver(received.clone()));
    runtime.spawn(async move {
        tonic::transport::Server::builder()
            .add_service(service)
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener))
            .await
    });
    let dir = workspace();
    let called = toolreg_command(dir.path(), &["call", "research", r#"{"query": "caching"}"#])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", format!("http://{addr}"))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .env("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
        .output()
        .unwrap();
    assert!(
        called.status.success(),
        "{}",
        String::from_utf8_lossy(&called.stderr)
    );
    let spans = spans_of(&received, &["toolreg"]);
    let (service, span) = spans
        .iter()
        .find(|(_, span)| is_call(span))
        .unwrap_or_else(|| panic!("no execute_tool span over gRPC: {spans:?}"));
    assert_eq!(service, "toolreg", "the default service name");
    assert_eq!(span.name, "execute_tool research");
    assert_eq!(
        attribute(span, "gen_ai.tool.name").as_deref(),
        Some("research")
    );
    assert_eq!(
        attribute(span, "gen_ai.tool.type").as_deref(),
        Some("function")
    );
}

/// `POST url` of `body` as JSON over a plain socket, with `Authorization: Bearer token` when
/// given: the answer's head (lower case) and body.
fn post(url: &str, token: Option<&str>, body: &Value) -> (String, String) {
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let body = body.to_string();
    let auth = token.map_or_else(String::new, |token| {
        format!("Authorization: Bearer {token}\r\n")
    });
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /{path} HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    (head.to_lowercase(), body.to_owned())
}

#[test]
fn an_mcp_server_counts_its_sessions_and_the_tokens_it_refused() {
    let dir = workspace();
    std::fs::write(
        dir.path().join("callers.toml"),
        format!("[[caller]]\ntoken = \"{MODULE_TOKEN}\"\nuser = \"ann\"\nlevel = \"admin\"\n"),
    )
    .unwrap();
    let log = dir.path().join("mcp.log");
    let server = Server::start(
        dir.path(),
        &[
            "--metrics",
            "127.0.0.1:0",
            "mcp",
            "--http",
            "127.0.0.1:0",
            "--callers",
            "callers.toml",
        ],
        &[],
        &log,
    );
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    });
    let (head, _) = post(&server.addr, Some(MODULE_TOKEN), &initialize);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("mcp-session-id:"), "{head}");
    let (head, _) = post(&server.addr, Some(WRONG_TOKEN), &initialize);
    assert!(head.starts_with("http/1.1 401"), "{head}");
    let (_, text) = get(server.metrics.as_deref().unwrap());
    assert_no_secret("/metrics", &text, &[MODULE_TOKEN, WRONG_TOKEN]);
    let samples = parsed_by_prometheus_client(&text);
    assert_eq!(
        sample(
            &samples,
            "tool_registry_sessions_open",
            &json!({"server": "mcp"})
        ),
        Some(1.0)
    );
    assert_eq!(
        sample(
            &samples,
            "tool_registry_refused_requests_total",
            &json!({"server": "mcp", "reason": "unauthorized"})
        ),
        Some(1.0)
    );
    drop(server);
    let logs = std::fs::read_to_string(&log).unwrap();
    assert!(logs.contains("a request was refused"), "{logs}");
    assert_no_secret("the log", &logs, &[MODULE_TOKEN, WRONG_TOKEN]);
}

#[test]
fn a_name_no_tool_has_reaches_the_log_escaped_and_cut() {
    let dir = workspace();
    let name = format!("evil\nforged line {}\u{1b}[31m", "x".repeat(300));
    let called = toolreg_command(dir.path(), &["call", &name, "{}"])
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert_eq!(called.status.code(), Some(1));
    let logs = String::from_utf8_lossy(&called.stderr);
    let line = logs
        .lines()
        .find(|line| line.contains("outcome=unknown_tool"))
        .unwrap_or_else(|| panic!("no line for the call: {logs}"));
    assert!(line.contains(r"evil\nforged line"), "{line}");
    assert!(
        !logs.lines().any(|line| line.starts_with("forged")),
        "{logs}"
    );
    assert!(
        !logs.contains('\u{1b}'),
        "a terminal escape reached the log"
    );
    assert!(!line.contains(&"x".repeat(100)), "cut: {line}");
}

#[test]
fn metrics_beyond_loopback_need_their_own_flag() {
    let dir = workspace();
    let refused = toolreg_command(
        dir.path(),
        &["--metrics", "0.0.0.0:0", "serve", "--http", "127.0.0.1:0"],
    )
    .output()
    .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("--metrics-public"), "{said}");
}
