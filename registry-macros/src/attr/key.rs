//! One key of `#[tool(...)]` or `#[arg(...)]` as it is read, and the errors about keys
//! themselves: unknown, repeated, or given a value of the wrong form.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::{Expr, Token};

use crate::ctxt::Ctxt;

/// One key of `#[tool(...)]` or `#[arg(...)]` as it is read, with what follows it.
pub(super) struct Key<'a, 'm> {
    /// `tool` or `arg`.
    kind: &'static str,
    /// The key's own name: `desc` where `description` was written.
    pub(super) name: &'a str,
    pub(super) meta: &'a ParseNestedMeta<'m>,
}

impl<'a, 'm> Key<'a, 'm> {
    pub(super) fn new(kind: &'static str, name: &'a str, meta: &'a ParseNestedMeta<'m>) -> Self {
        Self { kind, name, meta }
    }

    /// Reports this key as written a second time in the same attribute.
    pub(super) fn duplicate(&self, cx: &mut Ctxt) {
        let written = self
            .meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        let same = if written == self.name {
            String::new()
        } else {
            format!(" (the same as `{}`)", self.name)
        };
        cx.error_spanned(
            &self.meta.path,
            format!(
                "duplicate {} attribute `{written}`{same}; keep one of them",
                self.kind
            ),
        );
    }

    /// Reports a key that is none of `known`, then steps over its value so parsing goes on.
    pub(super) fn unknown(&self, cx: &mut Ctxt, known: &[&str]) -> syn::Result<()> {
        cx.error_spanned(&self.meta.path, unknown_key(self.kind, self.name, known));
        skip_value(self.meta)
    }
}

fn unknown_key(kind: &str, unknown: &str, known: &[&str]) -> String {
    match suggest(unknown, known) {
        Some(best) => format!("unknown {kind} attribute `{unknown}`; did you mean `{best}`?"),
        None => format!(
            "unknown {kind} attribute `{unknown}`; expected one of: {}",
            known.join(", ")
        ),
    }
}

pub(super) fn expects(key: &str, what: &str, example: &str) -> String {
    format!("`{key}` expects {what}, e.g. `{key} = {example}`")
}

/// Consumes `= value` or `(...)` after an unknown or duplicate key so parsing goes on.
pub(super) fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

/// The closest known key, when one is close enough to be a typo.
fn suggest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(unknown, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}
