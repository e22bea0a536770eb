//! What a tool is: its compiled definition ([`ToolDef`], written by `#[tool]`), the metadata a
//! declaration carries, its annotations and risk, and [`Tool`], the one cheap handle the rest
//! of the crate reads, for a linked and a run-time tool alike.
//!
//! | file | what |
//! | --- | --- |
//! | `tool_def.rs` | [`ToolDef`] and the parts `#[tool]` fills in |
//! | `entry.rs` | what a handle points at: the tool with what the registry derives from it once |
//! | `tool.rs` | [`Tool`]: the handle, every field read from a definition or a spec, and the handles' constructors |
//!
//! The metadata types ([`Tier`], [`Cost`], [`Permission`], [`TagForm`], [`SourceLocation`],
//! [`ArgInfo`], [`Annotations`], [`Risk`]) are the crate's vocabulary, below both a definition
//! and a spec; they are re-exported here, where a declaration's reader looks for them.

pub(crate) mod entry;
pub(crate) mod tool;
pub(crate) mod tool_def;

pub(crate) use crate::meta::Permission;
pub use crate::meta::{Annotations, Risk};
pub use crate::meta::{ArgInfo, CachePolicy, Cost, SourceLocation, TaskSupport, Tier};
use crate::parse::TagForm;
pub(crate) use entry::{Entry, Meta, PROVIDERS, json_path};
pub(crate) use tool::Tool;
pub(crate) use tool::{linked, meta, owned};
pub use tool_def::ToolDef;
