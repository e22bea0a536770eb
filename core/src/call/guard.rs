//! Stage 8's guard: the handler under its deadline, with panics caught.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use super::{Handler, ToolError, ToolResult};
use crate::audit::Tick;

/// Runs `future` under a Tokio timer of `limit` (see [`Deadline`]).
pub(crate) fn with_timeout<F: Future>(limit: Duration, future: F) -> Timeout<F> {
    Timeout {
        future,
        deadline: Deadline::new(limit),
    }
}

pin_project_lite::pin_project! {
    pub(crate) struct Timeout<F> {
        #[pin]
        future: F,
        deadline: Deadline,
    }
}

impl<F: Future> Future for Timeout<F> {
    type Output = Option<F::Output>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        if let Poll::Ready(output) = this.future.poll(cx) {
            return Poll::Ready(Some(output));
        }
        this.deadline.poll_expired(cx).map(|()| None)
    }
}

/// The handler of a call under its timeout, with panics caught: one future, which turns a
/// panic into [`ToolError::Panicked`] and a timeout into [`ToolError::TimedOut`] (the audit
/// stage names the tool in both).
pub(crate) struct Guarded<'a> {
    handler: Handler<'a>,
    deadline: Deadline,
}

impl<'a> Guarded<'a> {
    pub(crate) fn new(handler: Handler<'a>, started: Tick, limit: Duration) -> Self {
        Self {
            handler,
            deadline: Deadline::since(started, limit),
        }
    }
}

impl Future for Guarded<'_> {
    type Output = Result<ToolResult, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        match std::panic::catch_unwind(AssertUnwindSafe(|| this.handler.as_mut().poll(cx))) {
            Ok(Poll::Ready(result)) => return Poll::Ready(result),
            Ok(Poll::Pending) => {}
            Err(payload) => return Poll::Ready(Err(panicked(payload))),
        }
        this.deadline.poll_expired(cx).map(|()| {
            Err(ToolError::TimedOut {
                tool: String::new(),
                after: this.deadline.limit,
            })
        })
    }
}

/// A Tokio timer that expires `limit` after a start: the call's start for a handler, the first
/// wait for a gate. The timer is armed only when the guarded future first waits, so a call
/// that finishes on its first poll never touches the timer wheel. Without a Tokio runtime with
/// timers the future runs unbounded (a warning says so once).
struct Deadline {
    limit: Duration,
    started: Option<Tick>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    unbounded: bool,
}

impl Deadline {
    /// `limit` from the first wait.
    fn new(limit: Duration) -> Self {
        Self {
            limit,
            started: None,
            sleep: None,
            unbounded: false,
        }
    }

    /// `limit` from `started`.
    fn since(started: Tick, limit: Duration) -> Self {
        Self {
            started: Some(started),
            ..Self::new(limit)
        }
    }

    /// `Ready` once the limit has passed.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if self.unbounded {
            return Poll::Pending;
        }
        let sleep = match &mut self.sleep {
            Some(sleep) => sleep,
            None => {
                // Whatever ran before this first wait (work before the handler's first
                // `.await`, earlier stages) counts against the limit.
                let spent = self.started.map_or(Duration::ZERO, |started| {
                    let millis = Tick::now().millis_since(started);
                    Duration::try_from_secs_f64(millis / 1000.0).unwrap_or(Duration::MAX)
                });
                if spent >= self.limit {
                    // Known without a timer, whose clock may not have moved yet.
                    return Poll::Ready(());
                }
                let left = self.limit - spent;
                let has_runtime = tokio::runtime::Handle::try_current().is_ok();
                // The timer reads Tokio's clock itself; the crate reads none but the audit's.
                let sleep = has_runtime
                    .then(|| std::panic::catch_unwind(|| Box::pin(tokio::time::sleep(left))).ok())
                    .flatten();
                let Some(sleep) = sleep else {
                    static WARNED: std::sync::Once = std::sync::Once::new();
                    WARNED.call_once(|| {
                        tracing::warn!(target: "tool_registry", "no Tokio runtime with timers: tool and gate timeouts are not enforced");
                    });
                    self.unbounded = true;
                    return Poll::Pending;
                };
                self.sleep.insert(sleep)
            }
        };
        sleep.as_mut().poll(cx)
    }
}

pub(crate) fn panicked(payload: Box<dyn std::any::Any + Send>) -> ToolError {
    let message = if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    };
    ToolError::Panicked {
        tool: String::new(),
        message,
    }
}
