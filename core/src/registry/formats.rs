//! What the registry gives each provider, for the tools a scope may see: the tool lists of
//! requests, the tag prompt block, the messages that carry results back. How each is written
//! and kept is [`format`](crate::format)'s.

use super::{Listing, Registry};
use crate::call::{ToolCall, ToolResult};
use crate::catalog::Catalog;
use crate::def::Tool;
use crate::format::{self, Extra, ListFormat, Provider, ProviderTools, ResultMessage, StrictError};

impl Registry {
    /// The `tools` of a request in `format`'s shape for the tools `listing` holds, in name
    /// order. `format` is a [`Provider`] for its plain list, answered as [`ProviderTools`], or
    /// [`provider.strict()`](Provider::strict) for its strict one, answered as
    /// `Result<ProviderTools, StrictError>` (see [`Strict`](crate::format::Strict)). Names are
    /// the provider's wire names ([`Provider::wire_name`]), which the registry resolves back
    /// wherever a call comes in.
    ///
    /// ```
    /// # use tool_registry::{tool, Listing, Registry, Scope};
    /// # use tool_registry::format::Provider;
    /// /// Create a document.
    /// #[tool(name = "files.create")]
    /// fn create(path: String) -> String { path }
    ///
    /// let registry = Registry::global();
    /// let tools = registry.provider_tools(Provider::Anthropic, &Scope::trusted());
    /// assert_eq!(tools[0]["name"], "files__create");
    /// assert!(registry.get("files__create", Listing::every()).is_some());
    ///
    /// let strict = registry.provider_tools(Provider::OpenAi.strict(), &Scope::trusted())?;
    /// assert_eq!(strict[0]["function"]["strict"], true);
    /// # Ok::<(), tool_registry::format::StrictError>(())
    /// ```
    ///
    /// `listing` says which tools: a `&Scope` for what it may see (tools marked
    /// `defer_loading` are left out, and what [`discovery`](crate::discovery) adds for them is
    /// in), or a [`Listing`] narrowed by a filter or of every tool. A list is built once per
    /// snapshot, provider, mode and set of tools, and shared.
    pub fn provider_tools<'a, F: ListFormat>(
        &self,
        format: F,
        listing: impl Into<Listing<'a>>,
    ) -> F::Output {
        let (provider, strict) = format.parts();
        F::answer(self.provider_list(provider, strict, listing.into()))
    }

    /// The list of the tools `listing` holds, with what [`discovery`](crate::discovery) adds
    /// for deferred tools a scope may see, built once per snapshot, provider, mode and set of
    /// tools.
    fn provider_list(
        &self,
        provider: Provider,
        strict: bool,
        listing: Listing<'_>,
    ) -> Result<ProviderTools, StrictError> {
        let snapshot = self.current();
        let mut listing = listing;
        let scope = listing.scope;
        let visible = |i: usize| scope.is_none_or(|scope| self.visible(&snapshot, i, scope));
        let extra = match scope {
            Some(scope) => self.extra(&snapshot, provider, scope),
            None => Extra::Nothing,
        };
        let members: Option<Box<[u32]>> = match (extra, scope) {
            // Every tool, unfiltered: found in the cache without listing them.
            (_, None) if !listing.filters() => None,
            // Deferred tools are in the list, flagged for the provider's own search; every
            // tool, whatever the scope and switches, for `Listing::every`.
            (Extra::Native, _) | (_, None) => Some(
                (snapshot.tools.iter().enumerate())
                    .filter(|(i, tool)| visible(*i) && listing.keeps(tool))
                    .map(|(i, _)| i as u32)
                    .collect(),
            ),
            (_, Some(scope)) => Some(
                self.listed(&snapshot, scope)
                    .filter(|(_, tool)| listing.keeps(tool))
                    .map(|(i, _)| i as u32)
                    .collect(),
            ),
        };
        let metas: Vec<&'static Tool> = match extra {
            Extra::MetaTools => (self.meta_tools_of(&snapshot))
                .filter(|tool| listing.keeps(tool))
                .collect(),
            _ => Vec::new(),
        };
        let mut meta_bits = 0;
        if !metas.is_empty() {
            for (bit, meta) in self.meta_tools_of(&snapshot).enumerate() {
                if metas.iter().any(|m| m.same(meta)) {
                    meta_bits |= 1 << bit;
                }
            }
        }
        let tools = &snapshot.tools;
        let (lists, metas) = (&snapshot.lists, &metas[..]);
        format::list(
            lists, tools, provider, strict, extra, members, metas, meta_bits,
        )
    }

    /// The instruction section of a prompt that teaches a model the response tags of the tools
    /// `listing` holds that declare one (the knowledge-base bot's `prompt_block`): every such
    /// tool with [`Listing::every`], those a scope may see and run (deferred ones included)
    /// with a `&Scope`. Empty when no tool has a tag.
    ///
    /// ```
    /// # use tool_registry::tool;
    /// use tool_registry::Listing;
    ///
    /// /// Search the knowledge base for notes on a topic.
    /// #[tool(tag = "RESEARCH", example = "RESEARCH: [search query]")]
    /// fn research(query: String) -> String { query }
    ///
    /// let block = tool_registry::Registry::global().prompt_block(Listing::every());
    /// assert!(block.contains("- `RESEARCH: [search query]`: Search the knowledge base for notes on a topic."));
    /// ```
    pub fn prompt_block<'a>(&self, listing: impl Into<Listing<'a>>) -> String {
        let mut listing = listing.into();
        let snapshot = self.current();
        let tools: Vec<Tool> = (snapshot.tools.iter().enumerate())
            .filter(|(i, tool)| tool.tag().is_some() && self.lists(&snapshot, *i, &mut listing))
            .map(|(_, tool)| tool.clone())
            .collect();
        format::prompt_block(&tools)
    }

    /// `result`, the answer to `call`, as what `provider` expects back: its result message (or
    /// content block, or part), and for OpenAI Chat Completions the media a `tool` message
    /// cannot carry, in a `user` message after it. The call's id and name are echoed as the
    /// model wrote them.
    ///
    /// ```
    /// # use serde_json::json;
    /// # use tool_registry::{Registry, ToolCall, ToolResult};
    /// # use tool_registry::format::Provider;
    /// let mut call = ToolCall::new("search", json!({"query": "rust"}));
    /// call.id = Some("toolu_01".into());
    /// let answer = Registry::global().result_message(Provider::Anthropic, &call, &ToolResult::ok("3 notes"));
    /// assert_eq!(answer.message, json!({
    ///     "type": "tool_result", "tool_use_id": "toolu_01", "content": "3 notes", "is_error": false
    /// }));
    /// ```
    ///
    /// A result with [blocks](crate::content) carries them as the provider's own parts, and
    /// says in text what the provider cannot take (see the table in
    /// [`format`](mod@format)'s `results.rs`). Append
    /// [`into_messages`](ResultMessage::into_messages) to the conversation:
    ///
    /// ```
    /// # use serde_json::json;
    /// # use tool_registry::content::Image;
    /// # use tool_registry::{Registry, ToolCall, ToolResult};
    /// # use tool_registry::format::Provider;
    /// let mut call = ToolCall::new("chart", json!({}));
    /// call.id = Some("call_1".into());
    /// let png = b"\x89PNG\r\n\x1a\n".to_vec();
    /// let result = ToolResult::ok(json!({"bars": 3})).with_block(Image::png(png));
    ///
    /// let messages = Registry::global().result_message(Provider::OpenAi, &call, &result).into_messages();
    /// assert_eq!(messages.len(), 2);
    /// assert_eq!(messages[0]["role"], "tool");
    /// assert_eq!(messages[0]["content"][0]["text"], r#"{"bars":3}"#);
    /// assert_eq!(messages[1]["role"], "user");
    /// assert_eq!(messages[1]["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgo=");
    ///
    /// let messages = Registry::global().result_message(Provider::Anthropic, &call, &result).into_messages();
    /// assert_eq!(messages.len(), 1);
    /// assert_eq!(messages[0]["content"][1]["type"], "image");
    /// ```
    pub fn result_message(
        &self,
        provider: Provider,
        call: &ToolCall,
        result: &ToolResult,
    ) -> ResultMessage {
        let tool = self.output_tool(provider, call);
        ResultMessage::of(
            provider,
            tool.as_ref().and_then(Tool::output_schema),
            call,
            result,
        )
    }

    /// `call`'s tool, whose output schema only MCP's results reflect.
    fn output_tool(&self, provider: Provider, call: &ToolCall) -> Option<Tool> {
        (provider == Provider::Mcp)
            .then(|| self.lookup(&call.name))
            .flatten()
    }

    /// The documentation of the tools `listing` holds, sorted by name: with a `&Scope`, those
    /// it may see and run (deferred ones included; a tool outside the scope is left out, as
    /// if it did not exist); with [`Listing::every`], every tool whatever the scope and
    /// switches.
    ///
    /// ```
    /// # use tool_registry::{tool, Listing, Registry, Scope};
    /// /// Restart the service.
    /// #[tool(name = "ops.restart", permission = "admin")]
    /// fn restart() -> &'static str { "ok" }
    ///
    /// let registry = Registry::global();
    /// assert!(registry.catalog(Listing::every()).markdown().contains("ops.restart"));
    /// assert!(!registry.catalog(&Scope::guest()).markdown().contains("ops.restart"));
    /// ```
    pub fn catalog<'a>(&self, listing: impl Into<Listing<'a>>) -> Catalog<'_> {
        let mut listing = listing.into();
        let snapshot = self.current();
        let tools = (snapshot.tools.iter().enumerate())
            .filter(|(i, _)| self.lists(&snapshot, *i, &mut listing))
            .map(|(_, tool)| tool.clone());
        let catalog = Catalog::new(tools.collect());
        #[cfg(feature = "tokens")]
        let catalog = catalog.with_counter(token_costs);
        match listing.scope {
            Some(scope) => catalog.with_offers(
                self.resources(scope),
                self.resource_templates(scope),
                self.prompts(scope),
            ),
            None => {
                let offers = self.offers.load();
                catalog.with_offers(
                    offers.resources.to_vec(),
                    offers.templates.to_vec(),
                    offers.prompts.to_vec(),
                )
            }
        }
    }
}

/// What `tools` (in the catalog's order) cost in prompt tokens for OpenAI (exact), Anthropic
/// and Gemini (estimates): the counts [`Catalog::with_token_counts`] shows.
#[cfg(feature = "tokens")]
fn token_costs(tools: &[crate::Tool]) -> crate::catalog::Costs {
    use crate::catalog::{ListCost, TokenShare};
    let mut costs = crate::catalog::Costs {
        lists: Vec::new(),
        tools: vec![Vec::new(); tools.len()],
    };
    for provider in [Provider::OpenAi, Provider::Anthropic, Provider::Gemini] {
        let count = crate::format::tokens::of_tools(provider, tools);
        for (shares, (_, tokens)) in costs.tools.iter_mut().zip(&count.tools) {
            shares.push(TokenShare {
                provider: count.provider,
                tokens: *tokens,
                exact: count.exact,
            });
        }
        costs.lists.push(ListCost {
            provider: count.provider,
            total: count.total,
            exact: count.exact,
            method: count.method,
        });
    }
    costs
}

#[cfg(feature = "tokens")]
impl Registry {
    /// What the tool list `listing` gives `provider` costs in prompt tokens, each tool and the
    /// whole list (see [`format::tokens`](crate::format::tokens)).
    ///
    /// ```
    /// use tool_registry::format::Provider;
    /// use tool_registry::{Registry, Scope, tool};
    ///
    /// /// Add two numbers.
    /// #[tool]
    /// fn add(a: i64, b: i64) -> i64 { a + b }
    ///
    /// let cost = Registry::global().token_count(Provider::OpenAi, &Scope::trusted());
    /// assert!(cost.exact && cost.total > 0);
    /// assert!(cost.tools.iter().any(|(name, tokens)| name == "add" && *tokens > 0));
    /// ```
    pub fn token_count<'a>(
        &self,
        provider: Provider,
        listing: impl Into<crate::Listing<'a>>,
    ) -> crate::format::tokens::TokenCount {
        crate::format::tokens::count(provider, &self.provider_tools(provider, listing))
    }
}
