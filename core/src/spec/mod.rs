//! Tools registered at run time (the Tool Registry v2 rules): [`ToolSpec`], the handler that
//! runs them, what the registry reports about them, and its snapshot.
//!
//! | file | what |
//! | --- | --- |
//! | `tool_spec.rs` | [`ToolSpec`]: its fields as JSON, the name rule, the schema checks; [`SpecError`] |
//! | `depth.rs` | [`MAX_SCHEMA_DEPTH`]: how deep schemas may nest |
//! | `builder.rs` | [`ToolSpecBuilder`], and [`ToolSpec::builder`] that starts one |
//! | `handler.rs` | [`ToolHandler`]: an `async` closure over JSON arguments and the call's context |
//! | `registration.rs` | [`RegisterError`], [`RegistryChange`], [`RegistrySnapshot`] |
//!
//! The registry's side of the lifecycle (register, replace, switch, remove, snapshot,
//! restore) is in `registry/lifecycle.rs`.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use serde_json::json;
//! use tool_registry::spec::ToolHandler;
//! use tool_registry::{Ctx, Registry, ToolSpec};
//!
//! let registry = Registry::builder().without_linked().build()?;
//! let spec = ToolSpec::builder("weather_lookup")
//!     .version("1.0.0")
//!     .description("Look up the weather of a city.")
//!     .input_schema(json!({
//!         "type": "object",
//!         "properties": { "city": { "type": "string" } },
//!         "required": ["city"],
//!     }))
//!     .build()?;
//! registry.register(spec, ToolHandler::new(|args, _ctx| async move {
//!     Ok::<_, String>(json!({ "city": args["city"], "temp": 21 }))
//! }))?;
//!
//! let result = registry.call("weather_lookup", r#"{"city": "Oslo"}"#, &Ctx::new()).await?;
//! assert_eq!(result.content["temp"], 21);
//!
//! let error = registry.call("weather_lookup", r#"{"city": 7}"#, &Ctx::new()).await.unwrap_err();
//! assert_eq!(error.code(), "invalid_arguments");
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```

mod builder;
pub(crate) mod depth;
mod handler;
mod registration;
pub(crate) mod tool_spec;

pub use crate::schema::{MAX_SCHEMA_NODES, MAX_WALK_DEPTH};
pub use builder::ToolSpecBuilder;
pub use depth::MAX_SCHEMA_DEPTH;
pub use handler::ToolHandler;
pub use registration::{Origin, RegisterError, RegistryChange, RegistrySnapshot, SnapshotEntry};
pub use tool_spec::SpecError;
pub(crate) use tool_spec::{Fields, ToolSpec};
