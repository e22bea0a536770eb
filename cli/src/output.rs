//! What every command writes besides its own answer: the exit codes, the streams that end a
//! command quietly once its reader has gone, JSON as it is printed, and text made safe for a
//! terminal.

use std::cell::Cell;
use std::io::Write;

/// Exit code of a successful command.
pub const EXIT_OK: i32 = 0;
/// Exit code when the called tool failed (unknown tool, bad arguments, handler error, panic).
pub const EXIT_TOOL_ERROR: i32 = 1;
/// Exit code of a usage error (bad flags, unknown subcommand, unknown tool for `schema`).
pub const EXIT_USAGE: i32 = 2;
/// Exit code when standard output was closed before the answer was all written (`toolreg list
/// | head -1`): 128 + SIGPIPE, the status a shell reports for `cat` ended by a closed pipe.
/// Nothing is said about it on standard error.
pub const EXIT_PIPE_CLOSED: i32 = 141;

/// The command's standard output, noting when its reader has gone.
pub(super) struct Answer<'a> {
    inner: &'a mut dyn Write,
    closed: &'a Cell<bool>,
}

/// The command's standard error, silent once standard output is closed: a reader that stopped
/// reading ends the command quietly, as it ends `cat`, with no `error: Broken pipe`.
pub(super) struct Remarks<'a> {
    inner: &'a mut dyn Write,
    closed: &'a Cell<bool>,
}

/// `out` and `err` as a command writes to them, sharing `closed`: set once a write to `out`
/// finds its reader gone.
pub(super) fn streams<'a>(
    out: &'a mut dyn Write,
    err: &'a mut dyn Write,
    closed: &'a Cell<bool>,
) -> (Answer<'a>, Remarks<'a>) {
    (
        Answer { inner: out, closed },
        Remarks { inner: err, closed },
    )
}

impl Answer<'_> {
    fn noted<T>(&self, result: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(error) = &result
            && error.kind() == std::io::ErrorKind::BrokenPipe
        {
            self.closed.set(true);
        }
        result
    }
}

impl Write for Answer<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let written = self.inner.write(buf);
        self.noted(written)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let flushed = self.inner.flush();
        self.noted(flushed)
    }
}

impl Write for Remarks<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.closed.get() {
            return Ok(buf.len());
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

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
