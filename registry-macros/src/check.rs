//! Checks that span several attributes, and the values they resolve to.

use proc_macro2::Span;
use syn::LitStr;

use crate::ast::ToolFn;
use crate::attr::{Sp, Text, ToolAttr};
use crate::ctxt::Ctxt;
use crate::targets;
use tool_registry_rules::check_name;

/// A tool's name and where it was written, as the checks resolved it.
pub(crate) struct Resolved {
    pub(crate) name: String,
    pub(crate) name_span: Span,
    /// The description: one literal, or literal lines and `include_str!`-like macros to join.
    pub(crate) description: Vec<Text>,
    pub(crate) tag: Option<TagForm>,
}

pub(crate) struct TagForm {
    pub(crate) prefix: String,
    pub(crate) pattern: String,
    pub(crate) groups: Vec<String>,
    pub(crate) example: String,
}

pub(crate) fn resolve(cx: &mut Ctxt, attr: &ToolAttr, func: &ToolFn) -> Resolved {
    let (name, name_span) = match &attr.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (
            syn::ext::IdentExt::unraw(&func.ident).to_string(),
            func.name_span(),
        ),
    };
    if let Err(problem) = check_name(&name) {
        cx.error_at(name_span, format!("invalid tool name `{name}`: {problem}"));
    }
    for alias in &attr.aliases {
        if let Err(problem) = check_name(&alias.value()) {
            cx.error_spanned(
                alias,
                format!("invalid alias `{}`: {problem}", alias.value()),
            );
        }
    }

    let types = func
        .args_struct()
        .map(|(_, ty)| ty)
        .into_iter()
        .chain(func.model_args().map(|arg| &*arg.ty));
    targets::check(cx, attr.target_names(), types);

    if let Some(flag) = attr.output_schema.as_ref().filter(|f| f.value) {
        check_output_schema(cx, flag.span, func);
    }

    let description = match &attr.description {
        Some(text) => vec![text.value.clone()],
        None => func.docs.clone(),
    };
    let blank = description
        .iter()
        .all(|text| matches!(text, Text::Literal(s) if s.trim().is_empty()));
    if blank {
        cx.error_at(
            func.name_span(),
            format!(
                "tool `{name}` has no description: add a `///` doc comment saying what it does (the model reads it), or `#[tool(description = \"...\")]`"
            ),
        );
    }

    if let (Some(read_only), Some(destructive)) = (&attr.read_only, &attr.destructive)
        && read_only.value
        && destructive.value
    {
        cx.error_at(
            destructive.span,
            "a tool cannot be both `read_only` and `destructive`; keep the one that is true",
        );
    }

    if let Some(cache) = &attr.cache_ms {
        let said = |flag: &Option<crate::attr::Sp<bool>>| flag.as_ref().is_some_and(|f| f.value);
        if !said(&attr.read_only) && !said(&attr.idempotent) {
            cx.error_at(
                cache.span,
                "`cache` reuses a result for identical calls, which is right only for a tool whose repeated calls give the same answer: mark it `read_only` or `idempotent`, or remove `cache`",
            );
        }
    }
    if let Some(cache) = &attr.cache_ms {
        let said = |flag: &Option<crate::attr::Sp<bool>>| flag.as_ref().is_some_and(|f| f.value);
        let guard = if said(&attr.requires_confirmation) {
            Some("requires_confirmation")
        } else if attr.confirm_if.is_some() {
            Some("confirm_if")
        } else if said(&attr.requires_gate) {
            Some("requires_gate")
        } else {
            None
        };
        if let Some(guard) = guard {
            cx.error_at(
                cache.span,
                format!("`cache` answers a repeated call without running the tool, so it cannot be combined with `{guard}`, which must see every run; remove one of them"),
            );
        }
    }
    if let (Some(per_user), None) = (&attr.cache_per_user, &attr.cache_ms) {
        cx.error_at(
            per_user.span,
            "`cache_per_user` says how `cache` keys its results: add `cache = \"5m\"` (or another duration), or remove `cache_per_user`",
        );
    }

    Resolved {
        tag: tag_form(cx, attr, func),
        name,
        name_span,
        description,
    }
}

/// Segments of `[A-Za-z0-9_-]` joined by `.`, at most 64 characters.
fn tag_form(cx: &mut Ctxt, attr: &ToolAttr, func: &ToolFn) -> Option<TagForm> {
    let Some(tag) = &attr.tag else {
        reject_tag_keys(cx, attr);
        return None;
    };
    let prefix = tag.value();
    if prefix.is_empty() || prefix.chars().any(|c| c.is_whitespace() || c == ':') {
        cx.error_spanned(
            tag,
            "`tag` must be one word without `:`, e.g. `tag = \"RESEARCH\"`",
        );
    }

    let (pattern, pattern_span) = match &attr.pattern {
        Some(lit) => (lit.value(), lit.span()),
        None => ("(.+)".to_owned(), tag.span()),
    };
    let captures = capture_count(cx, &pattern, pattern_span);
    let groups = groups(cx, attr, func, tag);
    if let Some(captures) = captures
        && !groups.is_empty()
        && captures != groups.len()
    {
        let span = attr.groups.as_ref().map_or(pattern_span, |g| g.span);
        cx.error_at(
            span,
            format!(
                "the pattern has {captures} capture group{} but `groups` names {}; give one name per `(...)` group",
                if captures == 1 { "" } else { "s" },
                groups.len()
            ),
        );
    }

    let example = match &attr.example {
        Some(lit) => lit.value(),
        None => {
            let placeholders: Vec<String> = groups.iter().map(|g| format!("[{g}]")).collect();
            format!("{prefix}: {}", placeholders.join(" "))
        }
    };
    Some(TagForm {
        prefix,
        pattern,
        groups,
        example,
    })
}

/// `pattern`, `groups` and `example` without `tag`.
fn reject_tag_keys(cx: &mut Ctxt, attr: &ToolAttr) {
    for (key, span) in [
        ("pattern", attr.pattern.as_ref().map(LitStr::span)),
        ("groups", attr.groups.as_ref().map(|g| g.span)),
        ("example", attr.example.as_ref().map(LitStr::span)),
    ] {
        if let Some(span) = span {
            cx.error_at(
                span,
                format!("`{key}` belongs to the tag form; add `tag = \"PREFIX\"` too"),
            );
        }
    }
}

/// The number of capture groups of `pattern`, or `None` (reported) when it is not a regex.
fn capture_count(cx: &mut Ctxt, pattern: &str, span: Span) -> Option<usize> {
    match regex_syntax::Parser::new().parse(pattern) {
        Ok(hir) => Some(hir.properties().explicit_captures_len()),
        Err(error) => {
            let detail = error.to_string();
            let summary = detail
                .lines()
                .last()
                .unwrap_or(&detail)
                .trim_start_matches("error: ")
                .to_owned();
            cx.error_at(span, format!("invalid regex in `pattern`: {summary}"));
            None
        }
    }
}

/// The argument each capture group fills: as `groups(...)` names them, or the one argument (or the
/// one required argument) when that is unambiguous.
fn groups(cx: &mut Ctxt, attr: &ToolAttr, func: &ToolFn, tag: &LitStr) -> Vec<String> {
    let model_args: Vec<String> = func.model_args().map(|arg| arg.json_name()).collect();
    let required: Vec<String> = func
        .model_args()
        .filter(|arg| !arg.optional)
        .map(|arg| arg.json_name())
        .collect();
    match &attr.groups {
        Some(groups) => {
            if func.args_struct().is_none() {
                check_group_names(cx, &groups.value, &model_args);
            }
            groups.value.iter().map(|g| g.value.clone()).collect()
        }
        None if model_args.len() == 1 => model_args,
        None if required.len() == 1 => required,
        None => {
            cx.error_spanned(
                tag,
                format!(
                    "the tag form needs `groups(...)` to say which argument each capture group of the pattern fills; the arguments are {}",
                    if model_args.is_empty() { "none".to_owned() } else { quoted(&model_args) }
                ),
            );
            Vec::new()
        }
    }
}

fn check_group_names(cx: &mut Ctxt, groups: &[Sp<String>], model_args: &[String]) {
    for group in groups {
        if !model_args.contains(&group.value) {
            let known = if model_args.is_empty() {
                "the tool has no arguments".to_owned()
            } else {
                format!("the arguments are {}", quoted(model_args))
            };
            cx.error_at(
                group.span,
                format!("group `{}` names no argument; {known}", group.value),
            );
        }
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `output_schema` needs a return type whose schema the macro can name: `T` or `Result<T, E>`
/// with `T` a named type.
fn check_output_schema(cx: &mut Ctxt, span: Span, func: &ToolFn) {
    use crate::ast::{Output, has_impl_trait};
    let problem = match &func.output {
        Output::Unit => Some("the function returns nothing"),
        Output::ToolResult | Output::ResultToolResult { .. } => {
            Some("a `ToolResult` has no schema of its own")
        }
        Output::Result { ok, .. } if has_impl_trait(ok) => {
            Some("an `impl Trait` type has no schema")
        }
        Output::Value(ty) if has_impl_trait(ty) => Some("an `impl Trait` type has no schema"),
        _ => None,
    };
    if let Some(problem) = problem {
        cx.error_at(
            span,
            format!(
                "`output_schema` needs a return type with a JSON Schema, but {problem}; return a type that derives `schemars::JsonSchema` (or `Result<T, E>` with such a `T`), or leave `output_schema` out"
            ),
        );
    }
}
