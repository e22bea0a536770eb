//! `tags`: any text, parsed for response tags only and then listed, never panics; every call
//! it finds is a tag tool's, with an object of arguments, and the content is never longer than
//! the text.

use tool_registry::parse::{self, Format};
use tool_registry::{Listing, Registry};

pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let registry = Registry::global();
    let tags = parse::tags(text, registry);
    for call in &tags.calls {
        assert_eq!(call.format, Format::Tag);
        assert!(call.arguments.is_object());
        assert!(
            registry
                .get(&call.name, Listing::every())
                .is_some_and(|d| d.tag().is_some())
        );
    }
    assert!(tags.content.len() <= text.len());
    let _ = registry.prompt_block(Listing::every());
}
