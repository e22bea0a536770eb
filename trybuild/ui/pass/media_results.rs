//! Every way a tool gives back media compiles: a media type, a block, a `Content` with or
//! without a value, under `Result`, with its output schema on, off or declared.

use tool_registry::content::{Block, Content, File, Image, ResourceLink};
use tool_registry::{ToolError, tool};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Summary {
    pages: u32,
}

/// An image.
#[tool]
fn image() -> Image {
    Image::png(vec![0x89, b'P', b'N', b'G'])
}

/// A block.
#[tool]
async fn block() -> Result<Block, ToolError> {
    Ok(Block::text("hi"))
}

/// A value with a file and a link.
#[tool(output_schema, returns(file, resource_link))]
fn report() -> Result<Content<Summary>, String> {
    Ok(Content::value(Summary { pages: 3 })
        .file(File::new("a.pdf", b"%PDF-1.7".to_vec()))
        .link(ResourceLink::new("https://example.com/a", "a")))
}

/// Blocks only, no schema.
#[tool(output_schema = false)]
fn blocks() -> Content {
    Content::new().text("only text")
}

fn main() {}
