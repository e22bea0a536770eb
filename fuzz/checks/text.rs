//! `text`: any text (with options from its first byte), parsed whole and through `parse::any`,
//! and without a tool list (`AnyTool`), never panics; calls name known tools (any tool without
//! a list), unknown calls unknown ones, and carry objects; spans lie inside the text.

use tool_registry::parse;
use tool_registry::{Listing, Registry};

pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let options = super::options::options(first);
    let registry = Registry::global();
    let parsed = parse::text_with(text, registry, options);
    for call in &parsed.calls {
        assert!(registry.get(&call.name, Listing::every()).is_some());
        assert!(call.arguments.is_object());
        assert!(call.span.end <= text.len());
    }
    for call in &parsed.unknown {
        assert!(registry.get(&call.name, Listing::every()).is_none());
    }
    assert!(parsed.content.len() <= text.len());
    let _ = parse::any_with(text, registry, options);
    let _ = parse::text(text, &["get_weather", "search"]);
    // Without a tool list: every call is a call, with an object of arguments.
    let any = parse::text_with(text, &parse::AnyTool, options);
    assert!(any.unknown.is_empty());
    for call in &any.calls {
        assert!(call.arguments.is_object());
        assert!(call.span.end <= text.len());
    }
}
