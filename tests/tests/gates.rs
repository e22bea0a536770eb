//! Every stage of the pipeline against the reference tools and the test crate's tools: scopes,
//! allow-lists, switches, rate limits, the evaluation gate, confirmation, timeouts, batches,
//! events and audit.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tool_registry::Listing;
use tool_registry::audit::{AuditRecord, AuditSink};
use tool_registry::call::ToolEvent;
use tool_registry::exec::Batch;
use tool_registry::format::Provider;
use tool_registry::gate::{Decision, Gate, async_trait};
use tool_registry::registry::{BuildError, Selector};
use tool_registry::scope::{AllowList, AllowLists, EMBEDDING_FLAG};
use tool_registry::{Ctx, Permission, Registry, RegistryBuilder, Scope, Tool, ToolCall, ToolError};
use tool_registry_tests::{Counter, Runs};
use tool_registry_tools::Config;

/// Collects audit records.
#[derive(Clone, Default)]
struct Records(Arc<Mutex<Vec<AuditRecord<'static>>>>);

impl AuditSink for Records {
    fn record(&self, record: &AuditRecord<'_>) {
        self.0.lock().unwrap().push(record.clone().into_owned());
    }
}

impl Records {
    fn take(&self) -> Vec<AuditRecord<'static>> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn builder(dir: &tempfile::TempDir) -> RegistryBuilder {
    Registry::builder()
        .state(Config::under(dir.path()))
        .state(Runs::default())
        .allow_lists(tool_registry_tools::allow_lists())
        .log_annotations(false)
}

/// The names of compiled tools (every tool of these registries is one).
fn names(tools: &[Tool]) -> Vec<&'static str> {
    tools
        .iter()
        .map(|t| t.definition().expect("a compiled tool").name())
        .collect()
}

#[test]
fn the_module_registry_permission_example() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let scope = Scope::user("alice").with_modules(["research", "file_manager", "code_executor"]);
    assert_eq!(
        names(&registry.tools(&scope)),
        [
            "code_executor.run_python",
            "file_manager.clear_folder",
            "file_manager.create_document",
            "file_manager.delete_file",
            "file_manager.list",
            "file_manager.read",
            "file_manager.wait_for",
            "research",
            "research.fetch_webpage",
            "research.web_search",
        ],
        "run_shell needs admin; scheduler is not an allowed module"
    );
    let guest = Scope::guest().with_modules(["research", "file_manager", "code_executor"]);
    let guest_tools = names(&registry.tools(&guest));
    assert!(
        !guest_tools.contains(&"file_manager.delete_file")
            && !guest_tools.contains(&"code_executor.run_python")
    );
    let admin = scope.clone().with_level(Permission::Admin);
    assert!(names(&registry.tools(&admin)).contains(&"code_executor.run_shell"));
    // An unknown level counts as guest.
    assert_eq!(
        Scope::user("x").with_level_name("superuser").level(),
        Permission::Guest
    );
}

#[test]
fn persona_modules_and_default_guest_modules() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).guest_modules(["research"]).build().unwrap();
    assert_eq!(
        names(&registry.tools(&Scope::guest())),
        ["research", "research.fetch_webpage", "research.web_search"]
    );
    // A persona's own list replaces the guest default.
    let persona = Scope::guest().with_modules(["util"]);
    assert!(
        names(&registry.tools(&persona))
            .iter()
            .all(|n| n.starts_with("util."))
    );
    // Users are not limited by the guest default.
    assert!(registry.tools(&Scope::user("u")).len() > 3);
}

#[test]
fn allow_lists_resolve_deterministically_in_local_and_non_local_mode() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let supervisor = registry
        .resolve_allow_list("supervisor", &Scope::trusted())
        .unwrap();
    assert_eq!(
        supervisor,
        [
            "docs.search",
            "file_manager.list",
            "file_manager.read",
            "research",
            "research.fetch_webpage",
            "research.web_search",
            "scheduler.list_jobs",
            "source",
        ]
    );
    let local = registry
        .resolve_allow_list("supervisor", &Scope::trusted().local(true))
        .unwrap();
    assert!(
        !local.iter().any(|n| n == "source"),
        "add_when_non_local is skipped in local mode"
    );
    let execute = registry
        .resolve_allow_list("execute", &Scope::trusted())
        .unwrap();
    let execute_local = registry
        .resolve_allow_list("execute", &Scope::trusted().local(true))
        .unwrap();
    assert!(
        execute.iter().any(|n| n == "scheduler.add_job")
            && !execute_local.iter().any(|n| n == "scheduler.add_job")
    );
    assert_eq!(
        registry
            .resolve_allow_list("explore", &Scope::trusted().local(true))
            .unwrap(),
        ["file_manager.list", "file_manager.read", "research"]
    );
    assert_eq!(registry.resolve_allow_list("nope", &Scope::trusted()), None);

    // Listing through a scope applies the same sets.
    let scope = Scope::user("u").with_allow_list("explore");
    assert_eq!(
        names(&registry.tools(&scope)),
        ["file_manager.list", "file_manager.read", "research"]
    );

    // The embedding rule, and aliases resolving to their tool.
    let lists = AllowLists::new().with(
        "mini",
        AllowList::tools(["echo"]).add_when_embedding_ok(["util.upper"]),
    );
    let registry = builder(&dir).allow_lists(lists).build().unwrap();
    assert_eq!(
        registry
            .resolve_allow_list("mini", &Scope::trusted())
            .unwrap(),
        ["util.echo"]
    );
    assert_eq!(
        registry
            .resolve_allow_list("mini", &Scope::trusted().with_flag(EMBEDDING_FLAG))
            .unwrap(),
        ["util.echo", "util.upper"]
    );
    let scope = Scope::user("u")
        .with_allow_list("mini")
        .with_flag(tool_registry::scope::EMBEDDING_FLAG);
    assert_eq!(names(&registry.tools(&scope)), ["util.echo", "util.upper"]);
}

#[test]
fn unknown_names_in_allow_lists_are_reported_when_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let lists = AllowLists::from_toml(
        "[a]\ntools = [\"research\", \"reserch\"]\n[b]\nexclude_in_local = [\"nope\"]\n",
    )
    .unwrap();
    match builder(&dir).allow_lists(lists).build() {
        Err(BuildError::AllowLists(error)) => {
            let message = error.to_string();
            assert!(
                message.contains("`reserch` in `a`") && message.contains("`nope` in `b`"),
                "{message}"
            );
        }
        other => panic!("expected an allow-list error, got {:?}", other.map(|_| ())),
    }
    assert!(
        AllowLists::from_toml("[a]\ntoolz = []\n").is_err(),
        "unknown keys are refused"
    );
}

#[tokio::test]
async fn switches_by_name_tag_and_category_apply_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let ctx = Ctx::new();
    let all = registry.tools(&Scope::trusted()).len();

    assert_eq!(
        registry.disable(Selector::name("echo")),
        1,
        "aliases name their tool"
    );
    assert!(registry.get("util.echo", ctx.scope()).is_none());
    let error = registry
        .call("util.echo", json!({"text": "hi"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(error.code(), "unknown_tool");
    assert_eq!(registry.tools(&Scope::trusted()).len(), all - 1);

    assert_eq!(registry.disable(Selector::category("files")), 6);
    assert_eq!(registry.disable(Selector::tag("fake")), 1);
    assert_eq!(registry.tools(&Scope::trusted()).len(), all - 8);

    registry.enable(Selector::name("util.echo"));
    registry.enable(Selector::category("files"));
    registry.enable(Selector::tag("fake"));
    assert_eq!(registry.tools(&Scope::trusted()).len(), all);
    assert!(
        registry
            .call("util.echo", json!({"text": "hi"}), &ctx)
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_tools_own_predicate_decides_per_request() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let without = Ctx::for_scope(Scope::user("u"));
    let with = Ctx::for_scope(Scope::user("u").with_flag("documents"));
    assert!(!names(&registry.tools(without.scope())).contains(&"docs.search"));
    assert!(names(&registry.tools(with.scope())).contains(&"docs.search"));
    let args = json!({"query": "caching"});
    assert_eq!(
        registry
            .call("docs.search", args.clone(), &without)
            .await
            .unwrap_err()
            .code(),
        "unknown_tool"
    );
    assert!(
        registry
            .call("docs.search", args, &with)
            .await
            .unwrap()
            .success
    );
}

#[test]
fn an_out_of_scope_tool_is_indistinguishable_from_an_unknown_one() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let ctx = Ctx::for_scope(Scope::user("mallory").with_modules(["util"]));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let hidden = runtime
        .block_on(registry.call("scheduler.add_job", json!({}), &ctx))
        .unwrap_err();
    let missing = runtime
        .block_on(registry.call("scheduler.add_jobz", json!({}), &ctx))
        .unwrap_err();
    let shape = |e: &ToolError, name: &str| serde_json::to_string(e).unwrap().replace(name, "NAME");
    assert_eq!(
        shape(&hidden, "scheduler.add_job"),
        shape(&missing, "scheduler.add_jobz")
    );
    assert_eq!(
        hidden.to_string().replace("scheduler.add_job", "N"),
        missing.to_string().replace("scheduler.add_jobz", "N")
    );
    // Invalid arguments of a hidden tool do not reveal it either: the scope is checked first.
    let bad_args = runtime
        .block_on(registry.call("scheduler.add_job", "not json", &ctx))
        .unwrap_err();
    assert_eq!(bad_args.code(), "unknown_tool");
    assert!(registry.get("scheduler.add_job", ctx.scope()).is_none());
    let listed = registry.provider_tools(Provider::OpenAi, ctx.scope());
    assert!(!listed.to_string().contains("scheduler"), "{listed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daily_limit_admits_exactly_that_many_of_1000_concurrent_calls() {
    let dir = tempfile::tempdir().unwrap();
    let records = Records::default();
    let registry = Arc::new(builder(&dir).audit_sink(records.clone()).build().unwrap());
    let tasks: Vec<_> = (0..1000)
        .map(|_| {
            let registry = Arc::clone(&registry);
            tokio::spawn(async move {
                registry
                    .call("quota.spend", "{}", &Ctx::new().with_user("alice"))
                    .await
            })
        })
        .collect();
    let mut admitted = 0;
    for task in tasks {
        match task.await.unwrap() {
            Ok(_) => admitted += 1,
            Err(ToolError::RateLimited {
                retry_after, limit, ..
            }) => {
                assert!(retry_after <= Duration::from_secs(24 * 3600));
                assert_eq!(limit, "daily limit of 3 calls");
            }
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(admitted, 3);
    let records = records.take();
    assert_eq!(records.len(), 1000, "one audit record per call");
    assert_eq!(records.iter().filter(|r| r.outcome == "ok").count(), 3);
    assert_eq!(
        records
            .iter()
            .filter(|r| r.outcome == "rate_limited")
            .count(),
        997
    );
    // Another user has a quota of their own.
    assert!(
        registry
            .call("quota.spend", "{}", &Ctx::new().with_user("bob"))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_cooldown_says_when_to_retry() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let ctx = Ctx::new().with_user("alice");
    assert!(registry.call("quota.ping", "", &ctx).await.is_ok());
    match registry.call("quota.ping", "", &ctx).await.unwrap_err() {
        ToolError::RateLimited {
            retry_after, limit, ..
        } => {
            assert_eq!(limit, "cooldown of 30s");
            assert!(
                retry_after > Duration::from_secs(25) && retry_after <= Duration::from_secs(30),
                "{retry_after:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let error = registry.call("quota.ping", "", &ctx).await.unwrap_err();
    assert!(error.to_string().contains("try again in"), "{error}");
}

struct Verdict(Result<Decision, String>, Duration);

#[async_trait]
impl Gate for Verdict {
    async fn check(&self, _tool: &Tool, _ctx: &Ctx) -> Result<Decision, String> {
        tokio::time::sleep(self.1).await;
        self.0.clone()
    }
}

#[tokio::test]
async fn a_gate_denial_returns_the_reason_and_runs_nothing() {
    let counter = Arc::new(Runs::default());
    let registry = Registry::builder()
        .state_arc(Arc::clone(&counter))
        .gate(Verdict(
            Ok(Decision::deny("posts need review on weekends")),
            Duration::ZERO,
        ))
        .log_annotations(false)
        .build()
        .unwrap();
    let result = registry
        .call("gated.publish", json!({"text": "hello"}), &Ctx::new())
        .await
        .unwrap();
    assert!(!result.success);
    assert_eq!(
        result.message.as_deref(),
        Some("posts need review on weekends")
    );
    assert_eq!(result.audit.outcome.as_deref(), Some("denied_by_gate"));
    assert_eq!(counter.0.load(Ordering::SeqCst), 0);
    // Tools without `requires_gate` never see the gate.
    assert!(
        registry
            .call("util.upper", json!({"input": "x"}), &Ctx::new())
            .await
            .unwrap()
            .success
    );
}

#[tokio::test]
async fn a_slow_or_failing_gate_fails_open_or_closed_as_the_tool_says() {
    for verdict in [
        Verdict(Ok(Decision::deny("too late")), Duration::from_millis(500)),
        Verdict(Err("the policy service is down".into()), Duration::ZERO),
    ] {
        let counter = Arc::new(Runs::default());
        let registry = Registry::builder()
            .state_arc(Arc::clone(&counter))
            .gate(verdict)
            .gate_timeout(Duration::from_millis(50))
            .log_annotations(false)
            .build()
            .unwrap();
        let open = registry
            .call("gated.publish", json!({"text": "hi"}), &Ctx::new())
            .await
            .unwrap();
        assert!(open.success, "fail-open: the call runs");
        assert_eq!(counter.0.load(Ordering::SeqCst), 1);
        let closed = registry
            .call("gated.wire", json!({"amount": 5}), &Ctx::new())
            .await
            .unwrap_err();
        assert_eq!(closed.code(), "gate_unavailable");
        assert_eq!(
            counter.0.load(Ordering::SeqCst),
            1,
            "fail-closed: nothing ran"
        );
    }
    // No gate configured: gated tools run unconditionally.
    let counter = Arc::new(Runs::default());
    let registry = Registry::builder()
        .state_arc(Arc::clone(&counter))
        .build()
        .unwrap();
    assert!(
        registry
            .call("gated.wire", json!({"amount": 1}), &Ctx::new())
            .await
            .unwrap()
            .success
    );
}

fn token_of(error: ToolError) -> String {
    match error {
        ToolError::NeedsApproval { token, .. } => token,
        other => panic!("expected a pending approval, got {other:?}"),
    }
}

#[tokio::test]
async fn approvals_run_once_for_the_same_user_and_arguments_until_they_expire() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir)
        .approval_ttl(Duration::from_millis(300))
        .build()
        .unwrap();
    let alice = Ctx::new().with_user("alice");
    let bob = Ctx::new().with_user("bob");
    let args = json!({"amount": 10, "to": "carol"});

    // Happy path, then replay.
    let token = token_of(
        registry
            .call("bank.transfer", args.clone(), &alice)
            .await
            .unwrap_err(),
    );
    let done = registry.approve(&token, &alice).await.unwrap();
    assert_eq!(done.content, "sent 10 to carol");
    assert_eq!(
        registry.approve(&token, &alice).await.unwrap_err().code(),
        "approval_refused"
    );

    // Another user cannot use it; its owner still can.
    let token = token_of(
        registry
            .call("bank.transfer", args.clone(), &alice)
            .await
            .unwrap_err(),
    );
    let stolen = registry.approve(&token, &bob).await.unwrap_err();
    assert!(stolen.to_string().contains("another user"), "{stolen}");
    // Other arguments are refused; the same ones, in another key order, are accepted.
    let altered = registry
        .call(
            "bank.transfer",
            json!({"amount": 1000, "to": "mallory"}),
            &alice,
        )
        .approved(&token)
        .await;
    assert!(
        altered
            .unwrap_err()
            .to_string()
            .contains("different arguments")
    );
    let same = registry
        .call(
            "bank.transfer",
            r#"{ "to": "carol", "amount": 10 }"#,
            &alice,
        )
        .approved(&token)
        .await;
    assert_eq!(same.unwrap().content, "sent 10 to carol");

    // Denial uses the token up.
    let token = token_of(
        registry
            .call("bank.transfer", args.clone(), &alice)
            .await
            .unwrap_err(),
    );
    let denied = registry.deny(&token, "not today", &alice).await.unwrap();
    assert!(!denied.success && denied.message.unwrap().contains("not today"));
    assert!(registry.approve(&token, &alice).await.is_err());

    // Expiry.
    let token = token_of(
        registry
            .call("bank.transfer", args, &alice)
            .await
            .unwrap_err(),
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let expired = registry.approve(&token, &alice).await.unwrap_err();
    assert!(expired.to_string().contains("expired"), "{expired}");
}

#[test]
fn annotations_follow_the_category_and_give_a_risk() {
    let registry = Registry::global();
    let shell = registry
        .get("code_executor.run_shell", Listing::every())
        .unwrap();
    let a = shell.effective_annotations();
    assert_eq!(
        (a.destructive, a.requires_confirmation),
        (Some(true), Some(true)),
        "terminal"
    );
    assert_eq!(shell.risk(), tool_registry::def::Risk::High);
    let search = registry
        .get("research.web_search", Listing::every())
        .unwrap();
    assert_eq!(search.effective_annotations().read_only, Some(true));
    let upper = registry.get("util.upper", Listing::every()).unwrap();
    assert_eq!(upper.risk(), tool_registry::def::Risk::Low);
    let catalog = registry.catalog(Listing::every()).json();
    let entry = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "code_executor.run_shell")
        .unwrap();
    assert_eq!(entry["risk"], "high");
}

#[tokio::test]
async fn a_batch_times_out_the_slow_call_isolates_the_panic_and_keeps_call_order() {
    let dir = tempfile::tempdir().unwrap();
    let records = Records::default();
    let registry = builder(&dir).audit_sink(records.clone()).build().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let calls = vec![
        ToolCall::new("util.sleep", json!({"ms": 5000})),
        ToolCall::new("util.echo", json!({"text": "fast"})),
        ToolCall::new("util.panic", json!({"message": "boom"})),
        ToolCall::new("util.sleep", json!({"ms": 50})),
        ToolCall::new("no.such.tool", json!({})),
    ];
    let results = registry
        .execute(
            Batch::new(calls).on_event(move |e| sink.lock().unwrap().push(e)),
            &Ctx::new().with_user("alice"),
        )
        .await;
    let outcomes: Vec<_> = results
        .iter()
        .map(|r| r.audit.outcome.as_deref().unwrap().to_owned())
        .collect();
    assert_eq!(
        outcomes,
        ["timed_out", "ok", "panicked", "ok", "unknown_tool"]
    );
    assert_eq!(results[1].content, "fast");
    assert_eq!(results[3].content, 50);
    assert!(
        results[0]
            .message
            .as_deref()
            .unwrap()
            .contains("timed out after 200ms")
    );

    let records = records.take();
    assert_eq!(records.len(), 5, "one audit record per call");
    let slow = records
        .iter()
        .find(|r| r.tool == "util.sleep" && r.outcome == "ok")
        .unwrap();
    assert!(
        slow.duration_ms >= 50.0 && slow.duration_ms < 5000.0,
        "{}",
        slow.duration_ms
    );
    assert!(records.iter().all(|r| r.user.as_deref() == Some("alice")));
    let line = serde_json::to_value(&records[0]).unwrap();
    for key in ["tool", "user", "ts", "duration_ms", "outcome"] {
        assert!(line.get(key).is_some(), "{key} missing in {line}");
    }

    let events = events.lock().unwrap();
    let finished: Vec<(usize, f64)> = events
        .iter()
        .filter_map(|e| match e {
            ToolEvent::Finished {
                index, duration_ms, ..
            } => Some((*index, *duration_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 5);
    // An event's duration is the registry's stamp on the result, not a second clock.
    for (index, duration_ms) in finished {
        assert_eq!(
            Some(duration_ms),
            results[index].audit.duration_ms,
            "{index}"
        );
    }
    assert!(
        events.iter().any(
            |e| matches!(e, ToolEvent::Progress { message, .. } if message == "sleeping 50 ms")
        )
    );
    assert!(events.iter().any(|e| matches!(
        e,
        ToolEvent::Started { index: 1, tool } if tool == "util.echo"
    )));
}

#[tokio::test]
async fn sequential_tools_run_alone() {
    let dir = tempfile::tempdir().unwrap();
    let registry = builder(&dir).build().unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let calls = vec![
        ToolCall::new("util.sleep", json!({"ms": 30})),
        ToolCall::new("util.barrier", json!({"label": "b"})),
        ToolCall::new("util.sleep", json!({"ms": 1})),
    ];
    let results = registry
        .execute(
            Batch::new(calls).on_event(move |e| sink.lock().unwrap().push(e)),
            &Ctx::new(),
        )
        .await;
    assert!(results.iter().all(|r| r.success));
    let order: Vec<String> = events
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| match e {
            ToolEvent::Started { index, .. } => Some(format!("start {index}")),
            ToolEvent::Finished { index, .. } => Some(format!("end {index}")),
            ToolEvent::Progress { .. } => None,
        })
        .collect();
    assert_eq!(
        order,
        ["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]
    );
}

#[tokio::test]
async fn audit_records_go_to_a_json_lines_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.jsonl");
    let registry = builder(&dir)
        .audit_sink(tool_registry::audit::JsonLinesAuditSink::open(&path).unwrap())
        .build()
        .unwrap();
    let ctx = Ctx::new().with_user("alice");
    registry
        .call("util.echo", json!({"text": "a"}), &ctx)
        .await
        .unwrap();
    registry
        .call("util.divide", json!({"dividend": 1, "divisor": 0}), &ctx)
        .await
        .unwrap_err();
    registry.call("no.such_tool", "{}", &ctx).await.unwrap_err();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        (lines[0]["tool"].as_str(), lines[0]["outcome"].as_str()),
        (Some("util.echo"), Some("ok"))
    );
    assert_eq!(lines[1]["outcome"], "handler_error");
    assert_eq!(lines[1]["risk"], "low");
    // Each line carries its tool's annotations as they apply: the declared ones (`read_only`,
    // `idempotent`) and the rest, every one set, failed calls included.
    assert_eq!(
        lines[1]["annotations"],
        json!({
            "read_only": true,
            "destructive": false,
            "idempotent": true,
            "open_world": false,
            "requires_confirmation": false,
        })
    );
    let echo = registry.get("util.echo", Listing::every()).unwrap();
    assert_eq!(
        lines[0]["annotations"],
        serde_json::to_value(echo.effective_annotations()).unwrap()
    );
    // A name no tool has has no annotations to record.
    assert_eq!(lines[2]["outcome"], "unknown_tool");
    assert!(lines[2].get("annotations").is_none(), "{}", lines[2]);
}

#[tokio::test]
async fn a_call_does_nothing_until_awaited_and_is_audited_once_when_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let records = Records::default();
    let counter = Arc::new(tool_registry_tests::Counter::default());
    let registry = builder(&dir)
        .state_arc(Arc::clone(&counter))
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let ctx = Ctx::new().with_user("alice");
    // Created and dropped: no validation, no run, no record.
    drop(registry.call("util.count", json!({"by": 5}), &ctx));
    drop(registry.call("no.such.tool", json!({}), &ctx));
    assert_eq!(counter.0.load(Ordering::SeqCst), 0);
    assert!(records.take().is_empty());
    // A tool with nothing to check before it, one with a gate stage, an unknown one and
    // invalid arguments: one record each, in order.
    let pending = registry.call("util.count", json!({"by": 5}), &ctx);
    assert_eq!(
        counter.0.load(Ordering::SeqCst),
        0,
        "not before it is awaited"
    );
    let result = pending.await.unwrap();
    assert_eq!(result.content, json!(5));
    registry
        .call("gated.publish", json!({"text": "hi"}), &ctx)
        .await
        .unwrap();
    registry
        .call("no.such.tool", json!({}), &ctx)
        .await
        .unwrap_err();
    registry
        .call("util.count", json!({"by": "five"}), &ctx)
        .await
        .unwrap_err();
    let outcomes: Vec<(String, String)> = records
        .take()
        .into_iter()
        .map(|r| (r.tool.into_owned(), r.outcome.into_owned()))
        .collect();
    assert_eq!(
        outcomes,
        [
            ("util.count".into(), "ok".into()),
            ("gated.publish".into(), "ok".into()),
            ("no.such.tool".into(), "unknown_tool".into()),
            ("util.count".into(), "invalid_arguments".into()),
        ]
    );
    let audit = &result.audit;
    assert_eq!(audit.tool.as_deref(), Some("util.count"));
    assert_eq!(audit.user.as_deref(), Some("alice"));
    let age = std::time::SystemTime::now()
        .duration_since(audit.ts.unwrap())
        .unwrap();
    assert!(age < Duration::from_secs(5), "the timestamp is {age:?} old");
}

// ---------------------------------------------------------------------------------------------
// Trust is asked for by name; one output runs a bounded number of calls; empty registries speak.

#[tokio::test]
async fn a_context_naming_a_user_is_never_trusted_by_accident() {
    let registry = Registry::global();
    let args = r#"{"command": "rm -rf /"}"#;
    let alice = Ctx::new().with_user("alice");
    assert_eq!(alice.scope().level(), Permission::User);
    let refused = registry
        .call("code_executor.run_shell", args, &alice)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "unknown_tool");
    // The chat id set before the user survives the change of scope.
    let in_chat = Ctx::new().with_chat_id(7).with_user("alice");
    assert_eq!(
        (in_chat.chat_id(), in_chat.scope().level()),
        (Some(7), Permission::User)
    );

    // A terminal tool asks for confirmation: reaching that stage means the scope let it through.
    let ops = Ctx::trusted().with_user("ops");
    assert_eq!(ops.scope().level(), Permission::Owner);
    let held = registry.call("code_executor.run_shell", args, &ops).await;
    assert!(
        matches!(held, Err(ToolError::NeedsApproval { .. })),
        "{held:?}"
    );
    let admin = Ctx::for_scope(Scope::user("root").with_level(Permission::Admin)).with_user("r2");
    assert_eq!(admin.user(), Some("r2"));
    let held = registry.call("code_executor.run_shell", args, &admin).await;
    assert!(
        matches!(held, Err(ToolError::NeedsApproval { .. })),
        "{held:?}"
    );
}

#[tokio::test]
async fn a_batch_runs_at_most_max_calls_and_reports_the_rest() {
    let registry = Registry::builder()
        .state(Counter::default())
        .max_calls(3)
        .build()
        .unwrap();
    let calls = (0..5).map(|_| ToolCall::new("util.count", json!({})));
    let results = registry.execute(Batch::new(calls), &Ctx::new()).await;
    assert_eq!(results.len(), 4, "three results and one for the rest");
    assert!(results[..3].iter().all(|r| r.success));
    let rest = &results[3];
    assert!(!rest.success);
    assert_eq!(rest.content["error"]["code"], "too_many_calls");
    assert_eq!(rest.content["error"]["left_out"], 2);
    assert_eq!(rest.audit.tool.as_deref(), Some("util.count"));
    let counter = registry
        .call("util.count", json!({"by": 0}), &Ctx::new())
        .await
        .unwrap();
    assert_eq!(counter.content, 3, "the calls over the limit did not run");
}

#[test]
fn an_empty_registry_says_why_and_what_to_write() {
    for command in ["list", "catalog", "tools", "call"] {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = tool_registry::cli::run(
            ["prog", command, "x"]
                .into_iter()
                .take(if command == "call" { 3 } else { 2 }),
            Registry::builder().without_linked(),
            &mut out,
            &mut err,
        );
        assert_eq!(code, tool_registry::cli::EXIT_USAGE, "{command}");
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.contains("no tools are linked into this program"),
            "{err}"
        );
        assert!(err.contains("tool_registry::link!(my_tools);"), "{err}");
        assert!(out.is_empty());
    }
}
