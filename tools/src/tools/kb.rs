//! The knowledge-base bot's tools: `research`, `source`, `claim` and `learning`.
//!
//! `research` reads the notes under [`Config::kb_dir`]; the other three only ever add files to
//! [`Config::inbox_dir`], where a reviewer decides what enters the knowledge base.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::io::AsyncWriteExt;
use tool_registry::{Ctx, State, ToolError, ToolResult, tool};

use crate::Config;
use crate::error::{failed, invalid, io_reason};
use crate::fsutil::{self, yaml_str};

/// The most notes one `research` call returns.
pub const MAX_RESULTS: u32 = 50;
/// The longest text `source`, `claim` and `learning` accept, in bytes.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Search the knowledge base for notes on a topic.
///
/// Searches the markdown and text notes of the local knowledge base (not the inbox) and returns
/// the best matches with their path, title, a snippet and a score; among equal scores, newest
/// first. Results are sent back to the chat.
#[tool(
    version = "1.0.0",
    category = "search",
    tags(kb, search),
    tier = "high",
    cost = "cheap",
    read_only,
    idempotent,
    open_world = false,
    cache = "1m",
    tag = "RESEARCH",
    example = "RESEARCH: [search query]",
    daily_limit = 3,
    blocking
)]
pub async fn research(
    #[arg(desc = "What to look for: words or a phrase", max_len = 1000)] query: String,
    #[arg(desc = "How many notes to return, 1 to 50", default = 5, min = 1, max = 50)] limit: u32,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    if limit == 0 || limit > MAX_RESULTS {
        return Err(invalid(
            "limit",
            format!("must be from 1 to {MAX_RESULTS}; got {limit}"),
        ));
    }
    let search = crate::search::Query::new(&query)
        .ok_or_else(|| invalid("query", "has no words to search for"))?;
    let kb = config.kb_dir.clone();
    let inbox = config.inbox_dir.clone();
    let notes = tokio::task::spawn_blocking(move || search.run(&kb, &inbox, limit as usize))
        .await
        .map_err(|e| failed(format!("the search stopped: {e}")))?;

    let mut message = if notes.is_empty() {
        format!("No notes found for {:?}.", query.trim())
    } else {
        format!("Found {} note(s) for {:?}:", notes.len(), query.trim())
    };
    for note in &notes {
        let _ = write!(message, "\n- {} ({})", note.title, note.path);
    }
    Ok(ToolResult::ok(json!(notes))
        .with_message(message)
        .with_side_effect(format!("searched:kb:{}", query.trim()))
        .with_audit("matches", notes.len()))
}

/// Archive source material contributed by a user.
///
/// Writes a markdown file to the inbox's `sources/` folder with the description, the URL when
/// given, who contributed it and the message it came from, for a reviewer to process.
#[tool(
    version = "1.0.0",
    category = "knowledge",
    tags(kb, inbox, write),
    tier = "high",
    cost = "free",
    idempotent = false,
    open_world = false,
    tag = "SOURCE",
    example = "SOURCE: [description]"
)]
pub async fn source(
    #[arg(desc = "What the source is and what it says")] description: String,
    #[arg(desc = "Where the source can be found: a URL or a citation")] url: Option<String>,
    ctx: &Ctx,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    let description = required_text("description", &description)?;
    let url = url.map(|u| u.trim().to_owned()).filter(|u| !u.is_empty());
    let title = title_of(description);
    let now = fsutil::now_rfc3339();

    let mut front = vec![
        ("type", "source".to_owned()),
        ("title", yaml_str(&title)),
        ("status", "unprocessed".to_owned()),
        ("created", yaml_str(&now)),
    ];
    if let Some(url) = &url {
        front.push(("url", yaml_str(url)));
    }
    push_origin(&mut front, ctx, "contributed_by");
    let mut body = format!("# {title}\n\n{description}\n");
    if let Some(url) = &url {
        let _ = write!(body, "\nSource: {url}\n");
    }
    push_context(&mut body, ctx);

    let path = write_inbox_note(&config, "sources", &now, &title, &front, &body).await?;
    let shown = config.inbox_relative(&path);
    Ok(ToolResult::ok(json!({ "path": shown, "title": title }))
        .with_message(format!("Saved the source \"{title}\" for review."))
        .with_side_effect(format!("created:{shown}")))
}

/// Draft a knowledge-base claim from a user's assertion.
///
/// Writes a draft claim to the inbox's `claims/` folder with the assertion, any evidence, the
/// model's confidence and who proposed it; nothing enters the knowledge base until a reviewer
/// accepts it.
#[tool(
    version = "1.0.0",
    category = "knowledge",
    tags(kb, inbox, write),
    tier = "high",
    cost = "free",
    idempotent = false,
    open_world = false,
    tag = "CLAIM",
    example = "CLAIM: [specific assertion]"
)]
pub async fn claim(
    #[arg(desc = "The specific assertion, as one self-contained statement")] assertion: String,
    #[arg(desc = "What supports the assertion, if anything was cited")] evidence: Option<String>,
    ctx: &Ctx,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    let assertion = required_text("assertion", &assertion)?;
    let evidence = evidence
        .map(|e| e.trim().to_owned())
        .filter(|e| !e.is_empty());
    let title = title_of(assertion);
    let now = fsutil::now_rfc3339();

    let mut front = vec![
        ("type", "claim".to_owned()),
        ("title", yaml_str(&title)),
        ("status", "draft".to_owned()),
        ("created", yaml_str(&now)),
    ];
    if let Some(confidence) = ctx.confidence() {
        front.push(("confidence", confidence.to_string()));
    }
    push_origin(&mut front, ctx, "proposed_by");
    let mut body = format!("# {title}\n\n{assertion}\n");
    if let Some(evidence) = &evidence {
        let _ = write!(body, "\n## Evidence\n\n{evidence}\n");
    }
    push_context(&mut body, ctx);

    let path = write_inbox_note(&config, "claims", &now, &title, &front, &body).await?;
    let shown = config.inbox_relative(&path);
    Ok(
        ToolResult::ok(json!({ "path": shown, "title": title, "status": "draft" }))
            .with_message(format!("Drafted the claim \"{title}\" for review."))
            .with_side_effect(format!("created:{shown}")),
    )
}

/// The kind of thing `learning` records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LearningCategory {
    /// A fact was wrong or missing.
    Factual,
    /// How to talk to this user or chat.
    Communication,
    /// How data should be shaped or named.
    StructuredData,
}

/// One line of the learnings file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Learning {
    /// When it was recorded (RFC 3339, UTC).
    pub ts: String,
    /// What kind of learning it is.
    pub category: LearningCategory,
    /// What was learned.
    pub content: String,
    /// Who taught it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The chat it came from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_id: Option<i64>,
}

/// The file `learning` appends to, inside the inbox.
pub const LEARNINGS_FILE: &str = "learnings.jsonl";

/// Record a correction or new fact from conversation.
///
/// Appends one JSON line (time, category, content, user, chat) to `learnings.jsonl` in the inbox.
/// Categories: `factual` (a fact was wrong or missing), `communication` (how to talk to this
/// user), `structured_data` (how data should be shaped).
#[tool(
    version = "1.0.0",
    category = "knowledge",
    tags(kb, inbox, write),
    tier = "high",
    cost = "free",
    idempotent = false,
    open_world = false,
    tag = "LEARNING",
    pattern = r"(factual|communication|structured_data)\s+(.+)",
    groups(category, content),
    example = "LEARNING: [category] [what was learned]"
)]
pub async fn learning(
    #[arg(desc = "factual, communication or structured_data")] category: LearningCategory,
    #[arg(desc = "What was learned, as one statement")] content: String,
    ctx: &Ctx,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    let content = required_text("content", &content)?.to_owned();
    let record = Learning {
        ts: fsutil::now_rfc3339(),
        category,
        content,
        user: ctx.user().map(str::to_owned),
        chat_id: ctx.chat_id(),
    };
    let mut line = serde_json::to_string(&record).map_err(failed)?;
    line.push('\n');

    let path = config.inbox_dir.join(LEARNINGS_FILE);
    let shown = config.inbox_relative(&path);
    {
        let _guard = fsutil::lock(&path).await;
        append(&config.inbox_dir, &path, line.as_bytes())
            .await
            .map_err(|e| {
                failed(format!(
                    "cannot record the learning in {shown}: {}",
                    io_reason(&e)
                ))
            })?;
    }
    Ok(ToolResult::ok(json!(record))
        .with_message("Noted.")
        .with_side_effect(format!("appended:{shown}")))
}

async fn append(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    tokio::fs::create_dir_all(dir).await?;
    let mut file = tokio::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .await?;
    file.write_all(bytes).await?;
    file.flush().await
}

/// `text` trimmed, refused when empty or too long.
fn required_text<'a>(arg: &str, text: &'a str) -> Result<&'a str, ToolError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(invalid(arg, "is empty"));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(invalid(
            arg,
            format!("has {} bytes; the limit is {MAX_TEXT_BYTES}", text.len()),
        ));
    }
    Ok(text)
}

/// The first line of `text`, cut to at most 80 characters at a word boundary.
fn title_of(text: &str) -> String {
    let line = text.lines().next().unwrap_or(text).trim();
    if line.chars().count() <= 80 {
        return line.to_owned();
    }
    let cut: String = line.chars().take(80).collect();
    let cut = match cut.rfind(' ') {
        Some(at) if at > 40 => &cut[..at],
        _ => &cut,
    };
    format!("{}…", cut.trim_end())
}

fn push_origin(front: &mut Vec<(&'static str, String)>, ctx: &Ctx, user_key: &'static str) {
    if let Some(user) = ctx.user() {
        front.push((user_key, yaml_str(user)));
    }
    if let Some(chat_id) = ctx.chat_id() {
        front.push(("chat_id", chat_id.to_string()));
    }
}

/// The user's message, quoted, so a reviewer sees what the note came from.
fn push_context(body: &mut String, ctx: &Ctx) {
    if let Some(message) = ctx.user_message().map(str::trim).filter(|m| !m.is_empty()) {
        body.push_str("\n## Context\n\n");
        for line in message.lines() {
            let _ = writeln!(body, "> {line}");
        }
    }
}

/// Writes `<inbox>/<folder>/<date>-<slug>.md` with YAML front matter and returns its path; when
/// a note of that name exists, the new one gets a short random suffix (`<date>-<slug>-k3x9q2.md`).
/// Never replaces a note.
async fn write_inbox_note(
    config: &Config,
    folder: &str,
    now: &str,
    title: &str,
    front: &[(&str, String)],
    body: &str,
) -> Result<PathBuf, ToolError> {
    let mut text = String::from("---\n");
    for (key, value) in front {
        let _ = writeln!(text, "{key}: {value}");
    }
    text.push_str("---\n\n");
    text.push_str(body);
    let date = now.get(..10).unwrap_or(now);
    let stem = format!("{date}-{}", fsutil::slug(title, 60));
    let dir = config.inbox_dir.join(folder);
    fsutil::create_new_markdown(&dir, &stem, &text)
        .await
        .map_err(|e| {
            failed(format!(
                "cannot write to the inbox folder {folder:?}: {}",
                io_reason(&e)
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::title_of;

    #[test]
    fn titles_are_the_first_line_cut_at_a_word() {
        assert_eq!(title_of("  Rust 1.95 ships\nmore text"), "Rust 1.95 ships");
        let long = "word ".repeat(30);
        let title = title_of(&long);
        assert!(title.ends_with('…'));
        assert!(title.chars().count() <= 81);
        assert!(!title.contains("  "));
    }
}
