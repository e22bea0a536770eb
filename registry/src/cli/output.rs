//! What every command writes besides its own answer: the exit codes, JSON as it is printed,
//! and text made safe for a terminal.

use std::io::Write;

/// Exit code of a successful command.
pub const EXIT_OK: i32 = 0;
/// Exit code when the called tool failed (unknown tool, bad arguments, handler error, panic).
pub const EXIT_TOOL_ERROR: i32 = 1;
/// Exit code of a usage error (bad flags, unknown subcommand, unknown tool for `schema`).
pub const EXIT_USAGE: i32 = 2;

/// `text` as it may go to a terminal: control characters (escape sequences, carriage returns,
/// bells) are written as escapes, everything else as it is.
pub(super) fn shown(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `value` as indented JSON on a line of its own: every JSON answer of the command line.
pub(super) fn print_json(
    out: &mut dyn Write,
    value: &impl serde::Serialize,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)
}
