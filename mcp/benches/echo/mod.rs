//! What the HTTP and MCP benchmarks share: a registry of run-time echo tools.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_registry::ToolSpec;
use tool_registry::spec::ToolHandler;
use tool_registry::{Ctx, Registry};

/// What every echo tool says of itself.
pub const DESCRIPTION: &str = "Answer the arguments as they came.";

/// Every echo tool's input schema: one required string, `text`.
pub fn input_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "text": { "type": "string", "description": "What to echo" } },
        "required": ["text"],
    })
}

/// A registry of one run-time tool per name, each answering its arguments (`{"text": ...}`).
pub fn echo_registry(names: impl IntoIterator<Item = String>) -> Arc<Registry> {
    let registry = Registry::builder().without_linked().build().unwrap();
    for name in names {
        let spec = ToolSpec::builder(name)
            .version("1.0.0")
            .description(DESCRIPTION)
            .input_schema(input_schema())
            .build()
            .unwrap();
        registry
            .register(
                spec,
                ToolHandler::new(|args: Value, _ctx: Ctx| async move { Ok::<_, String>(args) }),
            )
            .unwrap();
    }
    Arc::new(registry)
}
