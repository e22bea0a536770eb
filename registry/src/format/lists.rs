//! The tool list of a request, in each provider's shape: the tools a scope may see, each
//! tool's definition built once and reused.

use std::sync::Arc;

use serde_json::{Value, json};

use super::Provider;
use super::definitions::definition;
use crate::def::Tool;
use crate::registry::Registry;
use crate::scope::Scope;

impl Registry {
    /// The `tools` of a request to `provider` for the tools `scope` may see, in name order:
    /// an array of tool objects (for Gemini, one `{"functionDeclarations": [...]}` object). Names
    /// are the provider's wire names ([`Provider::wire_name`]), which the registry resolves back
    /// wherever a call comes in.
    ///
    /// ```
    /// # use tool_registry::{tool, Registry, Scope};
    /// # use tool_registry::format::Provider;
    /// /// Create a document.
    /// #[tool(name = "files.create")]
    /// fn create(path: String) -> String { path }
    ///
    /// let registry = Registry::global();
    /// let tools = registry.tools_for(Provider::Anthropic, &Scope::trusted());
    /// assert_eq!(tools[0]["name"], "files__create");
    /// assert!(registry.get("files__create").is_some());
    /// ```
    pub fn tools_for(&self, provider: Provider, scope: &Scope) -> Value {
        self.tools_for_where(provider, scope, |_| true)
    }

    /// [`tools_for`](Self::tools_for) for the tools `scope` may see and `keep` accepts.
    pub fn tools_for_where(
        &self,
        provider: Provider,
        scope: &Scope,
        mut keep: impl FnMut(&Tool) -> bool,
    ) -> Value {
        let snapshot = self.current();
        let definitions: Vec<Value> = self
            .listed(&snapshot, scope)
            .filter(|(_, tool)| keep(tool))
            .map(|(_, tool)| cached(tool, provider).clone())
            .collect();
        wrap(provider, definitions)
    }

    /// The OpenAI Chat Completions `tools` array of the tools `scope` may see, in name order
    /// (`tools_for(Provider::OpenAi, scope)`).
    pub fn openai_tools(&self, scope: &Scope) -> Value {
        self.tools_for(Provider::OpenAi, scope)
    }

    /// The OpenAI `tools` array of the tools `scope` may see and `keep` accepts, in name order.
    pub fn openai_tools_where(&self, scope: &Scope, keep: impl FnMut(&Tool) -> bool) -> Value {
        self.tools_for_where(Provider::OpenAi, scope, keep)
    }

    /// The OpenAI `tools` array of every tool, whatever the scope, built once per set of tools
    /// and reused.
    pub fn openai_tools_all(&self) -> Arc<Value> {
        let snapshot = self.current();
        Arc::clone(snapshot.openai_all.get_or_init(|| {
            Arc::new(Value::Array(
                (snapshot.tools.iter())
                    .map(|tool| cached(tool, Provider::OpenAi).clone())
                    .collect(),
            ))
        }))
    }
}

/// One tool's definition for `provider`, built on first use.
fn cached(tool: &Tool, provider: Provider) -> &Value {
    tool.entry().formats[provider.index()].get_or_init(|| definition(tool, provider))
}

/// The list as the provider's request takes it.
fn wrap(provider: Provider, definitions: Vec<Value>) -> Value {
    match provider {
        Provider::Gemini if definitions.is_empty() => json!([]),
        Provider::Gemini => json!([{ "functionDeclarations": definitions }]),
        _ => Value::Array(definitions),
    }
}
