//! `stream`: any text split at positions taken from the input gives exactly the whole-text
//! parse, and its deltas add up to the content, the reasoning and the calls. The first byte
//! picks the options; the second the chunk lengths (1 to 16, cycling), the tool list (the
//! registry's or none), and the API: owned events, borrowed deltas, or an `events_only` parser.

use tool_registry::Registry;
use tool_registry::parse::{self, AnyTool, StreamDelta, StreamEvent, StreamParser, ToolSet};

pub fn check(data: &[u8]) {
    if data.len() < 2 {
        return;
    }
    let (head, rest) = data.split_at(2);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let options = super::options::options(head[0]);
    // The registry's tools, or none at all (the second byte's high bit).
    let tools: &dyn ToolSet = match head[1] & 0x80 {
        0 => Registry::global(),
        _ => &AnyTool,
    };
    let whole = parse::text_with(text, tools, options);

    // Chunk lengths cycle through 1..=step, from the second byte, through the borrowed-delta
    // API (what a server forwarding tokens uses) or the owned one (the next bit).
    let step = usize::from(head[1] % 16) + 1;
    let borrowed = head[1] & 0x40 != 0;
    // A borrowing stream that keeps nothing (what a forwarding server uses) on the bit after.
    let lean = borrowed && head[1] & 0x20 != 0;
    let mut stream = StreamParser::with_options(tools, options);
    if lean {
        stream = stream.events_only();
    }
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    let mut take = |delta: StreamDelta<'_>| match delta {
        StreamDelta::Text(text) => content.push_str(text),
        StreamDelta::Reasoning(text) => reasoning.push_str(text),
        StreamDelta::Event(StreamEvent::Call(call)) => calls.push(call),
        _ => {}
    };
    let mut at = 0;
    let mut length = 1;
    while at < text.len() {
        let mut end = (at + length).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        if borrowed {
            stream.push_with(&text[at..end], &mut take);
        } else {
            for event in stream.push(&text[at..end]) {
                match &event {
                    StreamEvent::Text(delta) => take(StreamDelta::Text(delta)),
                    StreamEvent::Reasoning(delta) => take(StreamDelta::Reasoning(delta)),
                    StreamEvent::Call(call) => {
                        take(StreamDelta::Event(StreamEvent::Call(call.clone())))
                    }
                    _ => {}
                }
            }
        }
        at = end;
        length = length % step + 1;
    }
    stream.finish_with(&mut take);
    if !lean {
        assert_eq!(stream.into_parsed(), whole);
    }
    assert_eq!(content, whole.content);
    assert_eq!(calls, whole.calls);
    assert_eq!(reasoning, whole.reasoning);
}
