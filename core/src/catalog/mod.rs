//! Documentation of every tool in a registry, as Markdown, JSON or an HTML page: `mod.rs`
//! picks the tools (all, or what one scope may see), `doc.rs` reads each into a [`ToolDoc`],
//! `markdown.rs` writes the Markdown, `html.rs` the page (with its inline `page.css` and
//! `page.js`), `offers.rs` the resources, templates and prompts (Markdown, JSON and a section of the page).
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

mod doc;
mod html;
mod markdown;
mod offers;

pub use doc::{ArgDoc, ToolDoc};

/// The documentation of a registry's tools. Get one with [`Registry::catalog`](crate::Registry::catalog), for
/// every tool (`Listing::every()`) or for what one caller may see (`&scope`).
pub struct Catalog<'r> {
    /// The tools documented, sorted by name.
    tools: Vec<Tool>,
    /// The resources, templates and prompts documented.
    offered: Offered,
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
            registry: PhantomData,
        }
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
        self.tools.iter().map(doc::tool_doc).collect()
    }

    /// The catalog as JSON: `{"tools": [...]}`, and `resources`, `resource_templates` and
    /// `prompts` when the registry offers any.
    pub fn json(&self) -> Value {
        let mut json = serde_json::json!({ "tools": self.tools() });
        self.offers_json(&mut json);
        json
    }
}
