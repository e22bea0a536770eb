//! The two forms of a request's tool list: a provider's plain list, and its strict one.

use super::{Provider, ProviderTools, StrictError};

/// The form of a request's tool list that
/// [`Registry::provider_tools`](crate::Registry::provider_tools) builds: a [`Provider`] for its
/// plain list ([`ProviderTools`]), or [`Strict`] (`provider.strict()`) for its strict one,
/// which can fail (`Result<ProviderTools, StrictError>`). Sealed: these two are the forms.
pub trait ListFormat: sealed::Sealed {
    /// What the list is answered as.
    type Output;

    /// The provider and whether the list is strict.
    #[doc(hidden)]
    fn parts(&self) -> (Provider, bool);

    /// The list in this form.
    #[doc(hidden)]
    fn answer(list: Result<ProviderTools, StrictError>) -> Self::Output;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Provider {}
    impl Sealed for super::Strict {}
}

impl ListFormat for Provider {
    type Output = ProviderTools;

    fn parts(&self) -> (Provider, bool) {
        (*self, false)
    }

    fn answer(list: Result<ProviderTools, StrictError>) -> ProviderTools {
        list.expect("a plain list always builds")
    }
}

/// A provider's tool list in strict mode ([`Provider::strict`]): each tool's schema in the
/// provider's strict subset and `"strict": true`, for OpenAI Chat Completions and Responses
/// (every property required, optional ones admitting `null`, no other keys) and for Anthropic
/// (no other keys, `required` as declared, constraints it does not check moved into the
/// descriptions, no recursive schemas); Gemini and MCP have no strict mode and get their plain
/// list. A tool whose schema strict mode cannot express is a [`StrictError`] naming the tool,
/// the place in its schema and the construct.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Strict(pub Provider);

impl ListFormat for Strict {
    type Output = Result<ProviderTools, StrictError>;

    fn parts(&self) -> (Provider, bool) {
        (self.0, true)
    }

    fn answer(list: Result<ProviderTools, StrictError>) -> Self::Output {
        list
    }
}

impl Provider {
    /// The provider's tool list in strict mode (see [`Strict`]), for
    /// [`Registry::provider_tools`](crate::Registry::provider_tools).
    pub const fn strict(self) -> Strict {
        Strict(self)
    }
}
