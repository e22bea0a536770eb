//! What a running tool may ask of its caller's client, and what comes back: a question to the
//! person behind it with a form ([`Form`], answered by a [`FormAnswer`]), and a completion from
//! the client's model ([`Sampling`], answered by a [`Sampled`]); [`AskError`] when it cannot be
//! asked or its answer is not one the tool can take.
//!
//! A form is MCP's form elicitation: an object of flat fields (text, numbers, integers,
//! booleans, choices), checked when it is made. An answer is checked against the form before
//! the tool sees it, and bounded in size, as a sampled completion is.

use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tool_registry_json::depth::written_len;

/// A question for the person behind the caller's client, with the form they fill in:
/// [`Ctx::ask`](crate::Ctx::ask).
///
/// ```
/// use serde_json::json;
/// use tool_registry::call::Form;
///
/// let form = Form::new(
///     "Where should the report go?",
///     json!({
///         "type": "object",
///         "properties": {
///             "email": {"type": "string", "format": "email", "description": "Who gets it"},
///             "copies": {"type": "integer", "minimum": 1, "default": 1},
///             "format": {"type": "string", "enum": ["pdf", "html"]}
///         },
///         "required": ["email"]
///     }),
/// )?;
/// assert_eq!(form.message(), "Where should the report go?");
/// // Nested objects are no form: a client shows flat fields only.
/// assert!(Form::new("?", json!({"type": "object", "properties": {"a": {"type": "object"}}})).is_err());
/// # Ok::<(), tool_registry::call::AskError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Form {
    message: String,
    schema: Map<String, Value>,
    max_answer_bytes: usize,
    timeout: Option<Duration>,
    key: Option<String>,
    in_request: bool,
}

impl Form {
    /// The most an accepted answer may hold, as compact JSON, unless
    /// [`Form::max_answer_bytes`] says otherwise: 64 KiB.
    pub const MAX_ANSWER_BYTES: usize = 64 << 10;

    /// The most a form's schema may hold, as compact JSON: 64 KiB.
    pub const MAX_SCHEMA_BYTES: usize = 64 << 10;

    /// A question saying `message`, with the form `schema`: a JSON Schema object (`"type":
    /// "object"`) whose `properties` are each a string (with `enum`, `oneOf` of `const` and
    /// `title`, or a `format`), a number, an integer, a boolean, or an array of choices
    /// (`items` with `enum` or `anyOf`), as MCP's form elicitation allows. Anything else is
    /// [`AskError::BadForm`], naming the field.
    pub fn new(message: impl Into<String>, schema: Value) -> Result<Self, AskError> {
        let Value::Object(schema) = schema else {
            return Err(AskError::BadForm(
                "a form's schema is a JSON object with `\"type\": \"object\"`".into(),
            ));
        };
        check_form(&schema)?;
        Ok(Self {
            message: message.into(),
            schema,
            max_answer_bytes: Self::MAX_ANSWER_BYTES,
            timeout: None,
            key: None,
            in_request: false,
        })
    }

    /// A question whose form has the fields of `T` (a struct of flat fields deriving
    /// `schemars::JsonSchema`): an `Option` field is an optional one. Read the answer with
    /// [`FormAnswer::into_typed`].
    ///
    /// ```
    /// use tool_registry::call::Form;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// #[serde(rename_all = "lowercase")]
    /// enum View { Garden, Sea }
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Booking {
    ///     /// The guest's name.
    ///     name: String,
    ///     nights: u32,
    ///     breakfast: Option<bool>,
    ///     view: View,
    /// }
    ///
    /// let form = Form::of::<Booking>("Book the room?")?;
    /// assert_eq!(form.schema()["required"], serde_json::json!(["name", "nights", "view"]));
    /// assert_eq!(form.schema()["properties"]["view"]["enum"], serde_json::json!(["garden", "sea"]));
    /// # Ok::<(), tool_registry::call::AskError>(())
    /// ```
    pub fn of<T: schemars::JsonSchema>(message: impl Into<String>) -> Result<Self, AskError> {
        // Choices (an enum's variants) written in the field, not as a `$ref`: a form is flat.
        let mut settings = schemars::generate::SchemaSettings::draft2020_12();
        settings.inline_subschemas = true;
        let schema = schemars::SchemaGenerator::new(settings).into_root_schema_for::<T>();
        let mut schema = match schema.to_value() {
            Value::Object(schema) => schema,
            _ => Map::new(),
        };
        for key in ["$schema", "title", "description", "$defs"] {
            schema.remove(key);
        }
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for field in properties.values_mut() {
                flatten_optional(field);
            }
        }
        Self::new(message, Value::Object(schema))
    }

    /// Takes an accepted answer of at most `bytes` (as compact JSON); a longer one is
    /// [`AskError::TooLarge`].
    #[must_use]
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// Waits at most `timeout` for the answer, then [`AskError::Timeout`]; without one the
    /// question waits as long as the call may run (its tool's timeout).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The name the question goes by where a client answers it by name (the key of MCP's
    /// `inputRequests` on the 2026-07-28 revision); `q1`, `q2`, ... in the order the call asks
    /// unless set. Names are the call's own: two questions of one call never share one.
    #[must_use]
    pub fn named(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The name set with [`Form::named`].
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Asks within the request that made the call, even where the call may become a task: on
    /// MCP's 2026-07-28 revision the request's own answer is the question
    /// (`input_required`), and the call becomes a task only once it is answered. By default a
    /// call that may become a task becomes one when it asks, and asks through the task.
    #[must_use]
    pub fn in_request(mut self) -> Self {
        self.in_request = true;
        self
    }

    /// Whether [`Form::in_request`] was set.
    pub fn is_in_request(&self) -> bool {
        self.in_request
    }

    /// What the person is asked.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The form, a JSON Schema object.
    pub fn schema(&self) -> &Map<String, Value> {
        &self.schema
    }

    /// The bound on an accepted answer.
    pub fn answer_limit(&self) -> usize {
        self.max_answer_bytes
    }

    /// How long the question waits, if it has a bound of its own.
    pub fn wait(&self) -> Option<Duration> {
        self.timeout
    }

    /// Checks an accepted answer against the form: its size, then its schema. What a
    /// [`ClientLink`](super::ClientLink) calls before handing the answer back.
    pub fn check_answer(&self, content: &Map<String, Value>) -> Result<(), AskError> {
        let bytes = written_len(content);
        if bytes > self.max_answer_bytes {
            return Err(AskError::TooLarge {
                bytes: Some(bytes),
                limit: self.max_answer_bytes,
            });
        }
        let schema = Value::Object(self.schema.clone());
        let validator = jsonschema::validator_for(&schema).map_err(|error| {
            AskError::BadForm(format!("the form's schema does not compile: {error}"))
        })?;
        let instance = Value::Object(content.clone());
        let mut errors = validator.iter_errors(&instance).map(|error| {
            let path = error.instance_path().to_string();
            let path = if path.is_empty() {
                "/".to_owned()
            } else {
                path
            };
            format!("at {path}: {error}")
        });
        match errors.next() {
            None => Ok(()),
            Some(first) => Err(AskError::Mismatch(first)),
        }
    }
}

/// A person's answer to a [`Form`].
#[derive(Debug, Clone, PartialEq)]
pub enum FormAnswer {
    /// They filled in the form and sent it: the fields, checked against the form.
    Accepted(Map<String, Value>),
    /// They said no.
    Declined,
    /// They closed the question without choosing.
    Cancelled,
}

impl FormAnswer {
    /// The accepted fields read into `T`; `None` when the person declined or cancelled.
    pub fn into_typed<T: DeserializeOwned>(self) -> Result<Option<T>, AskError> {
        match self {
            Self::Accepted(fields) => serde_json::from_value(Value::Object(fields))
                .map(Some)
                .map_err(|error| AskError::Mismatch(error.to_string())),
            Self::Declined | Self::Cancelled => Ok(None),
        }
    }

    /// The action as MCP names it: `accept`, `decline` or `cancel`.
    pub fn action(&self) -> &'static str {
        match self {
            Self::Accepted(_) => "accept",
            Self::Declined => "decline",
            Self::Cancelled => "cancel",
        }
    }
}

/// Who says a message of a [`Sampling`] conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// A completion asked of the caller's client's model (MCP's sampling): [`Ctx::sample`](crate::Ctx::sample).
///
/// ```
/// use tool_registry::call::Sampling;
///
/// let sampling = Sampling::new("Summarise: the build takes 4 minutes.")
///     .system("Answer in one sentence.")
///     .max_tokens(60)
///     .temperature(0.2);
/// assert_eq!(sampling.messages().len(), 1);
/// ```
#[derive(Debug, Clone)]
pub struct Sampling {
    messages: Vec<(Role, String)>,
    system: Option<String>,
    max_tokens: u32,
    temperature: Option<f64>,
    max_answer_bytes: usize,
    timeout: Option<Duration>,
    key: Option<String>,
}

impl Sampling {
    /// The most a completion may hold, as compact JSON, unless [`Sampling::max_answer_bytes`]
    /// says otherwise: 1 MiB.
    pub const MAX_ANSWER_BYTES: usize = 1 << 20;

    /// Tokens asked for unless [`Sampling::max_tokens`] says otherwise.
    pub const DEFAULT_MAX_TOKENS: u32 = 1024;

    /// A conversation of one user message, `prompt`.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            messages: vec![(Role::User, prompt.into())],
            system: None,
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            temperature: None,
            max_answer_bytes: Self::MAX_ANSWER_BYTES,
            timeout: None,
            key: None,
        }
    }

    /// Adds a message to the conversation.
    #[must_use]
    pub fn message(mut self, role: Role, text: impl Into<String>) -> Self {
        self.messages.push((role, text.into()));
        self
    }

    /// The system prompt.
    #[must_use]
    pub fn system(mut self, prompt: impl Into<String>) -> Self {
        self.system = Some(prompt.into());
        self
    }

    /// The most tokens the model may write.
    #[must_use]
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = tokens;
        self
    }

    /// The sampling temperature.
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Takes a completion of at most `bytes` (as compact JSON); a longer one is
    /// [`AskError::TooLarge`].
    #[must_use]
    pub fn max_answer_bytes(mut self, bytes: usize) -> Self {
        self.max_answer_bytes = bytes;
        self
    }

    /// Waits at most `timeout` for the completion, then [`AskError::Timeout`].
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The name the request goes by where a client answers it by name (see [`Form::named`]).
    #[must_use]
    pub fn named(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// The name set with [`Sampling::named`].
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The conversation.
    pub fn messages(&self) -> &[(Role, String)] {
        &self.messages
    }

    /// The system prompt, if any.
    pub fn system_prompt(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The most tokens asked for.
    pub fn token_limit(&self) -> u32 {
        self.max_tokens
    }

    /// The temperature, if set.
    pub fn sampling_temperature(&self) -> Option<f64> {
        self.temperature
    }

    /// The bound on a completion.
    pub fn answer_limit(&self) -> usize {
        self.max_answer_bytes
    }

    /// How long the request waits, if it has a bound of its own.
    pub fn wait(&self) -> Option<Duration> {
        self.timeout
    }
}

/// The completion a client's model wrote for a [`Sampling`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Sampled {
    /// The text, when the completion is text.
    pub text: Option<String>,
    /// The completion's content as MCP carries it (text, an image, audio).
    pub content: Value,
    /// The model that wrote it, as the client names it.
    pub model: String,
    /// Why it stopped (`endTurn`, `maxTokens`, `stopSequence`, or the client's own word).
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// A completion, as a [`ClientLink`](super::ClientLink) builds it.
    pub fn new(content: Value, model: impl Into<String>, stop_reason: Option<String>) -> Self {
        let text = (content.get("type").and_then(Value::as_str) == Some("text"))
            .then(|| {
                content
                    .get("text")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .flatten();
        Self {
            text,
            content,
            model: model.into(),
            stop_reason,
        }
    }
}

/// A root the client exposes (MCP's `roots/list`): a directory or another URI the user lets
/// the server work in.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Root {
    /// Its URI (`file:///home/ada/project`).
    pub uri: String,
    /// Its name, if the client gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// Why a question or a sampling request got no answer the tool can use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// The call has no client to ask: it was made in the process, or through a front end that
    /// cannot reach one (HTTP modules, the CLI). Tools that must ask should say so in their
    /// description; tools that can do without should go on without.
    #[error(
        "this call has no client to ask: it was made locally or through a front end without one (only MCP clients can be asked)"
    )]
    NoClient,
    /// The client cannot be asked this: it did not declare the capability, or its protocol
    /// revision forbids a server's requests during a call.
    #[error("the client cannot be asked: {0}")]
    Unsupported(String),
    /// The form is not one a client can show.
    #[error("the form is not one a client can show: {0}")]
    BadForm(String),
    /// The answer does not match the form.
    #[error("the answer does not match the form: {0}")]
    Mismatch(String),
    /// The answer is larger than the tool takes, or than the server reads of one message.
    #[error("the answer is larger than the {limit} bytes this question takes{}", size_of(*.bytes))]
    TooLarge {
        /// Its size as compact JSON; `None` when it was too long to read at all.
        bytes: Option<usize>,
        /// The bound.
        limit: usize,
    },
    /// No answer came within the question's own timeout.
    #[error("no answer came within {0:?}")]
    Timeout(Duration),
    /// The client answered with an error.
    #[error("the client answered with an error: {0}")]
    Client(String),
    /// The client went away before it answered.
    #[error("the client went away before it answered")]
    Gone,
}

/// A tool that cannot ask fails with what stopped it, so `?` works in a tool returning
/// `Result<_, ToolError>`.
impl From<AskError> for crate::call::ToolError {
    fn from(error: AskError) -> Self {
        Self::failed(error.to_string())
    }
}

fn size_of(bytes: Option<usize>) -> String {
    bytes.map_or_else(String::new, |bytes| format!(" ({bytes} bytes)"))
}

/// `{"type": ["string", "null"]}` (schemars' `Option<String>`) as `{"type": "string"}`: a
/// field left empty is an optional one.
fn flatten_optional(field: &mut Value) {
    let Some(Value::Array(types)) = field.get("type") else {
        return;
    };
    let kept: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
    if let [only] = kept.as_slice() {
        let only = (*only).clone();
        field["type"] = only;
    }
}

/// Whether `schema` is a form a client can show: an object of flat fields.
fn check_form(schema: &Map<String, Value>) -> Result<(), AskError> {
    let bytes = written_len(schema);
    if bytes > Form::MAX_SCHEMA_BYTES {
        return Err(AskError::BadForm(format!(
            "the schema holds {bytes} bytes, more than {}",
            Form::MAX_SCHEMA_BYTES
        )));
    }
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(AskError::BadForm(
            "a form's schema has `\"type\": \"object\"`".into(),
        ));
    }
    let properties = match schema.get("properties") {
        None => return Ok(()),
        Some(Value::Object(properties)) => properties,
        Some(_) => {
            return Err(AskError::BadForm(
                "`properties` is an object of fields".into(),
            ));
        }
    };
    for (name, field) in properties {
        let kind = field.get("type").and_then(Value::as_str);
        let flat = match kind {
            Some("string" | "number" | "integer" | "boolean") => true,
            Some("array") => field
                .get("items")
                .is_some_and(|items| items.get("enum").is_some() || items.get("anyOf").is_some()),
            _ => false,
        };
        if !flat {
            return Err(AskError::BadForm(format!(
                "field `{name}` is not a flat field: a form holds strings, numbers, integers, booleans, and arrays of choices (`items` with `enum` or `anyOf`)"
            )));
        }
    }
    if let Some(required) = schema.get("required") {
        let names = required.as_array().filter(|names| {
            names.iter().all(|name| {
                name.as_str()
                    .is_some_and(|name| properties.contains_key(name))
            })
        });
        if names.is_none() {
            return Err(AskError::BadForm(
                "`required` names fields of `properties`".into(),
            ));
        }
    }
    Ok(())
}
