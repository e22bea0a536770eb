//! [`ToolHandler`]: what runs a tool registered at run time.

use std::fmt::{self, Display};
use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::call::IntoToolResult;
use crate::call::shim::output;
use crate::call::{BoxFuture, Ctx, ToolError, ToolResult};

type HandlerFn =
    dyn Fn(Value, Ctx) -> BoxFuture<'static, Result<ToolResult, ToolError>> + Send + Sync;

/// What runs a tool registered at run time: an `async` closure over the arguments (already
/// validated against the input schema) and the call's [`Ctx`].
///
/// It returns `Result<T, E>` with `T:` [`IntoToolResult`] (a `Serialize` value, media such as
/// an [`Image`](crate::content::Image), or a [`Content`](crate::content::Content)) and
/// `E: Display` (a handler error; a [`ToolError`] is kept as it is), like a `#[tool]` function.
#[derive(Clone)]
pub struct ToolHandler(Arc<HandlerFn>);

impl ToolHandler {
    /// Wraps an `async` closure.
    pub fn new<F, Fut, T, E>(handler: F) -> Self
    where
        F: Fn(Value, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<T, E>> + Send + 'static,
        T: IntoToolResult + 'static,
        E: Display + 'static,
    {
        Self(Arc::new(move |args, ctx| {
            let future = handler(args, ctx);
            Box::pin(async move { output::result(future.await) })
        }))
    }

    /// Wraps an `async` closure that answers with a whole [`ToolResult`] or a [`ToolError`],
    /// kept as they are: for a handler that forwards a call elsewhere (an HTTP tool module)
    /// and hands back the result or the typed error it got. The registry still stamps the
    /// result's audit.
    pub fn from_results<F, Fut>(handler: F) -> Self
    where
        F: Fn(Value, Ctx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<ToolResult, ToolError>> + Send + 'static,
    {
        Self(Arc::new(move |args, ctx| Box::pin(handler(args, ctx))))
    }

    pub(crate) fn start(
        &self,
        args: Value,
        ctx: Ctx,
    ) -> BoxFuture<'static, Result<ToolResult, ToolError>> {
        (self.0)(args, ctx)
    }
}

impl fmt::Debug for ToolHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ToolHandler")
    }
}
