//! Documentation of every tool in a registry, as Markdown, JSON or an HTML page: `mod.rs`
//! picks the tools (all, or what one scope may see), `doc.rs` reads each into a [`ToolDoc`],
//! `markdown.rs` writes the Markdown, `html.rs` the page (with its inline `page.css` and
//! `page.js`), `offers.rs` the resources, templates and prompts (Markdown, JSON and a section of the page),
//! `costs.rs` what each tool and the whole list cost in prompt tokens, when counted.
//!
//! ```
//! # use tool_registry::{Listing, Registry};
//! let registry = Registry::global();
//! let markdown = registry.catalog(Listing::every()).markdown();
//! assert!(markdown.starts_with("# Tools"));
//! ```
//!
//! [`Catalog::html`] is one self-contained page a person browses: search as you type (`/`
//! focuses the box, Escape clears it), filters by category, module, annotation and permission
//! level, a link to each tool (`#tool-NAME`), light and dark, readable on a phone. It fetches
//! nothing, and every string from a tool is escaped, so a description cannot add markup or
//! script to it.

use std::marker::PhantomData;

use serde_json::Value;

use crate::def::Tool;

mod costs;
mod doc;
mod html;
mod markdown;
mod offers;

#[cfg(feature = "tokens")]
pub(crate) use costs::Costs;
pub use costs::{ListCost, TokenShare};
pub use doc::{ArgDoc, ToolDoc};

/// The documentation of a registry's tools. Get one with [`Registry::catalog`](crate::Registry::catalog), for
/// every tool (`Listing::every()`) or for what one caller may see (`&scope`).
pub struct Catalog<'r> {
    /// The tools documented, sorted by name.
    tools: Vec<Tool>,
    /// The resources, templates and prompts documented.
    offered: Offered,
    /// What the tools cost in prompt tokens: empty unless counted.
    costs: costs::Costs,
    /// What counts them, given by the registry.
    #[cfg(feature = "tokens")]
    counter: Option<costs::Counter>,
    registry: PhantomData<&'r ()>,
}

/// What a catalog documents besides tools, each list sorted: written by `offers.rs`.
#[derive(Default)]
struct Offered {
    resources: Vec<crate::offer::ResourceSpec>,
    templates: Vec<crate::offer::ResourceSpec>,
    prompts: Vec<crate::offer::PromptSpec>,
}

impl Catalog<'_> {
    /// The catalog of `tools`, sorted by name.
    pub(crate) fn new(tools: Vec<Tool>) -> Self {
        Self {
            tools,
            offered: Offered::default(),
            costs: costs::Costs::default(),
            #[cfg(feature = "tokens")]
            counter: None,
            registry: PhantomData,
        }
    }

    /// This catalog, whose token counts `counter` makes.
    #[cfg(feature = "tokens")]
    pub(crate) fn with_counter(mut self, counter: costs::Counter) -> Self {
        self.counter = Some(counter);
        self
    }

    /// This catalog with the registry's `resources`, `templates` and `prompts`.
    pub(crate) fn with_offers(
        mut self,
        resources: Vec<crate::offer::ResourceSpec>,
        templates: Vec<crate::offer::ResourceSpec>,
        prompts: Vec<crate::offer::PromptSpec>,
    ) -> Self {
        self.offered = Offered {
            resources,
            templates,
            prompts,
        };
        self
    }
}

impl Catalog<'_> {
    /// Every tool's documentation, sorted by name.
    pub fn tools(&self) -> Vec<ToolDoc> {
        let mut docs: Vec<ToolDoc> = self.tools.iter().map(doc::tool_doc).collect();
        for (doc, shares) in docs.iter_mut().zip(&self.costs.tools) {
            doc.tokens.clone_from(shares);
        }
        docs
    }

    /// The catalog as JSON: `{"tools": [...]}`, and `resources`, `resource_templates` and
    /// `prompts` when the registry offers any; with token counts, each tool's `tokens` and the
    /// whole list's (`"tokens": [{"provider", "total", "exact", "method"}, ...]`).
    pub fn json(&self) -> Value {
        let mut json = serde_json::json!({ "tools": self.tools() });
        if !self.costs.lists.is_empty() {
            json["tokens"] = serde_json::json!(self.costs.lists);
        }
        self.offers_json(&mut json);
        json
    }

    /// What the whole list costs in prompt tokens, per provider: empty unless counted
    /// ([`with_token_counts`](Self::with_token_counts)).
    pub fn token_costs(&self) -> &[ListCost] {
        &self.costs.lists
    }

    /// This catalog with what each tool and the whole list cost in prompt tokens for OpenAI
    /// (exact: the Harmony rendering counted in `o200k_base`), Anthropic and Gemini (estimates,
    /// marked so), in its JSON, Markdown and page (see
    /// [`format::tokens`](crate::format::tokens)). Feature `tokens`.
    ///
    /// ```
    /// # use tool_registry::{tool, Listing, Registry};
    /// /// Look up a word in the dictionary.
    /// #[tool]
    /// fn define(word: String) -> String { word }
    ///
    /// let catalog = Registry::global().catalog(Listing::every()).with_token_counts();
    /// let openai = &catalog.token_costs()[0];
    /// assert!(openai.exact && openai.total > 0);
    /// assert!(catalog.markdown().contains("for OpenAI"));
    /// assert_eq!(catalog.json()["tools"][0]["tokens"][0]["provider"], "openai");
    /// ```
    #[cfg(feature = "tokens")]
    pub fn with_token_counts(mut self) -> Self {
        if let Some(counter) = self.counter {
            self.costs = counter(&self.tools);
        }
        self
    }
}
