//! Files shared by `toolreg` processes: the schedule, the approvals file and the rate-limit
//! file, changed by many real processes at once, edited by hand, linked and write-protected.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common;
use common::{toolreg_command, workspace};

/// A folder with everything `toolreg` keeps, and the flags that point there.
struct Workspace {
    dir: tempfile::TempDir,
}

impl Workspace {
    fn new() -> Self {
        let dir = workspace();
        std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
        Self { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = toolreg_command(self.dir.path(), &[]);
        let flag =
            |name: &str, file: &str| [name.to_owned(), self.path(file).display().to_string()];
        command
            .args(flag("--kb", "kb"))
            .args(flag("--sandbox", "sandbox"))
            .args(flag("--schedule", "scheduler.json"))
            .args(flag("--approvals", "approvals.json"))
            .args(flag("--limits", "limits.json"))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("toolreg runs")
    }

    /// Starts every command before waiting for any.
    fn run_all(&self, runs: &[Vec<String>]) -> Vec<Output> {
        let children: Vec<Child> = runs
            .iter()
            .map(|args| {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                self.command(&args).spawn().expect("toolreg starts")
            })
            .collect();
        children
            .into_iter()
            .map(|child| child.wait_with_output().expect("toolreg ends"))
            .collect()
    }

    fn json(&self, name: &str) -> Value {
        let text = std::fs::read_to_string(self.path(name)).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name} is not JSON ({e}): {text}"))
    }
}

fn result(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn error_code(output: &Output) -> String {
    result(output)["content"]["error"]["code"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Asks for the deletion of `file` in the sandbox (a call that waits for approval) as `user`
/// and returns the token.
fn request_deletion(ws: &Workspace, user: &str, file: &str) -> String {
    let args = json!({ "path": file }).to_string();
    let held = ws.run(&["--user", user, "call", "file_manager.delete_file", &args]);
    token_of(&held)
}

fn token_of(held: &Output) -> String {
    let result = result(held);
    assert_eq!(
        result["content"]["error"]["code"], "needs_approval",
        "{result}"
    );
    result["content"]["error"]["token"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn fifty_processes_adding_jobs_store_fifty_jobs() {
    let ws = Workspace::new();
    let runs: Vec<Vec<String>> = (0..50)
        .map(|i| {
            let job = json!({"name": format!("job-{i:02}"), "schedule": "@daily", "command": format!("echo {i}")});
            strings(&["call", "scheduler.add_job", &job.to_string()])
        })
        .collect();
    for output in ws.run_all(&runs) {
        assert_eq!(output.status.code(), Some(0), "{}", result(&output));
    }
    let names: BTreeSet<String> = ws.json("scheduler.json")["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|job| job["name"].as_str().unwrap().to_owned())
        .collect();
    let expected: BTreeSet<String> = (0..50).map(|i| format!("job-{i:02}")).collect();
    assert_eq!(names, expected);
}

#[test]
fn fifty_processes_awaiting_approval_keep_fifty_tokens() {
    let ws = Workspace::new();
    let runs: Vec<Vec<String>> = (0..50)
        .map(|i| {
            let args = json!({ "path": format!("f{i}.txt") }).to_string();
            strings(&["--user", "alice", "call", "file_manager.delete_file", &args])
        })
        .collect();
    let tokens: BTreeSet<String> = ws.run_all(&runs).iter().map(token_of).collect();
    assert_eq!(tokens.len(), 50, "every call got its own token");
    let text = serde_json::to_string(&ws.json("approvals.json")).unwrap();
    let missing: Vec<&String> = tokens.iter().filter(|t| !text.contains(*t)).collect();
    assert!(missing.is_empty(), "tokens lost from the file: {missing:?}");
}

#[test]
fn a_token_approved_by_ten_processes_at_once_runs_once() {
    let ws = Workspace::new();
    // Several tokens, each approved by ten processes, all at once and in several rounds, so
    // that a race has many chances to show.
    for round in 0..4 {
        let files: Vec<String> = (0..5).map(|i| format!("doomed-{round}-{i}.txt")).collect();
        let tokens: Vec<String> = files
            .iter()
            .map(|file| {
                std::fs::write(ws.path("sandbox").join(file), "x").unwrap();
                request_deletion(&ws, "alice", file)
            })
            .collect();
        let runs: Vec<Vec<String>> = (0..10)
            .flat_map(|_| tokens.iter())
            .map(|token| strings(&["--user", "alice", "approve", token]))
            .collect();
        let outputs = ws.run_all(&runs);
        for (t, token) in tokens.iter().enumerate() {
            let codes: Vec<String> = outputs
                .iter()
                .skip(t)
                .step_by(tokens.len())
                .map(|o| {
                    if o.status.code() == Some(0) {
                        "ok".to_owned()
                    } else {
                        error_code(o)
                    }
                })
                .collect();
            let ran = codes.iter().filter(|c| *c == "ok").count();
            let refused = codes.iter().filter(|c| *c == "approval_refused").count();
            assert_eq!(
                (ran, refused),
                (1, 9),
                "round {round}, token {token}: {codes:?}"
            );
        }
        for file in &files {
            assert!(!ws.path("sandbox").join(file).exists(), "{file}");
        }
    }
}

#[test]
fn research_is_admitted_three_times_a_day_across_processes() {
    let ws = Workspace::new();
    let query = r#"{"query": "cache"}"#;
    let sequential: Vec<Option<i32>> = (0..6)
        .map(|_| {
            ws.run(&["--user", "alice", "call", "research", query])
                .status
                .code()
        })
        .collect();
    assert_eq!(
        sequential,
        [Some(0), Some(0), Some(0), Some(1), Some(1), Some(1)]
    );
    let refused = ws.run(&["--user", "alice", "call", "research", query]);
    assert_eq!(error_code(&refused), "rate_limited");

    let runs = vec![strings(&["--user", "bob", "call", "research", query]); 12];
    let outputs = ws.run_all(&runs);
    let admitted = outputs
        .iter()
        .filter(|o| o.status.code() == Some(0))
        .count();
    assert_eq!(admitted, 3, "exactly the daily limit, even at once");
    assert!(
        outputs
            .iter()
            .filter(|o| o.status.code() != Some(0))
            .all(|o| error_code(o) == "rate_limited")
    );
}

#[test]
fn an_edited_pending_call_is_refused_and_does_not_run() {
    let ws = Workspace::new();
    for file in ["a.txt", "b.txt"] {
        std::fs::write(ws.path("sandbox").join(file), "x").unwrap();
    }
    let token = request_deletion(&ws, "alice", "a.txt");
    let path = ws.path("approvals.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("a.txt"), "{text}");
    std::fs::write(&path, text.replace("a.txt", "b.txt")).unwrap();

    let approved = ws.run(&["--user", "alice", "approve", &token]);
    assert_eq!(approved.status.code(), Some(1));
    assert_eq!(
        error_code(&approved),
        "approval_altered",
        "{}",
        result(&approved)
    );
    let message = result(&approved)["message"].as_str().unwrap().to_owned();
    assert!(message.contains("altered"), "{message}");
    assert!(
        ws.path("sandbox/b.txt").exists(),
        "the edited call did not run"
    );
    assert!(ws.path("sandbox/a.txt").exists(), "nor the original");

    // A pending call with its MAC taken away is refused too.
    let token = request_deletion(&ws, "alice", "a.txt");
    let mut doc = ws.json("approvals.json");
    let entry = doc
        .pointer_mut(&format!("/pending/{token}"))
        .and_then(Value::as_object_mut)
        .expect("the pending call is in the file");
    entry.remove("mac");
    std::fs::write(&path, doc.to_string()).unwrap();
    let approved = ws.run(&["--user", "alice", "approve", &token]);
    assert_eq!(error_code(&approved), "approval_altered");
    assert!(ws.path("sandbox/a.txt").exists());
}

#[test]
fn approving_out_of_scope_does_not_use_the_token_up() {
    let ws = Workspace::new();
    std::fs::write(ws.path("sandbox/a.txt"), "x").unwrap();
    let token = request_deletion(&ws, "alice", "a.txt");
    // `file_manager.delete_file` needs the `user` level; a guest does not see it.
    let guest = ws.run(&["--user", "alice", "--level", "guest", "approve", &token]);
    assert_eq!(guest.status.code(), Some(1));
    assert_eq!(error_code(&guest), "approval_refused");
    let message = result(&guest)["message"].as_str().unwrap().to_owned();
    assert!(message.contains("unknown"), "{message}");
    assert!(
        !message.contains("file_manager"),
        "the hidden tool is not named: {message}"
    );
    let denied = ws.run(&["--user", "alice", "--level", "guest", "deny", &token]);
    assert_eq!(error_code(&denied), "approval_refused");
    assert!(ws.path("sandbox/a.txt").exists());

    let admin = ws.run(&["--user", "alice", "--level", "admin", "approve", &token]);
    assert_eq!(admin.status.code(), Some(0), "{}", result(&admin));
    assert!(!ws.path("sandbox/a.txt").exists());
}

fn add_job(ws: &Workspace, name: &str) -> Output {
    let job = json!({"name": name, "schedule": "@hourly", "command": "true"});
    ws.run(&["call", "scheduler.add_job", &job.to_string()])
}

#[cfg(unix)]
#[test]
fn a_symlinked_schedule_stays_a_link_and_its_target_gets_the_jobs() {
    let ws = Workspace::new();
    std::fs::create_dir_all(ws.path("real")).unwrap();
    std::os::unix::fs::symlink("real/schedule.json", ws.path("scheduler.json")).unwrap();
    for name in ["one", "two"] {
        let output = add_job(&ws, name);
        assert_eq!(output.status.code(), Some(0), "{}", result(&output));
    }
    let link = std::fs::symlink_metadata(ws.path("scheduler.json")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was not replaced");
    let jobs = ws.json("real/schedule.json")["jobs"].clone();
    assert_eq!(jobs.as_array().map(Vec::len), Some(2), "{jobs}");
}

#[test]
fn a_read_only_schedule_is_refused_and_left_unchanged() {
    let ws = Workspace::new();
    let path = ws.path("scheduler.json");
    let before = r#"{"version": 1, "jobs": []}"#;
    std::fs::write(&path, before).unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&path, permissions).unwrap();

    let output = add_job(&ws, "blocked");
    assert_eq!(output.status.code(), Some(1));
    let message = result(&output)["message"].as_str().unwrap().to_owned();
    assert!(message.contains("read-only"), "{message}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    assert!(std::fs::metadata(&path).unwrap().permissions().readonly());
}

#[test]
fn unknown_keys_survive_a_rewrite() {
    let ws = Workspace::new();
    std::fs::write(
        ws.path("scheduler.json"),
        json!({
            "version": 1,
            "owner": "ops",
            "jobs": [{
                "name": "backup",
                "schedule": "@daily",
                "command": "backup.sh",
                "created_at": "2026-01-01T00:00:00Z",
                "retries": 3
            }]
        })
        .to_string(),
    )
    .unwrap();
    std::fs::write(ws.path("approvals.json"), r#"{"comment": "kept"}"#).unwrap();
    std::fs::write(ws.path("limits.json"), r#"{"comment": "kept"}"#).unwrap();

    assert_eq!(add_job(&ws, "report").status.code(), Some(0));
    let schedule = ws.json("scheduler.json");
    assert_eq!(schedule["owner"], "ops");
    assert_eq!(schedule["jobs"][0]["name"], "backup");
    assert_eq!(schedule["jobs"][0]["retries"], 3);
    assert_eq!(schedule["jobs"][1]["name"], "report");

    request_deletion(&ws, "alice", "a.txt");
    assert_eq!(ws.json("approvals.json")["comment"], "kept");
    let research = ws.run(&["--user", "alice", "call", "research", r#"{"query": "x"}"#]);
    assert_eq!(research.status.code(), Some(0), "{}", result(&research));
    assert_eq!(ws.json("limits.json")["comment"], "kept");
}

#[tokio::test]
async fn an_application_key_signs_for_every_registry_that_shares_it() {
    use tool_registry::gate::JsonFileApprovals;
    use tool_registry::{Ctx, Registry, Scope, ToolError};

    let ws = Workspace::new();
    let config = tool_registry_tools::Config {
        kb_dir: ws.path("kb"),
        inbox_dir: ws.path("kb/inbox"),
        sandbox_root: ws.path("sandbox"),
        schedule_file: ws.path("scheduler.json"),
    };
    let registry = |key: &str| {
        Registry::builder()
            .state(config.clone())
            .approval_store(JsonFileApprovals::new(ws.path("approvals.json")))
            .approval_key(key)
            .log_annotations(false)
            .build()
            .unwrap()
    };
    let alice = Ctx::for_scope(Scope::user("alice"));
    let hold = |registry: Registry| {
        let alice = alice.clone();
        async move {
            match registry
                .call("file_manager.delete_file", r#"{"path": "a.txt"}"#, &alice)
                .await
            {
                Err(ToolError::NeedsApproval { token, .. }) => token,
                other => panic!("expected a pending approval, got {other:?}"),
            }
        }
    };
    std::fs::write(ws.path("sandbox/a.txt"), "x").unwrap();

    let token = hold(registry("the application's secret, 32 bytes or more")).await;
    let other = registry("another application's secret, 32 bytes")
        .approve(&token, &alice)
        .await
        .unwrap_err();
    assert_eq!(other.code(), "approval_altered", "{other}");
    assert!(ws.path("sandbox/a.txt").exists());
    let done = registry("the application's secret, 32 bytes or more")
        .approve(&token, &alice)
        .await
        .unwrap();
    assert!(done.success);
    assert!(!ws.path("sandbox/a.txt").exists());
    assert!(
        !ws.path("approvals.json.key").exists(),
        "with the application's key, none is made beside the file"
    );
}

/// Runs `toolreg` and waits at most 20 seconds for it: a process that blocks on a file is
/// killed and the test fails, instead of hanging.
fn run_within(ws: &Workspace, args: &[&str]) -> Output {
    let mut child = ws.command(args).spawn().expect("toolreg starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if child.try_wait().expect("toolreg is waited for").is_some() {
            return child.wait_with_output().expect("toolreg ends");
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`toolreg {}` still runs after 20 s", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn all_text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[cfg(unix)]
fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

#[cfg(unix)]
#[test]
fn a_key_file_linked_to_dev_zero_is_refused_at_once() {
    let ws = Workspace::new();
    std::fs::write(ws.path("sandbox/a.txt"), "x").unwrap();
    let token = request_deletion(&ws, "alice", "a.txt");
    std::fs::remove_file(ws.path("approvals.json.key")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", ws.path("approvals.json.key")).unwrap();

    let approved = run_within(&ws, &["--user", "alice", "approve", &token]);
    assert_ne!(approved.status.code(), Some(0));
    let text = all_text(&approved);
    assert!(
        text.contains("approval key file") && text.contains("not a regular file"),
        "{text}"
    );
    assert!(ws.path("sandbox/a.txt").exists(), "nothing ran");
    // A new call that needs a signature meets the same refusal.
    let held = run_within(
        &ws,
        &[
            "--user",
            "alice",
            "call",
            "file_manager.delete_file",
            r#"{"path": "a.txt"}"#,
        ],
    );
    assert!(
        all_text(&held).contains("not a regular file"),
        "{}",
        all_text(&held)
    );
}

#[cfg(unix)]
#[test]
fn shared_files_that_are_fifos_are_refused_at_once() {
    let ws = Workspace::new();
    std::fs::write(ws.path("sandbox/a.txt"), "x").unwrap();
    for name in ["approvals.json", "limits.json", "scheduler.json"] {
        mkfifo(&ws.path(name));
    }
    let runs: [&[&str]; 5] = [
        // Awaiting approval writes the approvals file.
        &[
            "--user",
            "alice",
            "call",
            "file_manager.delete_file",
            r#"{"path": "a.txt"}"#,
        ],
        // Approving reads it.
        &[
            "--user",
            "alice",
            "approve",
            "0123456789abcdef0123456789abcdef",
        ],
        &[
            "--user",
            "alice",
            "deny",
            "0123456789abcdef0123456789abcdef",
        ],
        // A rate-limited tool reads and writes the limits file.
        &[
            "--user",
            "alice",
            "call",
            "research",
            r#"{"query": "cache"}"#,
        ],
        // The scheduler keeps its jobs in the schedule.
        &["call", "scheduler.list_jobs"],
    ];
    for args in runs {
        let output = run_within(&ws, args);
        assert_eq!(
            output.status.code(),
            Some(1),
            "{args:?}: {}",
            all_text(&output)
        );
        let text = all_text(&output);
        assert!(
            text.contains("is a FIFO, not a regular file"),
            "{args:?}: {text}"
        );
    }
    assert!(ws.path("sandbox/a.txt").exists());
}

#[test]
fn an_approvals_file_rolled_back_to_an_earlier_copy_does_not_run_a_token_twice() {
    let ws = Workspace::new();
    std::fs::write(ws.path("sandbox/a.txt"), "first").unwrap();
    let token = request_deletion(&ws, "alice", "a.txt");
    let copy = std::fs::read(ws.path("approvals.json")).unwrap();

    let approved = ws.run(&["--user", "alice", "approve", &token]);
    assert_eq!(approved.status.code(), Some(0), "{}", result(&approved));
    assert!(!ws.path("sandbox/a.txt").exists());

    // The file comes back, and so does the earlier copy of the approvals file, whose entry
    // still carries a valid MAC.
    std::fs::write(ws.path("sandbox/a.txt"), "second").unwrap();
    std::fs::write(ws.path("approvals.json"), &copy).unwrap();
    for command in ["approve", "deny"] {
        let again = ws.run(&["--user", "alice", command, &token]);
        assert_eq!(
            again.status.code(),
            Some(1),
            "{command}: {}",
            result(&again)
        );
        assert_eq!(error_code(&again), "approval_refused", "{command}");
        let message = result(&again)["message"].as_str().unwrap().to_owned();
        assert!(message.contains("already used"), "{message}");
        std::fs::write(ws.path("approvals.json"), &copy).unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(ws.path("sandbox/a.txt")).unwrap(),
        "second",
        "the call ran once"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(ws.path("approvals.json.used"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "private like the key");
    }
}
