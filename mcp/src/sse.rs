//! An SSE answer of a server mounted over streamable HTTP, cut into events before rmcp's SSE
//! reader sees it: each event held whole only within a bound in bytes (the stream fails at the
//! first event past it, as rmcp's own client does), and an event whose data is an answer of
//! more blocks than the registry reads replaced by the error for its request, counted by
//! `peek.rs`'s scan that builds nothing. Also how a large buffer is given room, so that the
//! memory a hostile answer took is given back once it is refused.

use bytes::Bytes;
use futures::stream::BoxStream;
use futures::{Stream, StreamExt, TryStreamExt};
use rmcp::model::{RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::SseError;
use sse_stream::{Sse, SseStream};

use super::peek::{blocks_over, too_many_blocks_answer};

/// The events of an SSE answer, as rmcp's transport reads them.
pub(super) type Events = BoxStream<'static, Result<Sse, SseError>>;

/// From how large a buffer on is given room of its own ([`make_room`]).
const LARGE: usize = 1 << 20;

/// Room reserved for a large buffer: more than glibc's largest threshold for giving an
/// allocation a mapping of its own (32 MiB on 64-bit systems).
const OWN_MAPPING: usize = (32 << 20) + (64 << 10);

/// Room in `buffer` for `more` bytes. Past [`LARGE`], the buffer's room is [`OWN_MAPPING`],
/// of which only the pages written take memory: glibc gives back an allocation that large
/// when it is freed, while a smaller one, once freed, is kept for the process and raises the
/// size under which every later one is kept too. A hostile server answering 16 MiB a call
/// would otherwise leave the process that much larger for good.
pub(super) fn make_room(buffer: &mut Vec<u8>, more: usize) {
    let needed = buffer.len().saturating_add(more);
    if needed > LARGE && buffer.capacity() < OWN_MAPPING.max(needed) {
        buffer.reserve_exact(OWN_MAPPING.max(needed) - buffer.len());
    }
}

/// An SSE event longer than the bound, in bytes: the stream ends with it.
#[derive(Debug, thiserror::Error)]
#[error("an SSE event of the MCP server is longer than {max} bytes, the most read of one event")]
struct EventTooLong {
    max: usize,
}

/// A boxed error as a type of its own, which the SSE reader takes.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
struct BoxedError(Box<dyn std::error::Error + Send + Sync>);

/// The events of the SSE `body` (the answer to `request`, when it is one), each held whole
/// only within `max` bytes and its data scanned before the SSE reader copies it: an event of
/// more than `max_blocks` blocks is replaced by the error for its id, or `request`'s, and the
/// stream fails at the first event longer than `max`.
pub(super) fn bounded_events<S>(
    body: S,
    max: usize,
    max_blocks: usize,
    request: Option<RequestId>,
) -> Events
where
    S: Stream<Item = Result<Bytes, reqwest::Error>> + Send + 'static,
{
    type Boxed = Box<dyn std::error::Error + Send + Sync>;
    let framer = Framer {
        max,
        max_blocks,
        request,
        line_start: true,
        ..Framer::default()
    };
    let events = futures::stream::unfold(
        (Box::pin(body), framer, false),
        |(mut body, mut framer, ended)| async move {
            loop {
                if let Some(event) = framer.ready.pop_front() {
                    return Some((Ok(event), (body, framer, ended)));
                }
                if ended {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => {
                        if let Err(error) = framer.feed(&chunk) {
                            return Some((Err(Box::new(error) as Boxed), (body, framer, true)));
                        }
                    }
                    Some(Err(error)) => {
                        return Some((Err(Box::new(error) as Boxed), (body, framer, true)));
                    }
                    // An event the stream ended before its blank line is passed on as well.
                    None => {
                        framer.complete(false);
                        framer.ready.retain(|event| !event.is_empty());
                        return framer
                            .ready
                            .pop_front()
                            .map(|event| (Ok(event), (body, framer, true)));
                    }
                }
            }
        },
    );
    SseStream::from_bytes_stream(events.map_err(BoxedError)).boxed()
}

/// Cuts an SSE byte stream into whole events, each passed on as it came or, when its data is
/// an answer of too many blocks, replaced. The bytes of an event are forwarded unchanged
/// (its line ends among them), so the SSE reader after it reads what the server sent.
#[derive(Default)]
struct Framer {
    max: usize,
    max_blocks: usize,
    request: Option<RequestId>,
    /// The bytes of the event being read.
    event: Vec<u8>,
    /// The last byte ended a line (or nothing was read yet): a line end now is a blank line,
    /// which ends the event.
    line_start: bool,
    /// The last byte was `\r`: a `\n` now belongs to the same line end.
    after_cr: bool,
    /// The event replaced last ended with a `\r`: a `\n` now is the rest of its end, left
    /// out with it.
    skip_lf: bool,
    /// Events whole, to pass on.
    ready: std::collections::VecDeque<Bytes>,
}

impl Framer {
    /// Reads `chunk`: every event it ends is made ready.
    fn feed(&mut self, chunk: &[u8]) -> Result<(), EventTooLong> {
        let mut start = 0;
        let mut at = 0;
        while let Some(&byte) = chunk.get(at) {
            let line_end = matches!(byte, b'\r' | b'\n');
            if std::mem::take(&mut self.skip_lf) && byte == b'\n' {
                self.after_cr = false;
                start = at + 1;
            } else if std::mem::take(&mut self.after_cr) && byte == b'\n' {
            } else if line_end {
                if self.line_start {
                    self.take(&chunk[start..=at])?;
                    start = at + 1;
                    self.complete(byte == b'\r');
                }
                self.line_start = true;
                self.after_cr = byte == b'\r';
            } else {
                self.line_start = false;
                // The rest of the line needs no look, byte by byte.
                at += memchr::memchr2(b'\r', b'\n', &chunk[at..]).unwrap_or(chunk.len() - at);
                continue;
            }
            at += 1;
        }
        self.take(&chunk[start..])
    }

    /// Adds `bytes` to the event being read, within the bound.
    fn take(&mut self, bytes: &[u8]) -> Result<(), EventTooLong> {
        if self.event.len() + bytes.len() > self.max {
            return Err(EventTooLong { max: self.max });
        }
        make_room(&mut self.event, bytes.len());
        self.event.extend_from_slice(bytes);
        Ok(())
    }

    /// Ends the event being read (its last byte a `\r` when `by_cr`): ready as it came, or
    /// replaced when its data holds too many blocks.
    fn complete(&mut self, by_cr: bool) {
        let raw = std::mem::take(&mut self.event);
        match self.replacement(&raw) {
            Some(replaced) => {
                tracing::debug!(target: "tool_registry::mcp", max_blocks = self.max_blocks, "an answer of the MCP server with too many blocks was not read");
                self.ready.push_back(replaced);
                self.skip_lf = by_cr;
            }
            None => self.ready.push_back(Bytes::from(raw)),
        }
    }

    /// The event that stands for `raw` when its data is an answer of more than `max_blocks`
    /// blocks: its other fields (`id`, `event`, `retry`) kept, its data the error for the
    /// answer's id or the request's (none when neither is known).
    fn replacement(&self, raw: &[u8]) -> Option<Bytes> {
        let lines = || {
            raw.split(|&byte| byte == b'\r' || byte == b'\n')
                .filter(|line| !line.is_empty())
        };
        let mut data = lines()
            .filter_map(|line| line.strip_prefix(b"data:"))
            .map(|value| value.strip_prefix(b" ").unwrap_or(value));
        let first = data.next()?;
        // Data on several lines is one text, its lines joined by `\n`.
        let joined;
        let text = match data.next() {
            None => first,
            Some(second) => {
                let mut all = [first, second].join(&b'\n');
                for more in data {
                    all.push(b'\n');
                    all.extend_from_slice(more);
                }
                joined = all;
                &joined[..]
            }
        };
        let id = blocks_over(text, self.max_blocks)?.or_else(|| self.request.clone());
        let mut event = Vec::new();
        for line in lines().filter(|line| !line.starts_with(b"data")) {
            event.extend_from_slice(line);
            event.push(b'\n');
        }
        if let Some(id) = id {
            let error =
                ServerJsonRpcMessage::error(too_many_blocks_answer(self.max_blocks), Some(id));
            event.extend_from_slice(b"data: ");
            event.extend_from_slice(&serde_json::to_vec(&error).ok()?);
            event.push(b'\n');
        }
        event.push(b'\n');
        Some(Bytes::from(event))
    }
}

#[cfg(test)]
mod tests {
    use super::Framer;
    use rmcp::model::RequestId;
    use serde_json::Value;

    /// What a framer bounded to `max` bytes and 3 blocks makes of `chunks`, as text.
    fn framed(chunks: &[&str], max: usize) -> Result<String, super::EventTooLong> {
        let mut framer = Framer {
            max,
            max_blocks: 3,
            request: Some(RequestId::Number(9)),
            line_start: true,
            ..Framer::default()
        };
        for chunk in chunks {
            framer.feed(chunk.as_bytes())?;
        }
        framer.complete(false);
        let events: Vec<u8> = framer
            .ready
            .iter()
            .flat_map(|event| event.to_vec())
            .collect();
        Ok(String::from_utf8(events).unwrap())
    }

    /// An answer of `blocks` links to request `id`.
    fn answer(id: u32, blocks: usize) -> String {
        let link = r#"{"type":"resource_link","uri":"a:1","name":"x"}"#;
        let content = vec![link; blocks].join(",");
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{content}]}}}}"#)
    }

    #[test]
    fn events_pass_unchanged_however_they_are_cut() {
        let stream = format!(
            "id: 1\r\ndata: {}\r\n\r\n: comment\ndata: {{\"a\":\ndata: 1}}\n\nretry: 5\r\r",
            answer(1, 3)
        );
        for cut in [1, 2, 7, 64, stream.len()] {
            let chunks: Vec<String> = (stream.as_bytes().chunks(cut))
                .map(|chunk| String::from_utf8(chunk.to_vec()).unwrap())
                .collect();
            let chunks: Vec<&str> = chunks.iter().map(String::as_str).collect();
            assert_eq!(framed(&chunks, 1 << 20).unwrap(), stream, "cut every {cut}");
        }
    }

    #[test]
    fn an_event_of_too_many_blocks_is_the_error_for_its_request() {
        let stream = format!("id: 7\r\ndata: {}\r\n\r\ndata: 2\n\n", answer(4, 4));
        let out = framed(&[&stream], 1 << 20).unwrap();
        let (event, rest) = out.split_once("\n\n").unwrap();
        assert_eq!(rest, "data: 2\n\n", "the next event is whole: {out:?}");
        let data = event.strip_prefix("id: 7\ndata: ").expect(event);
        let error: Value = serde_json::from_str(data).unwrap();
        assert_eq!(error["id"], 4, "{error}");
        assert_eq!(
            error["error"]["data"]["tool-registry/answerTooManyBlocks"], 3,
            "{error}"
        );
        // Split over data lines, and without an id of its own: the request's.
        let answer = answer(4, 4).replace(r#""id":4,"#, "");
        let (head, tail) = answer.split_at(answer.len() / 2);
        let out = framed(&[&format!("data: {head}\ndata: {tail}\n\n")], 1 << 20).unwrap();
        let error: Value = serde_json::from_str(out.strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(error["id"], 9, "{error}");
    }

    #[test]
    fn an_event_longer_than_the_bound_ends_the_stream() {
        assert!(framed(&["data: 12345678\n", "\n"], 16).unwrap() == "data: 12345678\n\n");
        assert!(framed(&["data: 12345678", "9\n\n"], 16).is_err());
    }
}
