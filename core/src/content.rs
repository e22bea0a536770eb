//! What a tool gives back besides a JSON value: images, audio, files, links to resources and
//! embedded resources, as typed blocks every front end carries.
//!
//! A [`ToolResult`](crate::ToolResult) is an optional structured value (`content`, which the
//! model reads as the first text block) followed by an ordered list of [`Block`]s. The common
//! case stays one line: a tool returning `T: Serialize` gives the structured value, as before.
//! A tool that returns media says so in its return type:
//!
//! ```
//! use tool_registry::content::{Content, File, Image, ResourceLink};
//! use tool_registry::tool;
//!
//! /// Draw the logo.
//! #[tool(read_only)]
//! fn logo() -> Image {
//!     let png: Vec<u8> = draw();
//!     Image::png(png)
//! }
//! # fn draw() -> Vec<u8> { b"\x89PNG\r\n\x1a\n...".to_vec() }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Report { quarter: u8, pages: u32 }
//!
//! /// The quarterly report: its summary, the PDF, and a link to the archive.
//! #[tool(read_only)]
//! fn report() -> Content<Report> {
//!     Content::value(Report { quarter: 3, pages: 12 })
//!         .file(File::new("q3.pdf", b"%PDF-1.7 ...".to_vec()))
//!         .link(ResourceLink::new("https://example.com/reports/q3", "q3 archive"))
//! }
//! ```
//!
//! The macro derives the output schema from the structured part (`Report` above) when it
//! implements `schemars::JsonSchema`, and records which kinds of blocks the tool returns
//! ([`IntoToolResult::KINDS`]) for the catalog.
//!
//! Every result is checked before it leaves the registry, a failed one too ([`ContentLimits`]):
//! the number of blocks (1,000 by default), a block's size (everything it carries: its bytes or
//! text and its names, title, description and MIME type) and the result's total size are
//! bounded, an image, audio clip or PDF must start as its MIME type says, a MIME type's
//! parameters are `; name=value` without control characters, and links may not use the
//! `file:`, `javascript:`, `vbscript:`, `data:` or `blob:` schemes, nor wrap them
//! (`jar:file:`). A result that fails is an [`invalid_output`](crate::ToolError::InvalidOutput)
//! error. Answers from HTTP modules and MCP servers are read within the same bounds: their
//! blocks are counted before they are built.
//!
//! This module gathers what a tool's author needs; the blocks and their checks live in
//! `media/` (below `call/`, whose `ToolResult` holds them), what a tool may return in
//! `call/into_result.rs`.

pub use crate::call::into_result::{Content, IntoToolResult, NoValue, Structured};
/// Blocks as JSON (binary as base64), the shape of the HTTP modules' wire, MCP's answers and
/// `toolreg`: written and read one at a time, counted before they are read. What a front end of
/// one's own uses to put results on its wire within the same bounds.
pub use crate::media::wire;
pub use crate::media::{
    Audio, Block, BlockKind, Blocks, ContentLimits, File, Image, Refused, Resource, ResourceBody,
    ResourceLink, check_blocks, too_many_blocks,
};
