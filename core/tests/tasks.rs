//! Calls run as tasks, on the registry itself: the bounds per caller (10,000 tasks asked for),
//! another caller's task and a forged id, a cancel racing the end of the call (never both, the
//! call never run twice), a task whose instance stopped (failed after its lease), and a task
//! that asks a person (answered yes, answered no).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_registry::task::{
    Become, InMemoryTaskStore, Started, TaskAnswer, TaskCall, TaskError, TaskLimits, TaskOwner,
    TaskRecord, TaskStatus, TaskStore, Tasks, owner_of,
};
use tool_registry::{Ctx, Registry, Scope, tool};

static SLEEPS: AtomicUsize = AtomicUsize::new(0);

/// Sleep for a while.
#[tool(task = "required")]
async fn nap(millis: u64) -> u64 {
    SLEEPS.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    millis
}

/// Sleep for a while, uncounted: the guests' test runs beside the ones that count `nap`s.
#[tool(task = "required")]
async fn doze(millis: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    millis
}

static RACED: AtomicUsize = AtomicUsize::new(0);

/// Count, after a moment.
#[tool(task = "required")]
async fn count(millis: u64) -> usize {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    RACED.fetch_add(1, Ordering::SeqCst) + 1
}

/// Remove everything.
#[tool(task = "required", requires_confirmation)]
fn wipe(what: String) -> String {
    format!("wiped {what}")
}

fn registry() -> Arc<Registry> {
    Arc::new(Registry::builder().build().unwrap())
}

fn call(tool: &str, arguments: serde_json::Value, scope: &Scope) -> TaskCall {
    TaskCall {
        tool: tool.into(),
        arguments,
        ctx: Ctx::for_scope(scope.clone()),
        owner: TaskOwner::of(scope),
        asks: true,
        inputs: None,
    }
}

async fn start(tasks: &Tasks, registry: &Arc<Registry>, call: TaskCall) -> TaskRecord {
    match tasks.run(registry.clone().into(), call, Become::Now).await {
        Ok(Started::Task(task)) => task,
        other => panic!("not a task: {other:?}"),
    }
}

async fn until(
    tasks: &Tasks,
    owner: &str,
    id: &str,
    done: impl Fn(&TaskRecord) -> bool,
) -> TaskRecord {
    for _ in 0..400 {
        let task = tasks.get(owner, id).await.unwrap();
        if done(&task) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task never got there");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_tasks_from_one_caller_stop_at_its_bounds() {
    let registry = registry();
    let limits = TaskLimits {
        running_per_caller: 8,
        per_caller: 20,
        ..TaskLimits::default()
    };
    let tasks = Tasks::new(Arc::new(InMemoryTaskStore::new()), limits);
    let alice = Scope::user("alice");
    let before = SLEEPS.load(Ordering::SeqCst);
    let (mut started, mut refused) = (Vec::new(), 0);
    for _ in 0..10_000 {
        match tasks
            .run(
                registry.clone().into(),
                call("nap", json!({"millis": 60_000}), &alice),
                Become::Now,
            )
            .await
        {
            Ok(Started::Task(task)) => started.push(task),
            Err(TaskError::TooMany {
                limit: 8,
                what: "running",
            }) => refused += 1,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!((started.len(), refused), (8, 9_992));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        SLEEPS.load(Ordering::SeqCst) - before,
        8,
        "only admitted tasks run"
    );
    // Another caller has bounds of its own.
    let bob = Scope::user("bob");
    start(&tasks, &registry, call("nap", json!({"millis": 1}), &bob)).await;

    // Cancelled tasks stop running but stay kept until their TTL: the kept bound holds.
    let owner = owner_of(&alice);
    for task in &started {
        tasks.cancel(&owner, &task.id).await.unwrap();
    }
    let mut kept = started.len();
    loop {
        match tasks
            .run(
                registry.clone().into(),
                call("nap", json!({"millis": 1}), &alice),
                Become::Now,
            )
            .await
        {
            Ok(Started::Task(task)) => {
                until(&tasks, &owner, &task.id, |t| t.status.is_terminal()).await;
                kept += 1;
            }
            Err(TaskError::TooMany {
                limit: 20,
                what: "kept",
            }) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(kept, 20);
    assert_eq!(tasks.list(&owner).await.unwrap().len(), 20);
}

#[tokio::test]
async fn another_callers_task_is_an_unknown_one() {
    let registry = registry();
    let tasks = Tasks::default();
    let (alice, mallory) = (Scope::user("alice"), Scope::user("mallory"));
    let task = start(
        &tasks,
        &registry,
        call("nap", json!({"millis": 5_000}), &alice),
    )
    .await;
    assert_eq!(task.id.len(), 32);
    let thief = owner_of(&mallory);
    let forged = tasks
        .get(&thief, "0123456789abcdef0123456789abcdef")
        .await
        .unwrap_err();
    assert_eq!(forged, TaskError::NotFound);
    assert_eq!(tasks.get(&thief, &task.id).await.unwrap_err(), forged);
    for hostile in [
        "x".repeat(1 << 20),
        "*".into(),
        format!("{}:x", task.id),
        String::new(),
    ] {
        let owner = owner_of(&alice);
        assert_eq!(tasks.get(&owner, &hostile).await.unwrap_err(), forged);
        assert_eq!(tasks.cancel(&owner, &hostile).await.unwrap_err(), forged);
    }
    assert_eq!(tasks.cancel(&thief, &task.id).await.unwrap_err(), forged);
    assert_eq!(
        tasks
            .answer(&thief, &task.id, TaskAnswer::Approve)
            .await
            .unwrap_err(),
        forged
    );
    assert!(tasks.list(&thief).await.unwrap().is_empty());
    // A guest of the same level is not the user either; nor the same user at another level.
    assert_ne!(owner_of(&Scope::network_guest()), owner_of(&alice));
    assert_ne!(
        owner_of(&Scope::user("alice").with_level(tool_registry::Permission::Admin)),
        owner_of(&alice)
    );
    let mine = tasks.get(&owner_of(&alice), &task.id).await.unwrap();
    assert_eq!(mine.status, TaskStatus::Working);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_the_end_has_one_winner_and_the_call_runs_once() {
    let registry = registry();
    let limits = TaskLimits {
        poll_interval: Duration::from_millis(5),
        ..TaskLimits::default()
    };
    let tasks = Tasks::new(Arc::new(InMemoryTaskStore::new()), limits);
    let alice = Scope::user("alice");
    let owner = owner_of(&alice);
    let (mut completed, mut cancelled) = (0, 0);
    for round in 0..60u64 {
        let before = RACED.load(Ordering::SeqCst);
        let task = start(
            &tasks,
            &registry,
            call("count", json!({"millis": round % 6}), &alice),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(round % 5)).await;
        let cancel = tasks.cancel(&owner, &task.id).await;
        let end = until(&tasks, &owner, &task.id, |t| t.status.is_terminal()).await;
        tokio::time::sleep(Duration::from_millis(10)).await;
        let ran = RACED.load(Ordering::SeqCst) - before;
        match (cancel, end.status) {
            (Ok(_), TaskStatus::Cancelled) => {
                cancelled += 1;
                assert!(end.result.is_none(), "a cancelled task has no result");
                assert!(ran <= 1);
            }
            (Err(TaskError::Ended(TaskStatus::Completed)), TaskStatus::Completed) => {
                completed += 1;
                assert_eq!(ran, 1, "a completed task ran its call once");
                assert_eq!(end.result.unwrap().content, json!(before + 1));
            }
            other => panic!("round {round}: {other:?}"),
        }
        // Whatever won, it stays.
        let later = tasks.get(&owner, &task.id).await.unwrap();
        assert_eq!(later.status, end.status);
    }
    assert_eq!(completed + cancelled, 60);
}

#[test]
fn a_task_whose_instance_stopped_fails_after_its_lease() {
    let store: Arc<dyn TaskStore> = Arc::new(InMemoryTaskStore::new());
    let limits = TaskLimits {
        lease: Duration::from_millis(300),
        poll_interval: Duration::from_millis(50),
        ..TaskLimits::default()
    };
    let registry = registry();
    let alice = Scope::user("alice");
    let owner = owner_of(&alice);
    // One instance starts a long task, then stops (its runtime ends, and every task on it).
    let dying = tokio::runtime::Runtime::new().unwrap();
    let first = Tasks::new(store.clone(), limits.clone());
    let task = dying.block_on(async {
        let task = start(
            &first,
            &registry,
            call("nap", json!({"millis": 60_000}), &alice),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
        task
    });
    drop(dying);
    // Another instance on the same store answers for it: working until the lease runs out,
    // then failed, never working forever.
    let other = tokio::runtime::Runtime::new().unwrap();
    other.block_on(async {
        let second = Tasks::new(store.clone(), limits.clone());
        let now = second.get(&owner, &task.id).await.unwrap();
        assert_eq!(now.status, TaskStatus::Working);
        tokio::time::sleep(Duration::from_millis(400)).await;
        let failed = second.get(&owner, &task.id).await.unwrap();
        assert_eq!(failed.status, TaskStatus::Failed);
        assert!(failed.error.unwrap().contains("lease"), "says why");
        assert_eq!(
            second.cancel(&owner, &task.id).await.unwrap_err(),
            TaskError::Ended(TaskStatus::Failed)
        );
    });
}

#[tokio::test]
async fn a_task_asks_a_person_and_runs_on_their_answer() {
    let registry = registry();
    let limits = TaskLimits {
        poll_interval: Duration::from_millis(10),
        ..TaskLimits::default()
    };
    let tasks = Tasks::new(Arc::new(InMemoryTaskStore::new()), limits);
    let alice = Scope::user("alice");
    let owner = owner_of(&alice);
    for (answer, expected) in [
        (TaskAnswer::Approve, Some("wiped disk")),
        (TaskAnswer::Decline, None),
    ] {
        let task = start(
            &tasks,
            &registry,
            call("wipe", json!({"what": "disk"}), &alice),
        )
        .await;
        let asking = until(&tasks, &owner, &task.id, |t| {
            t.status == TaskStatus::InputRequired
        })
        .await;
        let question = asking.question.unwrap();
        assert_eq!(question.arguments, json!({"what": "disk"}));
        assert!(tasks.get(&owner, &task.id).await.unwrap().result.is_none());
        tasks.answer(&owner, &task.id, answer).await.unwrap();
        // A second answer finds no question: the first one stands.
        assert!(matches!(
            tasks.answer(&owner, &task.id, TaskAnswer::Approve).await,
            Err(TaskError::NoQuestion | TaskError::Ended(_))
        ));
        let end = until(&tasks, &owner, &task.id, |t| t.status.is_terminal()).await;
        assert_eq!(end.status, TaskStatus::Completed);
        let result = end.result.unwrap();
        match expected {
            Some(text) => {
                assert!(result.success, "{result:?}");
                assert_eq!(result.content, json!(text));
            }
            None => {
                assert!(!result.success);
                assert_eq!(result.audit.outcome.as_deref(), Some("denied"));
            }
        }
    }
}

/// Write a long text.
#[tool(task = "required")]
fn essay(words: usize) -> String {
    "word ".repeat(words)
}

#[tokio::test]
async fn a_result_larger_than_a_task_keeps_fails_the_task_saying_so() {
    let registry = registry();
    let limits = TaskLimits {
        max_result_bytes: 1000,
        ..TaskLimits::default()
    };
    let tasks = Tasks::new(Arc::new(InMemoryTaskStore::new()), limits);
    let alice = Scope::user("alice");
    let owner = owner_of(&alice);
    let small = start(
        &tasks,
        &registry,
        call("essay", json!({"words": 10}), &alice),
    )
    .await;
    let small = until(&tasks, &owner, &small.id, |t| t.status.is_terminal()).await;
    assert_eq!(small.status, TaskStatus::Completed);
    let large = start(
        &tasks,
        &registry,
        call("essay", json!({"words": 1000}), &alice),
    )
    .await;
    let large = until(&tasks, &owner, &large.id, |t| t.status.is_terminal()).await;
    assert_eq!(large.status, TaskStatus::Failed);
    assert!(large.result.is_none());
    assert!(
        large.error.unwrap().contains("larger than the 1000 bytes"),
        "says why"
    );
}

static STOPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets [`STOPPED`] when dropped.
struct SetsStopped;

impl Drop for SetsStopped {
    fn drop(&mut self) {
        STOPPED.store(true, Ordering::SeqCst);
    }
}

/// Wait for a long time, maybe as a task.
#[tool(task = "optional")]
async fn linger() -> &'static str {
    let _guard = SetsStopped;
    tokio::time::sleep(Duration::from_secs(60)).await;
    "done"
}

#[tokio::test]
async fn a_request_dropped_before_its_call_became_a_task_stops_the_call() {
    let registry = registry();
    let tasks = Tasks::default();
    let alice = Scope::user("alice");
    let run = tasks.run(
        registry.clone().into(),
        call("linger", json!({}), &alice),
        Become::IfSlow,
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(200), run)
            .await
            .is_err()
    );
    for _ in 0..100 {
        if STOPPED.load(Ordering::SeqCst) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        STOPPED.load(Ordering::SeqCst),
        "the call was dropped with its request"
    );
    assert!(
        tasks.list(&owner_of(&alice)).await.unwrap().is_empty(),
        "no task was made"
    );
}

/// A network guest's call of `doze`, in `session` (none: a stateless request) from `peer`.
fn guest_call(millis: u64, session: Option<&str>, peer: &str, limits: &TaskLimits) -> TaskCall {
    let scope = Scope::network_guest();
    let peer = Some(peer.parse().unwrap());
    TaskCall {
        tool: "doze".into(),
        arguments: json!({ "millis": millis }),
        ctx: Ctx::for_scope(scope.clone()),
        owner: TaskOwner::of_caller(&scope, session, peer, &limits.guests),
        asks: true,
        inputs: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guests_see_only_their_sessions_tasks_and_one_address_cannot_use_up_every_guests_share() {
    let registry = registry();
    let limits = TaskLimits::default();
    let guests = limits.guests.clone();
    let tasks = Tasks::new(Arc::new(InMemoryTaskStore::new()), limits.clone());
    let owner = |session| TaskOwner::guest(session, None, &guests).id;

    // Guest A, in its session, from one address: as many running tasks as its address may.
    let mut a_ids = Vec::new();
    for _ in 0..guests.running_per_peer {
        let call = guest_call(60_000, Some("session-a"), "192.0.2.1", &limits);
        a_ids.push(start(&tasks, &registry, call).await.id);
    }
    let refused = tasks
        .run(
            registry.clone().into(),
            guest_call(60_000, Some("session-a"), "192.0.2.1", &limits),
            Become::Now,
        )
        .await
        .unwrap_err();
    assert_eq!(
        refused,
        TaskError::TooMany {
            limit: guests.running_per_peer,
            what: "running among the guests of your address",
        }
    );
    // Another session from the same address shares the address's bound...
    let same_address = guest_call(60_000, Some("session-b"), "192.0.2.1", &limits);
    assert!(matches!(
        tasks
            .run(registry.clone().into(), same_address, Become::Now)
            .await,
        Err(TaskError::TooMany { .. })
    ));
    // ...a guest elsewhere does not.
    let b = start(
        &tasks,
        &registry,
        guest_call(60_000, Some("session-b"), "192.0.2.2", &limits),
    )
    .await;

    // B's list holds B's task alone; A's tasks are unknown to B, and to a stateless guest.
    let listed = tasks.list(&owner(Some("session-b"))).await.unwrap();
    assert_eq!(
        listed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        [b.id.as_str()]
    );
    assert_eq!(
        tasks.list(&owner(Some("session-a"))).await.unwrap().len(),
        a_ids.len()
    );
    for who in [owner(Some("session-b")), owner(None)] {
        assert_eq!(tasks.get(&who, &a_ids[0]).await, Err(TaskError::NotFound));
        assert_eq!(
            tasks.cancel(&who, &a_ids[0]).await,
            Err(TaskError::NotFound)
        );
    }
    assert!(tasks.list(&owner(None)).await.unwrap().is_empty());
    let a_first = tasks
        .get(&owner(Some("session-a")), &a_ids[0])
        .await
        .unwrap();
    assert_eq!(a_first.status, TaskStatus::Working);

    // All the guests together stop at their share, however many addresses they come from.
    let mut started = a_ids.len() + 1;
    let mut octet = 3;
    let refused = loop {
        let call = guest_call(60_000, None, &format!("192.0.2.{octet}"), &limits);
        match tasks.run(registry.clone().into(), call, Become::Now).await {
            Ok(Started::Task(_)) => started += 1,
            Err(error) => break error,
            Ok(other) => panic!("not a task: {other:?}"),
        }
        octet += 1;
    };
    assert_eq!(started, guests.running);
    assert_eq!(
        refused,
        TaskError::TooMany {
            limit: guests.running,
            what: "running among all guests",
        }
    );
    // A named caller is bounded as itself, not by the guests' share.
    start(
        &tasks,
        &registry,
        call("doze", json!({"millis": 1}), &Scope::user("ann")),
    )
    .await;
    // Ending a guest's task gives its place back to its address.
    tasks
        .cancel(&owner(Some("session-a")), &a_ids[0])
        .await
        .unwrap();
    start(
        &tasks,
        &registry,
        guest_call(1, Some("session-a"), "192.0.2.1", &limits),
    )
    .await;
}

/// A call that asks two questions of its client at once through its task, and answers with
/// both answers.
struct Asker(tool_registry::task::TaskInputs);

impl tool_registry::call::ClientLink for Asker {
    fn log(&self, _: tool_registry::call::LogLevel, _: Option<&str>, _: serde_json::Value) {}

    fn roots(
        &self,
        key: Option<&str>,
    ) -> tool_registry::call::Asking<Vec<tool_registry::call::Root>> {
        let (inputs, key) = (self.0.clone(), key.unwrap_or("roots").to_owned());
        Box::pin(async move {
            let answer = inputs.ask(key, json!({"method": "roots/list"})).await?;
            Ok(serde_json::from_value(answer["roots"].clone()).unwrap_or_default())
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_asks_its_client_while_it_runs_and_takes_answers_one_at_a_time() {
    use tool_registry::spec::ToolHandler;
    let registry = Arc::new(Registry::builder().without_linked().build().unwrap());
    let spec = tool_registry::ToolSpec::builder("two_roots")
        .description("Asks for two lists of roots at once.")
        .build()
        .unwrap();
    let handler = ToolHandler::new(|_: serde_json::Value, ctx: Ctx| async move {
        let (a, b) = tokio::join!(ctx.roots_named(Some("a")), ctx.roots_named(Some("b")));
        let (a, b) = (a.map_err(|e| e.to_string())?, b.map_err(|e| e.to_string())?);
        Ok::<_, String>(format!("{} {}", a[0].uri, b[0].uri))
    });
    registry.register(spec, handler).unwrap();
    let tasks = Tasks::new(
        Arc::new(InMemoryTaskStore::new()),
        TaskLimits {
            poll_interval: Duration::from_millis(20),
            ..TaskLimits::default()
        },
    );
    let scope = Scope::user("ann");
    let inputs = tool_registry::task::TaskInputs::new();
    let mut call = call("two_roots", json!({}), &scope);
    call.ctx = Ctx::for_scope(scope.clone()).with_client(Arc::new(Asker(inputs.clone())));
    call.inputs = Some(inputs);
    // A call that asks becomes a task at once, even one that might have answered within its
    // request.
    let task = match tasks
        .run(registry.clone().into(), call, Become::IfSlow)
        .await
    {
        Ok(Started::Task(task)) => task,
        other => panic!("not a task: {other:?}"),
    };
    let owner = owner_of(&scope);
    let asking = until(&tasks, &owner, &task.id, |t| t.inputs.len() == 2).await;
    assert_eq!(asking.status, TaskStatus::InputRequired);
    let root = |uri: &str| json!({"roots": [{"uri": uri}]});
    // An answer to nothing asked is ignored; one answer of two keeps the task waiting.
    let kept = tasks
        .respond(
            &owner,
            &task.id,
            [("z".to_owned(), root("file:///z"))].into(),
        )
        .await
        .unwrap();
    assert_eq!(kept, 0);
    tasks
        .respond(
            &owner,
            &task.id,
            [("a".to_owned(), root("file:///a"))].into(),
        )
        .await
        .unwrap();
    let waiting = tasks.get(&owner, &task.id).await.unwrap();
    assert_eq!(waiting.status, TaskStatus::InputRequired);
    assert_eq!(waiting.inputs.keys().collect::<Vec<_>>(), ["b"]);
    // Another caller answers nothing.
    let other = owner_of(&Scope::user("bob"));
    assert!(matches!(
        tasks
            .respond(
                &other,
                &task.id,
                [("b".to_owned(), root("file:///evil"))].into()
            )
            .await,
        Err(TaskError::NotFound)
    ));
    tasks
        .respond(
            &owner,
            &task.id,
            [("b".to_owned(), root("file:///b"))].into(),
        )
        .await
        .unwrap();
    let done = until(&tasks, &owner, &task.id, |t| t.status.is_terminal()).await;
    assert_eq!(done.status, TaskStatus::Completed, "{done:?}");
    assert_eq!(done.result.unwrap().content, json!("file:///a file:///b"));
}

#[tokio::test]
async fn a_call_that_must_be_a_task_and_ends_at_once_is_an_ended_task() {
    let registry = registry();
    let tasks = Tasks::default();
    let scope = Scope::user("ann");
    let started = tasks
        .run(
            registry.clone().into(),
            call("doze", json!({"millis": 1}), &scope),
            Become::Soon,
        )
        .await
        .unwrap();
    let Started::Task(task) = started else {
        panic!("not a task: {started:?}");
    };
    let done = until(&tasks, &owner_of(&scope), &task.id, |t| {
        t.status.is_terminal()
    })
    .await;
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.result.unwrap().content, json!(1));
}
