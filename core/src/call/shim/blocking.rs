//! `#[tool(blocking)]`: handlers that run on Tokio's blocking pool, inside the call's span
//! there too: it is the current span on the caller's thread when the handler is handed over.

use std::future::Future;

use super::BoxFuture;
use crate::call::{ToolError, ToolResult};

/// A `#[tool(blocking)]` handler: a synchronous function run on Tokio's blocking pool when
/// the call is first polled. Without a Tokio runtime it runs in place.
#[doc(hidden)]
pub fn blocking<F>(work: F) -> BoxFuture<'static, Result<ToolResult, ToolError>>
where
    F: FnOnce() -> Result<ToolResult, ToolError> + Send + 'static,
{
    Box::pin(async move {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let span = tracing::Span::current();
                joined(handle.spawn_blocking(move || span.in_scope(work)).await)
            }
            Err(_) => work(),
        }
    })
}

/// A `#[tool(blocking)]` handler written as an `async fn`: driven to completion on a thread of
/// Tokio's blocking pool, so that the work it does between its `.await`s never holds up the
/// caller's thread. Without a Tokio runtime it runs in place.
#[doc(hidden)]
pub fn blocking_async<F>(work: F) -> BoxFuture<'static, Result<ToolResult, ToolError>>
where
    F: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
{
    Box::pin(async move {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                let driver = handle.clone();
                let span = tracing::Span::current();
                joined(
                    handle
                        .spawn_blocking(move || span.in_scope(|| driver.block_on(work)))
                        .await,
                )
            }
            Err(_) => work.await,
        }
    })
}

fn joined(
    outcome: Result<Result<ToolResult, ToolError>, tokio::task::JoinError>,
) -> Result<ToolResult, ToolError> {
    match outcome {
        Ok(result) => result,
        Err(error) => match error.try_into_panic() {
            Ok(payload) => Err(crate::call::panicked(payload)),
            Err(_) => Err(ToolError::handler(
                "",
                "the runtime shut down before the tool finished",
            )),
        },
    }
}
