//! One call as a tool sees it: its arguments ([`ToolArgs`] and their limits), its context
//! ([`Ctx`], [`State`]), and what it answers ([`ToolResult`] or [`ToolError`]); and the shim
//! generated code calls through.
//!
//! | file | what |
//! | --- | --- |
//! | `args.rs` | [`ToolArgs`], [`MAX_ARGS_BYTES`]; arguments read into a tool's type, errors naming the JSON path |
//! | `depth.rs` | [`MAX_ARGS_DEPTH`]: values of any depth measured and dropped without recursion |
//! | `admit.rs` | arguments measured before anything reads them |
//! | `fields.rs` | unknown keys of nested objects refused, guided by the input schema |
//! | `lenient.rs` | what models send read as meant: objects as JSON strings, numeric strings, `"true"`, `null` for an optional argument |
//! | `client.rs` | [`ClientLink`]: what a running tool may ask of its caller's client (log to it, ask its user, sample its model); [`LogLevel`] |
//! | `ask.rs` | [`Form`], [`FormAnswer`], [`Sampling`], [`Sampled`], [`AskError`]: a question with a form and a completion asked of the client, their checks and bounds |
//! | `ctx.rs` | [`Ctx`]: who asks, the request, typed extensions, progress, the client's link |
//! | `state.rs` | [`State`]: application state injected by type |
//! | `result.rs` | [`ToolResult`] |
//! | `into_result.rs` | what a tool may return (`IntoToolResult`), and `Content`, a value with blocks; public in [`content`](crate::content) |
//! | `error.rs` | [`ToolError`], one variant per failure; [`RemoteFailure`], a front end's; [`MAX_ERROR_BYTES`], the bound on error text read from outside |
//! | `error_wire.rs` | how an error travels: each variant's stable code and fields in one table, written as JSON and read back (`ToolError::from_json`) |
//! | `tool_call.rs` | [`ToolCall`]: one call a model asked for |
//! | `events.rs` | [`ToolEvent`]: what a batch of calls reports as it runs |
//! | `guard.rs` | the handler under its deadline, with panics caught (stage 8's guard) |
//! | `shim/` | what `#[tool]`'s generated code calls (`__private`): shim types, argument-type probes, `max_len`, blocking handlers, return values |

mod admit;
pub(crate) mod args;
pub(crate) mod ask;
pub(crate) mod client;
pub(crate) mod ctx;
mod depth;
pub(crate) mod error;
mod error_wire;
mod events;
pub(crate) mod fields;
pub(crate) mod guard;
pub(crate) mod into_result;
pub(crate) mod lenient;
pub(crate) mod result;
pub(crate) mod shim;
pub(crate) mod state;
pub(crate) mod tool_call;
pub(crate) use tool_registry_json::unique;

pub(crate) use admit::{admit_args, dispose_args};
pub use args::MAX_ARGS_BYTES;
pub(crate) use args::ToolArgs;
pub(crate) use args::args_value;
pub use ask::{AskError, Form, FormAnswer, Role, Root, Sampled, Sampling};
pub use client::{Asking, ClientLink, LogLevel, log_locally};
pub(crate) use ctx::Ctx;
pub(crate) use ctx::EventSink;
pub use depth::MAX_ARGS_DEPTH;
pub(crate) use depth::{dispose, nests_deeper};
pub(crate) use error::ToolError;
pub(crate) use error::bounded_error_text;
pub use error::push_bounded;
pub use error::{CUT_MARK, MAX_ERROR_BYTES, RemoteFailure};
pub use events::ToolEvent;
pub(crate) use guard::{Guarded, panicked, with_timeout};
pub(crate) use into_result::IntoToolResult;
pub(crate) use result::ToolResult;
pub(crate) use shim::{BoxFuture, CallEnv, CallFn};

/// The handler of a call, validated and not started.
pub(crate) type Handler<'a> = BoxFuture<'a, Result<ToolResult, ToolError>>;
pub(crate) use state::State;
pub(crate) use state::{TypeMap, missing_state};
pub(crate) use tool_call::ToolCall;
