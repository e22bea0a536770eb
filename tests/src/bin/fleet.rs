//! One instance of a fleet on Redis, for the tests that run several as processes:
//!
//! ```text
//! fleet URL PREFIX calls N LIMIT   N concurrent calls of a tool with a daily limit of LIMIT
//! fleet URL PREFIX ping            one call of a tool with a 30 s cooldown
//! fleet URL PREFIX hold            a call of `bank.transfer` as ann, held for approval: its token
//! fleet URL PREFIX approve TOKEN   that call approved, as ann
//! fleet URL PREFIX watch           the tools a guest sees, a line each time they change
//! ```
//!
//! Each prints one JSON line per answer.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_registry::ToolSpec;
use tool_registry::redis::{Fleet, FleetBuilder};
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Permission, Registry, Scope};
use tool_registry_tests::outcome;

fn registry(fleet: &Fleet, limit: u32) -> Arc<Registry> {
    let registry = Registry::builder()
        .redis(fleet)
        .build()
        .expect("the registry");
    let burst = ToolSpec::builder("burst")
        .description("A tool with a daily limit.")
        .permission(Permission::Guest)
        .daily_limit(limit)
        .build()
        .expect("a spec");
    registry
        .register(
            burst,
            ToolHandler::new(|_: Value, _: Ctx| async { Ok::<_, String>("ran") }),
        )
        .expect("registered");
    Arc::new(registry)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, prefix, command, rest @ ..] = args.as_slice() else {
        eprintln!("usage: fleet URL PREFIX calls|ping|hold|approve|watch ...");
        std::process::exit(2);
    };
    let fleet = Fleet::new(url)
        .expect("a Redis URL")
        .prefix(prefix)
        .timeout(Duration::from_millis(300));
    let number = |at: usize| rest[at].parse::<u32>().expect("a number");
    let ann = Ctx::for_scope(Scope::user("ann"));
    match command.as_str() {
        "calls" => {
            let registry = registry(&fleet, number(1));
            let calls = (0..number(0)).map(|_| {
                let registry = registry.clone();
                tokio::spawn(async move {
                    let ctx = Ctx::for_scope(Scope::user("u"));
                    outcome(&registry.call("burst", "{}", &ctx).for_model().await)
                })
            });
            let mut counts = serde_json::Map::new();
            for call in calls.collect::<Vec<_>>() {
                let outcome = call.await.expect("a call");
                let count = counts.entry(outcome).or_insert(json!(0));
                *count = json!(count.as_u64().unwrap_or(0) + 1);
            }
            println!("{}", Value::Object(counts));
        }
        "ping" => {
            let registry = registry(&fleet, 1);
            let result = registry.call("quota.ping", "{}", &ann).for_model().await;
            println!("{}", json!({"outcome": outcome(&result)}));
        }
        "hold" => {
            let registry = registry(&fleet, 1);
            let args = r#"{"amount": 5, "to": "bob"}"#;
            let result = registry.call("bank.transfer", args, &ann).for_model().await;
            let token = result.content.pointer("/error/token").cloned();
            println!("{}", json!({"outcome": outcome(&result), "token": token}));
        }
        "approve" => {
            let registry = registry(&fleet, 1);
            let answer = match registry.approve(&rest[0], &ann).await {
                Ok(result) => json!({"outcome": outcome(&result), "content": result.content}),
                Err(error) => json!({"outcome": error.code()}),
            };
            println!("{answer}");
        }
        "watch" => {
            let registry = registry(&fleet, 1);
            let _following = fleet.join(registry.clone()).await.expect("joined");
            let mut changes = registry.subscribe();
            let mut seen = Vec::new();
            loop {
                let now: Vec<String> = registry
                    .tools(&Scope::guest())
                    .iter()
                    .map(|tool| tool.name().to_owned())
                    .collect();
                if now != seen {
                    println!("{}", json!({"tools": now}));
                    seen = now;
                }
                if changes.recv().await.is_err() {
                    changes = registry.subscribe();
                }
            }
        }
        other => {
            eprintln!("unknown command {other:?}");
            std::process::exit(2);
        }
    }
}
