//! The `toolreg` binary end to end, and the freshness of `docs/TOOLS.md`.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;
use tool_registry::Listing;
use tool_registry::Registry;
use tool_registry::format::Provider;
use tool_registry_tools as _;

use crate::common;
#[path = "common/hooks.rs"]
mod hooks;
use common::{toolreg_command, workspace};

fn toolreg(root: &Path, args: &[&str]) -> Output {
    toolreg_command(root, args).output().expect("toolreg runs")
}

/// The names `toolreg FLAGS list --format json` lists in `root`.
fn listed(root: &Path, flags: &[&str]) -> Vec<String> {
    let output = toolreg(root, &[flags, &["list", "--format", "json"]].concat());
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout_json(&output)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

#[test]
fn call_with_a_wrong_argument_type_names_the_field_and_exits_1() {
    let dir = workspace();
    let output = toolreg(
        dir.path(),
        &[
            "call",
            "research",
            r#"{"query": "caching", "limit": "five"}"#,
        ],
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let result = stdout_json(&output);
    assert_eq!(result["success"], false);
    assert_eq!(result["content"]["error"]["code"], "invalid_arguments");
    assert_eq!(result["content"]["error"]["path"], "limit");
    let message = result["message"].as_str().unwrap();
    assert!(message.contains("at `limit`"), "{message}");
    assert!(message.contains("expected u32"), "{message}");
}

#[test]
fn call_of_an_unknown_tool_exits_1() {
    let dir = workspace();
    let output = toolreg(dir.path(), &["call", "no_such_tool", "{}"]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout_json(&output)["content"]["error"]["code"],
        "unknown_tool"
    );
}

#[test]
fn successful_call_prints_the_result_and_exits_0() {
    let dir = workspace();
    let output = toolreg(
        dir.path(),
        &[
            "call",
            "research",
            r#"{"query": "cache manifests"}"#,
            "--user",
            "alice",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let result = stdout_json(&output);
    assert_eq!(result["success"], true);
    assert_eq!(result["audit"]["tool"], "research");
    assert_eq!(result["audit"]["user"], "alice");
    assert!(
        result["content"].to_string().contains("caching.md"),
        "{result}"
    );
}

#[test]
fn path_flags_override_the_defaults() {
    let dir = workspace();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let sandbox = elsewhere.to_string_lossy().into_owned();
    let output = toolreg(
        dir.path(),
        &[
            "--sandbox",
            &sandbox,
            "call",
            "file_manager.create_document",
            r#"{"path": "note.txt", "content": "hi"}"#,
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(elsewhere.join("note.txt")).unwrap(),
        "hi"
    );
    assert!(!dir.path().join("sandbox/note.txt").exists());
}

#[test]
fn usage_errors_exit_2() {
    let dir = workspace();
    assert_eq!(toolreg(dir.path(), &["frobnicate"]).status.code(), Some(2));
    assert_eq!(
        toolreg(dir.path(), &["catalog", "--format", "pdf"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        toolreg(dir.path(), &["schema", "no_such_tool"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(toolreg(dir.path(), &["--kb"]).status.code(), Some(2));
    // A knowledge base named that is not there: an error naming it, not an empty search.
    let missing = toolreg(
        dir.path(),
        &[
            "--kb",
            "no-such-folder",
            "call",
            "research",
            r#"{"query": "x"}"#,
        ],
    );
    assert_eq!(missing.status.code(), Some(2), "{missing:?}");
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no-such-folder is not a folder"));
    // `--help` names the flags the reference binary reads itself.
    let help = toolreg(dir.path(), &["--help"]);
    assert_eq!(help.status.code(), Some(0));
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--kb <DIR>",
        "--inbox <DIR>",
        "--sandbox <DIR>",
        "--schedule <FILE>",
    ] {
        assert!(text.contains(flag), "{flag}: {text}");
    }
}

#[test]
fn list_schema_tools_and_catalog_describe_the_same_tools() {
    let dir = workspace();
    let registry = Registry::global();

    let list = toolreg(dir.path(), &["list", "--format", "json"]);
    assert_eq!(list.status.code(), Some(0));
    let names: Vec<String> = stdout_json(&list)
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = registry
        .tools(Listing::every())
        .into_iter()
        .map(|t| t.name().to_owned())
        .collect();
    assert_eq!(names, expected);

    let tools = stdout_json(&toolreg(dir.path(), &["tools", "--format", "openai"]));
    assert_eq!(
        &tools,
        &*registry.provider_tools(Provider::OpenAi, tool_registry::Listing::every())
    );
    for provider in tool_registry::format::Provider::ALL {
        let tools = stdout_json(&toolreg(
            dir.path(),
            &["tools", "--format", provider.as_str()],
        ));
        assert_eq!(
            tools,
            registry.provider_tools(provider, &tool_registry::Scope::trusted())
        );
    }

    let schema = stdout_json(&toolreg(dir.path(), &["schema", "research"]));
    assert_eq!(schema["properties"]["query"]["type"], "string");
    assert_eq!(schema["required"], serde_json::json!(["query"]));

    let catalog = stdout_json(&toolreg(dir.path(), &["catalog", "--format", "json"]));
    assert_eq!(catalog["tools"].as_array().unwrap().len(), expected.len());

    let markdown = toolreg(dir.path(), &["catalog"]);
    assert_eq!(
        String::from_utf8(markdown.stdout).unwrap(),
        registry
            .catalog(Listing::every())
            .with_token_counts()
            .markdown()
    );
    let html = toolreg(dir.path(), &["catalog", "--format", "html"]);
    let page = registry
        .catalog(Listing::every())
        .with_token_counts()
        .html();
    assert!(
        String::from_utf8(html.stdout).unwrap() == page,
        "the page differs"
    );

    let snapshot = toolreg(dir.path(), &["snapshot"]);
    assert_eq!(snapshot.status.code(), Some(0), "{snapshot:?}");
    let snapshot: tool_registry::spec::RegistrySnapshot =
        serde_json::from_slice(&snapshot.stdout).expect("a snapshot");
    assert_eq!(snapshot, registry.snapshot());
    let names: Vec<&str> = snapshot.tools.iter().map(|e| e.spec.tool_name()).collect();
    assert_eq!(names, expected);
    assert!(snapshot.tools.iter().all(|e| e.enabled));
}

#[test]
fn snapshot_keeps_switched_off_tools_with_their_switch() {
    let dir = workspace();
    let off = toolreg(dir.path(), &["disable", "file_manager.read"]);
    assert_eq!(off.status.code(), Some(0), "{off:?}");
    let switches = |args: &[&str]| -> Vec<(String, bool)> {
        let output = toolreg(dir.path(), &[args, &["snapshot"]].concat());
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let snapshot: tool_registry::spec::RegistrySnapshot =
            serde_json::from_slice(&output.stdout).expect("a snapshot");
        (snapshot.tools.iter())
            .map(|e| (e.spec.tool_name().to_owned(), e.enabled))
            .collect()
    };

    let every = switches(&[]);
    let expected: Vec<String> = Registry::global()
        .tools(Listing::every())
        .into_iter()
        .map(|t| t.name().to_owned())
        .collect();
    let names: Vec<&String> = every.iter().map(|(name, _)| name).collect();
    assert_eq!(names, expected.iter().collect::<Vec<_>>());
    for (name, enabled) in &every {
        assert_eq!(*enabled, name != "file_manager.read", "{name}");
    }
    assert!(
        !listed(dir.path(), &[]).contains(&"file_manager.read".to_owned()),
        "switched off for listing"
    );

    // A guest's snapshot: the guest's tools, the switched-off one among them, nothing else.
    let guest = switches(&["--level", "guest"]);
    assert!(
        guest.contains(&("file_manager.read".to_owned(), false)),
        "{guest:?}"
    );
    for hidden in HIDDEN_FROM_GUEST {
        assert!(guest.iter().all(|(name, _)| name != hidden), "{guest:?}");
    }
}

/// `docs/TOOLS.md` is generated from the reference tools. Regenerate it with
/// `UPDATE_TOOLS_MD=1 cargo test -p tool-registry-tools --test tools toolreg::`.
#[test]
fn tools_md_is_up_to_date() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/TOOLS.md");
    let fresh = Registry::global()
        .catalog(Listing::every())
        .with_token_counts()
        .markdown();
    if std::env::var_os("UPDATE_TOOLS_MD").is_some() {
        std::fs::write(&path, &fresh).expect("write docs/TOOLS.md");
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "docs/TOOLS.md is stale; regenerate it with `UPDATE_TOOLS_MD=1 cargo test -p tool-registry-tools --test tools toolreg::`"
    );
}

#[test]
fn list_honours_the_scope_flags() {
    let dir = workspace();
    let list = |args: &[&str]| listed(dir.path(), args);
    let guest_files = list(&["--level", "guest", "--modules", "file_manager"]);
    assert_eq!(
        guest_files,
        [
            "file_manager.create_document",
            "file_manager.list",
            "file_manager.read",
            "file_manager.wait_for"
        ]
    );
    let user_files = list(&["--level", "user", "--modules", "file_manager,scheduler"]);
    assert!(user_files.contains(&"file_manager.delete_file".to_owned()));
    assert!(user_files.contains(&"scheduler.list_jobs".to_owned()));
    assert!(
        !user_files.contains(&"scheduler.add_job".to_owned()),
        "add_job needs admin"
    );
    assert_eq!(
        list(&["--allow-list", "explore"]),
        ["file_manager.list", "file_manager.read", "research"]
    );
    let execute = list(&["--allow-list", "execute", "--local"]);
    assert!(!execute.contains(&"scheduler.add_job".to_owned()));

    let hidden = toolreg(
        dir.path(),
        &["--level", "guest", "call", "scheduler.add_job", "{}"],
    );
    assert_eq!(hidden.status.code(), Some(1));
    assert_eq!(
        stdout_json(&hidden)["content"]["error"]["code"],
        "unknown_tool"
    );
}

#[test]
fn a_named_user_has_a_users_rights_and_only_no_scope_flag_is_trusted() {
    let dir = workspace();
    let admin_tools = ["scheduler.add_job", "scheduler.remove_job"];
    let job = r#"{"name": "nightly", "schedule": "@daily", "command": "backup"}"#;
    let schedule = dir.path().join("scheduler.json");
    let jobs = || {
        std::fs::read_to_string(&schedule)
            .map(|text| text.matches("\"nightly\"").count())
            .unwrap_or(0)
    };

    // `--user alice` alone: a user's listing and a user's calls.
    let alice = listed(dir.path(), &["--user", "alice"]);
    assert!(
        alice.contains(&"scheduler.list_jobs".to_owned()),
        "{alice:?}"
    );
    for tool in admin_tools {
        assert!(!alice.contains(&tool.to_owned()), "{tool} in {alice:?}");
    }
    let refused = toolreg(
        dir.path(),
        &["--user", "alice", "call", "scheduler.add_job", job],
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert_eq!(
        stdout_json(&refused)["content"]["error"]["code"],
        "unknown_tool"
    );
    assert_eq!(jobs(), 0, "nothing was scheduled");

    // `--user alice --level admin`: the admin tools, listed and run as alice.
    let admin = listed(dir.path(), &["--user", "alice", "--level", "admin"]);
    for tool in admin_tools {
        assert!(admin.contains(&tool.to_owned()), "{tool} not in {admin:?}");
    }
    let added = toolreg(
        dir.path(),
        &[
            "--user",
            "alice",
            "--level",
            "admin",
            "call",
            "scheduler.add_job",
            job,
        ],
    );
    assert_eq!(added.status.code(), Some(0), "{added:?}");
    assert_eq!(stdout_json(&added)["audit"]["user"], "alice");
    assert_eq!(jobs(), 1);

    // No scope flag: the program itself, trusted.
    let trusted = listed(dir.path(), &[]);
    for tool in admin_tools {
        assert!(
            trusted.contains(&tool.to_owned()),
            "{tool} not in {trusted:?}"
        );
    }
    let removed = toolreg(
        dir.path(),
        &["call", "scheduler.remove_job", r#"{"name": "nightly"}"#],
    );
    assert_eq!(removed.status.code(), Some(0), "{removed:?}");
    assert_eq!(jobs(), 0);
}

#[test]
fn approve_and_deny_work_across_processes() {
    let dir = workspace();
    let call = [
        "--user",
        "alice",
        "call",
        "file_manager.delete_file",
        r#"{"path": "a.txt"}"#,
    ];
    std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
    std::fs::write(dir.path().join("sandbox/a.txt"), "x").unwrap();

    // `file_manager.delete_file` is destructive and needs confirmation only when declared so;
    // the reference tool declares it.
    let held = toolreg(dir.path(), &call);
    assert_eq!(held.status.code(), Some(1));
    let result = stdout_json(&held);
    assert_eq!(
        result["content"]["error"]["code"], "needs_approval",
        "{result}"
    );
    let token = result["content"]["error"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(dir.path().join("sandbox/a.txt").exists(), "nothing ran yet");

    let other = toolreg(dir.path(), &["--user", "bob", "approve", &token]);
    assert_eq!(other.status.code(), Some(1));
    assert_eq!(
        stdout_json(&other)["content"]["error"]["code"],
        "approval_refused"
    );

    let approved = toolreg(dir.path(), &["--user", "alice", "approve", &token]);
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&approved.stdout)
    );
    assert!(!dir.path().join("sandbox/a.txt").exists());
    assert_eq!(
        toolreg(dir.path(), &["--user", "alice", "approve", &token])
            .status
            .code(),
        Some(1),
        "no replay"
    );

    std::fs::write(dir.path().join("sandbox/a.txt"), "x").unwrap();
    let token = stdout_json(&toolreg(dir.path(), &call))["content"]["error"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let denied = toolreg(
        dir.path(),
        &["--user", "alice", "deny", &token, "--reason", "keep it"],
    );
    assert_eq!(denied.status.code(), Some(0));
    assert!(
        stdout_json(&denied)["message"]
            .as_str()
            .unwrap()
            .contains("keep it")
    );
    assert!(dir.path().join("sandbox/a.txt").exists());
}

// ---------------------------------------------------------------------------------------------
// A caller with less permission: what it may not see is unknown everywhere.

/// The names a guest may not see, and a name no tool has.
const HIDDEN_FROM_GUEST: [&str; 4] = [
    "scheduler.add_job",
    "scheduler.list_jobs",
    "scheduler.remove_job",
    "file_manager.delete_file",
];

fn toolreg_stdin(root: &Path, args: &[&str], input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = toolreg_command(root, args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("toolreg runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

#[test]
fn a_guest_lists_documents_and_exports_no_hidden_tool() {
    let dir = workspace();
    for args in [
        &["list"][..],
        &["list", "--format", "json"],
        &["catalog"],
        &["catalog", "--format", "json"],
        &["catalog", "--format", "html"],
        &["tools", "--format", "openai"],
        &["tools", "--format", "mcp"],
        &["tools", "--format", "gemini"],
        &["snapshot"],
    ] {
        let guest: Vec<&str> = ["--level", "guest"].iter().chain(args).copied().collect();
        let output = toolreg(dir.path(), &guest);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        let shown = text(&output);
        assert!(
            shown.contains("research"),
            "{args:?} lists the guest's tools"
        );
        // Under its name or any wire name a provider is given for it.
        let spellings = |name: &'static str| {
            let mut all: Vec<String> = tool_registry::format::Provider::ALL
                .iter()
                .map(|p| p.wire_name(name).into_owned())
                .collect();
            all.push(name.to_owned());
            all
        };
        for hidden in HIDDEN_FROM_GUEST {
            for spelling in spellings(hidden) {
                assert!(
                    !shown.contains(&spelling),
                    "{args:?} shows {spelling}:\n{shown}"
                );
            }
        }
        // The trusted caller does see them: the check above is about the scope.
        let owner = text(&toolreg(dir.path(), args));
        assert!(
            spellings("scheduler.add_job")
                .iter()
                .any(|spelling| owner.contains(spelling)),
            "{args:?}"
        );
    }
}

/// Everything a command prints about `name`, with `name` itself and the timings taken out.
fn answer_about(dir: &Path, args: &[&str], name: &str, input: &[u8]) -> (Option<i32>, String) {
    let args: Vec<&str> = args
        .iter()
        .map(|a| if *a == "NAME" { name } else { a })
        .collect();
    let output = toolreg_stdin(dir, &args, &input.to_vec().replace_name(name));
    let mut shown = text(&output).replace(name, "NAME");
    // The module of a name the caller may see no tool of is named as unknown, the same words
    // for a hidden module as for one that does not exist.
    if let Some((module, _)) = name.split_once('.') {
        shown = shown.replace(&format!("`{module}`"), "`MODULE`");
        shown = shown.replace(&format!("\"{module}\""), "\"MODULE\"");
    }
    // Durations and timestamps differ from run to run.
    for key in ["\"duration_ms\"", "\"ts\""] {
        while let Some(at) = shown.find(&format!("{key}: ")) {
            let end = shown[at..]
                .find([',', '\n'])
                .map_or(shown.len(), |e| at + e);
            shown.replace_range(at..end, "");
        }
    }
    (output.status.code(), shown)
}

trait ReplaceName {
    fn replace_name(self, name: &str) -> Vec<u8>;
}

impl ReplaceName for Vec<u8> {
    fn replace_name(self, name: &str) -> Vec<u8> {
        String::from_utf8(self)
            .unwrap()
            .replace("NAME", name)
            .into_bytes()
    }
}

#[test]
fn a_guest_gets_the_same_answer_for_a_hidden_tool_as_for_an_unknown_one() {
    let dir = workspace();
    let unknown = "zzzzzzzzz.zzzzzzzz";
    let native = br#"<tool_call>{"name": "NAME", "arguments": {"name": "x"}}</tool_call>"#;
    let cases: [(&[&str], &[u8]); 4] = [
        (&["--level", "guest", "schema", "NAME"], b""),
        (
            &["--level", "guest", "call", "NAME", r#"{"name": "x"}"#],
            b"",
        ),
        (&["--level", "guest", "parse"], native),
        (&["--level", "guest", "run"], native),
    ];
    for (args, input) in cases {
        // A module the guest sees no tool of reads as one that does not exist...
        let expected = answer_about(dir.path(), args, unknown, input);
        for hidden in HIDDEN_FROM_GUEST
            .iter()
            .filter(|h| h.starts_with("scheduler."))
        {
            let got = answer_about(dir.path(), args, hidden, input);
            assert_eq!(got, expected, "{args:?} as a guest, about {hidden}");
        }
        // ...and a hidden tool of a module it sees, as a tool of that module that does not
        // exist.
        let expected = answer_about(dir.path(), args, "file_manager.zzzzzzzz", input);
        let got = answer_about(dir.path(), args, "file_manager.delete_file", input);
        assert_eq!(
            got, expected,
            "{args:?} as a guest, about file_manager.delete_file"
        );
    }
    // A parsed call of a hidden tool is in `unknown`, not in `calls`.
    let parsed = stdout_json(&toolreg_stdin(
        dir.path(),
        &["--level", "guest", "parse"],
        &native.to_vec().replace_name("scheduler.add_job"),
    ));
    assert_eq!(parsed["calls"], serde_json::json!([]));
    assert_eq!(parsed["unknown"][0]["name"], "scheduler.add_job");
    // And nothing ran: the schedule was not created.
    assert!(!dir.path().join("scheduler.json").exists());
}

#[test]
fn tag_lines_of_tools_outside_the_scope_stay_text() {
    let dir = workspace();
    let output = b"Let me look.\nRESEARCH: caching\n";
    let inside = stdout_json(&toolreg_stdin(dir.path(), &["parse"], output));
    assert_eq!(inside["calls"][0]["name"], "research");
    let outside = stdout_json(&toolreg_stdin(
        dir.path(),
        &["--modules", "file_manager", "parse"],
        output,
    ));
    assert_eq!(outside["calls"], serde_json::json!([]));
    assert!(
        outside["content"]
            .as_str()
            .unwrap()
            .contains("RESEARCH: caching")
    );
}

#[test]
fn an_unknown_name_gets_a_suggestion_only_from_what_the_caller_sees() {
    let dir = workspace();
    let typo = stdout_json(&toolreg(
        dir.path(),
        &["call", "reserch", r#"{"query": "x"}"#],
    ));
    assert_eq!(typo["content"]["error"]["suggestion"], "research");
    assert!(
        typo["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `research`?")
    );
    let owner = stdout_json(&toolreg(dir.path(), &["call", "scheduler.list_job", "{}"]));
    assert_eq!(
        owner["content"]["error"]["suggestion"],
        "scheduler.list_jobs"
    );
    let guest = toolreg(
        dir.path(),
        &["--level", "guest", "call", "scheduler.list_job", "{}"],
    );
    assert!(
        !text(&guest).contains("scheduler.list_jobs"),
        "{}",
        text(&guest)
    );
}

#[test]
fn one_model_output_runs_at_most_32_calls() {
    let dir = workspace();
    let lines: String = (0..1500)
        .map(|i| format!("SOURCE: https://example.org/{i} page {i}\n"))
        .collect();
    let output = toolreg_stdin(dir.path(), &["--user", "alice", "run"], lines.as_bytes());
    assert_eq!(output.status.code(), Some(1), "calls were left out");
    let ran = stdout_json(&output);
    let results = ran["results"].as_array().unwrap();
    assert_eq!(results.len(), 32, "the calls that ran");
    assert!(results.iter().all(|r| r["result"]["success"] == true));
    let not_run = &ran["not_run"]["content"]["error"];
    assert_eq!(not_run["code"], "too_many_calls");
    assert_eq!(not_run["left_out"], 1500 - 32);
    assert_eq!(ran["left_out"]["calls"], 1500 - 32);
    let written =
        std::fs::read_dir(dir.path().join("kb/inbox/sources")).map_or(0, |files| files.count());
    assert_eq!(written, 32, "only the calls that ran wrote a file");
}

/// 400,000 tag lines: 32 calls run, and one result reports the rest; what is printed stays
/// the size of 32 results.
#[test]
fn four_hundred_thousand_tag_lines_answer_with_one_summary() {
    let dir = workspace();
    let lines: String = (0..400_000)
        .map(|i| format!("CLAIM: water boils at {i} degrees\n"))
        .collect();
    let output = toolreg_stdin(dir.path(), &["--user", "alice", "run"], lines.as_bytes());
    let ran = stdout_json(&output);
    assert_eq!(ran["results"].as_array().unwrap().len(), 32);
    assert_eq!(ran["not_run"]["content"]["error"]["left_out"], 400_000 - 32);
    assert!(
        output.stdout.len() < 64 * 1024,
        "{} bytes printed",
        output.stdout.len()
    );
}

#[test]
fn output_with_invalid_utf8_is_read_and_the_bad_bytes_reported() {
    let dir = workspace();
    let mut output = b"caf\xe9 \xff\n".to_vec();
    output.extend_from_slice(
        br#"<tool_call>{"name": "research", "arguments": {"query": "x"}}</tool_call>"#,
    );
    let parsed = toolreg_stdin(dir.path(), &["parse"], &output);
    assert_eq!(parsed.status.code(), Some(0), "{parsed:?}");
    assert_eq!(stdout_json(&parsed)["calls"][0]["name"], "research");
    let warning = String::from_utf8_lossy(&parsed.stderr);
    assert!(
        warning.contains("not valid UTF-8: 2 invalid byte sequences"),
        "{warning}"
    );
    assert!(warning.contains("the first at byte 3"), "{warning}");
}

#[test]
fn control_characters_in_names_are_escaped_on_the_terminal() {
    let dir = workspace();
    let output = toolreg(dir.path(), &["schema", "evil\u{1b}[2J\u{7}\r"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\r'),
        "{stderr:?}"
    );
    assert!(stderr.contains(r"evil\u{1b}[2J\u{7}\r"), "{stderr}");
}

#[test]
fn an_unknown_allow_list_is_an_error_naming_the_known_ones() {
    let dir = workspace();
    let output = toolreg(dir.path(), &["--allow-list", "exlpore", "list"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no allow-list named exlpore"), "{stderr}");
    for known in ["execute", "explore", "supervisor"] {
        assert!(stderr.contains(known), "{stderr}");
    }
    let known = toolreg(dir.path(), &["--allow-list", "explore", "list"]);
    assert_eq!(known.status.code(), Some(0));
}

#[test]
fn list_verbose_says_which_file_each_tool_comes_from() {
    let dir = workspace();
    let output = toolreg(dir.path(), &["list", "--verbose"]);
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    let research = text.lines().find(|l| l.starts_with("research ")).unwrap();
    assert!(research.contains("(tools/src/tools/kb.rs:"), "{research}");
    let json = stdout_json(&toolreg(
        dir.path(),
        &["list", "--format", "json", "--verbose"],
    ));
    let jobs = json
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "scheduler.add_job")
        .unwrap();
    assert_eq!(jobs["source"]["file"], "tools/src/tools/scheduler.rs");
}

#[test]
fn run_takes_each_providers_raw_response_with_wire_names() {
    let dir = workspace();
    let responses = [
        r#"{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "file_manager__list", "arguments": "{}"}}]}}]}"#,
        r#"{"output": [{"type": "function_call", "call_id": "c1", "name": "file_manager__list", "arguments": "{}"}]}"#,
        r#"{"role": "assistant", "content": [{"type": "tool_use", "id": "c1", "name": "file_manager__list", "input": {}}]}"#,
        r#"{"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "file_manager__list", "args": {}}}]}}]}"#,
    ];
    for response in responses {
        let output = toolreg_stdin(dir.path(), &["run"], response.as_bytes());
        assert_eq!(output.status.code(), Some(0), "{response}: {output:?}");
        let ran = stdout_json(&output);
        let result = &ran["results"][0]["result"];
        assert_eq!(result["success"], true, "{response}: {ran}");
        assert_eq!(result["audit"]["tool"], "file_manager.list", "{response}");
    }
}

#[test]
fn a_call_object_that_writes_a_key_twice_is_refused_and_runs_nothing() {
    let dir = workspace();
    let outputs = [
        // Read with the last name, this would write a note into the inbox.
        r#"<tool_call>{"name": "research", "name": "source", "arguments": {"description": "x", "query": "x"}}</tool_call>"#,
        r#"<tool_call>{"name": "source", "arguments": {"description": "x", "description": "y"}}</tool_call>"#,
        r#"{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "research", "name": "source", "arguments": "{\"description\": \"x\"}"}}]}"#,
    ];
    for output in outputs {
        let parsed = toolreg_stdin(dir.path(), &["parse"], output.as_bytes());
        let parsed = stdout_json(&parsed);
        assert_eq!(parsed["calls"], serde_json::json!([]), "{output}: {parsed}");
        assert_eq!(
            parsed["unknown"],
            serde_json::json!([]),
            "{output}: {parsed}"
        );
        let error = &parsed["errors"][0];
        assert_eq!(error["code"], "malformed", "{output}: {parsed}");
        let message = error["message"].as_str().unwrap();
        assert!(
            message.contains("duplicate field `name`")
                || message.contains("duplicate field `description`"),
            "{message}"
        );

        let ran = toolreg_stdin(dir.path(), &["run"], output.as_bytes());
        assert_eq!(
            stdout_json(&ran)["results"],
            serde_json::json!([]),
            "{output}"
        );
    }
    assert!(!dir.path().join("kb/inbox").exists(), "no note was written");
}

#[test]
fn disable_and_enable_hold_for_every_later_command_through_the_switch_file() {
    let dir = workspace();
    let names = |args: &[&str]| listed(dir.path(), args);
    let all = names(&[]);
    assert!(all.contains(&"file_manager.read".to_owned()));

    // By alias: the switch is kept under the tool's own name.
    let off = toolreg(dir.path(), &["disable", "file_manager.read_file"]);
    assert_eq!(off.status.code(), Some(0), "{off:?}");
    assert!(
        String::from_utf8_lossy(&off.stdout).contains("disabled file_manager.read (1 tool here)")
    );
    let file: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join(".toolreg-switches.json")).unwrap())
            .unwrap();
    assert_eq!(file["names"], serde_json::json!(["file_manager.read"]));
    assert!(!names(&[]).contains(&"file_manager.read".to_owned()));
    let called = toolreg(
        dir.path(),
        &["call", "file_manager.read", r#"{"path": "x"}"#],
    );
    assert_eq!(called.status.code(), Some(1));

    // By tag, and back; another file is another set of switches.
    toolreg(dir.path(), &["disable", "--tag", "write"]);
    let without_writes = names(&[]);
    assert!(!without_writes.contains(&"file_manager.create_document".to_owned()));
    assert!(
        names(&["--switches", "other.json"]).contains(&"file_manager.create_document".to_owned())
    );
    toolreg(dir.path(), &["enable", "--tag", "write"]);
    toolreg(dir.path(), &["enable", "file_manager.read"]);
    assert_eq!(names(&[]), all);

    // A selector that covers no tool says so, fails, and writes nothing.
    let before = std::fs::read(dir.path().join(".toolreg-switches.json")).unwrap();
    for args in [
        &["disable", "nope"][..],
        &["enable", "--tag", "nope"],
        &["disable", "--category", "nope"],
    ] {
        let unknown = toolreg(dir.path(), args);
        assert_eq!(unknown.status.code(), Some(1), "{args:?}: {unknown:?}");
        let said = String::from_utf8_lossy(&unknown.stderr);
        assert!(
            said.contains("no tool matches") && said.contains("nope"),
            "{said}"
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join(".toolreg-switches.json")).unwrap(),
        before
    );

    // One selector, exactly.
    let none = toolreg(dir.path(), &["disable"]);
    assert_eq!(none.status.code(), Some(2), "{none:?}");
    let two = toolreg(dir.path(), &["disable", "research", "--tag", "write"]);
    assert_eq!(two.status.code(), Some(2), "{two:?}");
    // A switch file that is not one is an error that names it, not a silent default.
    std::fs::write(dir.path().join(".toolreg-switches.json"), "[1, 2").unwrap();
    let broken = toolreg(dir.path(), &["list"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&broken.stderr).contains("switch file"),
        "{broken:?}"
    );
}

/// A `toolreg` child, killed when dropped, so that a failed assertion leaves no process behind.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    /// What the child wrote on standard error, once it has ended, and its exit code.
    fn stderr_and_code(&mut self) -> (String, Option<i32>) {
        use std::io::Read;
        let mut stderr = String::new();
        if let Some(mut pipe) = self.0.stderr.take() {
            pipe.read_to_string(&mut stderr).expect("stderr reads");
        }
        let status = self.0.wait().expect("toolreg ends");
        (stderr, status.code())
    }
}

#[test]
fn a_closed_standard_output_ends_the_command_quietly_with_141() {
    use std::io::BufRead;
    use std::process::Stdio;
    let dir = workspace();

    // The reader is gone before the command writes a byte.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut listing = Running(
        toolreg_command(dir.path(), &["list"])
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolreg runs"),
    );
    let (stderr, code) = listing.stderr_and_code();
    assert_eq!((stderr.as_str(), code), ("", Some(141)));

    // The reader takes the first line and goes, as `head -1` does, while the command still has
    // far more than a pipe's buffer to write.
    let calls: String = (0..20_000)
        .map(|i| format!("<tool_call>{{\"name\": \"t{i}\", \"arguments\": {{}}}}</tool_call>\n"))
        .collect();
    std::fs::write(dir.path().join("calls.txt"), calls).unwrap();
    let mut parsing = Running(
        toolreg_command(dir.path(), &["parse", "--any-name", "--input", "calls.txt"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("toolreg runs"),
    );
    let mut first = String::new();
    std::io::BufReader::new(parsing.0.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first, "{\n");
    let (stderr, code) = parsing.stderr_and_code();
    assert_eq!((stderr.as_str(), code), ("", Some(141)));
}

#[test]
fn call_prints_binary_blocks_by_size_and_saves_them_only_where_told() {
    let dir = workspace();
    let args = r#"{"values": [1, 4, 2]}"#;

    // Without --save: kind, MIME type and size, never the bytes or their base64.
    let output = toolreg(dir.path(), &["call", "chart.draw", args]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let printed = stdout_json(&output);
    assert_eq!(printed["content"]["bars"], 3);
    let image = &printed["blocks"][0];
    assert_eq!(image["type"], "image");
    assert_eq!(image["mimeType"], "image/png");
    assert!(image.get("data").is_none(), "{image}");
    assert_eq!(image["saved"], Value::Null);
    let size = image["bytes"].as_u64().unwrap();

    // With --save: the same bytes the registry gives, in a new file whose path is printed.
    let save = dir.path().join("out");
    let output = toolreg(
        dir.path(),
        &["call", "chart.draw", args, "--save", save.to_str().unwrap()],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let saved = PathBuf::from(stdout_json(&output)["blocks"][0]["saved"].as_str().unwrap());
    assert_eq!(saved.parent(), Some(save.as_path()));
    let bytes = std::fs::read(&saved).unwrap();
    assert_eq!(bytes.len() as u64, size);
    let direct = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(Registry::global().call(
            "chart.draw",
            serde_json::json!({"values": [1, 4, 2]}),
            &tool_registry::Ctx::new(),
        ))
        .unwrap();
    match &direct.blocks[0] {
        tool_registry::content::Block::Image(image) => assert_eq!(image.data().as_ref(), bytes),
        other => panic!("{other:?}"),
    }

    // A file keeps its name; a name already taken, even by a link to elsewhere, is left alone
    // and the next free name is used.
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "keep me").unwrap();
    std::os::unix::fs::symlink(&outside, save.join("q3.csv")).unwrap();
    let output = toolreg(
        dir.path(),
        &[
            "call",
            "chart.export",
            r#"{"name": "q3", "values": [5]}"#,
            "--save",
            save.to_str().unwrap(),
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let printed = stdout_json(&output);
    assert_eq!(printed["blocks"][0]["name"], "q3.csv");
    assert_eq!(
        printed["blocks"][0]["saved"].as_str(),
        save.join("q3-1.csv").to_str()
    );
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep me");
    assert_eq!(
        std::fs::read_to_string(save.join("q3-1.csv")).unwrap(),
        "index,value\n0,5\n"
    );
    assert_eq!(printed["blocks"][1]["type"], "resource_link");
    assert_eq!(printed["blocks"][1]["uri"], "chart://q3.png");
}

// ---------------------------------------------------------------------------------------------
// The hooks of `toolreg`: `RedactSecrets` around every call, and the built-ins the reference
// tools declare (`confirm_if`, `max_result_bytes`), as `call`, `run` and `approve` see them.

#[test]
fn a_key_in_a_sandbox_file_comes_back_redacted_from_call_and_run() {
    let dir = workspace();
    hooks::sandbox(dir.path());
    let key = hooks::fake_key();
    let redacted = "OPENAI_API_KEY=[redacted secret]\nkeep this line\n";

    let read = toolreg(
        dir.path(),
        &[
            "call",
            "file_manager.read",
            r#"{"path": "notes/secret.txt"}"#,
        ],
    );
    assert_eq!(read.status.code(), Some(0), "{}", text(&read));
    assert_eq!(stdout_json(&read)["content"]["content"], redacted);

    // The calls in a model's output take the batch path, with the same hooks.
    let output = br#"<tool_call>{"name": "file_manager.read", "arguments": {"path": "notes/secret.txt"}}</tool_call>"#;
    let run = toolreg_stdin(dir.path(), &["run"], output);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run));
    let ran = stdout_json(&run);
    assert_eq!(ran["results"][0]["result"]["content"]["content"], redacted);

    for output in [&read, &run] {
        assert!(!text(output).contains(&key), "{}", text(output));
    }
}

#[test]
fn delete_file_runs_at_once_under_tmp_and_asks_elsewhere() {
    let dir = workspace();
    hooks::sandbox(dir.path());
    let sandbox = dir.path().join("sandbox");
    let delete = |path: &str| {
        let args = serde_json::json!({ "path": path }).to_string();
        toolreg(
            dir.path(),
            &["--user", "alice", "call", "file_manager.delete_file", &args],
        )
    };

    let scratch = delete("tmp/x.txt");
    assert_eq!(scratch.status.code(), Some(0), "{}", text(&scratch));
    assert_eq!(stdout_json(&scratch)["content"]["deleted"], true);
    assert!(!sandbox.join("tmp/x.txt").exists());

    let held = delete("notes/y.txt");
    assert_eq!(held.status.code(), Some(1), "{}", text(&held));
    let error = &stdout_json(&held)["content"]["error"];
    assert_eq!(error["code"], "needs_approval", "{error}");
    assert!(sandbox.join("notes/y.txt").exists(), "nothing ran yet");
    let token = error["token"].as_str().unwrap();
    let approved = toolreg(dir.path(), &["--user", "alice", "approve", token]);
    assert_eq!(approved.status.code(), Some(0), "{}", text(&approved));
    assert!(!sandbox.join("notes/y.txt").exists());
}

#[test]
fn a_tmp_path_through_a_link_to_elsewhere_is_refused() {
    let dir = workspace();
    hooks::sandbox(dir.path());
    let sandbox = dir.path().join("sandbox");
    let outside = dir.path().join("outside.txt");
    std::fs::write(&outside, "not the sandbox's").unwrap();
    std::os::unix::fs::symlink("../notes/y.txt", sandbox.join("tmp/link.txt")).unwrap();
    std::os::unix::fs::symlink("../notes", sandbox.join("tmp/notes")).unwrap();
    std::os::unix::fs::symlink(&outside, sandbox.join("tmp/out.txt")).unwrap();

    for (path, says) in [
        ("tmp/link.txt", "leads to \"notes/y.txt\", outside `tmp/`"),
        (
            "tmp/notes/y.txt",
            "leads to \"notes/y.txt\", outside `tmp/`",
        ),
        ("tmp/out.txt", "escapes the sandbox root"),
    ] {
        let args = serde_json::json!({ "path": path }).to_string();
        let output = toolreg(
            dir.path(),
            &["--user", "alice", "call", "file_manager.delete_file", &args],
        );
        assert_eq!(output.status.code(), Some(1), "{path}: {}", text(&output));
        let error = &stdout_json(&output)["content"]["error"];
        assert_eq!(error["code"], "invalid_arguments", "{path}: {error}");
        assert_eq!(error["path"], "path", "{path}: {error}");
        let detail = error["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{path}: {detail}");
    }
    assert!(sandbox.join("notes/y.txt").exists());
    assert!(sandbox.join("tmp/link.txt").is_symlink());
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "not the sandbox's"
    );
}

#[test]
fn a_long_listing_is_cut_to_the_tools_limit_with_a_note() {
    let dir = workspace();
    hooks::sandbox(dir.path());
    let output = toolreg(
        dir.path(),
        &["call", "file_manager.list", r#"{"dir": "many"}"#],
    );
    assert_eq!(output.status.code(), Some(0), "{}", text(&output));
    let result = stdout_json(&output);
    assert_eq!(result["success"], true);
    let listing = serde_json::to_string(&result["content"]).unwrap();
    let blocks = result["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), 1, "{blocks:?}");
    assert_eq!(blocks[0]["type"], "text");
    let note = blocks[0]["text"].as_str().unwrap();
    hooks::check_cut_listing(&result["content"], &[&listing, note]);
}

/// The audit records of the same calls through a registry built as `toolreg` builds its own,
/// with a sink that keeps them: each names the hooks that acted.
#[test]
fn the_audit_record_names_each_hook_that_acted() {
    use std::sync::{Arc, Mutex};
    use tool_registry::audit::{AuditRecord, AuditSink};
    use tool_registry::{Ctx, Scope};

    #[derive(Clone, Default)]
    struct Kept(Arc<Mutex<Vec<Value>>>);
    impl AuditSink for Kept {
        fn record(&self, record: &AuditRecord<'_>) {
            self.0
                .lock()
                .unwrap()
                .push(serde_json::to_value(record).unwrap());
        }
    }

    let dir = workspace();
    hooks::sandbox(dir.path());
    let kept = Kept::default();
    let registry = Registry::builder()
        .state(tool_registry_tools::Config::under(dir.path()))
        .allow_lists(tool_registry_tools::allow_lists())
        .hook(tool_registry_tools::RedactSecrets)
        .audit_sink(kept.clone())
        .build()
        .unwrap();
    let ctx = Ctx::for_scope(Scope::user("alice"));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let calls = [
        ("file_manager.read", r#"{"path": "notes/secret.txt"}"#),
        ("file_manager.delete_file", r#"{"path": "tmp/x.txt"}"#),
        ("file_manager.delete_file", r#"{"path": "notes/y.txt"}"#),
        ("file_manager.list", r#"{"dir": "many"}"#),
    ];
    for (tool, args) in calls {
        let _ = runtime.block_on(registry.call(tool, args, &ctx));
    }
    let records = kept.0.lock().unwrap().clone();
    let hooks_of = |i: usize| (records[i]["outcome"].clone(), records[i]["hooks"].clone());
    assert_eq!(records.len(), calls.len(), "{records:#?}");
    assert_eq!(
        hooks_of(0),
        (
            "ok".into(),
            serde_json::json!([{"hook": "redact_secrets", "action": "changed", "detail": "redacted 1 secret"}])
        )
    );
    assert_eq!(hooks_of(1), ("ok".into(), Value::Null), "no hook acted");
    assert_eq!(
        hooks_of(2),
        (
            "needs_approval".into(),
            serde_json::json!([{"hook": "confirm_if", "action": "asked_approval"}])
        )
    );
    let (outcome, acted) = hooks_of(3);
    assert_eq!(outcome, "ok");
    assert_eq!(acted.as_array().map(Vec::len), Some(1), "{acted}");
    assert_eq!(
        (&acted[0]["hook"], &acted[0]["action"]),
        (&"max_result_bytes".into(), &"shortened".into()),
        "{acted}"
    );
    let detail = acted[0]["detail"].as_str().unwrap();
    let (from, to) = detail.split_once(" bytes to ").unwrap();
    let (from, to): (usize, usize) = (from.parse().unwrap(), to.parse().unwrap());
    assert!(
        from > hooks::LIST_LIMIT && to <= hooks::LIST_LIMIT,
        "{detail}"
    );
}

#[test]
fn the_command_line_says_what_to_do_next_where_a_person_reads_it() {
    let dir = workspace();
    // Arguments that are not JSON are a usage error, said on standard error.
    let typo = toolreg(dir.path(), &["call", "research", "{query: 'x'}"]);
    assert_eq!(typo.status.code(), Some(2), "{typo:?}");
    assert!(typo.stdout.is_empty());
    assert!(String::from_utf8_lossy(&typo.stderr).contains("not JSON"));
    // A call that waits for approval names the commands that answer it; its token stays in
    // the answer, never on standard error, where the logs go.
    std::fs::create_dir_all(dir.path().join("sandbox")).unwrap();
    std::fs::write(dir.path().join("sandbox/a.txt"), "x").unwrap();
    let held = toolreg(
        dir.path(),
        &[
            "--user",
            "alice",
            "call",
            "file_manager.delete_file",
            r#"{"path": "a.txt"}"#,
        ],
    );
    assert_eq!(held.status.code(), Some(1));
    let token = stdout_json(&held)["content"]["error"]["token"]
        .as_str()
        .unwrap()
        .to_owned();
    let said = String::from_utf8_lossy(&held.stderr);
    assert!(
        said.contains("`toolreg --user alice approve TOKEN`"),
        "{said}"
    );
    assert!(!said.contains(&token), "{said}");
    // One line per tool, a description wrapped in its doc comment included.
    let listed = toolreg(dir.path(), &["list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    let chart = text
        .lines()
        .find(|line| line.starts_with("chart.export"))
        .unwrap();
    assert!(chart.ends_with("`chart.draw` draws from them."), "{chart}");
    assert!(!text.contains("\\n"), "{text}");
    // Tasks without a fleet: a whole sentence that names the flag.
    let tasks = toolreg(dir.path(), &["tasks", "list"]);
    assert_eq!(tasks.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&tasks.stderr)
            .trim_end()
            .ends_with("to read a fleet's tasks.")
    );
}

#[test]
fn the_readmes_parse_example_is_what_toolreg_parse_prints() {
    let readme = include_str!("../../registry/README.md");
    let start = readme
        .find("$ echo '<tool_call>")
        .expect("the README's parse example");
    let block = &readme[start..];
    let block = &block[..block.find("```").unwrap()];
    let (command, shown) = block.split_once('\n').unwrap();
    let input = command
        .strip_prefix("$ echo '")
        .and_then(|rest| rest.strip_suffix("' | toolreg parse"))
        .expect("echo '...' | toolreg parse");
    let dir = workspace();
    let output = toolreg_stdin(dir.path(), &["parse"], format!("{input}\n").as_bytes());
    assert_eq!(String::from_utf8_lossy(&output.stdout), shown);
}
