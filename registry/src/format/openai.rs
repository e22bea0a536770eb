//! OpenAI Chat Completions `tools`.

use serde_json::{Map, Value, json};

use std::sync::Arc;

use crate::def::Tool;
use crate::registry::Registry;
use crate::scope::Scope;

/// The `{"type": "function", "function": {...}}` object of one tool, from its input schema.
pub fn openai_function(def: &Tool, input_schema: &schemars::Schema) -> Value {
    let mut parameters = match input_schema.as_value() {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    parameters.remove("$schema");
    parameters.remove("title");
    parameters.entry("properties").or_insert_with(|| json!({}));
    json!({
        "type": "function",
        "function": {
            "name": def.name(),
            "description": def.description(),
            "parameters": parameters,
        }
    })
}

impl Registry {
    /// The OpenAI Chat Completions `tools` array of the tools `scope` may see, in name order.
    /// Each tool's entry is built once and reused.
    pub fn openai_tools(&self, scope: &Scope) -> Value {
        self.openai_tools_where(scope, |_| true)
    }

    /// The OpenAI `tools` array of every tool, whatever the scope, built once per set of tools
    /// and reused.
    pub fn openai_tools_all(&self) -> Arc<Value> {
        let snapshot = self.current();
        Arc::clone(snapshot.openai_all.get_or_init(|| {
            Arc::new(Value::Array(
                snapshot
                    .tools
                    .iter()
                    .map(|tool| openai_of(tool).clone())
                    .collect(),
            ))
        }))
    }

    /// The OpenAI `tools` array of the tools `scope` may see and `keep` accepts, in name order.
    pub fn openai_tools_where(&self, scope: &Scope, mut keep: impl FnMut(&Tool) -> bool) -> Value {
        let snapshot = self.current();
        Value::Array(
            self.listed(&snapshot, scope)
                .filter(|(_, tool)| keep(tool))
                .map(|(_, tool)| openai_of(tool).clone())
                .collect(),
        )
    }
}

/// The cached OpenAI entry of one tool.
fn openai_of(tool: &Tool) -> &Value {
    tool.entry()
        .openai
        .get_or_init(|| openai_function(tool, tool.input_schema()))
}
