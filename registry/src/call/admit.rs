//! Arguments measured before anything reads them (the tool's size limit and
//! [`MAX_ARGS_DEPTH`]), and deep values dropped without recursion.

use serde_json::Value;

use super::depth::{dispose, nests_deeper, too_deep};
use super::{MAX_ARGS_DEPTH, ToolArgs, ToolError};

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

/// Drops arguments that may be arbitrarily deep (see [`dispose`]).
pub(crate) fn dispose_args(args: ToolArgs<'_>) {
    if let ToolArgs::Value(value) = args {
        dispose(value);
    }
}
