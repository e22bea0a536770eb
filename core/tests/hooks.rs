//! Hooks around every call and the built-ins (`confirm_if`, `cache`, `max_result_bytes`), on
//! the registry itself: what each may do, their order, what the audit record says, and what a
//! hook that panics, hangs or rewrites into invalid arguments does to the call.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tool_registry::audit::{AuditRecord, AuditSink};
use tool_registry::hook::{self, After, Before, Hook, HookCall};
use tool_registry::registry::Selector;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry, Scope, ToolError, ToolResult, ToolSpec, tool};

/// Add two numbers.
#[tool]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn outside_tmp(path: &str) -> bool {
    !path.starts_with("tmp/")
}

/// Delete a file.
#[tool(destructive, confirm_if = outside_tmp)]
fn delete_file(path: String) -> String {
    format!("deleted {path}")
}

static LOOKUPS: AtomicUsize = AtomicUsize::new(0);

/// Look a word up in the dictionary.
#[tool(read_only, cache = "5m")]
async fn lookup(word: String, ctx: &Ctx) -> String {
    LOOKUPS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(50)).await;
    format!("{word} for {}", ctx.user().unwrap_or("nobody"))
}

/// Look a rare word up: once a day per user, unless the answer is kept.
#[tool(read_only, cache = "5m", daily_limit = 1)]
fn rare_lookup(word: String) -> String {
    format!("{word}: rare")
}

static FLAKY: AtomicUsize = AtomicUsize::new(0);

/// Fails every other call.
#[tool(idempotent, cache = "5m", cache_per_user = false)]
fn flaky(word: String) -> Result<String, String> {
    if FLAKY.fetch_add(1, Ordering::SeqCst).is_multiple_of(2) {
        Err("not now".into())
    } else {
        Ok(word)
    }
}

/// Print a long report.
#[tool(max_result_bytes = 300)]
fn report(lines: usize) -> String {
    (0..lines).map(|i| format!("line {i} ééé\n")).collect()
}

/// Collects audit records.
#[derive(Clone, Default)]
struct Records(Arc<Mutex<Vec<AuditRecord<'static>>>>);

impl AuditSink for Records {
    fn record(&self, record: &AuditRecord<'_>) {
        self.0.lock().unwrap().push(record.clone().into_owned());
    }
}

impl Records {
    fn last(&self) -> AuditRecord<'static> {
        self.0.lock().unwrap().last().cloned().unwrap()
    }
}

/// `add` of 2 and 3, as any caller.
async fn add_2_3(registry: &Registry) -> ToolResult {
    registry
        .call("add", r#"{"a": 2, "b": 3}"#, &Ctx::new())
        .await
        .unwrap()
}

/// A registry whose hooks are a `Trace` named `outer`, then `inner`, auditing to `records`.
fn outer_and(inner: impl Hook, seen: &Arc<Mutex<Vec<String>>>, records: &Records) -> Registry {
    Registry::builder()
        .hook(Trace {
            name: "outer",
            seen: seen.clone(),
        })
        .hook(inner)
        .audit_sink(records.clone())
        .build()
        .unwrap()
}

/// Which hooks acted on the call `record` audits, and how.
fn acted<'r>(record: &'r AuditRecord<'_>) -> Vec<(&'r str, &'static str)> {
    (record.hooks.iter())
        .map(|acted| (&*acted.hook, acted.action))
        .collect()
}

/// Records the order hooks run in.
struct Trace {
    name: &'static str,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Hook for Trace {
    fn name(&self) -> &str {
        self.name
    }

    fn before(&self, call: &HookCall<'_>) -> Before {
        self.seen
            .lock()
            .unwrap()
            .push(format!("before {} {}", self.name, call.tool().name()));
        Before::Continue
    }

    fn after(&self, _: &HookCall<'_>, result: &mut ToolResult) -> After {
        self.seen
            .lock()
            .unwrap()
            .push(format!("after {}", self.name));
        if let Value::Number(n) = &result.content {
            result.content = json!(n.as_i64().unwrap() * 10);
            return After::changed("times ten");
        }
        After::Kept
    }
}

#[tokio::test]
async fn hooks_run_in_order_around_the_handler_and_the_audit_names_what_acted() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let records = Records::default();
    let inner = Trace {
        name: "inner",
        seen: seen.clone(),
    };
    let registry = outer_and(inner, &seen, &records);
    let result = add_2_3(&registry).await;
    // `inner` multiplies first, then `outer`.
    assert_eq!(result.content, json!(500));
    assert_eq!(
        *seen.lock().unwrap(),
        [
            "before outer add",
            "before inner add",
            "after inner",
            "after outer"
        ]
    );
    let record = records.last();
    assert_eq!(acted(&record), [("inner", "changed"), ("outer", "changed")]);
    let json = serde_json::to_value(&record).unwrap();
    assert_eq!(json["hooks"][0]["detail"], "times ten", "{json}");
    assert_eq!(
        registry.stages("add", &Scope::trusted()).unwrap(),
        [
            "scope",
            "validate",
            "before hook outer",
            "before hook inner",
            "confirmation",
            "handler",
            "after hook inner",
            "after hook outer",
            "audit"
        ]
    );
}

/// Multiplies a number result by ten once a future says so.
struct WaitsThenDoubles;

impl Hook for WaitsThenDoubles {
    fn name(&self) -> &str {
        "waits"
    }

    fn after(&self, _: &HookCall<'_>, _: &mut ToolResult) -> After {
        After::later(async {
            tokio::task::yield_now().await;
            |result: &mut ToolResult| {
                let n = result.content.as_i64().unwrap();
                result.content = json!(n * 2);
                After::changed("doubled")
            }
        })
    }
}

#[tokio::test]
async fn an_after_side_that_waits_hands_the_rest_on_in_order() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let records = Records::default();
    let registry = outer_and(WaitsThenDoubles, &seen, &records);
    let result = add_2_3(&registry).await;
    // `waits` doubles first (its `after` runs first, and waits), then `outer` multiplies.
    assert_eq!(result.content, json!(100));
    assert_eq!(*seen.lock().unwrap(), ["before outer add", "after outer"]);
    let record = records.last();
    assert_eq!(acted(&record), [("waits", "changed"), ("outer", "changed")]);
    assert_eq!(record.outcome, "ok");
}

#[tokio::test]
async fn a_hook_refuses_rewrites_and_asks_for_approval() {
    let registry = Registry::builder()
        .hook(hook::before("policy", |call| {
            let args = call.args();
            match args["a"].as_i64() {
                Some(13) => Before::Refuse("13 is unlucky; pick another number".into()),
                Some(7) => Before::Rewrite(json!({"a": 70, "b": args["b"]})),
                Some(9) => Before::Rewrite(json!({"a": "nine", "b": args["b"]})),
                Some(100) => Before::Confirm("a hundred needs a second look".into()),
                _ => Before::Continue,
            }
        }))
        .build()
        .unwrap();
    let ctx = Ctx::new().with_user("ann");

    let error = registry
        .call("add", r#"{"a": 13, "b": 1}"#, &ctx)
        .await
        .unwrap_err();
    let ToolError::Refused { tool, hook, reason } = &error else {
        panic!("{error}")
    };
    assert_eq!((tool.as_str(), hook.as_str()), ("add", "policy"));
    assert!(reason.contains("unlucky"));
    assert_eq!(error.code(), "refused");
    let as_result = ToolResult::from(error.clone());
    assert_eq!(as_result.content["error"]["hook"], "policy");
    assert_eq!(
        ToolError::from_json(&as_result.content["error"], "add"),
        error
    );

    let rewritten = registry.call("add", r#"{"a": 7, "b": 1}"#, &ctx).await;
    assert_eq!(rewritten.unwrap().content, json!(71));

    // Rewritten into what the schema refuses: the handler never runs.
    let invalid = registry
        .call("add", r#"{"a": 9, "b": 1}"#, &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&invalid, ToolError::InvalidArguments { path, .. } if path == "a"),
        "{invalid}"
    );

    // Asked: a token bound to these arguments, which runs them once approved.
    let held = registry
        .call("add", r#"{"a": 100, "b": 1}"#, &ctx)
        .await
        .unwrap_err();
    let ToolError::NeedsApproval { token, .. } = held else {
        panic!("{held}")
    };
    let other = registry
        .call("add", r#"{"a": 100, "b": 2}"#, &ctx)
        .approved(&token)
        .await
        .unwrap_err();
    assert!(
        matches!(other, ToolError::ApprovalRefused { .. }),
        "{other}"
    );
    let approved = registry
        .call("add", r#"{"b": 1, "a": 100}"#, &ctx)
        .approved(&token)
        .await
        .unwrap();
    assert_eq!(approved.content, json!(101));
}

struct Panics {
    before: bool,
}

impl Hook for Panics {
    fn name(&self) -> &str {
        "panics"
    }

    fn before(&self, _: &HookCall<'_>) -> Before {
        if self.before {
            panic!("a bug before");
        }
        Before::Continue
    }

    fn after(&self, _: &HookCall<'_>, _: &mut ToolResult) -> After {
        After::later(async {
            if true {
                panic!("a bug after, while waiting");
            }
            |_: &mut ToolResult| After::Kept
        })
    }
}

struct Hangs;

impl Hook for Hangs {
    fn name(&self) -> &str {
        "hangs"
    }

    fn before(&self, _: &HookCall<'_>) -> Before {
        Before::later(std::future::pending())
    }
}

#[tokio::test]
async fn a_hook_that_panics_or_hangs_fails_the_call_like_a_handler_would() {
    for before in [true, false] {
        let registry = Registry::builder().hook(Panics { before }).build().unwrap();
        let error = registry
            .call("add", r#"{"a": 1, "b": 1}"#, &Ctx::new())
            .await
            .unwrap_err();
        let ToolError::Panicked { tool, message } = &error else {
            panic!("{error}")
        };
        assert_eq!(tool, "add");
        assert!(message.contains("in hook `panics`"), "{message}");
        assert!(message.contains("a bug"), "{message}");
    }

    let registry = Registry::builder()
        .hook(Hangs)
        .default_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let error = registry
        .call("add", r#"{"a": 1, "b": 1}"#, &Ctx::new())
        .await
        .unwrap_err();
    assert!(matches!(error, ToolError::TimedOut { .. }), "{error}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The process and other calls go on.
    let fine = Registry::builder().build().unwrap();
    let sum = fine.call("add", r#"{"a": 1, "b": 1}"#, &Ctx::new()).await;
    assert_eq!(sum.unwrap().content, json!(2));
}

#[tokio::test]
async fn a_hook_on_a_selector_applies_to_those_tools_only() {
    let registry = Registry::builder()
        .hook_on(
            Selector::name("report"),
            hook::before("no_reports", |_| Before::Refuse("no".into())),
        )
        .build()
        .unwrap();
    let ctx = Ctx::new();
    assert!(registry.call("add", r#"{"a":1,"b":1}"#, &ctx).await.is_ok());
    let error = registry.call("report", r#"{"lines":1}"#, &ctx).await;
    assert!(matches!(error, Err(ToolError::Refused { .. })));
}

#[tokio::test]
async fn confirm_if_asks_for_some_arguments_and_not_for_others() {
    let records = Records::default();
    let registry = Registry::builder()
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let ctx = Ctx::new().with_user("ann");
    let scratch = registry
        .call("delete_file", r#"{"path": "tmp/scratch.txt"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(scratch.content, json!("deleted tmp/scratch.txt"));
    assert!(records.last().hooks.is_empty());

    let held = registry
        .call("delete_file", json!({"path": "notes/plan.md"}), &ctx)
        .await
        .unwrap_err();
    let ToolError::NeedsApproval { token, .. } = held else {
        panic!("{held}")
    };
    let record = records.last();
    assert_eq!(record.outcome, "needs_approval");
    assert_eq!(record.gate.as_deref(), Some("confirmation"));
    assert_eq!(&*record.hooks[0].hook, "confirm_if");
    assert_eq!(record.hooks[0].action, "asked_approval");
    // The trail names the approval by an id the token cannot be had from.
    let id = tool_registry::audit::approval_id(&token);
    assert_eq!(record.approval.as_deref(), Some(id.as_str()));
    assert!(!id.contains(&token) && !token.contains(&id));
    // Bound to those exact arguments.
    let swapped = registry
        .call("delete_file", r#"{"path": "notes/other.md"}"#, &ctx)
        .approved(&token)
        .await
        .unwrap_err();
    assert!(
        matches!(swapped, ToolError::ApprovalRefused { .. }),
        "{swapped}"
    );
    let done = registry
        .call("delete_file", r#"{"path": "notes/plan.md"}"#, &ctx)
        .approved(&token)
        .await
        .unwrap();
    assert_eq!(done.content, json!("deleted notes/plan.md"));
    // The call that ran under it names the same approval.
    let record = records.last();
    assert_eq!((record.outcome.as_ref(), record.gate), ("ok", None));
    assert_eq!(record.approval.as_deref(), Some(id.as_str()));
}

#[tokio::test]
async fn confirm_if_of_a_run_time_spec_is_a_schema_of_the_arguments() {
    let registry = Registry::builder().without_linked().build().unwrap();
    let spec = ToolSpec::builder("rm")
        .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}))
        .confirm_if(json!({"not": {"properties": {"path": {"pattern": "^tmp/"}}}}))
        .build()
        .unwrap();
    registry
        .register(
            spec,
            ToolHandler::new(|args: Value, _| async move { Ok::<_, String>(args["path"].clone()) }),
        )
        .unwrap();
    let ctx = Ctx::new();
    assert!(
        registry
            .call("rm", r#"{"path":"tmp/a"}"#, &ctx)
            .await
            .is_ok()
    );
    let held = registry.call("rm", r#"{"path":"etc/a"}"#, &ctx).await;
    assert!(matches!(held, Err(ToolError::NeedsApproval { .. })));
    // A schema that is not one is refused when the spec is built.
    let bad = ToolSpec::builder("rm2")
        .confirm_if(json!({"type": 12}))
        .build();
    assert!(bad.unwrap_err().to_string().contains("confirm_if"));
}

#[tokio::test]
async fn a_long_result_is_shortened_to_fit_with_a_note() {
    let records = Records::default();
    let registry = Registry::builder()
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let ctx = Ctx::new();
    let short = registry
        .call("report", r#"{"lines": 2}"#, &ctx)
        .await
        .unwrap();
    assert!(!short.content.as_str().unwrap().contains("[cut:"));
    let long = registry
        .call("report", r#"{"lines": 500}"#, &ctx)
        .await
        .unwrap();
    let text = long.content.as_str().unwrap();
    assert!(text.len() <= 300, "{}", text.len());
    assert!(text.starts_with("line 0 ééé\n"));
    assert!(text.contains("[cut: the full result was"), "{text}");
    let record = records.last();
    assert_eq!(&*record.hooks[0].hook, "max_result_bytes");
    assert_eq!(record.hooks[0].action, "shortened");
}

#[tokio::test]
async fn a_cached_result_is_reused_per_user_and_a_failure_is_not_kept() {
    let records = Records::default();
    let registry = Registry::builder()
        .audit_sink(records.clone())
        .build()
        .unwrap();
    let ann = Ctx::new().with_user("ann");
    let bob = Ctx::new().with_user("bob");
    let before = LOOKUPS.load(Ordering::SeqCst);
    let first = registry
        .call("lookup", r#"{"word": "cat"}"#, &ann)
        .await
        .unwrap();
    let again = registry
        .call("lookup", json!({"word": "cat"}), &ann)
        .await
        .unwrap();
    assert_eq!(first.content, again.content);
    assert_eq!(LOOKUPS.load(Ordering::SeqCst) - before, 1);
    assert_eq!(records.last().hooks[0].action, "hit");
    // Another user never sees ann's answer.
    let theirs = registry
        .call("lookup", r#"{"word": "cat"}"#, &bob)
        .await
        .unwrap();
    assert_eq!(theirs.content, json!("cat for bob"));
    assert_eq!(LOOKUPS.load(Ordering::SeqCst) - before, 2);
    // Other arguments, another answer.
    registry
        .call("lookup", r#"{"word": "dog"}"#, &ann)
        .await
        .unwrap();
    assert_eq!(LOOKUPS.load(Ordering::SeqCst) - before, 3);

    // A failure is not kept: the next identical call runs again, and its success is kept.
    let ctx = Ctx::new();
    let failed = registry.call("flaky", r#"{"word": "x"}"#, &ctx).await;
    assert!(failed.is_err());
    let ok = registry
        .call("flaky", r#"{"word": "x"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(ok.content, json!("x"));
    let kept = registry
        .call("flaky", r#"{"word": "x"}"#, &ctx)
        .await
        .unwrap();
    assert_eq!(kept.content, json!("x"));
    assert_eq!(FLAKY.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_cached_answer_spends_no_quota_and_another_call_still_does() {
    let registry = Registry::builder().build().unwrap();
    let ctx = Ctx::new().with_user("ann");
    for _ in 0..3 {
        let answer = registry.call("rare_lookup", r#"{"word": "x"}"#, &ctx).await;
        assert_eq!(answer.unwrap().content, json!("x: rare"));
    }
    let other = registry.call("rare_lookup", r#"{"word": "y"}"#, &ctx).await;
    assert!(
        matches!(other, Err(ToolError::RateLimited { .. })),
        "{other:?}"
    );
    // A cache with a gate or a confirmation that must see every run is refused.
    let spec = ToolSpec::builder("gated_read")
        .annotations(tool_registry::def::Annotations {
            read_only: Some(true),
            ..tool_registry::def::Annotations::NONE
        })
        .requires_gate(true)
        .cache(Duration::from_secs(60))
        .build();
    assert!(spec.unwrap_err().to_string().contains("requires_gate"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn identical_calls_that_miss_together_run_the_handler_once() {
    let registry = Arc::new(Registry::builder().build().unwrap());
    let before = LOOKUPS.load(Ordering::SeqCst);
    let calls = (0..200).map(|_| {
        let registry = registry.clone();
        tokio::spawn(async move {
            let ctx = Ctx::new().with_user("crowd");
            registry
                .call("lookup", r#"{"word": "flight"}"#, &ctx)
                .await
                .unwrap()
                .content
        })
    });
    let answers = futures::future::join_all(calls).await;
    assert!(
        answers
            .iter()
            .all(|a| a.as_ref().unwrap() == "flight for crowd")
    );
    assert_eq!(LOOKUPS.load(Ordering::SeqCst) - before, 1);
}

#[test]
fn a_cache_on_a_tool_that_changes_things_is_refused_in_a_spec() {
    let error = ToolSpec::builder("send")
        .cache(Duration::from_secs(60))
        .build()
        .unwrap_err();
    assert!(error.to_string().contains("read_only"), "{error}");
}

#[tokio::test]
async fn a_batch_and_a_parsed_output_run_the_same_hooks() {
    use tool_registry::ToolCall;
    use tool_registry::parse::{self, Options};

    let registry = Registry::builder()
        .hook(hook::before("no_thirteen", |call| {
            if call.args()["a"] == 13 {
                Before::Refuse("13 is unlucky".into())
            } else {
                Before::Continue
            }
        }))
        .hook(hook::after("double", |_, result| {
            let n = result.content.as_i64()?;
            result.content = json!(n * 2);
            Some("doubled".into())
        }))
        .build()
        .unwrap();
    let ctx = Ctx::new().with_user("ann");
    let calls = vec![
        ToolCall::new("add", json!({"a": 1, "b": 2})),
        ToolCall::new("add", json!({"a": 13, "b": 2})),
        ToolCall::new("delete_file", json!({"path": "notes/a"})),
        ToolCall::new("report", json!({"lines": 400})),
    ];
    let results = registry.execute(calls, &ctx).await;
    assert_eq!(results[0].content, json!(6));
    assert_eq!(results[1].content["error"]["code"], "refused");
    assert_eq!(results[2].content["error"]["code"], "needs_approval");
    let report = results[3].content.as_str().unwrap();
    assert!(report.len() <= 300 && report.contains("[cut:"), "{report}");

    let output = "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 20, \"b\": 1}}</tool_call>\n\
                  <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 13, \"b\": 1}}</tool_call>";
    let tools = registry.scoped(ctx.scope());
    let parsed = parse::any_with(output, &tools, Options::new());
    let results = registry.execute(&parsed, &ctx).await;
    assert_eq!(results[0].content, json!(42));
    assert_eq!(results[1].content["error"]["hook"], "no_thirteen");
}
