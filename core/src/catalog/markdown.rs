//! The catalog as Markdown: an index table, then one section per tool.

use std::fmt::Write as _;

use serde_json::Value;

use super::doc::annotation_names;
use super::{ArgDoc, Catalog, ToolDoc};
use crate::def::Annotations;

impl Catalog<'_> {
    /// The catalog as Markdown: an index table, then one section per tool with its argument
    /// table, metadata, annotations, cache, result limit and conditional confirmation, tag
    /// form and source location; then the resources and prompts, a table each.
    pub fn markdown(&self) -> String {
        let tools = self.tools();
        let mut out = String::new();
        let _ = writeln!(out, "# Tools\n");
        let _ = writeln!(
            out,
            "{} tool{}.\n",
            tools.len(),
            if tools.len() == 1 { "" } else { "s" }
        );
        if !self.costs.lists.is_empty() {
            let _ = writeln!(out, "{}\n", super::costs::list_text(&self.costs.lists));
        }
        let _ = writeln!(out, "| Tool | Description |\n| --- | --- |");
        for tool in &tools {
            let _ = writeln!(
                out,
                "| [`{}`](#{}) | {} |",
                tool.name,
                anchor(&tool.name),
                cell(&tool.short_description)
            );
        }
        for tool in &tools {
            write_tool(&mut out, tool);
        }
        self.offers_markdown(&mut out);
        out
    }
}

fn write_tool(out: &mut String, tool: &ToolDoc) {
    let _ = writeln!(out, "\n## `{}`\n\n{}\n", tool.name, tool.description);
    if !tool.aliases.is_empty() {
        let aliases: Vec<String> = tool.aliases.iter().map(|a| format!("`{a}`")).collect();
        let _ = writeln!(out, "Aliases: {}\n", aliases.join(", "));
    }
    write_arguments(out, &tool.arguments);
    write_metadata(out, tool);
    if let Some(tag) = &tool.tag {
        write_tag_form(out, tag);
    }
    match (&tool.source, &tool.registered_at) {
        (Some(source), _) => {
            let _ = writeln!(
                out,
                "- **Source:** `{}:{}` in crate `{}`",
                source.file, source.line, source.crate_name
            );
        }
        (None, Some(at)) => {
            let _ = writeln!(out, "- **Source:** registered at run time, {at}");
        }
        (None, None) => {}
    }
    let _ = writeln!(out, "- **Returns:** {}", tool.returns_text());
    if !tool.tokens.is_empty() {
        let _ = writeln!(
            out,
            "- **Prompt tokens:** {}",
            super::costs::tool_text(&tool.tokens)
        );
    }
    if let Some(schema) = &tool.output_schema {
        let _ = writeln!(out, "- **Output schema:** `{schema}`");
    }
}

/// The argument table, or "No arguments.".
fn write_arguments(out: &mut String, arguments: &[ArgDoc]) {
    if arguments.is_empty() {
        let _ = writeln!(out, "No arguments.\n");
        return;
    }
    let _ = writeln!(
        out,
        "| Argument | Type | Required | Default | Description |"
    );
    let _ = writeln!(out, "| --- | --- | --- | --- | --- |");
    for arg in arguments {
        let default = arg
            .default
            .as_ref()
            .map(|d| format!("`{d}`"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            arg.name,
            cell(&arg.ty),
            if arg.required { "yes" } else { "no" },
            cell(&default),
            cell(arg.description.as_deref().unwrap_or(""))
        );
    }
    out.push('\n');
}

/// Metadata keys written on lines of their own, not on the metadata line.
const OWN_LINES: [&str; 4] = ["max_result_bytes", "cache", "confirm_if", "task"];

/// What `task = "…"` means for a client, in a sentence.
pub(crate) fn task_text(task: &str) -> &'static str {
    match task {
        "required" => "always runs as a task (a client must follow MCP's tasks extension)",
        _ => "becomes a task for a client that follows tasks when it runs longer than a second",
    }
}

/// The metadata line, the annotations line, then the cache, the result limit and conditional
/// confirmation when the tool declares them.
fn write_metadata(out: &mut String, tool: &ToolDoc) {
    let metadata: Vec<String> = tool
        .metadata
        .iter()
        .filter(|(key, _)| !OWN_LINES.contains(&key.as_str()))
        .map(|(key, value)| match value {
            Value::Bool(true) => format!("`{key}`"),
            Value::String(s) => format!("{key} `{s}`"),
            Value::Array(items) => {
                let items: Vec<String> = items
                    .iter()
                    .map(|i| format!("`{}`", i.as_str().unwrap_or_default()))
                    .collect();
                format!("{key} {}", items.join(", "))
            }
            other => format!("{key} `{other}`"),
        })
        .collect();
    let _ = writeln!(out, "- **Metadata:** {}", metadata.join(" · "));
    let annotations = annotation_words(&tool.annotations);
    let _ = writeln!(
        out,
        "- **Annotations:** {}; risk {}",
        if annotations.is_empty() {
            "none".to_owned()
        } else {
            annotations.join(", ")
        },
        tool.risk
    );
    if let Some(cache) = tool.cache_text() {
        let _ = writeln!(out, "- **Cache:** {cache}");
    }
    if let Some(max) = tool.metadata.get("max_result_bytes") {
        let _ = writeln!(
            out,
            "- **Result limit:** {max} bytes of text; longer results are shortened with a note"
        );
    }
    if let Some(task) = tool.metadata.get("task").and_then(Value::as_str) {
        let _ = writeln!(out, "- **Task:** {}", task_text(task));
    }
    match tool.metadata.get("confirm_if") {
        Some(Value::Bool(true)) => {
            let _ = writeln!(
                out,
                "- **Confirmation:** asked per call, depending on the arguments"
            );
        }
        Some(schema) => {
            let _ = writeln!(
                out,
                "- **Confirmation:** asked per call, when the arguments match `{schema}`"
            );
        }
        None => {}
    }
}

/// The response-tag line: the example, the pattern and its groups.
fn write_tag_form(out: &mut String, tag: &Value) {
    let text = |key: &str| {
        tag.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let groups: Vec<String> = tag
        .get("groups")
        .and_then(Value::as_array)
        .map(|g| {
            g.iter()
                .filter_map(Value::as_str)
                .map(|g| format!("`{g}`"))
                .collect()
        })
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "- **Tag form:** `{}` (pattern `{}`, groups {}{})",
        text("example"),
        cell(&text("pattern")),
        groups.join(", "),
        if tag.get("strip_from_display") == Some(&Value::Bool(true)) {
            "; removed from the text shown to the user"
        } else {
            ""
        }
    );
}

fn annotation_words(annotations: &Annotations) -> Vec<String> {
    annotation_names(annotations)
        .map(|name| format!("`{name}`"))
        .collect()
}

/// GitHub's heading anchor for `` `name` ``.
fn anchor(name: &str) -> String {
    name.chars()
        .filter_map(|c| match c {
            'A'..='Z' => Some(c.to_ascii_lowercase()),
            'a'..='z' | '0'..='9' | '-' | '_' => Some(c),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}

/// Text safe inside a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
