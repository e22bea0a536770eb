//! [`ScriptedModel`]: a model whose turns are written out beforehand, run through the same
//! parse, gates, calls and result messages as a real model's.

use serde_json::Value;
use tool_registry_core::format::Provider;
use tool_registry_core::parse::{self, Options, Parsed};
use tool_registry_core::{Ctx, Registry, ToolCall, ToolResult};

/// A model that writes the turns it was given, one per [`run`](ScriptedModel::run) step: a test
/// of an agent's tools without a model. Each turn is what a model or provider returned, in any
/// shape the parser reads: a provider's native message or response (OpenAI Chat Completions
/// or Responses, Anthropic, Gemini; as a [`Value`] or JSON text), or text in any format a local
/// model writes (Hermes `<tool_call>`, Llama's JSON, Mistral `[TOOL_CALLS]`, Qwen's XML,
/// Harmony, DeepSeek, Kimi, GLM, Gemma, pythonic lists, tag lines...).
///
/// Each turn is parsed with the registry's tools as the context's scope sees them, its calls
/// run through every gate ([`Registry::execute`]), and each result turned into the messages
/// the [`Provider`] given reads back. A call without an id (text formats carry none) gets
/// `call_T_N` (turn `T`, call `N`, from 1), as an agent loop would give it.
///
/// ```
/// use serde_json::json;
/// use tool_registry::format::Provider;
/// use tool_registry::{Ctx, Registry, tool};
/// use tool_registry::testing::ScriptedModel;
///
/// /// Add two numbers.
/// #[tool]
/// fn add(a: i64, b: i64) -> i64 { a + b }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::builder().build()?;
/// let transcript = ScriptedModel::new(Provider::Anthropic)
///     // Anthropic's own shape of a call...
///     .turn(json!({"role": "assistant", "content": [
///         {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}]}))
///     // ...and a local model's text, with its thought.
///     .turn("<think>Once more.</think><tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 1}}</tool_call>")
///     .run(&registry, &Ctx::new())
///     .await;
///
/// let results: Vec<_> = transcript.results().map(|r| r.content.clone()).collect();
/// assert_eq!(results, [json!(5), json!(2)]);
/// assert_eq!(transcript.turns[1].parsed.reasoning, "Once more.");
/// assert_eq!(transcript.turns[1].calls[0].id.as_deref(), Some("call_2_1"));
/// let answer = &transcript.turns[0].messages[0];
/// assert_eq!((answer["type"].as_str(), answer["tool_use_id"].as_str()), (Some("tool_result"), Some("toolu_1")));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    provider: Provider,
    turns: Vec<String>,
    options: Options,
}

impl ScriptedModel {
    /// A model with no turns yet, whose results are written as `provider`'s messages.
    pub fn new(provider: Provider) -> Self {
        Self {
            provider,
            turns: Vec::new(),
            options: Options::default(),
        }
    }

    /// Adds a turn: what the model wrote, as text (`&str`, `String`) or a provider's native
    /// shape (a [`Value`]).
    pub fn turn(mut self, output: impl Into<Turn>) -> Self {
        self.turns.push(output.into().0);
        self
    }

    /// Parses each turn with `options` (the formats read, the thinking state, the most calls
    /// kept) instead of the defaults.
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// Runs every turn in order, for the caller of `ctx`: each parsed, its calls run, their
    /// results written as messages.
    pub async fn run(&self, registry: &Registry, ctx: &Ctx) -> Transcript {
        let mut turns = Vec::with_capacity(self.turns.len());
        let options = self.options.max_calls(registry.max_calls());
        for (t, output) in self.turns.iter().enumerate() {
            let tools = registry.scoped(ctx.scope());
            let mut parsed = parse::any_with(output, &tools, options);
            for (n, call) in parsed.calls.iter_mut().enumerate() {
                if call.id.is_none() {
                    call.id = Some(format!("call_{}_{}", t + 1, n + 1));
                }
            }
            let results = registry.execute(&parsed, ctx).await;
            let calls: Vec<ToolCall> = parsed.calls.iter().cloned().map(ToolCall::from).collect();
            let messages = calls
                .iter()
                .zip(&results)
                .flat_map(|(call, result)| {
                    registry
                        .result_message(self.provider, call, result)
                        .into_messages()
                })
                .collect();
            turns.push(TurnRun {
                output: output.clone(),
                parsed,
                calls,
                results,
                messages,
            });
        }
        Transcript { turns }
    }
}

/// One turn of a [`ScriptedModel`]: what the model wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn(String);

impl From<&str> for Turn {
    fn from(text: &str) -> Self {
        Turn(text.to_owned())
    }
}

impl From<String> for Turn {
    fn from(text: String) -> Self {
        Turn(text)
    }
}

impl From<Value> for Turn {
    /// A provider's native message or response, as JSON.
    fn from(native: Value) -> Self {
        Turn(native.to_string())
    }
}

/// Everything a [`ScriptedModel`]'s run did, turn by turn.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Transcript {
    /// The turns, in order.
    pub turns: Vec<TurnRun>,
}

impl Transcript {
    /// Every call that ran, in order.
    pub fn calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.turns.iter().flat_map(|turn| &turn.calls)
    }

    /// Every result, in order (a turn with more calls than the registry runs ends with one
    /// that says so).
    pub fn results(&self) -> impl Iterator<Item = &ToolResult> {
        self.turns.iter().flat_map(|turn| &turn.results)
    }

    /// Every message the results were written as, in order.
    pub fn messages(&self) -> impl Iterator<Item = &Value> {
        self.turns.iter().flat_map(|turn| &turn.messages)
    }

    /// The first result of a call of `tool` (by the name the model wrote).
    pub fn result_of(&self, tool: &str) -> Option<&ToolResult> {
        self.turns.iter().find_map(|turn| {
            let at = turn.calls.iter().position(|call| call.name == tool)?;
            turn.results.get(at)
        })
    }
}

/// One turn of a [`Transcript`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TurnRun {
    /// What the model wrote.
    pub output: String,
    /// What the parser read in it: the content, reasoning, errors and calls of unknown
    /// tools (which do not run).
    pub parsed: Parsed,
    /// The calls that ran, each with its id.
    pub calls: Vec<ToolCall>,
    /// Their results, in call order, each as the model reads it.
    pub results: Vec<ToolResult>,
    /// The results as the provider's messages, in call order.
    pub messages: Vec<Value>,
}
