//! The trivial tool the peers are compared on, its hand-written dispatch, and an executor that
//! polls in place: what `--bench dispatch` of `tool-registry-core` measures the same way.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use serde::Deserialize;
use serde_json::Value;
use tool_registry::{Ctx, tool};

/// Adds two integers.
#[tool(category = "math", read_only, idempotent)]
pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    a: i64,
    b: i64,
}

/// `add` called by a hand-written `match` over serde: the floor of a dispatch.
pub async fn hand_written(name: &str, text: &str, _ctx: &Ctx) -> Result<Value, String> {
    match name {
        "add" => {
            let args: AddArgs = serde_json::from_str(text).map_err(|error| error.to_string())?;
            serde_json::to_value(add(args.a, args.b)).map_err(|error| error.to_string())
        }
        _ => Err("unknown tool".to_owned()),
    }
}

/// Polls `future` in place until it is ready: no runtime between the benchmark and the call.
pub fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
    }
}
