//! A message as the line that carries it, and what a block's base64 costs on the way: one copy.
//!
//! serde_json writes a string by looking at every byte for one to escape, and a `Vec` grows by
//! doubling; for a 1 MiB image (1.4 MB of base64) the first is the slowest step of an answer,
//! slower than the base64 encoding itself, and the second would copy the line again once the
//! quote after the base64 no longer fits. So:
//!
//! - a line is written into a buffer where a large write makes room for itself and the rest of
//!   the message at once ([`line_of`]);
//! - the server's answer to `tools/call` is written without its large base64 texts (images,
//!   audio, binary resources), each replaced by a placeholder, and each is then copied into its
//!   place once, after a check that it holds no byte JSON would escape ([`server_line`]). A
//!   message where that cannot be done safely (a placeholder's text met elsewhere in it) is
//!   written whole, as any other.

use std::io;

use rmcp::model::{
    ContentBlock, JsonRpcMessage, ResourceContents, ServerJsonRpcMessage, ServerResult,
};

/// A write at least this long makes room for itself and [`LINE_TAIL`] at once; a base64 text
/// at least this long is copied into its line, not written by serde_json.
const LARGE: usize = 64 << 10;

/// The room a large write leaves after itself for the rest of its message.
const LINE_TAIL: usize = 64 << 10;

/// The text that stands in a line for the large base64 text number N until it is copied in:
/// this, then N. The NUL makes serde_json write it as `\u0000`, which no base64 text holds.
const PLACEHOLDER: &str = "\0tool-registry/base64/";

/// [`PLACEHOLDER`] as serde_json writes it.
const WRITTEN_PLACEHOLDER: &str = "\\u0000tool-registry/base64/";

/// One message as the line that carries it, written through [`Written`].
pub(crate) fn line_of<T: serde::Serialize>(item: &T) -> io::Result<Vec<u8>> {
    let mut line = Written(Vec::with_capacity(128));
    serde_json::to_writer(&mut line, item).map_err(io::Error::other)?;
    line.0.push(b'\n');
    Ok(line.0)
}

/// A line's bytes as serde_json writes them. A large write makes room for itself and
/// [`LINE_TAIL`] more, so the rest of the message fits behind it: with `Vec`'s doubling alone,
/// the quote that closes 1.4 MB of base64 would grow the line to 2.8 MB and copy it again.
struct Written(Vec<u8>);

impl io::Write for Written {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let room = self.0.capacity() - self.0.len();
        if bytes.len() >= LARGE && room < bytes.len() {
            self.0.reserve_exact(bytes.len() + LINE_TAIL);
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A message of the server as its line: an answer to `tools/call` with its large base64 texts
/// copied in whole (see the top of this file), any other message by [`line_of`].
pub(crate) fn server_line(mut message: ServerJsonRpcMessage) -> io::Result<Vec<u8>> {
    // Each text taken out, with its place among the message's base64 texts.
    let mut taken: Vec<(usize, String)> = Vec::new();
    for (place, text) in base64_texts(&mut message).enumerate() {
        if text.len() >= LARGE && needs_no_escape(text.as_bytes()) {
            let placeholder = format!("{PLACEHOLDER}{}", taken.len());
            taken.push((place, std::mem::replace(text, placeholder)));
        }
    }
    if taken.is_empty() {
        return line_of(&message);
    }
    let small = line_of(&message)?;
    if let Some(line) = splice(&small, &taken) {
        return Ok(line);
    }
    // A placeholder's text is met elsewhere in the message: the texts go back, and the
    // message is written whole.
    let mut taken = taken.into_iter().peekable();
    for (place, text) in base64_texts(&mut message).enumerate() {
        if let Some((_, original)) = taken.next_if(|(at, _)| *at == place) {
            *text = original;
        }
    }
    line_of(&message)
}

/// The base64 texts of an answer to `tools/call`: its images', audio clips' and binary
/// resources', in order.
fn base64_texts(message: &mut ServerJsonRpcMessage) -> impl Iterator<Item = &mut String> {
    let content = match message {
        JsonRpcMessage::Response(response) => match &mut response.result {
            ServerResult::CallToolResult(result) => Some(&mut result.content),
            _ => None,
        },
        _ => None,
    };
    (content.into_iter().flatten()).filter_map(|block| match block {
        ContentBlock::Image(image) => Some(&mut image.data),
        ContentBlock::Audio(audio) => Some(&mut audio.data),
        ContentBlock::Resource(embedded) => match &mut embedded.resource {
            ResourceContents::BlobResourceContents { blob, .. } => Some(blob),
            _ => None,
        },
        _ => None,
    })
}

/// Whether JSON takes `bytes` inside quotes as they are: no control character, quote,
/// backslash or byte past ASCII. One pass without early exits within a chunk, which the
/// compiler turns into vector instructions.
fn needs_no_escape(bytes: &[u8]) -> bool {
    bytes.chunks(256).all(|chunk| {
        chunk.iter().fold(true, |fine, &b| {
            fine & (0x20..0x80).contains(&b) & (b != b'"') & (b != b'\\')
        })
    })
}

/// `small` with each placeholder replaced by its text, in one buffer of the line's size; `None`
/// unless the placeholders' text is met exactly as often as there are placeholders (another
/// string of the message that holds it would be taken for one).
fn splice(small: &[u8], taken: &[(usize, String)]) -> Option<Vec<u8>> {
    let prefix = format!("\"{WRITTEN_PLACEHOLDER}");
    if memchr::memmem::find_iter(small, prefix.as_bytes()).count() != taken.len() {
        return None;
    }
    let markers: Vec<String> = (0..taken.len())
        .map(|index| format!("{prefix}{index}\""))
        .collect();
    let size = taken
        .iter()
        .zip(&markers)
        .fold(small.len(), |size, ((_, text), marker)| {
            size + text.len() + 2 - marker.len()
        });
    let mut line = Vec::with_capacity(size);
    let mut rest = small;
    for ((_, text), marker) in taken.iter().zip(&markers) {
        let at = memchr::memmem::find(rest, marker.as_bytes())?;
        // Up to the opening quote, the text, the closing quote.
        line.extend_from_slice(&rest[..=at]);
        line.extend_from_slice(text.as_bytes());
        line.push(b'"');
        rest = &rest[at + marker.len()..];
    }
    line.extend_from_slice(rest);
    Some(line)
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, NumberOrString, ServerJsonRpcMessage, ServerResult};
    use serde_json::{Value, json};

    use super::*;

    fn answer(content: Vec<ContentBlock>) -> ServerJsonRpcMessage {
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(json!({"n": 1}));
        ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(result),
            NumberOrString::Number(7),
        )
    }

    fn base64(size: usize, seed: u8) -> String {
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        (0..size)
            .map(|i| alphabet[(i * 7 + seed as usize) % 64] as char)
            .collect()
    }

    #[test]
    fn a_spliced_line_is_the_line_serde_json_writes() {
        let texts = [base64(LARGE, 1), base64(3 * LARGE, 2), base64(LARGE + 4, 3)];
        let message = answer(vec![
            ContentBlock::text("a caption with \"quotes\" and a \u{0} NUL"),
            ContentBlock::image(texts[0].clone(), "image/png"),
            ContentBlock::image("c21hbGw=", "image/png"),
            ContentBlock::audio(texts[1].clone(), "audio/wav"),
            ContentBlock::resource(ResourceContents::blob(texts[2].clone(), "kb://b")),
        ]);
        let expected = line_of(&message).unwrap();
        let mut copy = message.clone();
        assert_eq!(base64_texts(&mut copy).count(), 4);
        let line = server_line(message).unwrap();
        assert_eq!(line, expected);
        assert_eq!(line.capacity(), line.len(), "one buffer of the line's size");
    }

    #[test]
    fn what_cannot_be_spliced_safely_is_written_whole() {
        // A text that needs escaping stays with serde_json.
        let mut escaped = base64(LARGE, 1);
        escaped.push('"');
        let message = answer(vec![ContentBlock::image(escaped, "image/png")]);
        let expected = line_of(&message).unwrap();
        assert_eq!(server_line(message).unwrap(), expected);

        // A text block that holds a placeholder's text, before the image: written whole.
        let image = base64(LARGE, 4);
        let message = answer(vec![
            ContentBlock::text(format!("{PLACEHOLDER}0")),
            ContentBlock::image(image.clone(), "image/png"),
        ]);
        let expected = line_of(&message).unwrap();
        let line = server_line(message).unwrap();
        assert_eq!(line, expected);
        let read: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(read["result"]["content"][1]["data"], image);
        assert_eq!(
            read["result"]["content"][0]["text"],
            format!("{PLACEHOLDER}0")
        );
        // And one after it.
        let message = answer(vec![
            ContentBlock::image(image.clone(), "image/png"),
            ContentBlock::text(format!("{PLACEHOLDER}0")),
        ]);
        let expected = line_of(&message).unwrap();
        assert_eq!(server_line(message).unwrap(), expected);
    }

    #[test]
    fn the_escape_check_finds_every_byte_json_escapes() {
        let clean = base64(1000, 5);
        assert!(needs_no_escape(clean.as_bytes()));
        for bad in [b'"', b'\\', b'\n', 0, 0x1f, 0x80, 0xff] {
            for at in [0, 255, 256, 999] {
                let mut bytes = clean.clone().into_bytes();
                bytes[at] = bad;
                assert!(!needs_no_escape(&bytes), "{bad:#x} at {at}");
            }
        }
    }
}
