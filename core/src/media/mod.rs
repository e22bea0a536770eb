//! The blocks of a tool's result and their checks, below `call/` (whose `ToolResult` holds
//! them); users reach them through [`content`](crate::content).
//!
//! | file | what |
//! | --- | --- |
//! | `block.rs` | `Block`, `Blocks`, `BlockKind` and the media types: `Image`, `Audio`, `File`, `ResourceLink`, `Resource` |
//! | `check.rs` | `ContentLimits`: how many blocks, their sizes (every text field counted), MIME types and their parameters, MIME types against bytes, link schemes (wrapped ones too) |
//! | `wire.rs` | blocks as JSON (binary as base64), the shape HTTP modules, MCP and `toolreg` use; read one at a time, up to the bound on their number |

mod block;
mod check;
pub mod wire;

pub use block::{
    Audio, Block, BlockKind, Blocks, File, Image, Resource, ResourceBody, ResourceLink,
};
pub use check::ContentLimits;
pub use check::too_many_blocks;
pub use check::{Refused, check_blocks};
