//! MCP over standard input and output: one JSON-RPC message a line, read with a bound, and an
//! answer for every line that cannot be served.
//!
//! rmcp's own stdio transport drops what it cannot read without a word: a line over its cap,
//! text that is not JSON, JSON nested deeper than serde_json reads. A client that sent one
//! waits for an answer that never comes. This transport reads the lines itself and hands rmcp
//! only the messages it can serve:
//!
//! - a line longer than [`MAX_LINE_BYTES`] is skipped as it arrives (never held whole) and
//!   answered `-32600` (Invalid Request);
//! - a line that is not JSON, or nests deeper than serde_json's 128 levels, is answered `-32700`
//!   (Parse error);
//! - a batch (a JSON array: MCP sends one message a line) and JSON that is no JSON-RPC message
//!   are answered `-32600`; a notification with wrong parameters gets no answer, as JSON-RPC
//!   says;
//!
//! each with `"id": null` unless the message carried an id of its own, and the next line is
//! served as if nothing had happened. Every line written, rmcp's and these answers, goes through
//! one writer task, a whole line at a time, so no two lines ever interleave.

use std::future::Future;
use std::io;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::ErrorCode;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// The longest line, one JSON-RPC message, read from standard input: 4 MiB, what rmcp's
/// streamable HTTP server takes as a request body, so a message served over HTTP is served over
/// stdio too. A longer line is skipped as it arrives, never held, and answered `-32600`.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// How many lines may wait for the writer: a client that does not read its answers holds up
/// its own requests, not the server's memory.
const QUEUED_LINES: usize = 64;

/// How much of standard input is read at a time.
const CHUNK_BYTES: usize = 64 << 10;

/// How long closing waits for the last lines to be written: a client that closed its end of
/// standard input and reads nothing more does not keep the process alive.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// The transport on standard input and output.
pub(super) fn stdio() -> StdioTransport<tokio::io::Stdin> {
    StdioTransport::new(tokio::io::stdin(), tokio::io::stdout(), MAX_LINE_BYTES)
}

/// Lines read from `input` with a bound; lines written to an output by one task.
pub(super) struct StdioTransport<R> {
    input: R,
    chunk: Box<[u8]>,
    /// The bytes of `chunk` read and not yet looked at.
    unread: std::ops::Range<usize>,
    /// The line read so far: kept here, not in a future, so a `receive` dropped half-way (rmcp
    /// polls it in a `select!`) loses nothing.
    line: Vec<u8>,
    /// Inside a line already answered as too long, until its newline.
    skipping: bool,
    max_line: usize,
    /// An answer of ours waiting for its place in the writer's queue.
    answer: Option<Vec<u8>>,
    lines: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

/// What one line is.
#[derive(Debug)]
enum Read {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<RoleServer>>),
    /// An answer for the client, and nothing for rmcp.
    Answer(Vec<u8>),
    /// Nothing to do: a blank line, or a notification that is not one (never answered).
    Nothing,
}

/// What the reader found next.
enum Line {
    /// A whole line is in `line`.
    Whole,
    /// The line was longer than the bound; what was read of it is gone.
    TooLong,
}

impl<R: AsyncRead + Unpin + Send> StdioTransport<R> {
    fn new<W>(input: R, output: W, max_line: usize) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (lines, queue) = mpsc::channel(QUEUED_LINES);
        Self {
            input,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            unread: 0..0,
            line: Vec::new(),
            skipping: false,
            max_line,
            answer: None,
            lines: Some(lines),
            writer: Some(tokio::spawn(write_lines(output, queue))),
        }
    }

    /// The next line into `line`, or `None` at the end of the input.
    async fn next_line(&mut self) -> Option<io::Result<Line>> {
        loop {
            if self.unread.is_empty() {
                // Cancel-safe: a `receive` dropped while it waits here has taken no bytes.
                let read = self.input.read(&mut self.chunk).await;
                match read {
                    Ok(0) => return None,
                    Ok(n) => self.unread = 0..n,
                    Err(error) => return Some(Err(error)),
                }
            }
            let available = &self.chunk[self.unread.clone()];
            let newline = available.iter().position(|&b| b == b'\n');
            let content = newline.unwrap_or(available.len());
            let taken = newline.map_or(content, |at| at + 1);
            self.unread.start += taken;
            if self.skipping {
                self.skipping = newline.is_none();
                continue;
            }
            if self.line.len() + content > self.max_line {
                self.line = Vec::new();
                self.skipping = newline.is_none();
                return Some(Ok(Line::TooLong));
            }
            self.line.extend_from_slice(&available[..content]);
            if newline.is_some() {
                return Some(Ok(Line::Whole));
            }
        }
    }
}

impl<R: AsyncRead + Unpin + Send> Transport<RoleServer> for StdioTransport<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let lines = self.lines.clone();
        async move {
            let line = line.map_err(io::Error::other)?;
            match lines {
                Some(lines) => lines.send(line).await.map_err(|_| closed()),
                None => Err(closed()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.answer.is_some() {
                let permit = self.lines.as_ref()?.reserve().await.ok()?;
                if let Some(answer) = self.answer.take() {
                    permit.send(answer);
                }
            }
            match self.next_line().await? {
                Ok(Line::Whole) => {
                    let read = read(&self.line);
                    self.line.clear();
                    // A long line's room is given back rather than kept for the session.
                    self.line.shrink_to(CHUNK_BYTES);
                    match read {
                        Read::Message(message) => return Some(*message),
                        Read::Answer(answer) => self.answer = Some(answer),
                        Read::Nothing => {}
                    }
                }
                Ok(Line::TooLong) => {
                    tracing::debug!(target: "tool_registry::mcp", max = self.max_line, "an MCP line over the bound was skipped");
                    self.answer = Some(error_line(
                        Value::Null,
                        ErrorCode::INVALID_REQUEST,
                        &format!(
                            "Invalid Request: a message is at most {} bytes on one line; this line was longer and was skipped",
                            self.max_line
                        ),
                    ));
                }
                Err(error) => {
                    tracing::warn!(target: "tool_registry::mcp", %error, "standard input cannot be read; the MCP session ends");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        drop(self.lines.take());
        if let Some(writer) = self.writer.take() {
            // The lines already queued are the last answers; they go out unless the client
            // stopped reading too.
            if tokio::time::timeout(CLOSE_GRACE, writer).await.is_err() {
                tracing::warn!(target: "tool_registry::mcp", "standard output took no more lines; the last answers are dropped");
            }
        }
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "standard output is closed")
}

/// Writes each queued line whole, flushing when none waits; ends when every sender is gone or
/// the output is closed (then the senders' next line fails, and the session ends).
async fn write_lines<W: AsyncWrite + Unpin>(mut output: W, mut queue: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = queue.recv().await {
        if output.write_all(&line).await.is_err() {
            return;
        }
        if queue.is_empty() && output.flush().await.is_err() {
            return;
        }
    }
    let _ = output.flush().await;
}

/// What the line `line` (without its newline) is: a message, or the answer it gets.
fn read(line: &[u8]) -> Read {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // RFC 8259 lets a reader skip a byte order mark, and rmcp's transport does.
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Read::Nothing;
    }
    match serde_json::from_slice::<RxJsonRpcMessage<RoleServer>>(line) {
        Ok(message) => Read::Message(Box::new(message)),
        Err(error) if error.is_syntax() || error.is_eof() => Read::Answer(error_line(
            Value::Null,
            ErrorCode::PARSE_ERROR,
            &format!("Parse error: not JSON, or nested deeper than 128 levels ({error})"),
        )),
        // Well-formed JSON that is no message: the second read finds what it is. The message
        // is fixed text, since serde's would quote the line's own strings back.
        Err(_) => match serde_json::from_slice::<Value>(line) {
            Ok(Value::Array(_)) => Read::Answer(error_line(
                Value::Null,
                ErrorCode::INVALID_REQUEST,
                "Invalid Request: batches are not supported; send one message a line",
            )),
            // A notification: a request without an id is never answered, not even when its
            // parameters are wrong (JSON-RPC 2.0, section 4.1).
            Ok(Value::Object(object))
                if !object.contains_key("id")
                    && object.get("jsonrpc").is_some_and(|v| v == "2.0")
                    && object.get("method").is_some_and(Value::is_string) =>
            {
                Read::Nothing
            }
            other => {
                let id = match other {
                    Ok(Value::Object(mut object)) => object
                        .remove("id")
                        .filter(|id| id.is_string() || id.is_i64() || id.is_u64())
                        .unwrap_or(Value::Null),
                    _ => Value::Null,
                };
                Read::Answer(error_line(
                    id,
                    ErrorCode::INVALID_REQUEST,
                    "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
                ))
            }
        },
    }
}

/// A JSON-RPC error answer. Written by hand rather than as rmcp's `JsonRpcError`, which leaves
/// out an id it does not know: JSON-RPC 2.0 says `"id": null` then.
pub(super) fn error_answer(id: Value, code: ErrorCode, message: &str) -> Value {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code.0, "message": message },
    })
}

/// [`error_answer`] as a line.
fn error_line(id: Value, code: ErrorCode, message: &str) -> Vec<u8> {
    format!("{}\n", error_answer(id, code, message)).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::{Read, read};
    use serde_json::Value;

    fn answer(line: &[u8]) -> Value {
        match read(line) {
            Read::Answer(bytes) => serde_json::from_slice(&bytes).expect("an answer is JSON"),
            other => panic!("no answer: {other:?}"),
        }
    }

    #[test]
    fn each_unreadable_line_gets_its_error_and_a_message_goes_through() {
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        for (line, code) in [
            (&b"hello"[..], -32700),
            (deep.as_bytes(), -32700),
            (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", -32700),
            (
                b"[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]",
                -32600,
            ),
            (b"42", -32600),
            (b"{\"jsonrpc\": \"2.0\"}", -32600),
            // Without an id, but no request object either: JSON-RPC's own example.
            (
                b"{\"jsonrpc\": \"2.0\", \"method\": 1, \"params\": \"bar\"}",
                -32600,
            ),
        ] {
            let answer = answer(line);
            assert_eq!(answer["error"]["code"], code, "{answer}");
            assert_eq!(answer["id"], Value::Null, "{answer}");
            assert_eq!(answer["jsonrpc"], "2.0");
        }
        // A request that is not one keeps its id, so the client knows which one failed.
        let wrong = answer(b"{\"jsonrpc\": \"1.0\", \"id\": 7, \"method\": \"ping\"}");
        assert_eq!(
            (wrong["id"].clone(), wrong["error"]["code"].clone()),
            (7.into(), (-32600).into())
        );
        // The line's own text is never quoted back.
        let quoted =
            answer(b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": 17, \"params\": \"SECRET\"}");
        assert!(!quoted.to_string().contains("SECRET"), "{quoted}");

        assert!(matches!(read(b""), Read::Nothing));
        assert!(matches!(read(b"  \r"), Read::Nothing));
        assert!(matches!(
            read(b"{\"jsonrpc\": \"2.0\", \"method\": \"notifications/progress\", \"params\": 5}"),
            Read::Nothing
        ));
        assert!(matches!(
            read(b"\xEF\xBB\xBF{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}\r"),
            Read::Message(_)
        ));
    }
}
