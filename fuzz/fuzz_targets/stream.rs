//! Streaming: any text split at positions taken from the input gives exactly the whole-text
//! parse, and its text deltas add up to the content.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_registry::Registry;
use tool_registry::parse::{self, AnyTool, StreamDelta, StreamEvent, StreamParser, ToolSet};

mod common;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (head, rest) = data.split_at(2);
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let options = common::options(head[0]);
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
    let mut stream = StreamParser::with_options(tools, options);
    let mut content = String::new();
    let mut reasoning = String::new();
    let mut take = |delta: StreamDelta<'_>| match delta {
        StreamDelta::Text(text) => content.push_str(text),
        StreamDelta::Reasoning(text) => reasoning.push_str(text),
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
                    _ => {}
                }
            }
        }
        at = end;
        length = length % step + 1;
    }
    stream.finish_with(&mut take);
    let streamed = stream.into_parsed();
    assert_eq!(streamed, whole);
    assert_eq!(content, whole.content);
    assert_eq!(reasoning, whole.reasoning);
});
