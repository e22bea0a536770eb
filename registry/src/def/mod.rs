//! What a tool is: its compiled definition ([`ToolDef`], written by `#[tool]`), the metadata a
//! declaration carries, its annotations and risk, and [`Tool`], the one cheap handle the rest
//! of the crate reads, for a linked and a run-time tool alike.
//!
//! | file | what |
//! | --- | --- |
//! | `tool_def.rs` | [`ToolDef`] and the parts `#[tool]` fills in |
//! | `meta.rs` | [`Tier`], [`Cost`], [`Permission`], [`TagForm`], [`SourceLocation`], [`ArgInfo`] |
//! | `annotations.rs` | [`Annotations`] as declared and as they apply, and the [`Risk`] they imply |
//! | `tool.rs` | [`Tool`]: the handle, and every field read from a definition or a spec |
//! | `entry.rs` | what a handle points at: the tool with what the registry derives from it once |

pub(crate) mod entry;
mod tool;
pub(crate) mod tool_def;

pub use crate::meta::{Annotations, Risk};
pub use crate::meta::{ArgInfo, Cost, Permission, SourceLocation, TagForm, Tier};
pub(crate) use entry::{Entry, Meta};
pub use tool::Tool;
pub(crate) use tool::{linked, meta, owned};
pub use tool_def::ToolDef;
