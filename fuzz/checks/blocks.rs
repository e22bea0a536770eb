//! `blocks`: content blocks as JSON, as HTTP modules, MCP servers and `toolreg` carry them
//! (`content::wire`), counted as the bytes arrive, read within a bound and checked
//! (`check_blocks`: sizes, MIME types and their parameters, a file's signature, names, URIs).
//! The first byte is the bound on blocks (0 to 15) and the length of the pieces the counter is
//! fed; the rest is a tool result's JSON (`{"content": ..., "blocks": [...]}`).
//!
//! - The counter finds a result past the bound in any pieces alike, and whenever it has more
//!   blocks than the bound.
//! - A result read within the bound holds no more blocks than it.
//! - Blocks that pass the checks write JSON that reads back into the same blocks, which pass
//!   again; base64 round-trips.

use serde_json::Value;
use tool_registry::ToolResult;
use tool_registry::content::{Block, ContentLimits, check_blocks, wire};

pub fn check(data: &[u8]) {
    let Some((&first, json)) = data.split_first() else {
        return;
    };
    let max = usize::from(first & 0x0F);
    let piece = usize::from(first >> 4) + 1;

    let mut whole = wire::CountBlocks::new(wire::CountBlocks::RESULT, max);
    whole.feed(json);
    let mut pieces = wire::CountBlocks::new(wire::CountBlocks::RESULT, max);
    for chunk in json.chunks(piece) {
        if !pieces.feed(chunk) {
            break;
        }
    }
    assert_eq!(whole.over(), pieces.over(), "counted in pieces of {piece}");
    if let Ok(value) = serde_json::from_slice::<Value>(json)
        && let Some(blocks) = value.get("blocks").and_then(Value::as_array)
    {
        assert!(
            blocks.len() <= max || whole.over(),
            "{} blocks, the bound {max}, not counted past it",
            blocks.len()
        );
    }

    let limits = ContentLimits::new(4 << 10, 16 << 10).with_max_blocks(max);
    let Ok(result) = wire::bounded(&limits, || serde_json::from_slice::<ToolResult>(json)) else {
        return;
    };
    assert!(
        result.blocks.len() <= max,
        "{} blocks read, the bound {max}",
        result.blocks.len()
    );
    if check_blocks(&result.blocks, &limits).is_err() {
        return;
    }
    let written = serde_json::to_vec(&result).expect("a result writes itself");
    let again: ToolResult = wire::bounded(&limits, || serde_json::from_slice(&written))
        .unwrap_or_else(|(error, _)| {
            panic!(
                "a result does not read what it wrote: {error}: {}",
                String::from_utf8_lossy(&written)
            )
        });
    let blocks: &[Block] = &result.blocks;
    let read: &[Block] = &again.blocks;
    assert_eq!(read, blocks, "blocks read back");
    check_blocks(&again.blocks, &limits).expect("blocks that passed pass again");
    for block in blocks {
        let value = wire::to_value(block);
        assert!(value.is_object(), "{value}");
    }
    let encoded = wire::encode(json);
    assert_eq!(
        wire::decode(&encoded).expect("base64 it wrote").as_ref(),
        json
    );
}
