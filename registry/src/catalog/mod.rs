//! Documentation of every tool in a registry, as Markdown, JSON or an HTML page: `mod.rs`
//! picks the tools (all, or what one scope may see), `doc.rs` reads each into a [`ToolDoc`],
//! `markdown.rs` writes the Markdown, `html.rs` the page (with its inline `page.css` and
//! `page.js`).
//!
//! ```
//! # use tool_registry::Registry;
//! let registry = Registry::global();
//! let markdown = registry.catalog().markdown();
//! assert!(markdown.starts_with("# Tools"));
//! ```
//!
//! [`Catalog::html`] is one self-contained page a person browses: search as you type (`/`
//! focuses the box, Escape clears it), filters by category, module, annotation and permission
//! level, a link to each tool (`#tool-NAME`), light and dark, readable on a phone. It fetches
//! nothing, and every string from a tool is escaped, so a description cannot add markup or
//! script to it.

use serde_json::Value;

use crate::registry::Registry;
use crate::scope::Scope;

mod doc;
mod html;
mod markdown;

pub use doc::{ArgDoc, ToolDoc};

/// The documentation of a registry's tools. Get one with [`Registry::catalog`], or
/// [`Registry::catalog_for`] for what one caller may see.
pub struct Catalog<'r> {
    registry: &'r Registry,
    scope: Option<&'r Scope>,
}

impl Registry {
    /// The documentation of every tool in this registry.
    pub fn catalog(&self) -> Catalog<'_> {
        Catalog {
            registry: self,
            scope: None,
        }
    }

    /// The documentation of the tools `scope` may see and run (deferred ones included): a tool
    /// outside the scope is left out, as if it did not exist.
    ///
    /// ```
    /// # use tool_registry::{tool, Registry, Scope};
    /// /// Restart the service.
    /// #[tool(name = "ops.restart", permission = "admin")]
    /// fn restart() -> &'static str { "ok" }
    ///
    /// let registry = Registry::global();
    /// assert!(registry.catalog().markdown().contains("ops.restart"));
    /// assert!(!registry.catalog_for(&Scope::guest()).markdown().contains("ops.restart"));
    /// ```
    pub fn catalog_for<'r>(&'r self, scope: &'r Scope) -> Catalog<'r> {
        Catalog {
            registry: self,
            scope: Some(scope),
        }
    }
}

impl Catalog<'_> {
    /// Every tool's documentation, sorted by name.
    pub fn tools(&self) -> Vec<ToolDoc> {
        let snapshot = self.registry.current();
        (snapshot.tools.iter().enumerate())
            .filter(|(i, _)| {
                self.scope
                    .is_none_or(|scope| self.registry.visible(&snapshot, *i, scope))
            })
            .map(|(_, tool)| doc::tool_doc(tool))
            .collect()
    }

    /// The catalog as JSON: `{"tools": [...]}`.
    pub fn json(&self) -> Value {
        serde_json::json!({ "tools": self.tools() })
    }
}
