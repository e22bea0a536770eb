//! Keyword search over a folder of markdown and text notes, for `research`.
//!
//! Matching is ASCII-case-insensitive on the raw text, so byte offsets found in the lowered copy
//! are valid in the original and snippets keep their case.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Serialize;

use crate::config::slash_path;
use crate::fsutil::rfc3339;

/// Notes larger than this are skipped.
const MAX_NOTE_BYTES: u64 = 2 * 1024 * 1024;
/// The search stops looking after this many notes.
const MAX_NOTES: usize = 20_000;
const MAX_DEPTH: usize = 16;
const SNIPPET_BEFORE: usize = 60;
const SNIPPET_AFTER: usize = 180;
/// The search looks for at most this many distinct words of a query, the first ones: each word
/// is one pass over every note, so the work stays linear in the notes' size whatever the query.
const MAX_TERMS: usize = 32;

/// One matching note.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Note {
    /// The note's path relative to the knowledge-base folder, with `/` separators.
    pub path: String,
    /// The front-matter `title`, else the first `# ` heading, else the file name.
    pub title: String,
    /// The text around the first match.
    pub snippet: String,
    /// How well it matches; higher is better.
    pub score: u32,
    /// When the note was last changed (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    #[serde(skip)]
    modified_at: Option<SystemTime>,
}

/// A parsed query: its words and the whole phrase, lowercased.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    phrase: String,
    terms: Vec<String>,
}

impl Query {
    /// `None` when the query has no word to look for. Linear in the query's length.
    pub(crate) fn new(text: &str) -> Option<Self> {
        let mut seen = HashSet::new();
        let mut terms: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_ascii_lowercase)
            .filter(|word| seen.insert(word.clone()))
            .collect();
        // Single letters match everywhere; keep them only when they are all there is.
        if terms.iter().any(|t| t.chars().nth(1).is_some()) {
            terms.retain(|t| t.chars().nth(1).is_some());
        }
        terms.truncate(MAX_TERMS);
        if terms.is_empty() {
            return None;
        }
        let phrase = text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        Some(Self { phrase, terms })
    }

    /// The best `limit` notes under `kb`, leaving out `skip` (the inbox) and hidden entries.
    pub(crate) fn run(&self, kb: &Path, skip: &Path, limit: usize) -> Vec<Note> {
        let kb = kb.canonicalize().unwrap_or_else(|_| kb.to_path_buf());
        let skip = skip.canonicalize().unwrap_or_else(|_| skip.to_path_buf());
        let kb = kb.as_path();
        let mut files = Vec::new();
        collect(kb, &skip, 0, &mut files);
        let mut notes: Vec<Note> = files
            .iter()
            .filter_map(|path| {
                let text = std::fs::read(path).ok()?;
                let text = String::from_utf8_lossy(&text);
                let modified_at = std::fs::metadata(path).and_then(|m| m.modified()).ok();
                let rel = slash_path(path.strip_prefix(kb).unwrap_or(path));
                self.score(&rel, path, &text, modified_at)
            })
            .collect();
        notes.sort_by(|a, b| {
            b.score
                .cmp(&a.score)
                .then(b.modified_at.cmp(&a.modified_at))
                .then(a.path.cmp(&b.path))
        });
        notes.truncate(limit);
        notes
    }

    fn score(
        &self,
        rel: &str,
        path: &Path,
        text: &str,
        modified_at: Option<SystemTime>,
    ) -> Option<Note> {
        let lower = text.to_ascii_lowercase();
        let title = title(path, text);
        let lower_title = title.to_ascii_lowercase();
        let mut score = 0u32;
        let mut first_hit: Option<usize> = None;
        let mut note_hit = |at: Option<usize>| {
            if let Some(at) = at {
                first_hit = Some(first_hit.map_or(at, |f| f.min(at)));
            }
        };
        let mut matched = 0u32;
        for term in &self.terms {
            let count = lower.matches(term.as_str()).take(10).count() as u32;
            if count > 0 {
                matched += 1;
                score += count;
                note_hit(lower.find(term.as_str()));
            }
            if lower_title.contains(term.as_str()) {
                score += 5;
            }
        }
        if matched == 0 {
            return None;
        }
        // Notes with more of the words rank above notes that repeat one word.
        score += 3 * matched;
        if self.terms.len() > 1 || self.phrase.contains(' ') {
            if let Some(at) = lower.find(&self.phrase) {
                score += 10;
                first_hit = Some(at);
            }
            if lower_title.contains(&self.phrase) {
                score += 10;
            }
        }
        Some(Note {
            path: rel.to_owned(),
            snippet: snippet(text, first_hit.unwrap_or(0)),
            title,
            score,
            modified: modified_at.map(rfc3339),
            modified_at,
        })
    }
}

fn is_note(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        ["md", "markdown", "txt"]
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    })
}

/// Regular note files under `dir`, not following symbolic links (no cycles, no escapes).
fn collect(dir: &Path, skip: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || dir == skip {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_NOTES {
            return;
        }
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            collect(&path, skip, depth + 1, out);
        } else if kind.is_file()
            && is_note(&path)
            && entry.metadata().is_ok_and(|m| m.len() <= MAX_NOTE_BYTES)
        {
            out.push(path);
        }
    }
}

/// The front-matter `title`, else the first `# ` heading, else the file stem.
fn title(path: &Path, text: &str) -> String {
    let (front, body) = split_front_matter(text);
    let from_front = front.lines().find_map(|line| {
        let value = line.strip_prefix("title:")?.trim();
        let value = value.trim_matches(|c| c == '"' || c == '\'').trim();
        (!value.is_empty()).then(|| value.to_owned())
    });
    from_front
        .or_else(|| {
            body.lines()
                .find_map(|line| line.strip_prefix("# ").map(str::trim))
                .filter(|t| !t.is_empty())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| {
            path.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
}

/// `(front matter, rest)`; the front matter is empty when the note has none.
fn split_front_matter(text: &str) -> (&str, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return ("", text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (&rest[..offset], &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    ("", text)
}

/// The text around byte `at`, cut at character boundaries, whitespace collapsed, with `…` where
/// it was cut.
fn snippet(text: &str, at: usize) -> String {
    let mut start = at.saturating_sub(SNIPPET_BEFORE);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (at + SNIPPET_AFTER).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let mut out = text[start..end]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if start > 0 {
        out.insert(0, '…');
    }
    if end < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_keep_distinct_words_and_drop_single_letters() {
        let q = Query::new("  Rust a RUST  traits ").unwrap();
        assert_eq!(q.terms, ["rust", "traits"]);
        assert_eq!(q.phrase, "rust a rust traits");
        assert!(Query::new(" ?! ").is_none());
        assert_eq!(Query::new("x").unwrap().terms, ["x"]);
    }

    #[test]
    fn long_queries_keep_the_first_distinct_words() {
        let words: Vec<String> = (0..5_000).map(|i| format!("w{i}")).collect();
        let q = Query::new(&words.join(" ")).unwrap();
        assert_eq!(q.terms.len(), MAX_TERMS);
        assert_eq!(q.terms[..3], ["w0", "w1", "w2"]);
        assert_eq!(q.terms.last().map(String::as_str), Some("w31"));
    }

    #[test]
    fn titles_come_from_front_matter_then_heading_then_file_name() {
        let p = Path::new("dir/note-one.md");
        assert_eq!(title(p, "---\ntitle: \"Front\"\n---\n# Heading\n"), "Front");
        assert_eq!(title(p, "intro\n# Heading\nbody"), "Heading");
        assert_eq!(title(p, "no heading"), "note-one");
    }

    #[test]
    fn snippets_cut_on_character_boundaries() {
        let text = format!("{}ünïcödé target text{}", "é".repeat(100), "ß".repeat(200));
        let at = text.find("target").unwrap();
        let s = snippet(&text, at);
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("target text"));
        assert_eq!(snippet("short one", 0), "short one");
    }

    #[test]
    fn ranks_by_score_then_newest_and_skips_the_inbox_and_hidden_files() {
        let dir = tempfile::tempdir().unwrap();
        let kb = dir.path();
        let write = |rel: &str, text: &str| {
            let path = kb.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write("a/old.md", "# Caching\nWe use a write-through cache.");
        write(
            "b/best.md",
            "# Cache policy\nThe cache policy: write-through cache, evict LRU.",
        );
        write("inbox/draft.md", "cache cache cache cache policy");
        write(".hidden/x.md", "cache policy");
        write("c/other.txt", "nothing relevant");
        write("d/image.png", "cache policy");
        let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .write(true)
            .open(kb.join("a/old.md"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        write("a/new.md", "# Caching\nWe use a write-through cache.");

        let notes = Query::new("cache policy")
            .unwrap()
            .run(kb, &kb.join("inbox"), 10);
        let paths: Vec<&str> = notes.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(paths, ["b/best.md", "a/new.md", "a/old.md"]);
        assert_eq!(notes[0].title, "Cache policy");
        assert!(notes[0].score > notes[1].score);
        assert_eq!(notes[1].score, notes[2].score);
        assert_eq!(notes[2].modified.as_deref(), Some("1970-01-12T13:46:40Z"));

        let limited = Query::new("cache").unwrap().run(kb, &kb.join("inbox"), 1);
        assert_eq!(limited.len(), 1);
    }
}
