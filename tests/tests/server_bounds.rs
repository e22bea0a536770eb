//! What a client can hold of a server besides its requests: connections, MCP sessions, a stop.
//! Each test runs this crate's `module` binary as a real server on a free loopback port
//! (`serve --http` for a tool module, `mcp --http` for MCP), attacks it from the test process,
//! and kills it at the end, also when the test fails.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The protocol version of the `initialize` era the sessions are opened with.
const VERSION: &str = "2025-06-18";
const ADMIN_TOKEN: &str = "admin-token";
const BOB_TOKEN: &str = "bob-token";

/// A server process, killed when dropped.
struct Served {
    child: Child,
    /// `host:port`.
    addr: String,
}

impl Served {
    /// `module ARGS`, run in `dir`, after it prints `listening on http://ADDR[/mcp]`.
    fn start(dir: &Path, args: &[&str]) -> Self {
        std::fs::write(
            dir.join("callers.toml"),
            format!(
                "[[caller]]\ntoken = \"{ADMIN_TOKEN}\"\nuser = \"ann\"\nlevel = \"admin\"\n\n\
                 [[caller]]\ntoken = \"{BOB_TOKEN}\"\nuser = \"bob\"\n"
            ),
        )
        .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_module"))
            .args(args)
            .current_dir(dir)
            .env_remove("TOOLREG_MODULE_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the module binary starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let mut served = Self {
            child,
            addr: String::new(),
        };
        served.addr = line
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("the server did not start: {line:?}"))
            .trim_end_matches("/mcp")
            .to_owned();
        served
    }

    /// `mcp --http` with the two callers, and `flags`.
    fn mcp(dir: &Path, flags: &[&str]) -> Self {
        let args = [
            &["mcp", "--http", "127.0.0.1:0", "--callers", "callers.toml"][..],
            flags,
        ]
        .concat();
        Self::start(dir, &args)
    }

    /// `serve --http` (a tool module), with `flags`.
    fn module(dir: &Path, flags: &[&str]) -> Self {
        let args = [&["serve", "--http", "127.0.0.1:0"][..], flags].concat();
        Self::start(dir, &args)
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The server's resident memory, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/PID/status")
    }

    fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// Waits for the process to exit, up to `limit`: `None` if it still runs.
    fn exited_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Lets this process hold a few thousand sockets where the soft limit is lower.
fn raise_open_files(needed: u64) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|current| current < needed) {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
    let now = getrlimit(Resource::Nofile).current;
    assert!(
        now.is_none_or(|current| current >= needed),
        "this test holds {needed} sockets; raise the hard limit of open files (ulimit -Hn) to at least that"
    );
}

/// One MCP client speaking streamable HTTP by hand, as a given caller.
struct Mcp {
    client: reqwest::Client,
    url: String,
    token: Option<&'static str>,
}

/// An answer: the status, the session id it names, the JSON-RPC messages of its body.
struct Answer {
    status: u16,
    session: Option<String>,
    messages: Vec<Value>,
}

impl Mcp {
    fn new(served: &Served, token: Option<&'static str>) -> Self {
        Self {
            client: reqwest::Client::new(),
            url: served.url(),
            token,
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        session: Option<&str>,
        body: Option<Value>,
    ) -> Answer {
        let mut request = self
            .client
            .request(method, &self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json");
        if let Some(token) = self.token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", VERSION);
        }
        if let Some(body) = body {
            request = request.body(body.to_string());
        }
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        let session = response
            .headers()
            .get("mcp-session-id")
            .map(|id| id.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        let messages = if text.trim_start().starts_with('{') {
            serde_json::from_str(&text).into_iter().collect()
        } else {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        };
        Answer {
            status,
            session,
            messages,
        }
    }

    async fn post(&self, session: Option<&str>, body: Value) -> Answer {
        self.send(reqwest::Method::POST, session, Some(body)).await
    }

    /// `initialize` with `id`, without `notifications/initialized`.
    async fn initialize(&self, id: u64) -> Answer {
        let body = json!({
            "jsonrpc": "2.0", "id": id, "method": "initialize",
            "params": {
                "protocolVersion": VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bounds-test", "version": "1"}
            }
        });
        self.post(None, body).await
    }

    /// A whole session opened: `initialize`, then `notifications/initialized`.
    async fn open(&self) -> String {
        let answer = self.initialize(1).await;
        assert_eq!(answer.status, 200, "{:?}", answer.messages);
        let session = answer.session.expect("a session id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let done = self.post(Some(&session), initialized).await;
        assert_eq!(done.status, 202);
        session
    }

    async fn delete(&self, session: &str) -> u16 {
        self.send(reqwest::Method::DELETE, Some(session), None)
            .await
            .status
    }

    async fn list(&self, session: &str) -> Answer {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
        self.post(Some(session), body).await
    }
}

/// Opens and closes `count` guest sessions, `lanes` at a time.
async fn churn(served: &Served, count: usize, lanes: usize) {
    let mut tasks = tokio::task::JoinSet::new();
    for lane in 0..lanes {
        let client = Mcp::new(served, None);
        let share = count / lanes + usize::from(lane < count % lanes);
        tasks.spawn(async move {
            for _ in 0..share {
                let session = client.open().await;
                assert_eq!(client.delete(&session).await, 202);
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_sessions_opened_and_closed_leave_memory_where_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::mcp(dir.path(), &["--max-sessions-per-caller", "1000"]);
    // The allocator's pools and the runtime's first tasks settle first.
    churn(&served, 300, 8).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = served.rss_kib();
    churn(&served, 5_000, 8).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = served.rss_kib();
    eprintln!("resident memory: {before} KiB before 5,000 sessions, {after} KiB after");
    assert!(
        after * 10 <= before * 11,
        "5,000 sessions opened and closed took resident memory from {before} KiB to {after} KiB"
    );

    // What a session costs while it is open.
    let client = Mcp::new(&served, Some(ADMIN_TOKEN));
    let base = served.rss_kib();
    let mut open = Vec::new();
    for _ in 0..400 {
        open.push(client.open().await);
    }
    let held = served.rss_kib().saturating_sub(base) / 400;
    eprintln!("an open session holds about {held} KiB");
    assert!(held <= 128, "an open session holds {held} KiB");
    for session in &open {
        assert_eq!(client.delete(session).await, 202);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_bound_answers_the_protocols_error_and_a_new_client_within_it_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::mcp(
        dir.path(),
        &[
            "--max-guest-sessions",
            "3",
            "--max-sessions-per-caller",
            "2",
            "--max-sessions",
            "6",
        ],
    );
    let guest = Mcp::new(&served, None);
    let mut guests = Vec::new();
    for _ in 0..3 {
        guests.push(guest.open().await);
    }
    // Past the guests' share: the JSON-RPC error, for the request that asked.
    let refused = guest.initialize(41).await;
    assert_eq!(refused.status, 429);
    assert!(refused.session.is_none());
    let error = &refused.messages[0];
    assert_eq!(error["id"], 41, "{error}");
    assert_eq!(error["error"]["code"], -32000, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("without a token"),
        "{error}"
    );
    // A caller with a token is served: guests cannot take its place.
    let admin = Mcp::new(&served, Some(ADMIN_TOKEN));
    let first = admin.open().await;
    assert_eq!(admin.list(&first).await.status, 200);
    admin.open().await;
    assert_eq!(admin.initialize(7).await.status, 429);
    // The server's own bound: six sessions in all.
    let bob = Mcp::new(&served, Some(BOB_TOKEN));
    bob.open().await;
    let full = bob.initialize(8).await;
    assert_eq!(full.status, 503);
    assert_eq!(full.messages[0]["id"], 8);
    assert_eq!(full.messages[0]["error"]["code"], -32000);
    // A session ended makes room at once.
    assert_eq!(guest.delete(&guests.pop().unwrap()).await, 202);
    let again = guest.open().await;
    assert_eq!(guest.list(&again).await.status, 200);
    // Requests that open nothing are not refused at the bound.
    assert_eq!(guest.list(&guests[0]).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_callers_session_id_is_refused_for_use_cancel_and_delete() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::mcp(dir.path(), &[]);
    let admin = Mcp::new(&served, Some(ADMIN_TOKEN));
    let session = admin.open().await;
    // A slow call of the admin's runs while others try its session.
    let call = {
        let admin = Mcp::new(&served, Some(ADMIN_TOKEN));
        let session = session.clone();
        tokio::spawn(async move {
            let body = json!({
                "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {"name": "util.linger", "arguments": {"ms": 1500}}
            });
            admin.post(Some(&session), body).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let unknown = Mcp::new(&served, None)
        .list("00000000-0000-0000-0000-000000000000")
        .await;
    for stranger in [None, Some(BOB_TOKEN)] {
        let stranger = Mcp::new(&served, stranger);
        // Use: the same answer as a session that does not exist.
        let used = stranger.list(&session).await;
        assert_eq!(used.status, unknown.status);
        assert_eq!(used.status, 404);
        // Cancel: refused before it reaches the session.
        let cancel = json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 9, "reason": "stranger"}
        });
        assert_eq!(stranger.post(Some(&session), cancel).await.status, 404);
        // Delete: answered as for any id, and the session stays.
        assert_eq!(stranger.delete(&session).await, 202);
    }
    let answer = call.await.unwrap();
    assert_eq!(answer.status, 200);
    let result = answer
        .messages
        .iter()
        .find(|message| message["id"] == 9)
        .expect("the call's answer");
    assert_eq!(result["result"]["isError"], false, "{result}");
    assert_eq!(admin.list(&session).await.status, 200);
    // Its owner ends it.
    assert_eq!(admin.delete(&session).await, 202);
    assert_eq!(admin.list(&session).await.status, 404);
}

/// Sends `request` on a fresh connection and reads the answer until the server closes.
fn raw(addr: &str, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_not_sent_as_bearer_text_is_refused_with_401() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::mcp(dir.path(), &[]);
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    })
    .to_string();
    let request = |authorization: &[u8]| {
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            served.addr,
            initialize.len()
        )
        .into_bytes();
        request.extend_from_slice(b"Authorization: ");
        request.extend_from_slice(authorization);
        request.extend_from_slice(b"\r\n\r\n");
        request.extend_from_slice(initialize.as_bytes());
        raw(&served.addr, &request)
    };
    let not_text = request(b"Bearer admin-token\xff\xfe");
    assert!(not_text.starts_with("HTTP/1.1 401"), "{not_text}");
    assert!(not_text.contains("not text"), "{not_text}");
    let no_scheme = request(ADMIN_TOKEN.as_bytes());
    assert!(no_scheme.starts_with("HTTP/1.1 401"), "{no_scheme}");
    assert!(no_scheme.contains("Bearer <token>"), "{no_scheme}");
    let other_scheme = request(format!("Basic {ADMIN_TOKEN}").as_bytes());
    assert!(other_scheme.starts_with("HTTP/1.1 401"), "{other_scheme}");
    // The same token as Bearer is the admin, in any letter case of the scheme.
    let bearer = request(format!("bearer {ADMIN_TOKEN}").as_bytes());
    assert!(bearer.starts_with("HTTP/1.1 200"), "{bearer}");
}

/// Whether the server has closed `stream`: a read sees the end or a reset.
fn closed_by_server(stream: &mut TcpStream, wait: Duration) -> bool {
    stream
        .set_read_timeout(Some(wait.max(Duration::from_millis(1))))
        .unwrap();
    let mut buf = [0u8; 512];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            // A slowloris request may get an error answer before the close.
            Ok(_) => {}
            Err(error) => {
                return !matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                );
            }
        }
    }
}

/// `GET /health` on a new connection answers within a liveness bound.
fn health_answers(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(5))
    else {
        return false;
    };
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if stream.write_all(request.as_bytes()).is_err() {
        return false;
    }
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.starts_with("HTTP/1.1 200") && answer.contains("\"ok\"")
}

/// 2,000 connections that send nothing, 200 that send a request's headers a byte at a time and
/// 100 that send its body so.
fn attack(addr: &str) -> (Vec<TcpStream>, Vec<TcpStream>, std::thread::JoinHandle<()>) {
    let idle: Vec<TcpStream> = (0..2_000)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let slow: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream
                .write_all(format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n").as_bytes())
                .unwrap();
            stream
        })
        .collect();
    // And 100 whose headers are whole but whose body comes a byte at a time.
    let slow_bodies = (0..100).map(|_| {
        let mut stream = TcpStream::connect(addr).unwrap();
        let head = format!(
            "POST /execute HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{{"
        );
        stream.write_all(head.as_bytes()).unwrap();
        stream
    });
    let slow: Vec<TcpStream> = slow.into_iter().chain(slow_bodies).collect();
    let mut writers: Vec<TcpStream> = slow.iter().map(|s| s.try_clone().unwrap()).collect();
    let trickle = std::thread::spawn(move || {
        let started = Instant::now();
        while !writers.is_empty() && started.elapsed() < Duration::from_secs(30) {
            writers.retain_mut(|stream| stream.write_all(b"X").is_ok());
            std::thread::sleep(Duration::from_millis(300));
        }
    });
    (idle, slow, trickle)
}

#[test]
fn idle_and_slowloris_connections_are_closed_by_the_timeouts_while_a_new_client_is_served() {
    raise_open_files(5_000);
    let dir = tempfile::tempdir().unwrap();
    let served = Served::module(
        dir.path(),
        &[
            "--max-connections",
            "4000",
            "--header-timeout",
            "2s",
            "--body-timeout",
            "2s",
            "--idle-timeout",
            "3s",
        ],
    );
    let (idle, slow, trickle) = attack(&served.addr);
    assert!(
        health_answers(&served.addr),
        "/health did not answer a new client while 2,300 connections were held"
    );
    // Every held connection is closed by the server within the timeouts and a margin.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut open = 0;
    for mut stream in idle.into_iter().chain(slow) {
        if !closed_by_server(
            &mut stream,
            deadline.saturating_duration_since(Instant::now()),
        ) {
            open += 1;
        }
    }
    trickle.join().unwrap();
    assert_eq!(open, 0, "{open} of 2,300 held connections stayed open");
    assert!(health_answers(&served.addr));
}

#[test]
fn at_the_connection_cap_a_new_client_takes_the_place_of_an_idle_one() {
    raise_open_files(5_000);
    let dir = tempfile::tempdir().unwrap();
    let served = Served::module(
        dir.path(),
        &[
            "--max-connections",
            "100",
            "--header-timeout",
            "60s",
            "--idle-timeout",
            "60s",
        ],
    );
    let (idle, slow, trickle) = attack(&served.addr);
    for _ in 0..5 {
        assert!(
            health_answers(&served.addr),
            "/health did not answer at the connection cap"
        );
    }
    // Far fewer than the 2,300 are still open: the cap closed the rest, long before the
    // timeouts.
    let mut open = 0;
    for mut stream in idle.into_iter().chain(slow) {
        if !closed_by_server(&mut stream, Duration::from_millis(1)) {
            open += 1;
        }
    }
    drop(trickle);
    assert!(open <= 100, "{open} connections open past a cap of 100");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_with_half_sent_requests_ends_by_its_deadline_and_the_call_in_flight_finishes() {
    let dir = tempfile::tempdir().unwrap();
    for mcp in [false, true] {
        let flags = [
            "--header-timeout",
            "120s",
            "--idle-timeout",
            "120s",
            "--stop-deadline",
            "5s",
        ];
        let mut served = if mcp {
            Served::mcp(dir.path(), &flags)
        } else {
            Served::module(dir.path(), &flags)
        };
        let addr = served.addr.clone();
        let call = if mcp {
            let client = Mcp::new(&served, Some(ADMIN_TOKEN));
            let session = client.open().await;
            tokio::spawn(async move {
                let body = json!({
                    "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                    "params": {"name": "util.linger", "arguments": {"ms": 1500}}
                });
                let answer = client.post(Some(&session), body).await;
                let result = answer.messages.into_iter().find(|m| m["id"] == 3);
                result.map(|m| m["result"].clone())
            })
        } else {
            tokio::spawn(async move {
                let body = json!({"tool_name": "tools.util.linger", "arguments": {"ms": 1500}});
                let answer: Value = reqwest::Client::new()
                    .post(format!("http://{addr}/execute"))
                    .body(body.to_string())
                    .send()
                    .await
                    .unwrap()
                    .json()
                    .await
                    .unwrap();
                Some(answer["content"].clone())
            })
        };
        let half_sent: Vec<TcpStream> = (0..50)
            .map(|_| {
                let mut stream = TcpStream::connect(&served.addr).unwrap();
                stream
                    .write_all(b"POST /execute HTTP/1.1\r\nHost: x\r\nContent-Ty")
                    .unwrap();
                stream
            })
            .collect();
        // And 50 whose headers are whole but whose body never ends: not a call either.
        let path = if mcp { "/mcp" } else { "/execute" };
        let bodies = half_sent_bodies(&served.addr, path, 50);
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stopped = Instant::now();
        served.terminate();
        // The stop deadline and a margin for the process to end.
        let exit = served
            .exited_within(Duration::from_secs(8))
            .unwrap_or_else(|| panic!("not exited 8 s after SIGTERM (mcp: {mcp})"));
        assert!(exit.success(), "{exit:?}");
        let took = stopped.elapsed();
        eprintln!("mcp: {mcp}: exited {took:?} after SIGTERM");
        // What is left of the call and a margin, well before the 5 s deadline: the stop waited
        // for the call only.
        assert!(
            took < Duration::from_secs(3),
            "mcp: {mcp}: exited {took:?} after SIGTERM, waiting for more than the call"
        );
        let answer = call.await.unwrap();
        assert!(
            answer.is_some_and(|content| content.to_string().contains("1500")),
            "mcp: {mcp}"
        );
        drop((half_sent, bodies));
    }
}

/// `count` connections that each send a POST's headers, for a body of 1,000,000 bytes, and the
/// body's first bytes, then nothing more: requests that are never whole.
fn half_sent_bodies(addr: &str, path: &str, count: usize) -> Vec<TcpStream> {
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n{{\"jsonrpc\":"
    );
    (0..count)
        .map(|made| {
            // In small steps, so that the listener's queue of connections not yet taken (128)
            // holds them even while the server waits for a core: past it, a connection waits a
            // second for the kernel to retry it.
            if made % 16 == 15 {
                std::thread::sleep(Duration::from_millis(5));
            }
            let mut stream = TcpStream::connect(addr).unwrap();
            // The server may already have closed it in favour of a newer one.
            let _ = stream.write_all(head.as_bytes());
            stream
        })
        .collect()
}

/// A real call on a new connection: `util.upper` of "bounded", through `/execute` or as an MCP
/// session's `tools/call`; the text it answers.
async fn real_call(served: &Served, mcp: bool) -> String {
    let call = async {
        if mcp {
            let client = Mcp::new(served, Some(ADMIN_TOKEN));
            let session = client.open().await;
            let body = json!({
                "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "util.upper", "arguments": {"input": "bounded"}}
            });
            let answer = client.post(Some(&session), body).await;
            format!("{} {:?}", answer.status, answer.messages)
        } else {
            let body = json!({"tool_name": "tools.util.upper", "arguments": {"input": "bounded"}});
            let answer = reqwest::Client::new()
                .post(format!("http://{}/execute", served.addr))
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            format!("{} {}", answer.status(), answer.text().await.unwrap())
        }
    };
    tokio::time::timeout(Duration::from_secs(10), call)
        .await
        .unwrap_or_else(|_| "no answer within 10 s".to_owned())
}

/// The status a new client's `GET /health` is answered with, within a liveness bound.
fn health_status(addr: &str) -> Option<u16> {
    let mut stream =
        TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(5)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer.strip_prefix("HTTP/1.1 ")?.get(..3)?.parse().ok()
}

/// On both servers at their default cap, `count` requests whose body never ends: a new
/// client's `GET /health` and a real call answer within 2 s each, and SIGTERM ends the
/// process within 2 s. `/health` is answered by the router: `200` by the module server, `404`
/// by the MCP server, which has no such route; either way not the cap's `503`.
async fn half_sent_bodies_give_way(count: usize) {
    raise_open_files(u64::try_from(count).unwrap() + 2_000);
    let dir = tempfile::tempdir().unwrap();
    for mcp in [false, true] {
        let mut served = if mcp {
            Served::mcp(dir.path(), &[])
        } else {
            Served::module(dir.path(), &[])
        };
        let path = if mcp { "/mcp" } else { "/execute" };
        let started = Instant::now();
        let held = half_sent_bodies(&served.addr, path, count);
        // The server takes them all before the new client comes.
        tokio::time::sleep(Duration::from_millis(500)).await;
        eprintln!(
            "mcp: {mcp}: {count} half-sent bodies in {:?}",
            started.elapsed()
        );

        let asked = Instant::now();
        let status = health_status(&served.addr);
        let health = asked.elapsed();
        assert_eq!(
            status,
            Some(if mcp { 404 } else { 200 }),
            "mcp: {mcp}: /health with {count} half-sent bodies held"
        );
        let asked = Instant::now();
        let answer = real_call(&served, mcp).await;
        let call = asked.elapsed();
        eprintln!("mcp: {mcp}: /health answered in {health:?}, a call in {call:?}");
        assert!(
            answer.starts_with("200") && answer.contains("BOUNDED"),
            "mcp: {mcp}: the call with {count} half-sent bodies held: {answer}"
        );
        assert!(
            health < Duration::from_secs(2),
            "mcp: {mcp}: /health took {health:?}"
        );
        assert!(
            call < Duration::from_secs(2),
            "mcp: {mcp}: the call took {call:?}"
        );

        let stopped = Instant::now();
        served.terminate();
        let exit = served
            .exited_within(Duration::from_secs(2))
            .unwrap_or_else(|| {
                panic!("mcp: {mcp}: not exited 2 s after SIGTERM with {count} half-sent bodies")
            });
        assert!(exit.success(), "{exit:?}");
        eprintln!("mcp: {mcp}: exited {:?} after SIGTERM", stopped.elapsed());
        drop(held);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_bodies_filling_the_cap_give_way_to_a_new_client_and_to_a_stop() {
    half_sent_bodies_give_way(1_024).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_half_sent_bodies_give_way_to_a_new_client_and_to_a_stop() {
    half_sent_bodies_give_way(5_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_cap_half_sent_bodies_give_way_before_an_event_stream_and_never_a_call() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::mcp(dir.path(), &["--max-connections", "40"]);
    let client = Mcp::new(&served, Some(ADMIN_TOKEN));
    let session = client.open().await;
    // The oldest connection: an event stream of the session.
    let mut events = TcpStream::connect(&served.addr).unwrap();
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\nMcp-Session-Id: {session}\r\nMcp-Protocol-Version: {VERSION}\r\n\r\n",
        served.addr
    );
    events.write_all(get.as_bytes()).unwrap();
    events
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut head = [0u8; 12];
    events.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200", "the event stream did not open");
    // A call in flight, on a connection of its own.
    let call = {
        let caller = Mcp::new(&served, Some(ADMIN_TOKEN));
        let session = session.clone();
        tokio::spawn(async move {
            let body = json!({
                "jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "util.linger", "arguments": {"ms": 2000}}
            });
            caller.post(Some(&session), body).await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    // More half-sent bodies than the cap holds, then new clients.
    let held = half_sent_bodies(&served.addr, "/mcp", 60);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The MCP server has no `/health`: its router's `404`, not the cap's `503`.
    for _ in 0..10 {
        assert_eq!(
            health_status(&served.addr),
            Some(404),
            "a new client with the cap full of half-sent bodies"
        );
    }
    assert!(
        !closed_by_server(&mut events, Duration::from_millis(200)),
        "the event stream was closed while half-sent bodies were open"
    );
    let answer = call.await.unwrap();
    assert_eq!(answer.status, 200);
    let result = answer
        .messages
        .iter()
        .find(|message| message["id"] == 4)
        .expect("the call's answer");
    assert_eq!(result["result"]["isError"], false, "{result}");
    drop(held);
}

#[test]
fn a_trickling_body_is_cut_by_the_minimum_rate_and_a_stalled_one_by_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // A byte every 200 ms, far below the default minimum of 1 KiB a second.
    let by_rate = Served::module(
        dir.path(),
        &["--body-timeout", "60s", "--idle-timeout", "60s"],
    );
    // Nothing after the first bytes, with the idle timeout the shortest bound.
    let by_idle = Served::module(
        dir.path(),
        &["--body-timeout", "60s", "--idle-timeout", "2s"],
    );
    // The same trickle with no minimum rate: the body timeout cuts it.
    let by_total = Served::module(
        dir.path(),
        &[
            "--body-timeout",
            "8s",
            "--idle-timeout",
            "60s",
            "--min-body-rate",
            "0",
        ],
    );
    let started = Instant::now();
    let mut streams = Vec::new();
    for served in [&by_rate, &by_idle, &by_total] {
        streams.extend(half_sent_bodies(&served.addr, "/execute", 1));
    }
    let mut writers = vec![
        streams[0].try_clone().unwrap(),
        streams[2].try_clone().unwrap(),
    ];
    let trickle = std::thread::spawn(move || {
        while !writers.is_empty() && started.elapsed() < Duration::from_secs(15) {
            writers.retain_mut(|stream| stream.write_all(b" ").is_ok());
            std::thread::sleep(Duration::from_millis(200));
        }
    });
    let closed_at: Vec<_> = streams
        .into_iter()
        .map(|mut stream| {
            std::thread::spawn(move || {
                closed_by_server(&mut stream, Duration::from_secs(15)).then(|| started.elapsed())
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|watch| watch.join().unwrap())
        .collect();
    trickle.join().unwrap();
    eprintln!("closed after (rate, idle, total): {closed_at:?}");
    let [by_rate, by_idle, by_total] = closed_at[..] else {
        unreachable!()
    };
    let by_rate = by_rate.expect("the trickling body was not cut in 15 s");
    assert!(
        (Duration::from_secs(4)..Duration::from_secs(8)).contains(&by_rate),
        "the trickling body was cut after {by_rate:?}, not at the end of its first 5 s window"
    );
    let by_idle = by_idle.expect("the stalled body was not cut in 15 s");
    assert!(
        by_idle < Duration::from_secs(4),
        "the stalled body was cut after {by_idle:?}, not by the 2 s idle timeout"
    );
    let by_total = by_total.expect("the trickling body with no minimum rate was not cut in 15 s");
    assert!(
        (Duration::from_secs(7)..Duration::from_secs(12)).contains(&by_total),
        "with no minimum rate the trickling body was cut after {by_total:?}, not by the 8 s body timeout"
    );
}
