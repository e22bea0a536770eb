//! The values `#[tool(...)]` and `#[arg(...)]` keys take: strings, versions, text, paths, choices,
//! flags, numbers, durations and lists, each read with the error a mistaken value deserves, and
//! kept with the span it was written at ([`Sp`]).

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitBool, LitInt, LitStr, Path, Token};

use super::key::{Key, expects, skip_value};
use crate::ctxt::Ctxt;
use crate::targets::TARGETS;

/// A value with the span of the token it came from.
#[derive(Clone)]
pub(crate) struct Spanned_<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

pub(crate) type Sp<T> = Spanned_<T>;

fn sp<T>(value: T, span: Span) -> Sp<T> {
    Spanned_ { value, span }
}

/// A string given either as a literal or as a macro such as `include_str!("doc.md")`.
#[derive(Clone)]
pub(crate) enum Text {
    Literal(String),
    Macro(Expr),
}

pub(super) fn string(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<LitStr>> {
    let meta = key.meta;
    if !meta.input.peek(Token![=]) {
        cx.error_spanned(&meta.path, expects(key.name, "a string", "\"...\""));
        skip_value(meta)?;
        return Ok(None);
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(Some(s)),
        other => {
            cx.error_spanned(other, expects(key.name, "a string", "\"...\""));
            Ok(None)
        }
    }
}

/// A semantic version (<https://semver.org>), by the rule `ToolSpec` applies at run time
/// (`core/src/spec/mod.rs`, `SpecError::Version`), which a compiled tool's spec meets again
/// when a snapshot is read back. Both parse with the `semver` crate, so the two say the same.
pub(super) fn version(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<LitStr>> {
    let Some(lit) = string(cx, key)? else {
        return Ok(None);
    };
    match semver::Version::parse(&lit.value()) {
        Ok(_) => Ok(Some(lit)),
        Err(error) => {
            cx.error_spanned(
                &lit,
                format!("`version` must be a semantic version ({error}); write MAJOR.MINOR.PATCH, such as \"1.0.0\", \"0.3.1\" or \"2.0.0-beta.1\""),
            );
            Ok(None)
        }
    }
}

/// One line of text, not blank: what listings show of a tool (`short_description`).
pub(super) fn one_line(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<LitStr>> {
    let Some(lit) = string(cx, key)? else {
        return Ok(None);
    };
    let value = lit.value();
    let problem = if value.trim().is_empty() {
        "is empty; write the one line listings show, or leave `short_description` out for the description's first sentence"
    } else if value.contains(['\n', '\r']) {
        "spans several lines; it is the one line listings show, so keep it to one (the description holds the rest)"
    } else {
        return Ok(Some(lit));
    };
    cx.error_spanned(&lit, format!("`{}` {problem}", key.name));
    Ok(None)
}

/// A string literal or a macro such as `include_str!("doc.md")`.
pub(super) fn text(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Sp<Text>>> {
    let expr: Expr = key.meta.value()?.parse()?;
    let span = expr.span();
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(Some(sp(Text::Literal(s.value()), span))),
        Expr::Macro(_) => Ok(Some(sp(Text::Macro(expr), span))),
        other => {
            cx.error_spanned(
                other,
                expects(key.name, "a string", "\"Search the notes.\""),
            );
            Ok(None)
        }
    }
}

/// A path, bare or in a string.
pub(super) fn crate_path(_: &mut Ctxt, key: &Key) -> syn::Result<Option<Path>> {
    let value = key.meta.value()?;
    Ok(Some(if value.peek(LitStr) {
        value.parse::<LitStr>()?.parse()?
    } else {
        value.parse()?
    }))
}

/// The path of a predicate: `enabled`'s `fn(&Scope) -> bool`, `confirm_if`'s function of the
/// model arguments.
pub(super) fn predicate(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Path>> {
    let expr: Expr = key.meta.value()?.parse()?;
    match expr {
        Expr::Path(path) if path.qself.is_none() => Ok(Some(path.path)),
        other => {
            let wanted = if key.name == "confirm_if" {
                "`confirm_if` expects the path of a function taking the tool's model arguments by reference, in order, and returning `bool` (true: the call needs approval), e.g. `confirm_if = outside_tmp`"
            } else {
                "`enabled` expects the path of a `fn(&Scope) -> bool`, e.g. `enabled = has_documents`"
            };
            cx.error_spanned(other, wanted);
            Ok(None)
        }
    }
}

/// A string that must be one of `options`.
pub(super) fn choice(
    options: &[&str],
) -> impl FnOnce(&mut Ctxt, &Key) -> syn::Result<Option<Sp<String>>> {
    move |cx, key| {
        let quoted = options
            .iter()
            .map(|o| format!("\"{o}\""))
            .collect::<Vec<_>>()
            .join(", ");
        let Some(lit) = string(cx, key)? else {
            return Ok(None);
        };
        let value = lit.value();
        if options.contains(&value.as_str()) {
            Ok(Some(sp(value, lit.span())))
        } else {
            cx.error_spanned(
                &lit,
                format!("`{}` must be one of {quoted}; found \"{value}\"", key.name),
            );
            Ok(None)
        }
    }
}

pub(super) fn flag(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Sp<bool>>> {
    let (name, meta) = (key.name, key.meta);
    if !meta.input.peek(Token![=]) {
        if meta.input.peek(syn::token::Paren) {
            cx.error_spanned(
                &meta.path,
                format!("`{name}` is a flag: write `{name}` or `{name} = false`"),
            );
            skip_value(meta)?;
            return Ok(None);
        }
        return Ok(Some(sp(true, meta.path.span())));
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(LitBool { value, span }),
            ..
        }) => Ok(Some(sp(value, span))),
        other => {
            cx.error_spanned(
                other,
                format!("`{name}` expects `true` or `false`, or no value at all"),
            );
            Ok(None)
        }
    }
}

/// `key = N` with `N` a whole number of at least 1; `message` says so otherwise.
pub(super) fn positive(
    message: &str,
) -> impl FnOnce(&mut Ctxt, &Key) -> syn::Result<Option<Sp<usize>>> {
    move |cx, key| {
        let expr: Expr = key.meta.value()?.parse()?;
        match &expr {
            Expr::Lit(ExprLit {
                lit: Lit::Int(int), ..
            }) => match int.base10_parse::<usize>() {
                Ok(n) if n > 0 => Ok(Some(sp(n, int.span()))),
                _ => {
                    cx.error_spanned(int, message);
                    Ok(None)
                }
            },
            other => {
                cx.error_spanned(other, message);
                Ok(None)
            }
        }
    }
}

/// `daily_limit = N` with `N` from 1 to `u32::MAX`.
pub(super) fn daily_limit(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Sp<u32>>> {
    let expr: Expr = key.meta.value()?.parse()?;
    match &expr {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) => match int.base10_parse::<u32>() {
            Ok(0) | Err(_) => {
                cx.error_spanned(
                    int,
                    "`daily_limit` must be a whole number from 1 to 4294967295; leave it out for no limit",
                );
                Ok(None)
            }
            Ok(n) => Ok(Some(sp(n, int.span()))),
        },
        other => {
            cx.error_spanned(other, expects(key.name, "an integer", "3"));
            Ok(None)
        }
    }
}

pub(super) fn duration(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Sp<u64>>> {
    let Some(lit) = string(cx, key)? else {
        return Ok(None);
    };
    let name = key.name;
    match humantime::parse_duration(&lit.value()) {
        Ok(d) if !d.is_zero() => Ok(Some(sp(
            u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
            lit.span(),
        ))),
        Ok(_) => {
            cx.error_spanned(
                &lit,
                format!("`{name}` must be longer than zero; leave it out for none"),
            );
            Ok(None)
        }
        Err(error) => {
            cx.error_spanned(
                &lit,
                format!("cannot read `{name}` as a duration ({error}); write it like \"30s\", \"5m\", \"1h 30m\" or \"250ms\""),
            );
            Ok(None)
        }
    }
}

/// `key(a, b)` or `key("a", "b")`.
pub(super) fn list(cx: &mut Ctxt, key: &Key) -> syn::Result<Vec<Sp<String>>> {
    let (name, meta) = (key.name, key.meta);
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned(
            &meta.path,
            format!("`{name}` expects a list, e.g. `{name}(a, b)`"),
        );
        skip_value(meta)?;
        return Ok(Vec::new());
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let items = Punctuated::<ListItem, Token![,]>::parse_terminated(&content)?;
    Ok(items.into_iter().map(|item| item.0).collect())
}

/// A list of names as string literals; a malformed list reads as none.
pub(super) fn names(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Vec<LitStr>>> {
    Ok(Some(list(cx, key)?.into_iter().map(to_lit).collect()))
}

/// A list with the span of its key, even when malformed: `check` reports it outside the tag form.
pub(super) fn groups(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Sp<Vec<Sp<String>>>>> {
    let span = key.meta.path.span();
    Ok(Some(sp(list(cx, key)?, span)))
}

/// `targets(openai_strict, gemini)`: names of [`TARGETS`].
pub(super) fn targets(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Vec<Sp<String>>>> {
    let known = TARGETS;
    let mut targets = Vec::new();
    for item in list(cx, key)? {
        if known.iter().any(|(name, _)| *name == item.value) {
            targets.push(item);
        } else {
            let names: Vec<String> = known.iter().map(|(name, _)| format!("`{name}`")).collect();
            cx.error_at(
                item.span,
                format!(
                    "unknown target `{}`: `targets` takes {}",
                    item.value,
                    names.join(", ")
                ),
            );
        }
    }
    Ok(Some(targets))
}

/// The block kinds `returns(...)` takes, as the runtime's `BlockKind` variants name them.
pub(crate) const BLOCK_KINDS: &[(&str, &str)] = &[
    ("text", "Text"),
    ("image", "Image"),
    ("audio", "Audio"),
    ("file", "File"),
    ("resource_link", "ResourceLink"),
    ("resource", "Resource"),
];

/// `returns(image, file)`: names of [`BLOCK_KINDS`].
pub(super) fn block_kinds(cx: &mut Ctxt, key: &Key) -> syn::Result<Option<Vec<Sp<String>>>> {
    let mut kinds = Vec::new();
    for item in list(cx, key)? {
        if BLOCK_KINDS.iter().any(|(name, _)| *name == item.value) {
            kinds.push(item);
        } else {
            let names: Vec<String> = BLOCK_KINDS
                .iter()
                .map(|(name, _)| format!("`{name}`"))
                .collect();
            cx.error_at(
                item.span,
                format!(
                    "unknown block kind `{}`: `returns` takes {}",
                    item.value,
                    names.join(", ")
                ),
            );
        }
    }
    Ok(Some(kinds))
}

struct ListItem(Sp<String>);

impl syn::parse::Parse for ListItem {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        if input.peek(LitStr) {
            let lit: LitStr = input.parse()?;
            Ok(Self(sp(lit.value(), lit.span())))
        } else if input.peek(LitInt) {
            Err(input.error("expected a name or a string"))
        } else {
            let ident = input.call(Ident::parse_any)?;
            Ok(Self(sp(ident.unraw().to_string(), ident.span())))
        }
    }
}

pub(super) fn to_lit(item: Sp<String>) -> LitStr {
    LitStr::new(&item.value, item.span)
}
