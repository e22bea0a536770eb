//! The commands on the registry alone: `list`, `schema`, `tools --strict`, `call`, `deny`,
//! `snapshot`, the formats they print in, and how a call's result becomes the exit code.

use std::io::Write;

use clap::ValueEnum;

use super::output::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, print_json, shown};
use super::runtime::block_on;
use tool_registry_core::Registry;
use tool_registry_core::Scope;
use tool_registry_core::format::Provider;
use tool_registry_core::{Ctx, ToolResult};

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum ListFormat {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum CatalogFormat {
    Md,
    Json,
    Html,
}

#[derive(Clone, Copy, ValueEnum)]
pub(super) enum ProviderFormat {
    /// OpenAI Chat Completions.
    Openai,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
    /// MCP `tools/list`.
    Mcp,
}

impl From<ProviderFormat> for Provider {
    fn from(format: ProviderFormat) -> Self {
        match format {
            ProviderFormat::Openai => Provider::OpenAi,
            ProviderFormat::Responses => Provider::Responses,
            ProviderFormat::Anthropic => Provider::Anthropic,
            ProviderFormat::Gemini => Provider::Gemini,
            ProviderFormat::Mcp => Provider::Mcp,
        }
    }
}

/// The exit code of a command that wrote its answer: a failed write is the error.
pub(super) fn exit_code(err: &mut dyn Write, written: std::io::Result<()>) -> i32 {
    match written {
        Ok(()) => EXIT_OK,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            EXIT_TOOL_ERROR
        }
    }
}

/// `toolreg tools --strict`: the definitions in a provider's strict form, or why a tool has none.
pub(super) fn strict_tools(
    out: &mut dyn Write,
    err: &mut dyn Write,
    registry: &Registry,
    scope: &Scope,
    format: ProviderFormat,
) -> i32 {
    let written = match registry.provider_tools(Provider::from(format).strict(), scope) {
        Ok(tools) => print_json(out, &tools),
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            return EXIT_TOOL_ERROR;
        }
    };
    exit_code(err, written)
}

/// `text` on one line: its lines joined by a space, as a description wrapped in a doc comment
/// reads.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `toolreg call NAME ARGS`: one call as the model would make it, in `ctx` (the caller's scope,
/// and the user's message when given).
pub(super) fn call(
    out: &mut dyn Write,
    err: &mut dyn Write,
    registry: &Registry,
    ctx: &Ctx,
    name: &str,
    args: &str,
    save: Option<&std::path::Path>,
) -> i32 {
    // Arguments that are not JSON at all are the command line's typing error, not the tool's.
    if !args.trim().is_empty()
        && let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(args)
    {
        let _ = writeln!(
            err,
            "error: the arguments are not JSON ({error}); write one JSON object, in single quotes in a shell: '{{\"query\": \"rate limits\"}}'"
        );
        return EXIT_USAGE;
    }
    let outcome = block_on(err, registry.call(name, args, ctx).for_model());
    let waits = outcome
        .as_ref()
        .and_then(tool_registry_core::task::approval_token)
        .is_some();
    let code = finish(out, err, outcome.map(Ok), save);
    // What to type next, said where a person reads it; the token itself stays in the answer
    // (standard error is where the logs go, and a token approves the call).
    if waits {
        let user = ctx
            .user()
            .map_or_else(String::new, |user| format!("--user {} ", shown(user)));
        let _ = writeln!(
            err,
            "the call waits for a person: `toolreg {user}approve TOKEN` runs it, `toolreg {user}deny TOKEN REASON` refuses it; TOKEN is the answer's `content.error.token`"
        );
    }
    code
}

/// `toolreg deny TOKEN REASON`: refuses a call waiting for approval.
pub(super) fn deny(
    out: &mut dyn Write,
    err: &mut dyn Write,
    registry: &Registry,
    scope: Scope,
    token: &str,
    reason: &str,
) -> i32 {
    let ctx = Ctx::for_scope(scope);
    match block_on(err, registry.deny(token, reason, &ctx)) {
        None => EXIT_TOOL_ERROR,
        // The denial itself succeeded; the result is what goes back to the model.
        Some(Ok(result)) => {
            let _ = print_json(out, &result);
            EXIT_OK
        }
        Some(Err(error)) => finish(out, err, Some(Err(error)), None),
    }
}

/// `toolreg snapshot`: the registry's snapshot of the tools within `scope`, switched-off ones
/// included with their switch.
pub(super) fn snapshot(
    out: &mut dyn Write,
    registry: &Registry,
    scope: &Scope,
) -> std::io::Result<()> {
    print_json(out, &registry.snapshot_for(scope))
}

/// `list`: the tools `scope` may see, a line each or as JSON; with `verbose`, where each is
/// declared.
pub(super) fn list(
    out: &mut dyn Write,
    registry: &Registry,
    scope: &Scope,
    format: ListFormat,
    verbose: bool,
) -> std::io::Result<()> {
    let tools = registry.tools(scope);
    if let ListFormat::Json = format {
        let list: Vec<_> = tools
            .iter()
            .map(|t| {
                let mut entry =
                    serde_json::json!({ "name": t.name(), "description": t.short_description() });
                if verbose {
                    entry["source"] = serde_json::json!(t.source());
                }
                entry
            })
            .collect();
        return print_json(out, &list);
    }
    let width = tools
        .iter()
        .map(|t| shown(t.name()).len())
        .max()
        .unwrap_or(0);
    tools.iter().try_for_each(|tool| {
        write!(
            out,
            "{:width$}  {}",
            shown(tool.name()),
            shown(&one_line(tool.short_description()))
        )?;
        if verbose {
            match tool.source() {
                Some(at) => write!(out, "  ({}:{}:{})", shown(at.file), at.line, at.column)?,
                None => write!(out, "  (registered at run time)")?,
            }
        }
        writeln!(out)
    })
}

/// `schema NAME`: the tool's argument schema, or a usage error with a suggestion from the
/// names `scope` may see.
pub(super) fn schema(
    out: &mut dyn Write,
    err: &mut dyn Write,
    registry: &Registry,
    scope: &Scope,
    name: &str,
) -> i32 {
    let found = registry.get(name, scope);
    let Some(tool) = found else {
        let hint = match registry.suggest(name, scope) {
            Some(close) => format!("did you mean `{close}`? "),
            None => String::new(),
        };
        let _ = writeln!(
            err,
            "error: no tool is named {}; {hint}`list` shows the tools",
            shown(name)
        );
        return EXIT_USAGE;
    };
    match print_json(out, tool.input_schema()) {
        Ok(()) => EXIT_OK,
        Err(error) => {
            let _ = writeln!(err, "error: {error}");
            EXIT_TOOL_ERROR
        }
    }
}

/// Prints a call's result (an error as an unsuccessful result) and gives its exit code.
pub(super) fn finish(
    out: &mut dyn Write,
    err: &mut dyn Write,
    outcome: Option<Result<ToolResult, tool_registry_core::ToolError>>,
    save: Option<&std::path::Path>,
) -> i32 {
    let Some(outcome) = outcome else {
        return EXIT_TOOL_ERROR;
    };
    let result = outcome.unwrap_or_else(ToolResult::from);
    if let Err(error) = print_json(out, &super::blocks::printable(&result, save)) {
        let _ = writeln!(err, "error: {error}");
    }
    if result.success {
        EXIT_OK
    } else {
        EXIT_TOOL_ERROR
    }
}

/// `toolreg tokens`: what the caller's tool list costs `format`'s models, a tool a line, then
/// the whole list and how it was counted; exit 1 past `budget`.
#[cfg(feature = "tokens")]
pub(super) fn tokens(
    out: &mut dyn Write,
    err: &mut dyn Write,
    registry: &Registry,
    scope: &Scope,
    format: ProviderFormat,
    budget: Option<usize>,
) -> i32 {
    let count = registry.token_count(Provider::from(format), scope);
    let width = count
        .tools
        .iter()
        .map(|(name, _)| name.len())
        .max()
        .unwrap_or(0);
    for (name, tokens) in &count.tools {
        let _ = writeln!(out, "{:width$}  {tokens:>6}", shown(name));
    }
    let kind = if count.exact { "exact" } else { "estimate" };
    let _ = writeln!(
        out,
        "{:width$}  {:>6}  ({kind}: {})",
        "total", count.total, count.method
    );
    if let Some(chat) = count.chat_completions {
        let _ = writeln!(
            out,
            "{:width$}  {chat:>6}  (the OpenAI cookbook's count for a Chat Completions request to the gpt-4o family)",
            "chat completions"
        );
    }
    match budget {
        Some(budget) if count.total > budget => {
            let _ = writeln!(
                err,
                "error: the tool list costs {} tokens, past the budget of {budget}",
                count.total
            );
            EXIT_TOOL_ERROR
        }
        _ => EXIT_OK,
    }
}
