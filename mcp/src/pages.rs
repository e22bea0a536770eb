//! The registry's MCP tool lists as rmcp's [`Tool`]s, converted once and shared by every
//! session, with which tools carry `x-mcp-header` annotations; the pages of `tools/list` and
//! their opaque cursors (imports none of the others).

use std::sync::Arc;

use bytes::Bytes;
use rmcp::ErrorData;
use rmcp::model::{CacheScope, ListToolsResult, ServerResult, Tool};
use serde_json::Value;
use tool_registry_core::format::ProviderTools;

/// The registry's MCP lists as rmcp's [`Tool`]s: each list the registry hands out converted
/// once, and its pages cut from that. The lists last asked for are kept, a few at most (callers
/// of a few kinds share a few lists; a change of the registry makes new ones).
#[derive(Default)]
pub(super) struct TypedLists(std::sync::Mutex<Vec<(ProviderTools, Typed)>>);

/// One list as rmcp's tools, and which of them carry `x-mcp-header` annotations (SEP-2243),
/// whose `Mcp-Param-*` headers rmcp checks against a call's arguments.
#[derive(Clone)]
pub(super) struct Typed {
    pub(super) tools: Arc<[Tool]>,
    pub(super) headed: Arc<[usize]>,
    /// Pages written as the stateless revision's results, by their start and size: a list
    /// changes only by becoming another list, so a page is written once.
    written: Arc<std::sync::Mutex<Vec<(usize, usize, Bytes)>>>,
}

impl Typed {
    /// The tool `name` when it carries `x-mcp-header` annotations.
    pub(super) fn headed(&self, name: &str) -> Option<Tool> {
        (self.headed.iter())
            .map(|&i| &self.tools[i])
            .find(|tool| tool.name == name)
            .cloned()
    }

    /// The page of at most `size` tools that `cursor` names (the first without one), sorted by
    /// name, cached privately by the client; a cursor this server did not give is refused.
    pub(super) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(self.page_at(self.start(cursor)?, size))
    }

    /// The page [`page`](Self::page) answers, as the JSON of the stateless revision's result
    /// (with its caching hints), written once and kept.
    pub(super) fn written_page(
        &self,
        cursor: Option<&str>,
        size: usize,
    ) -> Result<Bytes, ErrorData> {
        let start = self.start(cursor)?;
        let lock = || {
            self.written
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        let kept = lock()
            .iter()
            .find(|(at, of, _)| (*at, *of) == (start, size))
            .map(|(_, _, bytes)| bytes.clone());
        if let Some(bytes) = kept {
            return Ok(bytes);
        }
        let mut result = ServerResult::ListToolsResult(self.page_at(start, size));
        result.fill_missing_cache_hints();
        let bytes = Bytes::from(serde_json::to_vec(&result).map_err(|error| {
            ErrorData::internal_error(format!("a page could not be written: {error}"), None)
        })?);
        let mut written = lock();
        if written.len() == WRITTEN_PAGES {
            written.remove(0);
        }
        written.push((start, size, bytes.clone()));
        Ok(bytes)
    }

    /// Where the page `cursor` names starts; an error for a cursor this server did not give.
    fn start(&self, cursor: Option<&str>) -> Result<usize, ErrorData> {
        match cursor {
            None => Ok(0),
            Some(cursor) => decode_cursor(cursor)
                .filter(|&start| start <= self.tools.len())
                .ok_or_else(|| invalid_cursor(cursor)),
        }
    }

    /// The page of at most `size` tools from `start`.
    fn page_at(&self, start: usize, size: usize) -> ListToolsResult {
        let all = &self.tools;
        let end = start.saturating_add(size).min(all.len());
        let tools = all[start..end].to_vec();
        let mut page = ListToolsResult::with_all_items(tools).with_cache_scope(CacheScope::Private);
        page.next_cursor = (end < all.len()).then(|| encode_cursor(end));
        page
    }
}

/// How many written pages a list keeps.
const WRITTEN_PAGES: usize = 32;

/// How many lists [`TypedLists`] keeps.
const TYPED_LISTS: usize = 8;

impl TypedLists {
    pub(super) fn of(&self, list: &ProviderTools) -> Result<Typed, ErrorData> {
        let lock = || {
            self.0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some((_, typed)) = lock().iter().find(|(kept, _)| kept.same(list)) {
            return Ok(typed.clone());
        }
        let tools = (list.iter())
            .map(|tool| serde_json::from_value::<Tool>(tool.clone()))
            .collect::<Result<Arc<[Tool]>, _>>()
            .map_err(|error| {
                ErrorData::internal_error(
                    format!("a tool definition is not MCP's shape: {error}"),
                    None,
                )
            })?;
        let headed = (list.iter().enumerate())
            .filter(|(_, tool)| tool.get("inputSchema").is_some_and(has_header))
            .map(|(i, _)| i)
            .collect();
        let typed = Typed {
            tools,
            headed,
            written: Arc::default(),
        };
        let mut kept = lock();
        // Another request may have converted the same list meanwhile: one copy is kept.
        if let Some((_, typed)) = kept.iter().find(|(kept, _)| kept.same(list)) {
            return Ok(typed.clone());
        }
        if kept.len() == TYPED_LISTS {
            kept.remove(0);
        }
        kept.push((list.clone(), typed.clone()));
        Ok(typed)
    }
}

/// Whether a schema carries an `x-mcp-header` annotation anywhere.
fn has_header(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key("x-mcp-header") || map.values().any(has_header),
        Value::Array(items) => items.iter().any(has_header),
        _ => false,
    }
}

/// A page's start as an opaque cursor.
pub(super) fn encode_cursor(start: usize) -> String {
    format!("p{start:x}")
}

pub(super) fn decode_cursor(cursor: &str) -> Option<usize> {
    let hex = cursor.strip_prefix('p')?;
    (!hex.is_empty() && hex.len() <= 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| usize::from_str_radix(hex, 16).ok())
        .flatten()
}

/// How many characters of a cursor it cannot read an error quotes back, escaped: enough to
/// recognize it, never the megabyte a client may send.
const QUOTED_CURSOR_CHARS: usize = 64;

/// The error for a cursor this server did not give, quoting at most [`QUOTED_CURSOR_CHARS`]
/// of it and saying when it was cut.
pub(super) fn invalid_cursor(cursor: &str) -> ErrorData {
    let mut escaped = cursor.escape_debug();
    let shown: String = escaped.by_ref().take(QUOTED_CURSOR_CHARS).collect();
    let message = if escaped.next().is_some() {
        format!(
            "invalid cursor `{shown}…` (cut: {} bytes in all); start again without one",
            cursor.len()
        )
    } else {
        format!("invalid cursor `{shown}`; start again without one")
    };
    ErrorData::invalid_params(message, None)
}

#[cfg(test)]
mod tests {
    use super::{QUOTED_CURSOR_CHARS, decode_cursor, encode_cursor, invalid_cursor};

    #[test]
    fn an_invalid_cursor_is_quoted_short_escaped_and_said_to_be_cut() {
        let short = invalid_cursor("p-1\u{1b}");
        assert_eq!(
            short.message,
            "invalid cursor `p-1\\u{1b}`; start again without one"
        );
        let control = invalid_cursor("x\u{1b}[2J");
        assert!(
            control.message.contains("x\\u{1b}[2J"),
            "{}",
            control.message
        );

        let huge = format!("\u{1b}{}", "é".repeat(1 << 19));
        let cut = invalid_cursor(&huge);
        assert!(cut.message.len() < 256, "{}", cut.message);
        assert!(
            cut.message.contains("cut: 1048577 bytes in all"),
            "{}",
            cut.message
        );
        let quoted = cut.message.split('`').nth(1).unwrap();
        assert_eq!(
            quoted.trim_end_matches('…').chars().count(),
            QUOTED_CURSOR_CHARS
        );
        assert!(quoted.starts_with("\\u{1b}éé"), "{quoted}");
        assert!(!cut.message.contains('\u{1b}'));
    }

    #[test]
    fn cursors_read_back_and_refuse_anything_else() {
        for start in [0, 1, 100, 4096, usize::MAX] {
            assert_eq!(decode_cursor(&encode_cursor(start)), Some(start));
        }
        for bad in ["", "p", "100", "pz", "p-1", "p11111111111111111"] {
            assert_eq!(decode_cursor(bad), None, "{bad}");
        }
    }
}
