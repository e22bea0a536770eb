//! Response tags: any text, parsed for tag lines only and with every format, never panics, and
//! every call it finds is a tag tool's with an object of arguments.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tool_registry::{Listing, Registry};
use tool_registry::parse::{self, Format};

mod common;

fuzz_target!(|text: &str| {
    let registry = Registry::global();
    let tags = parse::tags(text, registry);
    for call in &tags.calls {
        assert_eq!(call.format, Format::Tag);
        assert!(call.arguments.is_object());
        assert!(registry.get(&call.name, Listing::every()).is_some_and(|d| d.tag().is_some()));
    }
    assert!(tags.content.len() <= text.len());
    let _ = registry.prompt_block(Listing::every());
});
