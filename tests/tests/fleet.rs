//! A fleet on Redis: instances (processes of the `fleet` binary, and this test's own registry)
//! sharing one `redis-server` that each test starts on a free loopback port and stops, even
//! when it fails. `scripts/test` installs `redis-server` where it is missing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tool_registry::Listing;
use tool_registry::ToolSpec;
use tool_registry::redis::{Fleet, FleetBuilder};
use tool_registry::registry::Selector;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Permission, Registry, Scope};

/// A `redis-server` of this test, killed when dropped.
struct Redis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Redis {
    /// Starts one on a free loopback port, with every write on disk before it is answered
    /// (`appendfsync always`), so that a crash loses nothing counted.
    fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Self {
            child: None,
            port,
            dir: tempfile::tempdir().unwrap(),
        };
        redis.restart();
        redis
    }

    fn restart(&mut self) {
        let child = Command::new("redis-server")
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .args(["--save", "", "--appendonly", "yes", "--appendfsync", "always"])
            .arg("--dir")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!(
                    "cannot start redis-server ({error}): run scripts/test, which installs it, or `apt-get install -y redis-server`"
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.answers() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
        let mut answer = [0u8; 5];
        stream.write_all(b"PING\r\n").is_ok()
            && stream.read_exact(&mut answer).is_ok()
            && &answer == b"+PONG"
    }

    /// Kills it at once, as a crash would.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A process of the `fleet` binary, killed when dropped.
struct Instance(Child);

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fleet(redis: &Redis, prefix: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_fleet"));
    command.arg(redis.url()).arg(prefix).args(args);
    command
}

fn answer(command: &mut Command) -> Value {
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn two_instances_admit_exactly_the_daily_limit_between_them_and_share_a_cooldown() {
    let redis = Redis::start();
    let limit = 37;
    let run = |_| {
        fleet(&redis, "limits", &["calls", "500", &limit.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let instances: Vec<Child> = (0..2).map(run).collect();
    let mut admitted = 0;
    let mut refused = 0;
    for instance in instances {
        let output = instance.wait_with_output().unwrap();
        assert!(output.status.success(), "{output:?}");
        let counts: Value = serde_json::from_slice(&output.stdout).unwrap();
        admitted += counts["ok"].as_u64().unwrap_or(0);
        refused += counts["rate_limited"].as_u64().unwrap_or(0);
        assert_eq!(
            counts.as_object().unwrap().len(),
            counts
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| *k == "ok" || *k == "rate_limited")
                .count(),
            "{counts}"
        );
    }
    assert_eq!(admitted, limit, "1,000 calls, one limit");
    assert_eq!(refused, 1000 - limit);

    // The cooldown of one instance holds on the other.
    let first = answer(&mut fleet(&redis, "limits", &["ping"]));
    assert_eq!(first["outcome"], "ok");
    let second = answer(&mut fleet(&redis, "limits", &["ping"]));
    assert_eq!(second["outcome"], "rate_limited");
    // Another prefix is another deployment.
    let other = answer(&mut fleet(&redis, "elsewhere", &["ping"]));
    assert_eq!(other["outcome"], "ok");
}

#[test]
fn an_approval_made_on_one_instance_runs_once_on_another() {
    let redis = Redis::start();
    let held = answer(&mut fleet(&redis, "approvals", &["hold"]));
    assert_eq!(held["outcome"], "needs_approval");
    let token = held["token"].as_str().unwrap().to_owned();
    let ran = answer(&mut fleet(&redis, "approvals", &["approve", &token]));
    assert_eq!(ran["outcome"], "ok", "{ran}");
    assert_eq!(ran["content"], "sent 5 to bob");
    for _ in 0..2 {
        let again = answer(&mut fleet(&redis, "approvals", &["approve", &token]));
        assert_eq!(again["outcome"], "approval_refused", "{again}");
    }
    let made_up = answer(&mut fleet(
        &redis,
        "approvals",
        &["approve", "0123456789abcdef"],
    ));
    assert_eq!(made_up["outcome"], "approval_refused");
}

/// Reads the watcher's lines until one's tool list satisfies `wanted`.
fn wait_for(
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    wanted: impl Fn(&[Value]) -> bool,
) -> Instant {
    for line in lines {
        let line = line.unwrap();
        let tools: Value = serde_json::from_str(&line).unwrap();
        if wanted(tools["tools"].as_array().unwrap()) {
            return Instant::now();
        }
    }
    panic!("the watcher stopped");
}

fn has_burst(tools: &[Value]) -> bool {
    tools.iter().any(|tool| tool == "burst")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disable_reaches_every_instance_within_a_second_and_one_started_later() {
    let redis = Redis::start();
    let watch = |redis: &Redis| {
        let mut child = fleet(redis, "switches", &["watch"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        (Instance(child), lines)
    };
    let (_b, mut b_lines) = watch(&redis);
    wait_for(&mut b_lines, has_burst);

    let operator = Fleet::new(&redis.url()).unwrap().prefix("switches");
    let sent = Instant::now();
    operator.disable(&Selector::name("burst")).await.unwrap();
    let seen = tokio::task::spawn_blocking(move || {
        let at = wait_for(&mut b_lines, |tools| !has_burst(tools));
        (at, b_lines)
    });
    let (seen_at, mut b_lines) = tokio::time::timeout(Duration::from_secs(10), seen)
        .await
        .expect("the other instance saw the disable")
        .unwrap();
    let took = seen_at.duration_since(sent);
    assert!(took < Duration::from_secs(1), "seen after {took:?}");

    // One that starts afterwards reads it first.
    let (_c, mut c_lines) = watch(&redis);
    let first: Value = serde_json::from_str(&c_lines.next().unwrap().unwrap()).unwrap();
    assert!(!has_burst(first["tools"].as_array().unwrap()), "{first}");
    assert!(!first["tools"].as_array().unwrap().is_empty());

    operator.enable(&Selector::name("burst")).await.unwrap();
    tokio::task::spawn_blocking(move || wait_for(&mut b_lines, has_burst))
        .await
        .unwrap();
}

/// This test's own instance: a tool with a daily limit of 5, one without limits.
fn instance(fleet: &Fleet) -> Arc<Registry> {
    let registry = Registry::builder()
        .without_linked()
        .redis(fleet)
        .build()
        .unwrap();
    let limited = ToolSpec::builder("limited")
        .description("Five a day.")
        .permission(Permission::Guest)
        .daily_limit(5)
        .build()
        .unwrap();
    let confirmed = ToolSpec::builder("confirmed")
        .description("Asks a person first.")
        .permission(Permission::Guest)
        .requires_confirmation(true)
        .build()
        .unwrap();
    let free = ToolSpec::builder("free")
        .description("No limits.")
        .permission(Permission::Guest)
        .build()
        .unwrap();
    for spec in [limited, confirmed, free] {
        registry
            .register(
                spec,
                ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ran") }),
            )
            .unwrap();
    }
    Arc::new(registry)
}

async fn outcome(registry: &Registry, tool: &str) -> (String, Duration) {
    let started = Instant::now();
    let result = registry
        .call(tool, "{}", &Ctx::for_scope(Scope::user("u")))
        .for_model()
        .await;
    (tool_registry_tests::outcome(&result), started.elapsed())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_redis_dies_limited_tools_refuse_typed_the_rest_serve_and_counts_resume_exact() {
    let mut redis = Redis::start();
    let deadline = Duration::from_millis(300);
    let fleet = Fleet::new(&redis.url())
        .unwrap()
        .prefix("outage")
        .timeout(deadline);
    let registry = instance(&fleet);
    let lenient = instance(
        &fleet
            .clone()
            .fallback_in_memory(true)
            .prefix("outage-lenient"),
    );
    for _ in 0..3 {
        assert_eq!(outcome(&registry, "limited").await.0, "ok");
    }
    assert_eq!(outcome(&registry, "confirmed").await.0, "needs_approval");

    redis.kill();
    for tool in ["limited", "confirmed"] {
        let (code, took) = outcome(&registry, tool).await;
        assert_eq!(code, "store_unavailable", "{tool}");
        // Bounded by the fleet's timeout (a connection attempt and an answer), not by Redis.
        assert!(
            took < deadline * 4 + Duration::from_secs(1),
            "{tool} waited {took:?}"
        );
    }
    let (code, _) = outcome(&registry, "free").await;
    assert_eq!(code, "ok", "a tool without limits keeps serving");
    let (code, _) = outcome(&lenient, "limited").await;
    assert_eq!(code, "ok", "the in-memory fallback admits, when asked to");

    redis.restart();
    let back = Instant::now() + Duration::from_secs(20);
    let mut admitted = 3;
    loop {
        match outcome(&registry, "limited").await.0.as_str() {
            "ok" => {
                admitted += 1;
                break;
            }
            "store_unavailable" => {
                assert!(Instant::now() < back, "service did not resume");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            other => panic!("{other}"),
        }
    }
    // Nothing counted before the crash was lost, and nothing refused meanwhile counted.
    loop {
        match outcome(&registry, "limited").await.0.as_str() {
            "ok" => admitted += 1,
            "rate_limited" => break,
            other => panic!("{other}"),
        }
    }
    assert_eq!(admitted, 5);
    assert_eq!(outcome(&registry, "confirmed").await.0, "needs_approval");
}

/// The `module` binary (the command line over this crate's tools) with `--redis`, in a folder
/// of its own, so that no file store can stand in for Redis.
fn cli(redis_url: &str, args: &[&str]) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    Command::new(env!("CARGO_BIN_EXE_module"))
        .current_dir(dir.path())
        .args(["--redis", redis_url, "--redis-prefix", "cli"])
        .args(args)
        .env_remove("TOOLREG_REDIS")
        .env_remove("TOOLREG_REDIS_PASSWORD")
        .output()
        .unwrap()
}

#[test]
fn every_command_of_the_command_line_is_an_instance_with_redis() {
    let redis = Redis::start();
    let url = redis.url();
    let spend = |n| {
        let output = cli(&url, &["--user", "u", "call", "quota.spend", "{}"]);
        (
            n,
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
        )
    };
    let answers: Vec<_> = (0..4).map(spend).collect();
    for (n, code, _) in &answers[..3] {
        assert_eq!(*code, Some(0), "call {n}: {answers:?}");
    }
    let (_, code, text) = &answers[3];
    assert_eq!(*code, Some(1));
    assert!(text.contains("rate_limited"), "{text}");

    let names = |output: std::process::Output| String::from_utf8_lossy(&output.stdout).into_owned();
    let off = cli(&url, &["disable", "quota.ping"]);
    assert_eq!(off.status.code(), Some(0), "{off:?}");
    assert!(!names(cli(&url, &["list"])).contains("quota.ping"));
    let plain = tempfile::tempdir().unwrap();
    let elsewhere = Command::new(env!("CARGO_BIN_EXE_module"))
        .current_dir(plain.path())
        .arg("list")
        .env_remove("TOOLREG_REDIS")
        .output()
        .unwrap();
    assert!(
        names(elsewhere).contains("quota.ping"),
        "without --redis, the switch is not there"
    );
    assert_eq!(cli(&url, &["enable", "quota.ping"]).status.code(), Some(0));
    assert!(names(cli(&url, &["list"])).contains("quota.ping"));

    // Credentials are never shown, and a Redis that is not there is a typed refusal.
    let gone = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let secret = format!("redis://user:s3cret@127.0.0.1:{gone}/0");
    let refused = cli(&secret, &["--user", "u", "call", "quota.spend", "{}"]);
    let all = format!("{refused:?}");
    assert!(!all.contains("s3cret"), "{all}");
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stdout).contains("store_unavailable"),
        "{all}"
    );
    let bad = cli("not a url", &["list"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("redis://"),
        "{bad:?}"
    );
}

impl Redis {
    /// One inline command's answer line, e.g. `:3600` for `TTL key`.
    fn command(&self, line: &str) -> String {
        let mut stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.write_all(format!("{line}\r\n").as_bytes()).unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        answer.trim_end().to_owned()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_instance_lists_every_module_from_the_fleets_manifests_without_asking_any() {
    use tool_registry::http::{Gateway, Module, ModuleMap, Server, Source};

    let redis = Redis::start();
    let fleet = Fleet::new(&redis.url()).unwrap().prefix("manifests");
    let served = instance(&Fleet::new(&redis.url()).unwrap().prefix("module"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let app = Server::new(served).name("lab").router();
    let server = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let map = ModuleMap::new().with("lab", Module::new(&addr));

    let first = Gateway::builder(instance(&fleet), map.clone())
        .cache(fleet.manifest_cache())
        .build()
        .unwrap();
    assert_eq!(first.start().await[0].source, Source::Fetched);
    let ttl: i64 = redis.command("TTL manifests:module_manifest:lab")[1..]
        .parse()
        .unwrap();
    assert!(
        (3500..=3600).contains(&ttl),
        "the manifest keeps its TTL: {ttl}"
    );
    server.abort();
    let _ = server.await;

    // Another instance, the module gone: listed from Redis, and a call says the module is down.
    let registry = instance(&fleet);
    let second = Gateway::builder(registry.clone(), map)
        .cache(fleet.manifest_cache())
        .build()
        .unwrap();
    assert_eq!(second.start().await[0].source, Source::Cache);
    assert!(registry.get("lab.limited", Listing::every()).is_some());
    let (code, _) = outcome(&registry, "lab.free").await;
    assert_eq!(code, "module_unreachable");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_instance_started_while_redis_is_away_follows_the_switches_once_it_is_back() {
    let mut redis = Redis::start();
    redis.kill();
    let fleet = Fleet::new(&redis.url())
        .unwrap()
        .prefix("late")
        .timeout(Duration::from_millis(200));
    let registry = instance(&fleet);
    assert!(fleet.join(registry.clone()).await.is_err(), "Redis is away");
    let _following = fleet.follow(registry.clone());
    assert!(registry.get("free", &Scope::guest()).is_some());

    redis.restart();
    let operator = Fleet::new(&redis.url()).unwrap().prefix("late");
    operator.disable(&Selector::name("free")).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while registry.get("free", &Scope::guest()).is_some() {
        assert!(Instant::now() < deadline, "the switch never arrived");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A Redis that accepts connections and says nothing, the worst a hung Redis does, on a port of
/// loopback; it holds what it accepts until the test process ends.
fn hung_redis() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_that_never_answers_holds_no_call_past_the_fleets_timeout() {
    let port = hung_redis();
    let timeout = Duration::from_millis(200);
    let fleet = Fleet::new(&format!("redis://127.0.0.1:{port}/0"))
        .unwrap()
        .prefix("hung")
        .timeout(timeout);
    let registry = instance(&fleet);
    let calls = (0..20).map(|_| {
        let registry = registry.clone();
        tokio::spawn(async move { outcome(&registry, "limited").await })
    });
    for call in calls.collect::<Vec<_>>() {
        let (code, took) = call.await.unwrap();
        assert_eq!(code, "store_unavailable");
        assert!(took < timeout * 5, "a call waited {took:?}");
    }
    assert_eq!(outcome(&registry, "free").await.0, "ok");
}

#[test]
fn a_one_shot_call_with_redis_not_answering_waits_one_timeout_in_all() {
    let url = format!("redis://127.0.0.1:{}/0", hung_redis());
    let timeout = Duration::from_secs(3);
    let started = Instant::now();
    // The switches are read, then the call's daily limit is taken: two operations, one wait.
    let output = cli(
        &url,
        &[
            "--redis-timeout",
            "3s",
            "--user",
            "u",
            "call",
            "quota.spend",
            "{}",
        ],
    );
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        result["content"]["error"]["code"], "store_unavailable",
        "{result}"
    );
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("switches are not applied"),
        "{output:?}"
    );
    // A liveness bound with room for the process to start: two timeouts in a row break it.
    assert!(
        took < timeout + Duration::from_secs(2),
        "the call took {took:?} with a fleet timeout of {timeout:?}"
    );
}

#[test]
fn two_processes_share_cached_results_per_user_and_a_missing_redis_means_no_cache() {
    let redis = Redis::start();
    let url = redis.url();
    let stamp = |url: &str, user: &str| {
        let output = cli(
            url,
            &["--user", user, "call", "quota.stamp", r#"{"word": "w"}"#],
        );
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        result["content"].as_str().unwrap().to_owned()
    };
    // Each `module` process answers with its own process id: the second answer is the first's,
    // from Redis.
    let first = stamp(&url, "ann");
    let second = stamp(&url, "ann");
    assert_eq!(first, second);
    assert!(first.starts_with("w for ann by process "), "{first}");
    // Another user never sees ann's answer.
    let bob = stamp(&url, "bob");
    assert!(bob.starts_with("w for bob"), "{bob}");
    assert_ne!(bob, first);
    // The key names nothing of the call.
    let keys = redis.command("KEYS *result*");
    assert!(!keys.contains("ann") && !keys.contains("quota"), "{keys}");

    // No Redis at all: each call runs its tool and answers right.
    let gone = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let missing = format!("redis://127.0.0.1:{gone}/0");
    let alone = stamp(&missing, "ann");
    assert!(alone.starts_with("w for ann by process "), "{alone}");
    assert_ne!(alone, first);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_calls_on_one_instance_run_the_handler_once_with_the_cache_in_redis() {
    let redis = Redis::start();
    let fleet = Fleet::new(&redis.url()).unwrap().prefix("flights");
    let runs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let instance = |runs: Arc<std::sync::atomic::AtomicUsize>| {
        let registry = Registry::builder()
            .without_linked()
            .redis(&fleet)
            .build()
            .unwrap();
        let spec = ToolSpec::builder("slow_lookup")
            .description("A slow read.")
            .annotations(tool_registry::def::Annotations {
                read_only: Some(true),
                ..tool_registry::def::Annotations::NONE
            })
            .cache(Duration::from_secs(60))
            .build()
            .unwrap();
        registry
            .register(
                spec,
                ToolHandler::new(move |_: Value, _: Ctx| {
                    let runs = runs.clone();
                    async move {
                        runs.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        Ok::<_, String>("looked up")
                    }
                }),
            )
            .unwrap();
        Arc::new(registry)
    };
    let (a, b) = (instance(runs.clone()), instance(runs.clone()));
    let calls: Vec<_> = (0..200)
        .map(|i| {
            let registry = if i % 2 == 0 { a.clone() } else { b.clone() };
            tokio::spawn(async move {
                let ctx = Ctx::new().with_user("crowd");
                registry
                    .call("slow_lookup", "{}", &ctx)
                    .await
                    .unwrap()
                    .content
            })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap(), "looked up");
    }
    let ran = runs.load(std::sync::atomic::Ordering::SeqCst);
    assert!((1..=2).contains(&ran), "once per instance at most: {ran}");
    // Later calls, on either instance, come from Redis.
    let later = a
        .call("slow_lookup", "{}", &Ctx::new().with_user("crowd"))
        .await;
    assert_eq!(later.unwrap().content, "looked up");
    assert_eq!(runs.load(std::sync::atomic::Ordering::SeqCst), ran);
}

/// A task in the fleet's Redis while Redis goes away: reading it is the typed error
/// `TaskError::Store`, the call runs on, and its end is recorded once Redis is back within the
/// lease; the handler ran once. A cancel racing its end then finds it ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_outlives_a_redis_outage_within_its_lease_and_runs_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tool_registry::task::{
        Become, Started, TaskCall, TaskError, TaskLimits, TaskOwner, TaskStatus, Tasks, owner_of,
    };

    let mut redis = Redis::start();
    let fleet = Fleet::new(&redis.url())
        .unwrap()
        .prefix("tasks")
        .timeout(Duration::from_millis(300));
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let slow = ToolSpec::builder("slow")
        .description("Takes a second and a half.")
        .permission(Permission::Guest)
        .build()
        .unwrap();
    registry
        .register(
            slow,
            ToolHandler::new(|_: Value, _: Ctx| async {
                RUNS.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(1500)).await;
                Ok::<_, String>("done")
            }),
        )
        .unwrap();
    let limits = TaskLimits {
        lease: Duration::from_secs(8),
        poll_interval: Duration::from_millis(100),
        ..TaskLimits::default()
    };
    let tasks = Tasks::new(Arc::new(fleet.task_store()), limits);
    let scope = Scope::user("u");
    let owner = owner_of(&scope);
    let call = TaskCall {
        tool: "slow".into(),
        arguments: serde_json::json!({}),
        ctx: Ctx::for_scope(scope.clone()),
        owner: TaskOwner::of(&scope),
        asks: true,
        inputs: None,
    };
    let Started::Task(task) = tasks
        .run(registry.clone().into(), call, Become::Now)
        .await
        .unwrap()
    else {
        panic!("not a task")
    };
    redis.kill();
    let error = tasks.get(&owner, &task.id).await.unwrap_err();
    assert!(matches!(error, TaskError::Store(_)), "{error:?}");
    // The call ends while Redis is away; its end waits for Redis.
    tokio::time::sleep(Duration::from_millis(1800)).await;
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    let done = loop {
        match tasks.get(&owner, &task.id).await {
            Ok(done) if done.status.is_terminal() => break done,
            Ok(_) | Err(TaskError::Store(_)) => {
                assert!(Instant::now() < deadline, "the end was never recorded");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(other) => panic!("{other:?}"),
        }
    };
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    assert_eq!(done.result.unwrap().content, serde_json::json!("done"));
    assert_eq!(RUNS.load(Ordering::SeqCst), 1, "the handler ran once");
    assert_eq!(
        tasks.cancel(&owner, &task.id).await.unwrap_err(),
        TaskError::Ended(TaskStatus::Completed)
    );
    // Another caller reads nothing of it in Redis either.
    let other = owner_of(&Scope::user("v"));
    assert_eq!(
        tasks.get(&other, &task.id).await.unwrap_err(),
        TaskError::NotFound
    );
    assert!(tasks.list(&other).await.unwrap().is_empty());
    assert_eq!(tasks.list(&owner).await.unwrap().len(), 1);
}

/// An MCP module's OAuth tokens in the fleet: what one instance saved, another loads; one
/// instance refreshes at a time, the next waiting until the first gives the refresh back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_tokens_are_shared_by_the_fleet_and_refreshed_by_one_instance_at_a_time() {
    use rmcp::transport::auth::{CredentialStore, StoredCredentials};
    use tool_registry::redis::REFRESH_LOCK;

    let redis = Redis::start();
    let one = Fleet::new(&redis.url())
        .unwrap()
        .prefix("oauth")
        .credentials("hosted");
    let two = Fleet::new(&redis.url())
        .unwrap()
        .prefix("oauth")
        .credentials("hosted");
    assert!(two.load().await.unwrap().is_none());
    let saved = StoredCredentials::new("gateway".into(), None, vec!["tools".into()], Some(1));
    one.save(saved).await.unwrap();
    let loaded = two.load().await.unwrap().unwrap();
    assert_eq!(
        (loaded.client_id.as_str(), loaded.granted_scopes.as_slice()),
        ("gateway", &["tools".to_owned()][..])
    );

    let held = one.acquire_refresh_guard().await.unwrap();
    let waiting = tokio::spawn(async move {
        two.acquire_refresh_guard()
            .await
            .map(|guard| guard.is_some())
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "the second instance waits while the first refreshes"
    );
    drop(held);
    let second = tokio::time::timeout(Duration::from_secs(2), waiting).await;
    assert!(
        matches!(second, Ok(Ok(Ok(true)))),
        "it refreshes once the first is done"
    );
    assert!(REFRESH_LOCK >= Duration::from_secs(10));

    one.clear().await.unwrap();
    assert!(one.load().await.unwrap().is_none());
}
