//! Collects every error of one expansion so that all are reported at once.

use std::fmt::Display;

use proc_macro2::Span;
use quote::ToTokens;

/// The errors of one expansion. It must be ended with [`Ctxt::finish`]: dropping it unchecked
/// would lose errors silently, so it panics instead (as serde_derive's does), which the tests
/// would show at once.
pub(crate) struct Ctxt {
    errors: Option<Vec<syn::Error>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Self {
            errors: Some(Vec::new()),
        }
    }

    pub(crate) fn error_spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn error_at(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn push(&mut self, error: syn::Error) {
        self.errors
            .as_mut()
            .expect("Ctxt used after finish")
            .push(error);
    }

    /// All errors joined into one, or `None`.
    pub(crate) fn finish(mut self) -> Option<syn::Error> {
        let mut errors = self.errors.take().expect("Ctxt finished twice").into_iter();
        let mut first = errors.next()?;
        for error in errors {
            first.combine(error);
        }
        Some(first)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if self.errors.is_some() && !std::thread::panicking() {
            panic!("Ctxt dropped without `finish`: its errors would be lost");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ctxt;

    #[test]
    fn finish_joins_every_error() {
        let mut cx = Ctxt::new();
        cx.error_at(proc_macro2::Span::call_site(), "one");
        cx.error_at(proc_macro2::Span::call_site(), "two");
        let errors: Vec<String> = cx
            .finish()
            .unwrap()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(errors, ["one", "two"]);
        assert!(Ctxt::new().finish().is_none());
    }

    #[test]
    #[should_panic(expected = "dropped without `finish`")]
    fn dropping_it_unchecked_panics() {
        let mut cx = Ctxt::new();
        cx.error_at(proc_macro2::Span::call_site(), "lost");
        drop(cx);
    }
}
