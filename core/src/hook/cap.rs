//! `max_result_bytes`: a result longer than its tool allows, shortened to fit.
//!
//! What is measured is what the model reads as text: the result's `content` (a string as it is,
//! any other value as compact JSON) and its text blocks. Images, audio and files are bounded by
//! [`ContentLimits`](crate::media::ContentLimits) instead. A result over the limit is cut:
//!
//! - text (a string `content`, a text block) at a character boundary, so it stays valid UTF-8;
//! - a structured `content` without breaking its JSON: long strings are cut and end with `…`,
//!   arrays lose their last items (an object or array that does not fit whole goes: half a
//!   record would read as one), and every key of an object that is kept stays (keys go only
//!   when the keys alone are over the limit), so what a client checks against the output
//!   schema's `required` keys is there;
//! - an object that lost anything says so where it already has a place for it: its
//!   `"truncated": false` becomes `true` (the value's own, and the object cut inside it), so a
//!   value that reports whether it is whole never claims to be once it is not;
//! - then a note is added that says what was cut and how to read the rest, as a text block
//!   after the others (inside the text itself when `content` is a string).
//!
//! [`shorten`] is what the built-in applies; a hook of the application's may call it too.

use serde_json::Value;
use tool_registry_json::depth::written_len;

use crate::call::ToolResult;
use crate::media::Block;

/// What [`shorten`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shortened {
    /// The bytes the model would have read.
    pub from: usize,
    /// The bytes it reads now, the note included.
    pub to: usize,
}

/// The bytes of `result` the model reads as text: `content` and the text blocks.
pub fn text_bytes(result: &ToolResult) -> usize {
    content_bytes(&result.content) + blocks_bytes(result)
}

fn content_bytes(content: &Value) -> usize {
    match content {
        Value::Null => 0,
        Value::String(text) => text.len(),
        other => written_len(other),
    }
}

fn blocks_bytes(result: &ToolResult) -> usize {
    result
        .blocks
        .iter()
        .map(|block| match block {
            Block::Text(text) => text.len(),
            _ => 0,
        })
        .sum()
}

/// The note a shortened result ends with.
fn note(from: usize, max: usize) -> String {
    let note = format!(
        "[cut: the full result was {from} bytes, over this tool's limit of {max}; what is above is its beginning. To read the rest, call the tool again asking for a smaller part (narrower arguments, or a later range or page where the tool takes one).]"
    );
    if note.len() < max {
        return note;
    }
    // A limit too small for the whole note: the note in brief, so that some of the result
    // may still fit.
    format!("[cut: the full result was {from} bytes, over this tool's limit of {max}]")
}

/// Shortens `result` to at most `max` bytes of text (see the [module](self)), with a note;
/// `None` when it already fits. Below about 300 bytes the note is a brief one; a `max`
/// smaller than even that keeps only the note.
pub fn shorten(result: &mut ToolResult, max: usize) -> Option<Shortened> {
    let from = text_bytes(result);
    if from <= max {
        return None;
    }
    let note = note(from, max);
    // The note goes inside a string `content`, after one line break; as a block otherwise.
    let mut budget = max.saturating_sub(note.len() + 1);
    match &mut result.content {
        Value::Null => {}
        Value::String(text) => {
            cut_str(text, budget);
            budget -= text.len();
        }
        other => {
            let fitted = fit(other, budget);
            budget = budget.saturating_sub(written_len(&fitted));
            *other = fitted;
        }
    }
    // Something is cut, the value or the blocks after it; `false` to `true` takes a byte less.
    mark_truncated(&mut result.content);
    for block in result.blocks.as_mut_vec().iter_mut() {
        if let Block::Text(text) = block {
            cut_str(text, budget);
            budget -= text.len();
        }
    }
    // Text blocks cut to nothing say nothing: they go.
    result
        .blocks
        .as_mut_vec()
        .retain(|block| !matches!(block, Block::Text(text) if text.is_empty()));
    match &mut result.content {
        Value::String(text) => {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&note);
        }
        _ => result.blocks.push(Block::Text(note)),
    }
    Some(Shortened {
        from,
        to: text_bytes(result),
    })
}

/// Cuts `text` to at most `max` bytes, at a character boundary.
fn cut_str(text: &mut String, max: usize) {
    if text.len() <= max {
        return;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
}

/// `value` made to fit in `budget` bytes of compact JSON, as much of it as fits: strings cut,
/// arrays shortened, every object key kept while the keys fit. Nests no deeper than `value`.
fn fit(value: &Value, budget: usize) -> Value {
    if written_len(value) <= budget {
        return value.clone();
    }
    match value {
        Value::String(text) => Value::String(fit_str(text, budget)),
        Value::Array(items) => {
            // `[` and `]`, then each item and its comma.
            let mut left = budget.saturating_sub(2);
            let mut kept = Vec::new();
            for item in items {
                let comma = usize::from(!kept.is_empty());
                if left <= comma {
                    break;
                }
                let size = written_len(item);
                if size + comma <= left {
                    left -= size + comma;
                    kept.push(item.clone());
                } else {
                    // The first item that does not fit is cut if it is text (marked with `…`);
                    // an object or array that does not fit whole goes, with the rest: half
                    // of a record would read as a record.
                    if let Value::String(text) = item {
                        let cut = fit_str(text, left - comma);
                        if !cut.is_empty() {
                            kept.push(Value::String(cut));
                        }
                    }
                    break;
                }
            }
            Value::Array(kept)
        }
        Value::Object(map) => {
            // Every key with the least value of its kind first; what is left is shared out
            // in order.
            let least: Vec<(&String, Value)> =
                map.iter().map(|(key, value)| (key, least(value))).collect();
            let frame = |entries: &[(&String, Value)]| {
                2 + entries
                    .iter()
                    .map(|(key, value)| {
                        written_len(&Value::String((*key).clone())) + 1 + written_len(value)
                    })
                    .sum::<usize>()
                    + entries.len().saturating_sub(1)
            };
            let mut entries = least;
            while frame(&entries) > budget && !entries.is_empty() {
                entries.pop();
            }
            let mut left = budget.saturating_sub(frame(&entries));
            let mut out = serde_json::Map::new();
            for (key, small) in entries {
                let full = &map[key];
                let small_len = written_len(&small);
                let grown = fit(full, left + small_len);
                let grown_len = written_len(&grown);
                if grown_len <= left + small_len {
                    left = left + small_len - grown_len;
                    out.insert(key.clone(), grown);
                } else {
                    out.insert(key.clone(), small);
                }
            }
            let mut out = Value::Object(out);
            mark_truncated(&mut out);
            out
        }
        // A number, a boolean or null that does not fit: nothing smaller means the same.
        other => other.clone(),
    }
}

/// An object that lost part of what it held, made to say so where it has a place for it: a
/// `"truncated": false` member (as `file_manager.list` writes, true when it left entries
/// out itself) becomes `true`. Nothing else is added or renamed: the value keeps to its
/// schema.
fn mark_truncated(value: &mut Value) {
    if let Some(flag) = value.get_mut("truncated")
        && *flag == Value::Bool(false)
    {
        *flag = Value::Bool(true);
    }
}

/// The smallest value of `value`'s kind: `""`, `[]`, `{}` with its keys at their least (and
/// marked as cut when that lost anything), or the scalar itself.
fn least(value: &Value) -> Value {
    match value {
        Value::String(_) => Value::String(String::new()),
        Value::Array(_) => Value::Array(Vec::new()),
        Value::Object(map) => {
            let mut out = Value::Object(
                map.iter()
                    .map(|(key, value)| (key.clone(), least(value)))
                    .collect(),
            );
            if out != *value {
                mark_truncated(&mut out);
            }
            out
        }
        other => other.clone(),
    }
}

/// The longest beginning of `text` whose JSON string (quotes and escapes included) is at most
/// `budget` bytes, ending with `…` when it is cut (empty when not even that fits).
fn fit_str(text: &str, budget: usize) -> String {
    const MARK: char = '…';
    let size = |ch: char| match ch {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{08}' | '\u{0c}' => 2,
        c if (c as u32) < 0x20 => 6,
        c => c.len_utf8(),
    };
    // Room for the quotes and the mark.
    let Some(room) = budget.checked_sub(2 + MARK.len_utf8()) else {
        return String::new();
    };
    let mut used = 0;
    let mut end = 0;
    for (at, ch) in text.char_indices() {
        if used + size(ch) > room {
            break;
        }
        used += size(ch);
        end = at + ch.len_utf8();
    }
    if end == 0 {
        return String::new();
    }
    let mut cut = text[..end].to_owned();
    cut.push(MARK);
    cut
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_string_is_cut_at_a_character_boundary_with_the_note_inside() {
        let mut result = ToolResult::ok("é".repeat(1000));
        let shortened = shorten(&mut result, 600).unwrap();
        assert_eq!(shortened.from, 2000);
        let text = result.content.as_str().unwrap();
        assert!(text.len() <= 600, "{}", text.len());
        assert!(
            text.contains("[cut: the full result was 2000 bytes"),
            "{text}"
        );
        assert!(text.starts_with("éé"));
        assert_eq!(shortened.to, text.len());
    }

    #[test]
    fn structured_content_stays_valid_json_with_every_key() {
        let items: Vec<Value> = (0..200)
            .map(|i| json!({"id": i, "title": "x".repeat(50)}))
            .collect();
        let mut result = ToolResult::ok(json!({"query": "rust", "items": items, "total": 200}));
        let shortened = shorten(&mut result, 1500).unwrap();
        assert!(shortened.to <= 1500, "{shortened:?}");
        let object = result.content.as_object().unwrap();
        assert_eq!(object["query"], "rust");
        assert_eq!(object["total"], 200);
        let kept = object["items"].as_array().unwrap();
        assert!(!kept.is_empty() && kept.len() < 200);
        assert!(kept.iter().all(|item| item.get("id").is_some()));
        // Every item kept is whole.
        assert!(kept.iter().all(|item| item["title"] == "x".repeat(50)));
        let Block::Text(note) = result.blocks.last().unwrap() else {
            panic!("the note is a text block")
        };
        assert!(note.starts_with("[cut:"));
    }

    #[test]
    fn a_small_limit_gets_the_brief_note_and_keeps_what_fits() {
        let mut result = ToolResult::ok("a".repeat(500));
        let shortened = shorten(&mut result, 120).unwrap();
        let text = result.content.as_str().unwrap();
        assert!(shortened.to <= 120, "{shortened:?}: {text}");
        assert!(text.starts_with("aaaa"), "{text}");
        assert!(
            text.ends_with("[cut: the full result was 500 bytes, over this tool's limit of 120]"),
            "{text}"
        );
    }

    #[test]
    fn a_cut_value_that_says_whether_it_is_whole_says_it_is_not() {
        let entries: Vec<Value> = (0..600)
            .map(|i| json!({"name": format!("file-{i:04}.txt"), "kind": "file"}))
            .collect();
        let mut result =
            ToolResult::ok(json!({"dir": "many", "entries": entries, "truncated": false}));
        shorten(&mut result, 2000).unwrap();
        assert_eq!(result.content["truncated"], true, "{}", result.content);
        assert!(result.content["entries"].as_array().unwrap().len() < 600);

        // An object cut inside the value says so too; one kept whole does not.
        let mut result = ToolResult::ok(json!({
            "first": {"items": [1], "truncated": false},
            "second": {"items": vec!["x".repeat(40); 100], "truncated": false},
        }));
        shorten(&mut result, 1000).unwrap();
        assert_eq!(
            result.content["first"],
            json!({"items": [1], "truncated": false})
        );
        assert_eq!(
            result.content["second"]["truncated"], true,
            "{}",
            result.content
        );

        // Text blocks cut, the value kept whole: the value still says it is not the whole
        // result.
        let mut result =
            ToolResult::ok(json!({"truncated": false})).with_block(Block::text("a".repeat(5000)));
        shorten(&mut result, 1000).unwrap();
        assert_eq!(result.content, json!({"truncated": true}));
    }

    #[test]
    fn a_result_that_fits_is_left_alone() {
        let mut result = ToolResult::ok(json!({"a": 1}));
        assert_eq!(shorten(&mut result, 100), None);
        assert_eq!(result.content, json!({"a": 1}));
    }

    #[test]
    fn text_blocks_are_cut_after_the_content() {
        let mut result = ToolResult::ok("short")
            .with_block(Block::text("a".repeat(5000)))
            .with_block(Block::text("b".repeat(5000)));
        shorten(&mut result, 2000).unwrap();
        assert!(text_bytes(&result) <= 2000);
        assert_eq!(result.content, "short\n".to_owned() + &note(10005, 2000));
        assert!(matches!(&result.blocks[0], Block::Text(text) if text.starts_with("aaa")));
        assert!(
            !result
                .blocks
                .iter()
                .any(|block| matches!(block, Block::Text(text) if text.starts_with('b')))
        );
    }
}
