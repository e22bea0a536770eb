//! A test kit for a registry's tools, for an application's own tests (a dev-dependency,
//! through `tool-registry`'s feature `testing`):
//!
//! - [`call_every_tool`]: every tool called with arguments drawn from its input schema (edge
//!   values and random ones, all valid), every panic, timeout, invalid result and refused valid
//!   argument reported with the arguments that did it. One line smoke-tests a registry:
//!   `call_every_tool(&registry).await.assert_healthy()`.
//! - [`ScriptedModel`]: a model whose turns are written beforehand, in any provider's native
//!   shape or any text format the parser reads, run through parse, gates, calls and the
//!   provider's result messages, with every step kept for assertions.
//! - `McpClient` (feature `mcp`): an MCP client in the same process as a server built from a
//!   registry.
//!
//! ```
//! use tool_registry::{Registry, tool};
//! use tool_registry::testing::call_every_tool;
//!
//! /// Repeat `text` `times` times.
//! #[tool]
//! fn repeat(text: String, #[arg(min = 0, max = 5)] times: usize) -> String {
//!     text.repeat(times)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Registry::builder().build()?;
//! let report = call_every_tool(&registry).await;
//! report.assert_healthy();
//! assert!(report.of("repeat").count() >= 3);
//! # Ok(())
//! # }
//! ```
//!
//! | file | what |
//! | --- | --- |
//! | `lib.rs` | this map |
//! | `values.rs` | arguments from a schema: the edge cases, proptest strategies, each checked against the schema |
//! | `every.rs` | [`call_every_tool`] and its [`Report`] |
//! | `script.rs` | [`ScriptedModel`] and its [`Transcript`] |
//! | `mcp.rs` | `McpClient`: rmcp's client over an in-memory pipe to an `McpServer` (feature `mcp`) |

#![warn(missing_docs)]

mod every;
#[cfg(feature = "mcp")]
mod mcp;
mod script;
mod values;

pub use every::{
    DEFAULT_DRAWN, DEFAULT_TIMEOUT, EveryTool, Finding, Outcome, Report, call_every_tool,
};
#[cfg(feature = "mcp")]
pub use mcp::{McpClient, McpClientError, Revision};
pub use script::{ScriptedModel, Transcript, Turn, TurnRun};
pub use values::Case;
