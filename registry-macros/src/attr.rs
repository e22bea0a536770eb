//! Parses `#[tool(...)]` and `#[arg(...)]`.

use std::collections::HashSet;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitBool, LitInt, LitStr, Path, Token};

use crate::ctxt::Ctxt;

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

#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) krate: Option<Path>,
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<Sp<Text>>,
    pub(crate) aliases: Vec<LitStr>,
    pub(crate) version: Option<LitStr>,
    pub(crate) category: Option<LitStr>,
    pub(crate) tags: Vec<LitStr>,
    pub(crate) tier: Option<Sp<String>>,
    pub(crate) cost: Option<Sp<String>>,
    pub(crate) permission: Option<Sp<String>>,
    pub(crate) read_only: Option<Sp<bool>>,
    pub(crate) destructive: Option<Sp<bool>>,
    pub(crate) idempotent: Option<Sp<bool>>,
    pub(crate) open_world: Option<Sp<bool>>,
    pub(crate) requires_confirmation: Option<Sp<bool>>,
    pub(crate) requires_gate: Option<Sp<bool>>,
    pub(crate) defer_loading: Option<Sp<bool>>,
    pub(crate) sequential: Option<Sp<bool>>,
    pub(crate) gate_fail_closed: Option<Sp<bool>>,
    pub(crate) enabled: Option<Path>,
    pub(crate) strip_from_display: Option<Sp<bool>>,
    pub(crate) cooldown_ms: Option<Sp<u64>>,
    pub(crate) timeout_ms: Option<Sp<u64>>,
    pub(crate) daily_limit: Option<Sp<u32>>,
    pub(crate) max_args_bytes: Option<Sp<usize>>,
    pub(crate) blocking: Option<Sp<bool>>,
    pub(crate) tag: Option<LitStr>,
    pub(crate) pattern: Option<LitStr>,
    pub(crate) groups: Option<Sp<Vec<Sp<String>>>>,
    pub(crate) example: Option<LitStr>,
}

/// Every key `#[tool(...)]` accepts, for suggestions.
const TOOL_KEYS: &[&str] = &[
    "crate",
    "name",
    "description",
    "aliases",
    "version",
    "category",
    "tags",
    "tier",
    "cost",
    "permission",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "requires_confirmation",
    "requires_gate",
    "defer_loading",
    "sequential",
    "gate_fail_closed",
    "enabled",
    "strip_from_display",
    "cooldown",
    "timeout",
    "daily_limit",
    "max_args_bytes",
    "blocking",
    "tag",
    "pattern",
    "groups",
    "example",
];

impl ToolAttr {
    pub(crate) fn parse(cx: &mut Ctxt, args: TokenStream) -> Self {
        let mut attr = ToolAttr::default();
        let mut seen = Seen::new("tool", TOOL_KEYS);
        let parser = syn::meta::parser(|meta| {
            let key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_else(|| {
                    meta.path
                        .segments
                        .iter()
                        .map(|s| s.ident.to_string())
                        .collect::<Vec<_>>()
                        .join("::")
                });
            if seen.repeated(cx, &key, &meta) {
                return skip_value(&meta);
            }
            attr.parse_key(cx, &key, &meta)
        });
        if let Err(error) = parser.parse2(args) {
            cx.push(error);
        }
        attr
    }

    fn parse_key(&mut self, cx: &mut Ctxt, key: &str, meta: &ParseNestedMeta) -> syn::Result<()> {
        match key {
            // #[tool(crate = ::my_renamed_registry)]
            "crate" => {
                let value = meta.value()?;
                self.krate = Some(if value.peek(LitStr) {
                    value.parse::<LitStr>()?.parse()?
                } else {
                    value.parse()?
                });
            }
            // #[tool(name = "module.tool")]
            "name" => self.name = string(cx, key, meta)?,
            // #[tool(description = "...")] or #[tool(description = include_str!("x.md"))]
            "description" => {
                let expr: Expr = meta.value()?.parse()?;
                let span = expr.span();
                match expr {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(s), ..
                    }) => {
                        self.description = Some(sp(Text::Literal(s.value()), span));
                    }
                    Expr::Macro(_) => self.description = Some(sp(Text::Macro(expr), span)),
                    other => {
                        cx.error_spanned(other, expects(key, "a string", "\"Search the notes.\""))
                    }
                }
            }
            // #[tool(aliases(search, find))]
            "aliases" => self.aliases = list(cx, key, meta)?.into_iter().map(to_lit).collect(),
            // #[tool(version = "1.0.0")]
            "version" => self.version = string(cx, key, meta)?,
            // #[tool(category = "search")]
            "category" => self.category = string(cx, key, meta)?,
            // #[tool(tags(web, search))]
            "tags" => self.tags = list(cx, key, meta)?.into_iter().map(to_lit).collect(),
            // #[tool(tier = "low" | "medium" | "high")]
            "tier" => self.tier = choice(cx, key, meta, &["low", "medium", "high"])?,
            // #[tool(cost = "free" | "cheap" | "expensive")]
            "cost" => self.cost = choice(cx, key, meta, &["free", "cheap", "expensive"])?,
            // #[tool(permission = "guest" | "user" | "admin" | "owner")]
            "permission" => {
                self.permission = choice(cx, key, meta, &["guest", "user", "admin", "owner"])?;
            }
            // #[tool(read_only)] or #[tool(read_only = false)]
            "read_only" => self.read_only = flag(cx, key, meta)?,
            "destructive" => self.destructive = flag(cx, key, meta)?,
            "idempotent" => self.idempotent = flag(cx, key, meta)?,
            "open_world" => self.open_world = flag(cx, key, meta)?,
            "requires_confirmation" => self.requires_confirmation = flag(cx, key, meta)?,
            "requires_gate" => self.requires_gate = flag(cx, key, meta)?,
            "defer_loading" => self.defer_loading = flag(cx, key, meta)?,
            "sequential" => self.sequential = flag(cx, key, meta)?,
            // #[tool(gate_fail_closed)]
            "gate_fail_closed" => self.gate_fail_closed = flag(cx, key, meta)?,
            // #[tool(enabled = path::to::predicate)], a `fn(&Scope) -> bool`
            "enabled" => {
                let expr: Expr = meta.value()?.parse()?;
                match expr {
                    Expr::Path(path) if path.qself.is_none() => self.enabled = Some(path.path),
                    other => cx.error_spanned(
                        other,
                        "`enabled` expects the path of a `fn(&Scope) -> bool`, e.g. `enabled = has_documents`",
                    ),
                }
            }
            "strip_from_display" => self.strip_from_display = flag(cx, key, meta)?,
            // #[tool(cooldown = "30s")]
            "cooldown" => self.cooldown_ms = duration(cx, key, meta)?,
            // #[tool(timeout = "2m")]
            "timeout" => self.timeout_ms = duration(cx, key, meta)?,
            // #[tool(daily_limit = 3)]
            "daily_limit" => {
                let expr: Expr = meta.value()?.parse()?;
                match &expr {
                    Expr::Lit(ExprLit { lit: Lit::Int(int), .. }) => match int.base10_parse::<u32>() {
                        Ok(0) | Err(_) => cx.error_spanned(
                            int,
                            "`daily_limit` must be a whole number from 1 to 4294967295; leave it out for no limit",
                        ),
                        Ok(n) => self.daily_limit = Some(sp(n, int.span())),
                    },
                    other => cx.error_spanned(other, expects(key, "an integer", "3")),
                }
            }
            // #[tool(max_args_bytes = 4096)]
            "max_args_bytes" => {
                self.max_args_bytes = positive(
                    cx,
                    meta,
                    "`max_args_bytes` must be a whole number of bytes, at least 1, e.g. `max_args_bytes = 65536`; leave it out for the default of 1 MiB",
                )?;
            }
            // #[tool(blocking)]
            "blocking" => self.blocking = flag(cx, key, meta)?,
            // #[tool(tag = "RESEARCH")]
            "tag" => self.tag = string(cx, key, meta)?,
            // #[tool(pattern = r"(factual|communication)\s+(.+)")]
            "pattern" => self.pattern = string(cx, key, meta)?,
            // #[tool(groups(category, content))]
            "groups" => {
                let span = meta.path.span();
                let items = list(cx, key, meta)?;
                self.groups = Some(sp(items, span));
            }
            // #[tool(example = "RESEARCH: [query]")]
            "example" => self.example = string(cx, key, meta)?,
            unknown => {
                cx.error_spanned(&meta.path, unknown_key("tool", unknown, TOOL_KEYS));
                skip_value(meta)?;
            }
        }
        Ok(())
    }
}

/// `#[arg(desc = "...", default = expr, rename = "...", max_len = N)]` on a parameter.
#[derive(Default)]
pub(crate) struct ArgAttr {
    pub(crate) desc: Option<LitStr>,
    pub(crate) default: Option<Box<Expr>>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) max_len: Option<Sp<usize>>,
}

const ARG_KEYS: &[&str] = &["desc", "default", "rename", "max_len"];

impl ArgAttr {
    pub(crate) fn parse(cx: &mut Ctxt, attr: &syn::Attribute) -> Self {
        let mut arg = ArgAttr::default();
        if matches!(attr.meta, syn::Meta::Path(_)) {
            return arg;
        }
        let mut seen = Seen::new("arg", ARG_KEYS);
        let result = attr.parse_nested_meta(|meta| {
            let mut key = meta
                .path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default();
            if key == "description" {
                key = "desc".to_owned();
            }
            if seen.repeated(cx, &key, &meta) {
                return skip_value(&meta);
            }
            match key.as_str() {
                // #[arg(desc = "What to look for")] or #[arg(description = "...")]
                "desc" => arg.desc = string(cx, "desc", &meta)?,
                // #[arg(default = 5)]
                "default" => arg.default = Some(Box::new(meta.value()?.parse()?)),
                // #[arg(rename = "q")]
                "rename" => arg.rename = string(cx, "rename", &meta)?,
                // #[arg(max_len = 200)]
                "max_len" => {
                    arg.max_len = positive(
                        cx,
                        &meta,
                        "`max_len` must be a whole number of characters, at least 1, e.g. `max_len = 200`",
                    )?;
                }
                unknown => {
                    cx.error_spanned(&meta.path, unknown_key("arg", unknown, ARG_KEYS));
                    skip_value(&meta)?;
                }
            }
            Ok(())
        });
        if let Err(error) = result {
            cx.push(error);
        }
        arg
    }
}

/// The keys an attribute has had so far: a repeated key is reported here, for every key alike.
struct Seen {
    kind: &'static str,
    known: &'static [&'static str],
    keys: HashSet<String>,
}

impl Seen {
    fn new(kind: &'static str, known: &'static [&'static str]) -> Self {
        Self {
            kind,
            known,
            keys: HashSet::new(),
        }
    }

    /// Whether `key` came before in this attribute (then the error is reported). Unknown keys are
    /// left to the caller, which reports each of them as unknown.
    fn repeated(&mut self, cx: &mut Ctxt, key: &str, meta: &ParseNestedMeta) -> bool {
        if self.keys.insert(key.to_owned()) || !self.known.contains(&key) {
            return false;
        }
        let kind = self.kind;
        let written = meta
            .path
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        let same = if written == key {
            String::new()
        } else {
            format!(" (the same as `{key}`)")
        };
        cx.error_spanned(
            &meta.path,
            format!("duplicate {kind} attribute `{written}`{same}; keep one of them"),
        );
        true
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

fn expects(key: &str, what: &str, example: &str) -> String {
    format!("`{key}` expects {what}, e.g. `{key} = {example}`")
}

/// Consumes `= value` or `(...)` after an unknown or duplicate key so parsing goes on.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

fn string(cx: &mut Ctxt, key: &str, meta: &ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    if !meta.input.peek(Token![=]) {
        cx.error_spanned(&meta.path, expects(key, "a string", "\"...\""));
        skip_value(meta)?;
        return Ok(None);
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(Some(s)),
        other => {
            cx.error_spanned(other, expects(key, "a string", "\"...\""));
            Ok(None)
        }
    }
}

fn choice(
    cx: &mut Ctxt,
    key: &str,
    meta: &ParseNestedMeta,
    options: &[&str],
) -> syn::Result<Option<Sp<String>>> {
    let quoted = options
        .iter()
        .map(|o| format!("\"{o}\""))
        .collect::<Vec<_>>()
        .join(", ");
    let Some(lit) = string(cx, key, meta)? else {
        return Ok(None);
    };
    let value = lit.value();
    if options.contains(&value.as_str()) {
        Ok(Some(sp(value, lit.span())))
    } else {
        cx.error_spanned(
            &lit,
            format!("`{key}` must be one of {quoted}; found \"{value}\""),
        );
        Ok(None)
    }
}

fn flag(cx: &mut Ctxt, key: &str, meta: &ParseNestedMeta) -> syn::Result<Option<Sp<bool>>> {
    if !meta.input.peek(Token![=]) {
        if meta.input.peek(syn::token::Paren) {
            cx.error_spanned(
                &meta.path,
                format!("`{key}` is a flag: write `{key}` or `{key} = false`"),
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
                format!("`{key}` expects `true` or `false`, or no value at all"),
            );
            Ok(None)
        }
    }
}

/// `key = N` with `N` a whole number of at least 1.
fn positive(
    cx: &mut Ctxt,
    meta: &ParseNestedMeta,
    message: &str,
) -> syn::Result<Option<Sp<usize>>> {
    let expr: Expr = meta.value()?.parse()?;
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

fn duration(cx: &mut Ctxt, key: &str, meta: &ParseNestedMeta) -> syn::Result<Option<Sp<u64>>> {
    let Some(lit) = string(cx, key, meta)? else {
        return Ok(None);
    };
    match humantime::parse_duration(&lit.value()) {
        Ok(d) if !d.is_zero() => Ok(Some(sp(
            u64::try_from(d.as_millis()).unwrap_or(u64::MAX),
            lit.span(),
        ))),
        Ok(_) => {
            cx.error_spanned(
                &lit,
                format!("`{key}` must be longer than zero; leave it out for none"),
            );
            Ok(None)
        }
        Err(error) => {
            cx.error_spanned(
                &lit,
                format!("cannot read `{key}` as a duration ({error}); write it like \"30s\", \"5m\", \"1h 30m\" or \"250ms\""),
            );
            Ok(None)
        }
    }
}

/// `key(a, b)` or `key("a", "b")`.
fn list(cx: &mut Ctxt, key: &str, meta: &ParseNestedMeta) -> syn::Result<Vec<Sp<String>>> {
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned(
            &meta.path,
            format!("`{key}` expects a list, e.g. `{key}(a, b)`"),
        );
        skip_value(meta)?;
        return Ok(Vec::new());
    }
    let content;
    syn::parenthesized!(content in meta.input);
    let items = Punctuated::<ListItem, Token![,]>::parse_terminated(&content)?;
    Ok(items.into_iter().map(|item| item.0).collect())
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

fn to_lit(item: Sp<String>) -> LitStr {
    LitStr::new(&item.value, item.span)
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
