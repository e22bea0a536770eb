//! The properties the fuzz targets check: one module a target, each a `check(&[u8])` that
//! panics when its property breaks. Shared by the targets (`fuzz/fuzz_targets/*.rs`, run by
//! libFuzzer on nightly) and by the test that replays every target's corpus and findings on the
//! stable toolchain (`registry/tests/fuzz.rs`), which include this file by its path: a replay
//! reads an input exactly as the target did, against the same tools.
//!
//! | module | what it reads | its property beyond "no panic" |
//! | --- | --- | --- |
//! | `tags` | model text, response tags only | every call a tag tool's, content no longer than the text |
//! | `text` | model text, every format (options from the first byte) | calls name known tools, spans inside the text |
//! | `stream` | model text split into chunks | the stream equals the whole-text parse |
//! | `call` | a tool's arguments, as JSON text and as a `Value` | the same answer either way; bounds kept |
//! | `spec` | a run-time `ToolSpec` as JSON, a definition in any provider's shape | reads back what it writes; import is idempotent |
//! | `mcp` | lines on the MCP stdio server's input | every line out is JSON-RPC, answers only what was asked |
//! | `mcp_http` | POST bodies to the MCP HTTP endpoint, stateless and in a session | no server error; a JSON answer is one JSON-RPC message, to the id asked |
//! | `module` | an HTTP module server's request bodies | no server error; an answer that reads back |
//! | `gateway` | a module's manifest and answers, as a gateway reads them | results within the content bounds; errors that read back |
//! | `blocks` | content blocks as JSON | counted alike in any pieces; checked blocks round-trip |
//! | `json` | JSON text and JSON Schemas | one rule for a repeated key; sizes, depths and walks bounded |
//!
//! `tools.rs` holds the tools every target sees, `options.rs` the parse options a byte picks.

#![allow(dead_code, reason = "each target uses one module of these")]

pub mod blocks;
pub mod call;
pub mod gateway;
pub mod json;
pub mod mcp;
pub mod mcp_http;
pub mod module;
pub mod options;
pub mod spec;
pub mod stream;
pub mod tags;
pub mod text;
pub mod tools;

/// Every target, by name, with its check: what the replay runs.
pub const TARGETS: &[(&str, fn(&[u8]))] = &[
    ("tags", tags::check),
    ("text", text::check),
    ("stream", stream::check),
    ("call", call::check),
    ("spec", spec::check),
    ("mcp", mcp::check),
    ("mcp_http", mcp_http::check),
    ("module", module::check),
    ("gateway", gateway::check),
    ("blocks", blocks::check),
    ("json", json::check),
];

/// A current-thread runtime of this thread's own, with time and I/O, for the targets that
/// await: made once a thread, so that an input costs no runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
    }
    RUNTIME.with(|runtime| runtime.block_on(future))
}
