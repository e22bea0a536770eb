//! MCP over standard input and output: one JSON-RPC message a line, read with a bound, and an
//! answer for every line that cannot be served. The server reads its own standard input this
//! way; a mounted module reads the standard output of its server's process the same way
//! ([`Side`]).
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
//!
//! On the client's side (a mounted server's process), a line longer than the bound is an
//! answer too long to read: it is skipped as it arrives too, and the request it answers (its id
//! read from the line's first bytes) gets a JSON-RPC error marked [`TOO_LONG`] at once, where
//! rmcp's own transport would drop it and leave the call waiting for its timeout. So does an
//! answer whose `result.content` holds more blocks than the registry reads ([`TOO_MANY_BLOCKS`]:
//! counted by a scan that builds nothing, before rmcp's types are built, which cost about
//! 1.4 KB a block), and an answer that does not read as a message, nested deeper than
//! serde_json reads or not of MCP's shape ([`UNREADABLE`]), when its id comes before its
//! result. Any other line that is no message is passed over, as rmcp's transport does.

use std::future::Future;
use std::io;
use std::time::Duration;

use rmcp::model::{ErrorCode, RequestId};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleClient, RoleServer};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use super::line::{line_of, server_line};
use super::peek::{
    answer_id_of, id_of, over_blocks, too_long_answer, too_many_blocks_answer, unreadable_answer,
};
use tool_registry_core::content::wire::CountBlocks;

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

/// How much of a line too long to read is kept to find its id.
const HEAD_BYTES: usize = 4 << 10;

/// Lines read from `input` with a bound; lines written to an output by one task. `S` is the
/// side of the session this end speaks for.
pub(super) struct StdioTransport<R, S = RoleServer> {
    side: std::marker::PhantomData<S>,
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
    /// The most blocks an answer read by a client may hold.
    max_blocks: usize,
    /// The blocks of the line being read, counted as it arrives (a client's, once the line
    /// has begun).
    blocks: Option<CountBlocks>,
    /// The line held more blocks than the bound before its id came: it is read whole.
    uncounted: bool,
    /// An answer of ours waiting for its place in the writer's queue.
    answer: Option<Vec<u8>>,
    lines: Option<mpsc::Sender<Vec<u8>>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

/// What one line is.
#[derive(Debug)]
pub(super) enum Read<S: ServiceRole = RoleServer> {
    /// A message for rmcp.
    Message(Box<RxJsonRpcMessage<S>>),
    /// An answer for the client, and nothing for rmcp.
    Answer(Vec<u8>),
    /// Nothing to do: a blank line, or a notification that is not one (never answered).
    Nothing,
}

/// What the reader found next.
enum Line {
    /// A whole line is in `line`.
    Whole,
    /// The line was longer than the bound: its first [`HEAD_BYTES`] bytes; the rest is gone.
    TooLong(Vec<u8>),
    /// The line is the answer to the request `id`, and holds more blocks than the bound: what
    /// came of it so far is dropped, the rest is skipped as it arrives.
    TooManyBlocks(RequestId),
}

/// What a side of a session does with the lines it reads, and how it writes its messages.
pub(super) trait Side: ServiceRole {
    /// One message as the line that carries it.
    fn line(item: TxJsonRpcMessage<Self>) -> io::Result<Vec<u8>> {
        line_of(&item)
    }

    /// What one whole line (without its newline) is; an answer of more than `max_blocks`
    /// blocks is not read.
    fn read(line: &[u8], max_blocks: usize) -> Read<Self>;

    /// What a line longer than `max` bytes is, from its first bytes `head`.
    fn too_long(head: &[u8], max: usize) -> Read<Self>;

    /// The answer to the request `id` that holds more than `max` blocks: an error for that
    /// request, at once.
    fn too_many_blocks(id: RequestId, max: usize) -> Read<Self> {
        tracing::debug!(target: "tool_registry::mcp", max, "an answer of the MCP server with too many blocks was not read");
        Read::Message(Box::new(RxJsonRpcMessage::<Self>::error(
            too_many_blocks_answer(max),
            Some(id),
        )))
    }
}

impl Side for RoleServer {
    fn line(item: TxJsonRpcMessage<Self>) -> io::Result<Vec<u8>> {
        server_line(item)
    }

    fn read(line: &[u8], _max_blocks: usize) -> Read<Self> {
        read(line)
    }

    fn too_long(head: &[u8], max: usize) -> Read<Self> {
        // A client's answer to the server's own request (a form, a completion) too long to
        // read: the request gets an error at once, rather than waiting for its call's timeout.
        if let Some(id) = answer_id_of(head) {
            return Read::Message(Box::new(RxJsonRpcMessage::<RoleServer>::error(
                too_long_answer(max),
                Some(id),
            )));
        }
        Read::Answer(error_line(
            Value::Null,
            ErrorCode::INVALID_REQUEST,
            &format!(
                "Invalid Request: a message is at most {max} bytes on one line; this line was longer and was skipped"
            ),
        ))
    }
}

impl Side for RoleClient {
    fn read(line: &[u8], max_blocks: usize) -> Read<Self> {
        let Some(line) = trimmed(line) else {
            return Read::Nothing;
        };
        // Counted before rmcp builds the blocks, which is what costs (the reader counted them
        // as the line arrived already, unless the answer's id came after them).
        if let Some(id) = over_blocks(line, max_blocks) {
            return Self::too_many_blocks(id, max_blocks);
        }
        match serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line) {
            Ok(message) => Read::Message(Box::new(message)),
            Err(error) => match answer_id_of(line) {
                // An answer that does not read fails its request at once, rather than leaving
                // it to its timeout.
                Some(id) => {
                    tracing::debug!(target: "tool_registry::mcp", %error, "an answer of the MCP server does not read; its request fails");
                    Read::Message(Box::new(RxJsonRpcMessage::<RoleClient>::error(
                        unreadable_answer(&error),
                        Some(id),
                    )))
                }
                None => {
                    tracing::debug!(target: "tool_registry::mcp", %error, "a line of the MCP server is no message; passed over");
                    Read::Nothing
                }
            },
        }
    }

    fn too_long(head: &[u8], max: usize) -> Read<Self> {
        let Some(id) = id_of(head) else {
            tracing::warn!(target: "tool_registry::mcp", max, "a line of the MCP server over the bound, without an id in its first bytes, was skipped");
            return Read::Nothing;
        };
        Read::Message(Box::new(RxJsonRpcMessage::<RoleClient>::error(
            too_long_answer(max),
            Some(id),
        )))
    }
}

impl<R: AsyncRead + Unpin + Send, S: Side> StdioTransport<R, S> {
    /// A transport that reads lines of at most `max_line` bytes from `input` and writes to
    /// `output`.
    pub(super) fn new<W>(input: R, output: W, max_line: usize) -> Self
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (lines, queue) = mpsc::channel(QUEUED_LINES);
        Self {
            side: std::marker::PhantomData,
            input,
            chunk: vec![0; CHUNK_BYTES].into_boxed_slice(),
            unread: 0..0,
            line: Vec::new(),
            skipping: false,
            max_line,
            max_blocks: usize::MAX,
            blocks: None,
            uncounted: false,
            answer: None,
            lines: Some(lines),
            writer: Some(tokio::spawn(write_lines(output, queue))),
        }
    }

    /// The same transport, reading answers of at most `max_blocks` blocks (a client's): each
    /// line's blocks are counted as it arrives, and an answer past the bound is not held.
    pub(super) fn with_max_blocks(mut self, max_blocks: usize) -> Self {
        self.max_blocks = max_blocks;
        self
    }

    /// Whether the blocks of the line being read are counted as it arrives.
    fn counts_blocks(&self) -> bool {
        self.max_blocks < usize::MAX && !self.uncounted
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
                (self.blocks, self.uncounted) = (None, false);
                let mut head = std::mem::take(&mut self.line);
                head.truncate(HEAD_BYTES);
                let more = (HEAD_BYTES - head.len()).min(content);
                head.extend_from_slice(&available[..more]);
                self.skipping = newline.is_none();
                return Some(Ok(Line::TooLong(head)));
            }
            let piece = &available[..content];
            self.line.extend_from_slice(piece);
            let max = self.max_blocks;
            let counted = self.counts_blocks().then(|| {
                (self.blocks)
                    .get_or_insert_with(|| CountBlocks::new(CountBlocks::MCP_ANSWER, max))
                    .feed(piece)
            });
            if counted == Some(false) {
                let head = &self.line[..self.line.len().min(HEAD_BYTES)];
                match answer_id_of(head) {
                    Some(id) => {
                        self.line.clear();
                        self.line.shrink_to(CHUNK_BYTES);
                        self.blocks = None;
                        self.skipping = newline.is_none();
                        return Some(Ok(Line::TooManyBlocks(id)));
                    }
                    // Its id comes after its blocks: the line is read whole, and scanned once
                    // more for the id.
                    None => self.uncounted = true,
                }
            }
            if newline.is_some() {
                (self.blocks, self.uncounted) = (None, false);
                return Some(Ok(Line::Whole));
            }
        }
    }
}

impl<R: AsyncRead + Unpin + Send, S: Side> Transport<S> for StdioTransport<R, S> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<S>,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let line = S::line(item);
        let lines = self.lines.clone();
        async move {
            let line = line?;
            match lines {
                Some(lines) => lines.send(line).await.map_err(|_| closed()),
                None => Err(closed()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<S>> {
        loop {
            if self.answer.is_some() {
                let permit = self.lines.as_ref()?.reserve().await.ok()?;
                if let Some(answer) = self.answer.take() {
                    permit.send(answer);
                }
            }
            match self.next_line().await? {
                Ok(Line::Whole) => {
                    let read = S::read(&self.line, self.max_blocks);
                    self.line.clear();
                    // A long line's room is given back rather than kept for the session.
                    self.line.shrink_to(CHUNK_BYTES);
                    match read {
                        Read::Message(message) => return Some(*message),
                        Read::Answer(answer) => self.answer = Some(answer),
                        Read::Nothing => {}
                    }
                }
                Ok(Line::TooManyBlocks(id)) => {
                    if let Read::Message(message) = S::too_many_blocks(id, self.max_blocks) {
                        return Some(*message);
                    }
                }
                Ok(Line::TooLong(head)) => {
                    tracing::debug!(target: "tool_registry::mcp", max = self.max_line, "an MCP line over the bound was skipped");
                    match S::too_long(&head, self.max_line) {
                        Read::Message(message) => return Some(*message),
                        Read::Answer(answer) => self.answer = Some(answer),
                        Read::Nothing => {}
                    }
                }
                Err(error) => {
                    tracing::warn!(target: "tool_registry::mcp", %error, "the MCP session's input cannot be read; the session ends");
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

/// What the line `line` (without its newline) is to the server: a message, or the answer it
/// gets.
fn read(line: &[u8]) -> Read {
    let Some(line) = trimmed(line) else {
        return Read::Nothing;
    };
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

/// `line` without a carriage return at its end or a byte order mark at its start (RFC 8259 lets
/// a reader skip one, and rmcp's transport does); `None` for a blank line.
fn trimmed(line: &[u8]) -> Option<&[u8]> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    (!line.iter().all(u8::is_ascii_whitespace)).then_some(line)
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
    use super::super::peek::TOO_LONG;
    use super::{Read, Side, StdioTransport, id_of, read};
    use rmcp::model::RequestId;
    use rmcp::transport::Transport;
    use rmcp::{RoleClient, RoleServer};
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

    #[test]
    fn the_id_of_a_cut_line_is_read_from_its_first_bytes() {
        let cut = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"image","data":"AAAA"#;
        assert_eq!(id_of(cut), Some(RequestId::Number(7)));
        let quoted = br#"{"jsonrpc": "2.0", "id": "a\"b", "result": {"#;
        assert_eq!(id_of(quoted), Some(RequestId::String("a\"b".into())));
        // Only the message's own id: one inside the result, before it, is not.
        let nested = br#"{"result": {"id": 1, "content": [{"data": "AAAA"#;
        assert_eq!(id_of(nested), None);
        assert_eq!(id_of(b"not json"), None);
        assert_eq!(id_of(b"[1, 2"), None);
    }

    #[test]
    fn a_line_too_long_is_an_answer_for_the_server_and_an_error_for_the_client() {
        let head = br#"{"jsonrpc":"2.0","id":3,"result":{"content":["#;
        match <RoleClient as Side>::too_long(head, 100) {
            Read::Message(message) => {
                let message = serde_json::to_value(&message).unwrap();
                assert_eq!(message["id"], 3, "{message}");
                assert_eq!(message["error"]["data"][TOO_LONG], 100, "{message}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            <RoleClient as Side>::too_long(b"{\"result\": {", 100),
            Read::Nothing
        ));
        // On the server's side, a request too long is answered; the client's answer to a
        // request of the server (a form, a completion) fails that request at once.
        let request = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"#;
        assert!(matches!(
            <RoleServer as Side>::too_long(request, 100),
            Read::Answer(_)
        ));
        match <RoleServer as Side>::too_long(head, 100) {
            Read::Message(message) => {
                let message = serde_json::to_value(&message).unwrap();
                assert_eq!(message["id"], 3, "{message}");
                assert_eq!(message["error"]["data"][TOO_LONG], 100, "{message}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_answer_is_told_from_a_request_by_its_first_bytes() {
        use super::answer_id_of;
        let id = |n| Some(RequestId::Number(n));
        assert_eq!(
            answer_id_of(br#"{"jsonrpc":"2.0","id":4,"result":{"tex"#),
            id(4)
        );
        assert_eq!(answer_id_of(br#"{"id":5,"jsonrpc":"2.0","error":{"#), id(5));
        // A request, a notification, an answer whose id comes after it: no answer id.
        assert_eq!(
            answer_id_of(br#"{"jsonrpc":"2.0","id":6,"method":"x","params":{"#),
            None
        );
        assert_eq!(
            answer_id_of(br#"{"jsonrpc":"2.0","method":"x","params":{"#),
            None
        );
        assert_eq!(answer_id_of(br#"{"result":{"a":1},"id":7"#), None);
        assert_eq!(answer_id_of(br#"{"params":{"id":8,"result":1"#), None);
    }

    /// What a client's transport makes of `line`, as JSON.
    fn client_read(line: &str, max_blocks: usize) -> Option<Value> {
        match <RoleClient as Side>::read(line.as_bytes(), max_blocks) {
            Read::Message(message) => Some(serde_json::to_value(&message).unwrap()),
            Read::Nothing => None,
            Read::Answer(_) => panic!("a client answers nothing"),
        }
    }

    #[test]
    fn an_answer_of_too_many_blocks_is_an_error_for_its_request_before_it_is_read() {
        use super::super::peek::TOO_MANY_BLOCKS;
        // An answer of `blocks` links, with `before` and `after` its result.
        let answer = |before: &str, blocks: usize, after: &str| {
            let link = r#"{"type":"resource_link","uri":"a:1","name":"x"}"#;
            let content = vec![link; blocks].join(",");
            format!(
                r#"{{"jsonrpc":"2.0",{before}"result":{{"structuredContent":{{"a":[1]}},"content":[{content}],"isError":false}}{after}}}"#
            )
        };
        let refused = client_read(&answer(r#""id":4,"#, 11, ""), 10).unwrap();
        assert_eq!(refused["id"], 4, "{refused}");
        assert_eq!(refused["error"]["data"][TOO_MANY_BLOCKS], 10, "{refused}");
        // An id after the result is found too.
        let refused = client_read(&answer("", 11, r#","id":"x""#), 10).unwrap();
        assert_eq!(refused["id"], "x", "{refused}");
        assert_eq!(refused["error"]["data"][TOO_MANY_BLOCKS], 10, "{refused}");
        // Within the bound, the answer is read as it is.
        let read = client_read(&answer(r#""id":5,"#, 10, ""), 10).unwrap();
        assert_eq!(read["result"]["content"].as_array().unwrap().len(), 10);
    }

    #[test]
    fn an_answer_that_does_not_read_fails_its_request_at_once() {
        use super::super::peek::UNREADABLE;
        let deep = format!("{}1{}", "[".repeat(140), "]".repeat(140));
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":9,"result":{{"content":[],"structuredContent":{{"a":{deep}}}}}}}"#
        );
        let refused = client_read(&line, 1000).unwrap();
        assert_eq!(refused["id"], 9, "{refused}");
        assert_eq!(refused["error"]["data"][UNREADABLE], true, "{refused}");
        assert!(
            !refused.to_string().contains("[[["),
            "nothing of the line is quoted: {refused}"
        );
        // A line that is no answer of a request is passed over, as before.
        assert_eq!(client_read("not a message", 1000), None);
        assert_eq!(
            client_read(
                &format!(r#"{{"jsonrpc":"2.0","method":"x","params":{deep}}}"#),
                1000
            ),
            None
        );
    }

    #[tokio::test]
    async fn a_client_counts_blocks_as_an_answer_arrives_and_holds_none_past_the_bound() {
        use super::super::peek::TOO_MANY_BLOCKS;
        use tokio::io::AsyncWriteExt;
        let (mut server, client) = tokio::io::duplex(1 << 16);
        let (input, output) = tokio::io::split(client);
        // Lines of 16 MiB may be read; answers of 10 blocks at most.
        let mut transport =
            StdioTransport::<_, RoleClient>::new(input, output, 16 << 20).with_max_blocks(10);
        let link = r#"{"type":"resource_link","uri":"a:1","name":"x"}"#;
        let links = |count: usize| vec![link; count].join(",");
        let wide = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"content\":[{}]}}}}\n",
            links(200_000)
        );
        let late_id = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{{\"content\":[{}]}},\"id\":2}}\n",
            links(11)
        );
        let within = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{{\"content\":[{}]}}}}\n",
            links(10)
        );
        let writing = tokio::spawn(async move {
            for line in [wide, late_id, within] {
                server.write_all(line.as_bytes()).await.unwrap();
            }
            server
        });
        let first = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(first["id"], 1, "{first}");
        assert_eq!(first["error"]["data"][TOO_MANY_BLOCKS], 10, "{first}");
        // Nothing of the 9 MB line was kept: what was read before the eleventh block, at most.
        assert!(
            transport.line.capacity() <= super::CHUNK_BYTES,
            "{}",
            transport.line.capacity()
        );
        // An id after the blocks: the line is read whole, and refused all the same.
        let second = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(second["id"], 2, "{second}");
        assert_eq!(second["error"]["data"][TOO_MANY_BLOCKS], 10, "{second}");
        let third = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(
            third["result"]["content"].as_array().map(Vec::len),
            Some(10)
        );
        drop(writing.await.unwrap());
    }

    #[tokio::test]
    async fn a_client_skips_an_answer_too_long_and_reads_the_next() {
        use tokio::io::AsyncWriteExt;
        let (mut server, client) = tokio::io::duplex(1 << 16);
        let (input, output) = tokio::io::split(client);
        let mut transport = StdioTransport::<_, RoleClient>::new(input, output, 1024);
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}\n",
            "x".repeat(100_000)
        );
        let writing = tokio::spawn(async move {
            server.write_all(long.as_bytes()).await.unwrap();
            server.write_all(b"not a message\n").await.unwrap();
            server
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n")
                .await
                .unwrap();
            server
        });
        let first = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(
            (&first["id"], &first["error"]["data"][TOO_LONG]),
            (&Value::from(1), &Value::from(1024)),
            "{first}"
        );
        let second = serde_json::to_value(transport.receive().await.unwrap()).unwrap();
        assert_eq!(
            (&second["id"], &second["result"]),
            (&Value::from(2), &serde_json::json!({}))
        );
        drop(writing.await.unwrap());
    }
}
