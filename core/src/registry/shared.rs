//! [`Shared`]: a registry that a server, a gateway or a background task keeps.

use std::ops::Deref;
use std::sync::Arc;

use super::Registry;

/// A registry kept by what outlives one call (an HTTP or MCP server, a gateway): a
/// `&'static Registry` (such as [`Registry::global`]) or an `Arc<Registry>`.
#[derive(Clone)]
pub enum Shared {
    /// A registry that lives as long as the program.
    Static(&'static Registry),
    /// A registry shared by reference count.
    Arc(Arc<Registry>),
}

impl Deref for Shared {
    type Target = Registry;

    fn deref(&self) -> &Registry {
        match self {
            Self::Static(registry) => registry,
            Self::Arc(registry) => registry,
        }
    }
}

impl From<&'static Registry> for Shared {
    fn from(registry: &'static Registry) -> Self {
        Self::Static(registry)
    }
}

impl From<Arc<Registry>> for Shared {
    fn from(registry: Arc<Registry>) -> Self {
        Self::Arc(registry)
    }
}
