//! Hooks: policies that see what a call asks for and what it returns.
//!
//! The gates decide from *who* calls *which* tool. A [`Hook`] sees the call itself: before the
//! tool runs, the tool, the validated arguments and the caller; after it ran, the result. Hooks
//! are registered on the builder, for every tool ([`RegistryBuilder::hook`]) or for some
//! ([`RegistryBuilder::hook_on`]), and run in the one ordered list of stages every call takes
//! (see [`exec`](crate::exec)): the `before` side of every hook, in the order they were
//! registered, right after validation; the `after` side in the reverse order (the first hook
//! registered is the outermost, as with tower's layers), right after the handler. Every front
//! end runs them, because every front end calls through the pipeline: [`Registry::call`],
//! [`Registry::execute`], the HTTP module server and gateway, the MCP server, the command line.
//!
//! Before a call a hook answers one of [`Before`]: go on, refuse with a reason the model reads
//! ([`ToolError::Refused`]), rewrite the arguments (they are
//! validated again, so a hook cannot hand the tool what its schema refuses), or ask a person to
//! approve the call (the confirmation stage then holds it under a token bound to the
//! arguments, as for a tool that always asks). After a call it may change the result in place
//! (redact, shorten, replace) and says so with [`After::changed`]. A hook that panics fails the
//! call as a handler that panics does; one that waits ([`Before::later`], [`After::later`])
//! waits within the call's deadline. The audit record names each hook that acted and how
//! ([`AuditRecord::hooks`](crate::audit::AuditRecord::hooks)).
//!
//! Three built-ins are declared on the tool, in `#[tool(...)]` and in a run-time
//! [`ToolSpec`](crate::ToolSpec), and take their places in the same list:
//!
//! - `confirm_if = path`: a function of the typed arguments that decides, per call, whether it
//!   needs a person's approval (run-time specs: a JSON Schema the arguments match);
//! - `cache = "5m"`: the result of a `read_only` or `idempotent` tool reused for identical calls
//!   within the time ([`ResultCache`]; in memory, or shared through Redis in a fleet);
//! - `max_result_bytes = N`: a longer result shortened to fit, with a note the model reads
//!   ([`cap`]).
//!
//! A tool to which no hook and no built-in applies takes the call's direct path, as before:
//! hooks cost nothing where they do not apply.
//!
//! # An input guard: file paths inside one folder
//!
//! ```
//! use serde_json::json;
//! use tool_registry::hook::{Before, Hook, HookCall};
//! use tool_registry::{Ctx, Registry, ToolError, ToolSpec, spec::ToolHandler};
//!
//! /// Refuses every call whose `path` argument leaves `folder`.
//! struct InsideFolder {
//!     folder: &'static str,
//! }
//!
//! impl Hook for InsideFolder {
//!     fn name(&self) -> &str {
//!         "inside_folder"
//!     }
//!
//!     fn before(&self, call: &HookCall<'_>) -> Before {
//!         let Some(path) = call.args().get("path").and_then(|path| path.as_str()) else {
//!             return Before::Continue;
//!         };
//!         let inside = path.starts_with(self.folder)
//!             && !path.split('/').any(|part| part == "..")
//!             && !path.contains('\\');
//!         if inside {
//!             Before::Continue
//!         } else {
//!             Before::Refuse(format!("`{path}` is outside `{}`; use a path inside it", self.folder))
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::builder()
//!     .without_linked()
//!     .hook(InsideFolder { folder: "notes/" })
//!     .build()
//!     .unwrap();
//! let spec = ToolSpec::builder("read_file")
//!     .input_schema(json!({"type": "object", "properties": {"path": {"type": "string"}}}))
//!     .build()
//!     .unwrap();
//! registry
//!     .register(spec, ToolHandler::new(|args: serde_json::Value, _ctx| async move {
//!         Ok::<_, String>(args["path"].clone())
//!     }))
//!     .unwrap();
//!
//! let ctx = Ctx::new();
//! let read = registry.call("read_file", r#"{"path": "notes/today.md"}"#, &ctx).await.unwrap();
//! assert_eq!(read.content, json!("notes/today.md"));
//!
//! let outside = r#"{"path": "notes/../.ssh/id_ed25519"}"#;
//! let error = registry.call("read_file", outside, &ctx).await.unwrap_err();
//! assert!(matches!(error, ToolError::Refused { .. }), "{error}");
//! assert!(error.to_string().contains("outside `notes/`"), "{error}");
//! # });
//! ```
//!
//! # An output guard: secrets redacted
//!
//! ```
//! use serde_json::{Value, json};
//! use tool_registry::hook::{After, Hook, HookCall};
//! use tool_registry::{Ctx, Registry, ToolResult, ToolSpec, spec::ToolHandler};
//!
//! /// Replaces every string that looks like an API key (`sk-` and 20 or more letters or digits).
//! struct RedactKeys;
//!
//! fn redact(value: &mut Value) -> usize {
//!     match value {
//!         Value::String(text) => {
//!             let mut count = 0;
//!             while let Some(at) = text.find("sk-") {
//!                 let key = text[at + 3..].bytes().take_while(u8::is_ascii_alphanumeric).count();
//!                 if key < 20 {
//!                     break;
//!                 }
//!                 text.replace_range(at..at + 3 + key, "[redacted]");
//!                 count += 1;
//!             }
//!             count
//!         }
//!         Value::Array(items) => items.iter_mut().map(redact).sum(),
//!         Value::Object(map) => map.values_mut().map(redact).sum(),
//!         _ => 0,
//!     }
//! }
//!
//! impl Hook for RedactKeys {
//!     fn name(&self) -> &str {
//!         "redact_keys"
//!     }
//!
//!     fn after(&self, _call: &HookCall<'_>, result: &mut ToolResult) -> After {
//!         match redact(&mut result.content) {
//!             0 => After::Kept,
//!             n => After::changed(format!("redacted {n} keys")),
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let registry = Registry::builder().without_linked().hook(RedactKeys).build().unwrap();
//! let spec = ToolSpec::builder("env").build().unwrap();
//! registry
//!     .register(spec, ToolHandler::new(|_: Value, _ctx| async move {
//!         Ok::<_, String>(json!({"OPENAI_API_KEY": "sk-abcdefghijklmnopqrstuvwx", "HOME": "/root"}))
//!     }))
//!     .unwrap();
//! let result = registry.call("env", "{}", &Ctx::new()).await.unwrap();
//! assert_eq!(result.content, json!({"OPENAI_API_KEY": "[redacted]", "HOME": "/root"}));
//! # });
//! ```
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | [`Hook`], [`HookCall`], [`Before`], [`After`], [`Acted`]; hooks from closures |
//! | `run.rs` | the hooks of one call run in order, within its deadline, panics caught |
//! | `cap.rs` | `max_result_bytes`: a result shortened to fit, valid UTF-8 and valid JSON |
//! | `cache.rs` | `cache`: [`ResultCache`], [`CacheKey`], the results in memory, one flight per key |
//!
//! [`RegistryBuilder::hook`]: crate::RegistryBuilder::hook
//! [`RegistryBuilder::hook_on`]: crate::RegistryBuilder::hook_on
//! [`Registry::call`]: crate::Registry::call
//! [`Registry::execute`]: crate::Registry::execute

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::call::{Ctx, ToolError, ToolResult};
use crate::def::Tool;

mod cache;
pub mod cap;
mod run;

pub use crate::audit::Acted;
pub use cache::{CacheKey, CachePolicy, InMemoryResultCache, ResultCache};
pub(crate) use cache::{Flight, Flights, cache_key};
pub use cap::Shortened;
pub use run::MAX_HOOKS;
pub(crate) use run::{Escalate, Waiting, after_now, before_now, run_after_from, run_before_from};
pub(crate) use run::{HookSet, Hooks, ToolFilter};

/// A future a hook returns when it has to wait (for a policy service, a moderation model). It
/// owns what it reads: clone what it needs of the call (`call.args().clone()`, the user) and of
/// the hook (an `Arc` of its client) into it.
pub type HookFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// An edit a hook that waited makes to the result, once it knows what to do.
pub type ResultEdit = Box<dyn FnOnce(&mut ToolResult) -> After + Send>;

/// A policy around a tool's handler: it sees the call before the tool runs and the result after.
/// Both sides default to doing nothing; implement the ones you need.
///
/// Both answer at once in the common case, and then cost a few nanoseconds; a hook that has to
/// wait returns [`Before::later`] or [`After::later`] with a future, which the call awaits
/// within its deadline.
pub trait Hook: Send + Sync + 'static {
    /// The name the audit record and the list of stages show.
    fn name(&self) -> &str;

    /// Whether the hook has anything to do for calls of `tool`; asked once per tool and
    /// registry change, not per call. A tool to which no hook applies pays nothing for hooks.
    fn applies_to(&self, tool: &Tool) -> bool {
        let _ = tool;
        true
    }

    /// Before the tool runs, with the arguments validated: go on, refuse, rewrite the
    /// arguments or ask for approval.
    fn before(&self, call: &HookCall<'_>) -> Before {
        let _ = call;
        Before::Continue
    }

    /// After the tool ran (or its result came from the cache): change `result` in place and
    /// say so with [`After::changed`], or keep it. Runs on successful and unsuccessful results;
    /// a call that ended in an error (refused, timed out, invalid arguments) has no result to
    /// see.
    fn after(&self, call: &HookCall<'_>, result: &mut ToolResult) -> After {
        let _ = (call, result);
        After::Kept
    }
}

/// What a hook decides before a call.
#[non_exhaustive]
pub enum Before {
    /// The call goes on.
    Continue,
    /// The call ends with [`ToolError::Refused`], which tells the model this reason; the tool
    /// does not run and nothing after this hook runs.
    Refuse(String),
    /// The call goes on with these arguments instead, validated again against the tool's
    /// schema (invalid ones end the call with [`ToolError::InvalidArguments`]). The hooks
    /// after this one see them.
    Rewrite(Value),
    /// The call needs a person's approval, for this reason: it is held under a token, as a
    /// call of a tool that always asks is (see [`ToolError::NeedsApproval`]). A call that
    /// comes back approved runs.
    Confirm(String),
    /// The decision, once this future has it.
    Later(HookFuture<Before>),
}

impl Before {
    /// The decision of a hook that has to wait for it.
    pub fn later(decision: impl Future<Output = Before> + Send + 'static) -> Self {
        Self::Later(Box::pin(decision))
    }
}

/// What a hook did to a result.
#[non_exhaustive]
pub enum After {
    /// Left as it was.
    Kept,
    /// Changed, as this says (`redacted 2 keys`), for the audit record.
    Changed(Cow<'static, str>),
    /// The edit, once this future knows it: applied to the result, it answers what it did.
    Later(HookFuture<ResultEdit>),
}

impl After {
    /// The result was changed, as `how` says.
    pub fn changed(how: impl Into<Cow<'static, str>>) -> Self {
        Self::Changed(how.into())
    }

    /// What a hook that has to wait does: `edit` is the future of the change, which is then
    /// applied to the result.
    ///
    /// ```
    /// # use tool_registry::hook::After;
    /// # use tool_registry::ToolResult;
    /// # async fn moderate(_: String) -> bool { true }
    /// # fn after(result: &mut ToolResult) -> After {
    /// let text = result.content.to_string();
    /// After::later(async move {
    ///     let flagged = moderate(text).await;
    ///     move |result: &mut ToolResult| {
    ///         if !flagged {
    ///             return After::Kept;
    ///         }
    ///         *result = ToolResult::failure("withheld by moderation");
    ///         After::changed("withheld")
    ///     }
    /// })
    /// # }
    /// ```
    pub fn later<F, E>(edit: F) -> Self
    where
        F: Future<Output = E> + Send + 'static,
        E: FnOnce(&mut ToolResult) -> After + Send + 'static,
    {
        Self::Later(Box::pin(async move { Box::new(edit.await) as ResultEdit }))
    }
}

/// One call as a hook sees it: the tool, the validated arguments, the caller.
pub struct HookCall<'a> {
    tool: Tool,
    ctx: &'a Ctx,
    /// The arguments as the model wrote them (what an approval is bound to).
    written: Cow<'a, str>,
    /// The arguments a hook rewrote them into, when one did.
    rewritten: Option<Box<str>>,
    /// The arguments parsed, once a hook asked; boxed, so that a call whose hooks never ask
    /// carries a small `HookCall`.
    value: OnceLock<Box<Value>>,
}

impl<'a> HookCall<'a> {
    pub(crate) fn new(tool: Tool, ctx: &'a Ctx, written: Cow<'a, str>) -> Self {
        Self {
            tool,
            ctx,
            written,
            rewritten: None,
            value: OnceLock::new(),
        }
    }

    /// The arguments as the model wrote them, before any rewrite.
    pub(crate) fn written(&self) -> &str {
        &self.written
    }

    /// The tool called.
    pub fn tool(&self) -> &Tool {
        &self.tool
    }

    /// The call's context: the caller's [`Scope`](crate::Scope), its user, the request.
    pub fn ctx(&self) -> &Ctx {
        self.ctx
    }

    /// The caller's user id, when there is one.
    pub fn user(&self) -> Option<&str> {
        self.ctx.user()
    }

    /// The arguments, validated, as a JSON object (read on first use: a hook that never asks
    /// costs no parse).
    pub fn args(&self) -> &Value {
        self.value.get_or_init(|| {
            Box::new(
                serde_json::from_str(self.arguments_text())
                    .unwrap_or(Value::Object(Default::default())),
            )
        })
    }

    /// The arguments as JSON text, as the tool reads them.
    pub fn arguments_text(&self) -> &str {
        let text = self.rewritten.as_deref().unwrap_or(&self.written);
        let trimmed = text.trim();
        if trimmed.is_empty() || trimmed == "null" {
            "{}"
        } else {
            text
        }
    }

    /// The arguments read into `T` (the tool's own argument type, or a part of it).
    pub fn args_as<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        crate::call::args::parse_args(crate::call::ToolArgs::Text(self.arguments_text()))
    }

    pub(crate) fn replace(&mut self, text: String) {
        self.rewritten = Some(text.into_boxed_str());
        self.value = OnceLock::new();
    }
}

/// A hook made of a name and closures: `hook::before("no_rm", |call| ...)`.
pub struct FnHook<B, A> {
    name: Cow<'static, str>,
    before: B,
    after: A,
}

/// A hook that only looks before calls: `f` decides from the call, at once.
pub fn before<F>(name: impl Into<Cow<'static, str>>, f: F) -> FnHook<F, ()>
where
    F: Fn(&HookCall<'_>) -> Before + Send + Sync + 'static,
{
    FnHook {
        name: name.into(),
        before: f,
        after: (),
    }
}

/// A hook that only looks after calls: `f` may change the result and says how (`None`: kept).
pub fn after<F>(name: impl Into<Cow<'static, str>>, f: F) -> FnHook<(), F>
where
    F: Fn(&HookCall<'_>, &mut ToolResult) -> Option<Cow<'static, str>> + Send + Sync + 'static,
{
    FnHook {
        name: name.into(),
        before: (),
        after: f,
    }
}

impl<F> Hook for FnHook<F, ()>
where
    F: Fn(&HookCall<'_>) -> Before + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn before(&self, call: &HookCall<'_>) -> Before {
        (self.before)(call)
    }
}

impl<F> Hook for FnHook<(), F>
where
    F: Fn(&HookCall<'_>, &mut ToolResult) -> Option<Cow<'static, str>> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn after(&self, call: &HookCall<'_>, result: &mut ToolResult) -> After {
        match (self.after)(call, result) {
            Some(how) => After::Changed(how),
            None => After::Kept,
        }
    }
}
