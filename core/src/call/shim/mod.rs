//! What generated code calls: the type-erased call shim `#[tool]` writes for each tool, and
//! the helpers it uses. Reached only as `tool_registry::__private::…`; not part of the public
//! API.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | the shim's types: [`CallFn`], [`CallResult`], [`CallEnv`] (context and state) |
//! | `probe.rs` | the checks on argument types, one error per type that misses a derive |
//! | `max_len.rs` | `#[arg(max_len = N)]` |
//! | `range.rs` | `#[arg(min = N, max = N)]` |
//! | `confirm_if.rs` | `#[tool(confirm_if = path)]`: the predicate called through a trait that names the signature it must have |
//! | `blocking.rs` | `#[tool(blocking)]` handlers on Tokio's blocking pool |
//! | `output.rs` | what a tool function returns, turned into a [`ToolResult`] |

use std::future::Future;
use std::pin::Pin;

use super::{Ctx, ToolArgs, ToolError, ToolResult, TypeMap};

mod blocking;
mod confirm_if;
mod max_len;
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod probe;
mod range;

pub use blocking::{blocking, blocking_async};
pub use confirm_if::{ConfirmIfFunction, Signature};
pub use max_len::{MaxLen, check_max_len};
pub use range::{Bounded, check_range};

/// A boxed, `Send` future.
pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a generated call shim receives besides the arguments.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct CallEnv<'a> {
    pub(crate) ctx: &'a Ctx,
    pub(crate) state: &'a TypeMap,
}

impl<'a> CallEnv<'a> {
    #[doc(hidden)]
    pub fn ctx(self) -> &'a Ctx {
        self.ctx
    }

    #[doc(hidden)]
    pub fn state<T: Send + Sync + 'static>(self) -> Result<crate::call::State<T>, ToolError> {
        match self.state.get_arc::<T>() {
            Some(state) => Ok(crate::call::State::from_arc(state)),
            None => Err(ToolError::Misconfigured {
                tool: String::new(),
                message: crate::call::missing_state::<T>(),
            }),
        }
    }
}

/// The generated shim: validates the arguments synchronously, then returns the call as a
/// future that has not started yet, so gates can run between validation and execution. The
/// future does not borrow the arguments (they are read into owned values first), so arguments
/// written out for the call need live only as long as the shim runs.
#[doc(hidden)]
pub type CallFn = for<'t, 'a> fn(ToolArgs<'t>, CallEnv<'a>) -> CallResult<'a>;

/// What a call shim returns: the validated call, not started yet.
#[doc(hidden)]
pub type CallResult<'a> = Result<BoxFuture<'a, Result<ToolResult, ToolError>>, ToolError>;
