//! `parse` and `run`: read a model's output, print the calls in it, or run them.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use serde::Serialize;
use serde_json::{Value, json};

use super::output::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, print_json};
use super::runtime::block_on;
use tool_registry_core::Registry;
use tool_registry_core::Scope;
use tool_registry_core::parse::{
    self, LeftOut, Options, ParseError, Parsed, ParsedCall, StreamEvent, StreamParser, Thinking,
    ToolList, ToolSet,
};
use tool_registry_core::{Ctx, ToolResult};

/// `toolreg parse`.
#[derive(Args)]
pub(crate) struct ParseArgs {
    /// An OpenAI-format tool list (the `tools` of a request) whose names and schemas to use;
    /// without it, this program's tools.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// No tool list: every syntactically valid call is a call, whatever it names, and values
    /// are typed by JSON alone.
    #[arg(long, conflicts_with = "tools")]
    any_name: bool,
    #[command(flatten)]
    input: InputArgs,
    /// Replay a stream: FILE holds a JSON array of the text deltas the model's output arrived
    /// in, pushed one by one through the streaming parser; what it prints is what a whole-text
    /// parse of the joined deltas prints.
    #[arg(long, value_name = "FILE", conflicts_with = "input")]
    deltas: Option<PathBuf>,
    /// With --deltas, also print the events the stream emitted, in order, as `"events"`.
    #[arg(long, requires = "deltas")]
    events: bool,
}

/// `toolreg run`.
#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    input: InputArgs,
    /// The user's message the output answers.
    #[arg(long)]
    message: Option<String>,
}

/// Where the output comes from and how to read it.
#[derive(Args)]
struct InputArgs {
    /// Read the model's output from FILE instead of standard input.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
    /// How the output's reasoning is delimited.
    #[arg(long, value_enum, default_value_t = ThinkingArg::Auto)]
    thinking: ThinkingArg,
    /// The tail of the prompt the chat template appended after the conversation (its
    /// generation prompt: `<|im_start|>assistant\n<think>\n`, `<|start|>assistant`, ...), from
    /// which the output's starting state is known: inside a thought, after it, inside a
    /// header. Replaces --thinking.
    #[arg(long, value_name = "TEXT", conflicts_with = "thinking")]
    generation_prompt: Option<String>,
    /// Also read calls written inside <think> blocks (they are not calls by default).
    #[arg(long)]
    calls_in_thinking: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ThinkingArg {
    /// `<think>` blocks, and text before a lone `</think>`.
    Auto,
    /// The prompt opened the thought: reasoning up to the first `</think>`.
    StartsInside,
    /// Only `<think>…</think>` blocks.
    ExplicitOnly,
}

impl InputArgs {
    fn options(&self) -> Options {
        let thinking = match self.thinking {
            ThinkingArg::Auto => Thinking::Auto,
            ThinkingArg::StartsInside => Thinking::StartsInside,
            ThinkingArg::ExplicitOnly => Thinking::ExplicitOnly,
        };
        let options = Options::new()
            .thinking(thinking)
            .calls_in_thinking(self.calls_in_thinking);
        match &self.generation_prompt {
            Some(prompt) => options.generation_prompt(prompt),
            None => options,
        }
    }

    /// The model's output. Bytes that are not UTF-8 are replaced with U+FFFD and reported on
    /// `err`: one bad byte does not cost the rest of the output.
    fn read(&self, err: &mut dyn Write) -> Option<String> {
        let mut bytes = Vec::new();
        let read = match &self.input {
            Some(path) => std::fs::read(path).map(|b| bytes = b),
            None => std::io::stdin().read_to_end(&mut bytes).map(drop),
        };
        match read {
            Ok(()) => Some(decode_lossy(bytes, err)),
            Err(error) => {
                let source = self
                    .input
                    .as_ref()
                    .map_or_else(|| "standard input".to_owned(), |p| p.display().to_string());
                let _ = writeln!(
                    err,
                    "error: cannot read the model's output from {source}: {error}"
                );
                None
            }
        }
    }
}

/// `bytes` as text, with what is not UTF-8 replaced and reported.
fn decode_lossy(bytes: Vec<u8>, err: &mut dyn Write) -> String {
    match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => {
            let first = error.utf8_error().valid_up_to();
            let bytes = error.into_bytes();
            let bad = bytes
                .utf8_chunks()
                .filter(|chunk| !chunk.invalid().is_empty())
                .count();
            let _ = writeln!(
                err,
                "warning: the model's output is not valid UTF-8: {bad} invalid byte sequence{} replaced with U+FFFD, the first at byte {first}",
                if bad == 1 { "" } else { "s" }
            );
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

impl ParseArgs {
    pub(super) fn has_tool_list(&self) -> bool {
        self.tools.is_some() || self.any_name
    }
}

/// Prints `{"calls", "content", "reasoning", "errors", "unknown"}`. Exit code 0, or 2 when the
/// input or the tool list cannot be read. Without `--tools` or `--any-name`, the tools are the
/// ones `scope` may see: any other name is unknown.
pub(crate) fn parse(
    args: ParseArgs,
    registry: &Registry,
    scope: &Scope,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let options = args.input.options();
    let list;
    let scoped;
    let tools: &dyn ToolSet = match &args.tools {
        None if args.any_name => &parse::AnyTool,
        None => {
            scoped = registry.scoped(scope);
            &scoped
        }
        Some(path) => {
            let read = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read the tool list {}: {e}", path.display()))
                .and_then(|json| {
                    ToolList::from_json_str(&json).map_err(|e| format!("{}: {e}", path.display()))
                });
            match read {
                Ok(read) => {
                    list = read;
                    &list
                }
                Err(message) => {
                    let _ = writeln!(err, "error: {message}");
                    return EXIT_USAGE;
                }
            }
        }
    };
    let printed = match &args.deltas {
        Some(path) => {
            let Some(deltas) = read_deltas(path, err) else {
                return EXIT_USAGE;
            };
            let (parsed, events) = replay(&deltas, tools, options);
            let mut value = serde_json::to_value(&parsed).unwrap_or_default();
            if args.events
                && let Value::Object(map) = &mut value
            {
                map.insert("events".into(), Value::Array(events));
            }
            print_json(out, &value)
        }
        None => {
            let Some(text) = args.input.read(err) else {
                return EXIT_USAGE;
            };
            print_json(out, &parse::any_with(&text, tools, options))
        }
    };
    match printed {
        Ok(()) => EXIT_OK,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            EXIT_TOOL_ERROR
        }
    }
}

/// The deltas of `--deltas FILE`: a JSON array of strings.
fn read_deltas(path: &std::path::Path, err: &mut dyn Write) -> Option<Vec<String>> {
    let read = std::fs::read(path)
        .map_err(|e| format!("cannot read the deltas {}: {e}", path.display()))
        .and_then(|bytes| {
            serde_json::from_slice::<Vec<String>>(&bytes).map_err(|e| {
                format!(
                    "{}: not a JSON array of text deltas (write [\"Let me \", \"check.\"]): {e}",
                    path.display()
                )
            })
        });
    match read {
        Ok(deltas) => Some(deltas),
        Err(message) => {
            let _ = writeln!(err, "error: {message}");
            None
        }
    }
}

/// Pushes `deltas` through the streaming parser: what it read, and the events it emitted as
/// `{"type": "text" | "reasoning" | "call_started" | "call_args" | "call" | "unknown" |
/// "error", ...}`.
fn replay(deltas: &[String], tools: &dyn ToolSet, options: Options) -> (Parsed, Vec<Value>) {
    let mut stream = StreamParser::with_options(tools, options);
    let mut events = Vec::new();
    for delta in deltas {
        events.extend(stream.push(delta));
    }
    events.extend(stream.finish());
    let events = events.into_iter().map(event_json).collect();
    (stream.into_parsed(), events)
}

fn event_json(event: StreamEvent) -> Value {
    match event {
        StreamEvent::Text(text) => json!({"type": "text", "text": text}),
        StreamEvent::Reasoning(text) => json!({"type": "reasoning", "text": text}),
        StreamEvent::CallStarted { name } => json!({"type": "call_started", "name": name}),
        StreamEvent::CallArgsDelta(text) => json!({"type": "call_args", "text": text}),
        StreamEvent::Call(call) => {
            json!({"type": "call", "name": call.name, "arguments": call.arguments})
        }
        StreamEvent::Unknown(call) => {
            json!({"type": "unknown", "name": call.name, "arguments": call.arguments})
        }
        StreamEvent::Error(error) => json!({"type": "error", "error": error}),
        _ => json!({"type": "other"}),
    }
}

/// What `run` prints.
#[derive(Serialize)]
struct Ran<'a> {
    results: Vec<CallResult<'a>>,
    /// The one answer for every call past the registry's `max_calls`.
    #[serde(skip_serializing_if = "Option::is_none")]
    not_run: Option<ToolResult>,
    content: &'a str,
    reasoning: &'a str,
    errors: &'a [ParseError],
    unknown: &'a [ParsedCall],
    #[serde(skip_serializing_if = "LeftOut::is_empty")]
    left_out: LeftOut,
}

#[derive(Serialize)]
struct CallResult<'a> {
    name: &'a str,
    arguments: &'a Value,
    result: ToolResult,
}

/// Parses the output with this program's tools and runs the calls as one batch through the
/// registry ([`Registry::execute`]: scope, gates, limits, audit; concurrent up to the
/// cap, `sequential` tools alone, results in call order), printing
/// `{"results": [{"name", "arguments", "result"}], "content", "reasoning", "errors", "unknown"}`.
/// The output is read with the registry's `max_calls` as its cap: the calls past it are counted,
/// not kept, and answered by one result, `"not_run"` (`too_many_calls` with how many), and
/// `"left_out"` counts what the parse did not keep.
/// Exit code 0 when every call succeeded, 1 when a call failed, was not run, named an unknown
/// tool or could not be read, 2 when the input cannot be read.
pub(crate) fn run(
    args: RunArgs,
    registry: &Registry,
    mut ctx: Ctx,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let Some(text) = args.input.read(err) else {
        return EXIT_USAGE;
    };
    if let Some(message) = args.message {
        ctx = ctx.with_user_message(message);
    }
    let tools = registry.scoped(ctx.scope());
    let options = args.input.options().max_calls(registry.max_calls());
    let parsed: Parsed = parse::any_with(&text, &tools, options);
    let Some(mut outcomes) = block_on(err, registry.execute(&parsed, &ctx)) else {
        return EXIT_TOOL_ERROR;
    };
    let not_run =
        (outcomes.len() > parsed.calls.len()).then(|| outcomes.remove(outcomes.len() - 1));
    let results: Vec<CallResult<'_>> = parsed
        .calls
        .iter()
        .zip(outcomes)
        .map(|(call, result)| CallResult {
            name: &call.name,
            arguments: &call.arguments,
            result,
        })
        .collect();
    let all_ok = results.iter().all(|r| r.result.success)
        && not_run.is_none()
        && parsed.errors.is_empty()
        && parsed.unknown.is_empty()
        && parsed.left_out.is_empty();
    let ran = Ran {
        results,
        not_run,
        content: &parsed.content,
        reasoning: &parsed.reasoning,
        errors: &parsed.errors,
        unknown: &parsed.unknown,
        left_out: parsed.left_out,
    };
    if let Err(error) = print_json(out, &ran) {
        let _ = writeln!(err, "error: {error}");
        return EXIT_TOOL_ERROR;
    }
    if all_ok { EXIT_OK } else { EXIT_TOOL_ERROR }
}
