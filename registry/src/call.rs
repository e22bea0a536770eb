//! The arguments of a call and the type-erased entry point the macro generates.

use std::future::Future;
use std::pin::Pin;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ctx::TypeMap;
use crate::{Ctx, ToolError, ToolResult};

/// The arguments of one call, as the model wrote them.
///
/// JSON text is deserialized straight into the tool's argument type, without an intermediate
/// [`Value`]. Convert from `&str`, `&String` or `Value`.
#[derive(Debug, Clone)]
pub enum ToolArgs<'a> {
    /// JSON text, e.g. `{"query": "rust"}`. Empty or blank text means `{}`.
    Text(&'a str),
    /// An already parsed JSON value.
    Value(Value),
}

impl<'a> From<&'a str> for ToolArgs<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl<'a> From<&'a String> for ToolArgs<'a> {
    fn from(text: &'a String) -> Self {
        Self::Text(text)
    }
}

impl From<Value> for ToolArgs<'_> {
    fn from(value: Value) -> Self {
        Self::Value(value)
    }
}

/// The most bytes of argument text a tool accepts unless it sets its own limit with
/// `#[tool(max_args_bytes = N)]`: 1 MiB. Text is measured as given; a [`Value`] as the compact
/// JSON it serializes to.
pub const MAX_ARGS_BYTES: usize = 1 << 20;

/// How deep arrays and objects may nest in the arguments of any tool: 127 levels, the most that
/// `serde_json` reads from text (its recursion limit is 128), so text and [`Value`] arguments
/// meet the same limit.
pub const MAX_ARGS_DEPTH: usize = 127;

/// The checks made on arguments before anything reads them: the tool's size limit and
/// [`MAX_ARGS_DEPTH`]. Text is only measured here (its depth is found while parsing, by
/// `serde_json`); a [`Value`] is walked without recursion, and one that is too deep is taken
/// apart without recursion too, since its own `Drop` would recurse once per level.
#[inline]
pub(crate) fn admit_args(args: &mut ToolArgs<'_>, max_bytes: usize) -> Result<(), ToolError> {
    match args {
        ToolArgs::Text(text) if text.len() > max_bytes => Err(too_large(max_bytes)),
        ToolArgs::Text(_) => Ok(()),
        ToolArgs::Value(value) => admit_value(value, max_bytes),
    }
}

/// [`admit_args`] for a [`Value`]; one that is too deep is taken apart and left `null`.
#[inline(never)]
fn admit_value(value: &mut Value, max_bytes: usize) -> Result<(), ToolError> {
    if nests_deeper(value, MAX_ARGS_DEPTH) {
        dispose(std::mem::take(value));
        return Err(too_deep());
    }
    // Within the depth limit, serializing recurses at most that deep.
    let mut budget = Budget { left: max_bytes };
    if serde_json::to_writer(&mut budget, value).is_err() {
        return Err(too_large(max_bytes));
    }
    Ok(())
}

#[cold]
fn too_large(limit: usize) -> ToolError {
    ToolError::ArgumentsTooLarge {
        tool: String::new(),
        limit,
    }
}

#[cold]
fn too_deep() -> ToolError {
    ToolError::ArgumentsTooDeep {
        tool: String::new(),
        limit: MAX_ARGS_DEPTH,
    }
}

/// A writer that only counts, and fails once more than `left` bytes come.
struct Budget {
    left: usize,
}

impl std::io::Write for Budget {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.left = self
            .left
            .checked_sub(buf.len())
            .ok_or(std::io::ErrorKind::FileTooLarge)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether arrays and objects nest more than `limit` levels deep in `value`, found with an
/// explicit stack of at most `limit` levels.
pub(crate) fn nests_deeper(value: &Value, limit: usize) -> bool {
    enum Children<'v> {
        Array(std::slice::Iter<'v, Value>),
        Object(serde_json::map::Values<'v>),
    }
    let mut stack: Vec<Children<'_>> = Vec::new();
    let mut current = value;
    loop {
        let children = match current {
            Value::Array(items) => Some(Children::Array(items.iter())),
            Value::Object(map) => Some(Children::Object(map.values())),
            _ => None,
        };
        if let Some(children) = children {
            if stack.len() == limit {
                return true;
            }
            stack.push(children);
        }
        current = loop {
            let Some(top) = stack.last_mut() else {
                return false;
            };
            let next = match top {
                Children::Array(items) => items.next(),
                Children::Object(values) => values.next(),
            };
            match next {
                Some(next) => break next,
                None => {
                    stack.pop();
                }
            }
        };
    }
}

/// Drops `value` without recursion: each array and object is emptied onto a heap stack before
/// it is dropped, so no drop goes deeper than one level.
pub(crate) fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, value)| value)),
            _ => {}
        }
    }
}

/// Drops arguments that may be arbitrarily deep (see [`dispose`]).
pub(crate) fn dispose_args(args: ToolArgs<'_>) {
    if let ToolArgs::Value(value) = args {
        dispose(value);
    }
}

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
    pub fn state<T: Send + Sync + 'static>(self) -> Result<crate::State<T>, ToolError> {
        match self.state.get_arc::<T>() {
            Some(state) => Ok(crate::State::from_arc(state)),
            None => Err(ToolError::Misconfigured {
                tool: String::new(),
                message: crate::ctx::missing_state::<T>(),
            }),
        }
    }
}

/// The generated shim: validates the arguments synchronously, then returns the call as a
/// future that has not started yet, so gates can run between validation and execution.
#[doc(hidden)]
pub type CallFn = for<'a> fn(ToolArgs<'a>, CallEnv<'a>) -> CallResult<'a>;

/// What a call shim returns: the validated call, not started yet.
#[doc(hidden)]
pub type CallResult<'a> = Result<BoxFuture<'a, Result<ToolResult, ToolError>>, ToolError>;

/// Deserializes the arguments into `T`, naming the path of the first bad field.
#[doc(hidden)]
pub fn parse_args<T: DeserializeOwned>(args: ToolArgs<'_>) -> Result<T, ToolError> {
    match args {
        ToolArgs::Text(text) => {
            let trimmed = text.trim_start();
            if trimmed.is_empty() || trimmed.trim_end() == "null" {
                return from_value(Value::Object(Default::default()));
            }
            if !trimmed.starts_with('{') {
                return Err(not_an_object());
            }
            // The common case, a good call, parses once without path tracking; only a bad call
            // is parsed again to name the path of the problem.
            let mut de = serde_json::Deserializer::from_str(text);
            if let Ok(value) = T::deserialize(&mut de)
                && de.end().is_ok()
            {
                return Ok(value);
            }
            if text_nests_deeper(text, MAX_ARGS_DEPTH) {
                return Err(too_deep());
            }
            let mut de = serde_json::Deserializer::from_str(text);
            let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
                let path = if e.inner().is_syntax() || e.inner().is_eof() {
                    String::new()
                } else {
                    e.path().to_string()
                };
                invalid(path, strip_position(e.inner()))
            })?;
            de.end()
                .map_err(|e| invalid(String::new(), strip_position(&e)))?;
            Ok(value)
        }
        ToolArgs::Value(Value::Null) => from_value(Value::Object(Default::default())),
        ToolArgs::Value(value @ Value::Object(_)) => from_value(value),
        ToolArgs::Value(_) => Err(not_an_object()),
    }
}

/// The arguments as a JSON object, for a tool that takes them as a [`Value`] (a run-time tool):
/// the same rules and errors as [`parse_args`].
pub(crate) fn args_value(args: ToolArgs<'_>) -> Result<Value, ToolError> {
    match args {
        ToolArgs::Value(Value::Null) => Ok(Value::Object(Default::default())),
        ToolArgs::Value(value @ Value::Object(_)) => Ok(value),
        ToolArgs::Value(other) => {
            dispose(other);
            Err(not_an_object())
        }
        text @ ToolArgs::Text(_) => parse_args::<Value>(text),
    }
}

/// Whether arrays and objects nest more than `limit` levels deep in JSON text (strings skipped);
/// asked only of text that did not parse, to tell a depth problem from others.
fn text_nests_deeper(text: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &byte in text.as_bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, ToolError> {
    if let Ok(parsed) = T::deserialize(&value) {
        return Ok(parsed);
    }
    serde_path_to_error::deserialize(value)
        .map_err(|e| invalid(e.path().to_string(), e.inner().to_string()))
}

fn not_an_object() -> ToolError {
    invalid(
        String::new(),
        "the arguments must be a JSON object of named arguments, such as {\"query\": \"...\"}"
            .to_owned(),
    )
}

fn invalid(path: String, message: String) -> ToolError {
    let path = if path == "." { String::new() } else { path };
    ToolError::InvalidArguments {
        tool: String::new(),
        path,
        message,
    }
}

/// serde_json's message without its " at line 1 column 7" suffix, which means nothing to a model
/// that wrote the arguments on one line; the column is kept for syntax errors.
fn strip_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    if error.is_syntax() || error.is_eof() {
        return format!("malformed JSON: {text}");
    }
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

/// A string argument that `#[arg(max_len = N)]` can bound.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`max_len` bounds a string argument, not `{Self}`",
    label = "this argument is not a string",
    note = "use `max_len` on a `String` or `Option<String>` argument; the whole argument text is bounded by `#[tool(max_args_bytes = N)]`"
)]
pub trait MaxLen {
    /// The length in characters when it is more than `max`.
    fn longer_than(&self, max: usize) -> Option<usize>;
}

impl MaxLen for str {
    fn longer_than(&self, max: usize) -> Option<usize> {
        // A string has no more characters than bytes: most strings are settled without counting.
        if self.len() <= max {
            return None;
        }
        let chars = self.chars().count();
        (chars > max).then_some(chars)
    }
}

macro_rules! max_len_via_str {
    ($($ty:ty),*) => {$(
        impl MaxLen for $ty {
            fn longer_than(&self, max: usize) -> Option<usize> {
                str::longer_than(self, max)
            }
        }
    )*};
}

max_len_via_str!(
    String,
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'_, str>
);

impl<T: MaxLen> MaxLen for Option<T> {
    fn longer_than(&self, max: usize) -> Option<usize> {
        self.as_ref()?.longer_than(max)
    }
}

/// `#[arg(max_len = N)]`: the argument at `path` has at most `max` characters (Unicode scalar
/// values, as JSON Schema's `maxLength` counts them).
#[doc(hidden)]
pub fn check_max_len<T: MaxLen + ?Sized>(
    value: &T,
    max: usize,
    path: &'static str,
) -> Result<(), ToolError> {
    match value.longer_than(max) {
        None => Ok(()),
        Some(chars) => Err(invalid(
            path.to_owned(),
            format!(
                "is {chars} characters long, more than the limit of {max}; send a shorter text"
            ),
        )),
    }
}

/// A `#[tool(blocking)]` handler: a synchronous function run on Tokio's blocking pool when
/// the call is first polled. Without a Tokio runtime it runs in place.
#[doc(hidden)]
pub fn blocking<F>(work: F) -> BoxFuture<'static, Result<ToolResult, ToolError>>
where
    F: FnOnce() -> Result<ToolResult, ToolError> + Send + 'static,
{
    Box::pin(async move {
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => joined(handle.spawn_blocking(work).await),
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
                joined(handle.spawn_blocking(move || driver.block_on(work)).await)
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
            Ok(payload) => Err(crate::pipeline::panicked(payload)),
            Err(_) => Err(ToolError::handler(
                "",
                "the runtime shut down before the tool finished",
            )),
        },
    }
}

/// The checks on the types of a tool's arguments. Each is a method call that rustc resolves
/// by trying receivers from the most to the least referenced (autoref specialization): the
/// first impl whose bounds the type meets is chosen, and only the chosen method's own bound can
/// fail. So a type that misses a derive gets one error, on the type, naming what to derive,
/// instead of one error per unmet bound with lists of the types that do implement them.
#[doc(hidden)]
pub mod probe {
    use std::marker::PhantomData;

    use schemars::{JsonSchema, Schema};
    use serde::de::DeserializeOwned;

    use crate::{ToolArgs, ToolError};

    /// The type under test.
    pub struct Probe<T>(PhantomData<T>);

    impl<T> Probe<T> {
        pub const fn new() -> Self {
            Self(PhantomData)
        }
    }

    impl<T> Default for Probe<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    /// `T` has no `Deserialize` and no `JsonSchema`.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument: it derives neither `Deserialize` nor `JsonSchema`",
        label = "the model cannot send this type",
        note = "add `#[derive(serde::Deserialize, schemars::JsonSchema)]` to `{Self}` (for `Vec<T>`, `Option<T>` and the like: to `T`), or take it as `&Ctx` or `State<T>` if it is not meant for the model"
    )]
    pub trait ToolArg {}

    /// `T` has `JsonSchema` but no `Deserialize`.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument: it does not implement `serde::Deserialize`",
        label = "the model cannot send this type",
        note = "add `#[derive(serde::Deserialize)]` to `{Self}` (for `Vec<T>`, `Option<T>` and the like: to `T`), or take it as `&Ctx` or `State<T>` if it is not meant for the model"
    )]
    pub trait ToolArgDeserialize {}

    /// `T` has `Deserialize` but no `JsonSchema`.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool argument: it does not implement `schemars::JsonSchema`",
        label = "the model cannot be shown this type",
        note = "add `#[derive(schemars::JsonSchema)]` to `{Self}` (for `Vec<T>`, `Option<T>` and the like: to `T`), or take it as `&Ctx` or `State<T>` if it is not meant for the model"
    )]
    pub trait ToolArgJsonSchema {}

    // Called as `(&&&&Probe::<T>::new()).__tool_registry_check::<T>()`.

    pub trait Both {
        fn __tool_registry_check<U>(&self) {}
    }
    impl<T: DeserializeOwned + JsonSchema> Both for &&&Probe<T> {}

    pub trait DeserializeOnly {
        fn __tool_registry_check<U: ToolArgJsonSchema>(&self) {}
    }
    impl<T: DeserializeOwned> DeserializeOnly for &&Probe<T> {}

    pub trait JsonSchemaOnly {
        fn __tool_registry_check<U: ToolArgDeserialize>(&self) {}
    }
    impl<T: JsonSchema> JsonSchemaOnly for &Probe<T> {}

    pub trait Neither {
        fn __tool_registry_check<U: ToolArg>(&self) {}
    }
    impl<T> Neither for Probe<T> {}

    // Called as `(&&Probe::<Args>::new()).__tool_registry_parse(raw)` and
    // `.__tool_registry_schema()`, for the whole argument type. When that type falls short,
    // the checks above have already reported it on the argument's own type; the fallback only
    // keeps these calls from reporting it a second time, and never runs.

    pub trait Typed<T> {
        fn __tool_registry_parse(&self, args: ToolArgs<'_>) -> Result<T, ToolError>;
        fn __tool_registry_schema(&self) -> Schema;
    }
    impl<T: DeserializeOwned + JsonSchema> Typed<T> for &Probe<T> {
        #[inline]
        fn __tool_registry_parse(&self, args: ToolArgs<'_>) -> Result<T, ToolError> {
            super::parse_args::<T>(args)
        }
        fn __tool_registry_schema(&self) -> Schema {
            crate::__private::schema_for::<T>()
        }
    }

    pub trait Untyped<T> {
        fn __tool_registry_parse(&self, args: ToolArgs<'_>) -> Result<T, ToolError>;
        fn __tool_registry_schema(&self) -> Schema;
    }
    impl<T> Untyped<T> for Probe<T> {
        fn __tool_registry_parse(&self, _: ToolArgs<'_>) -> Result<T, ToolError> {
            Err(ToolError::Misconfigured {
                tool: String::new(),
                message: "the argument types were not checked".to_owned(),
            })
        }
        fn __tool_registry_schema(&self) -> Schema {
            Schema::default()
        }
    }
}

/// Turns what a tool function returns into a [`ToolResult`].
#[doc(hidden)]
pub mod output {
    use std::any::Any;
    use std::fmt::Display;

    use serde::Serialize;

    use crate::{ToolError, ToolResult};

    /// A value a `#[tool]` function may return.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be returned from a `#[tool]` function",
        label = "this return type does not implement `serde::Serialize`",
        note = "return a type that derives `serde::Serialize`, a `String`, `()`, `Result<T, E>` with `E: Display`, or `ToolResult`"
    )]
    pub trait ToolOutput {}
    impl<T: Serialize + ?Sized> ToolOutput for T {}

    #[doc(hidden)]
    pub fn assert_output<T: ToolOutput + ?Sized>() {}

    pub fn value<T: Serialize>(value: T) -> Result<ToolResult, ToolError> {
        serde_json::to_value(value)
            .map(ToolResult::ok)
            .map_err(|e| ToolError::handler("", format!("the tool's output is not JSON: {e}")))
    }

    pub fn tool_result(result: ToolResult) -> Result<ToolResult, ToolError> {
        Ok(result)
    }

    pub fn result<T: Serialize, E: Display + 'static>(
        result: Result<T, E>,
    ) -> Result<ToolResult, ToolError> {
        match result {
            Ok(output) => value(output),
            Err(error) => Err(error_of(error)),
        }
    }

    pub fn result_tool_result<E: Display + 'static>(
        result: Result<ToolResult, E>,
    ) -> Result<ToolResult, ToolError> {
        result.map_err(error_of)
    }

    /// A `ToolError` returned by the tool is kept as it is; anything else is a handler error.
    fn error_of<E: Display + 'static>(error: E) -> ToolError {
        let mut slot = Some(error);
        let any: &mut dyn Any = &mut slot;
        if let Some(tool_error) = any
            .downcast_mut::<Option<ToolError>>()
            .and_then(Option::take)
        {
            return tool_error;
        }
        ToolError::handler("", slot.map(|e| e.to_string()).unwrap_or_default())
    }
}
