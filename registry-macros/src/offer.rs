//! `#[resource]` and `#[prompt]`: a function becomes a resource (or a resource template) or a
//! prompt, placed in the registry's linked slices beside the tools.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, FnArg, ItemFn, Lit, LitStr, Meta, Pat, Path, PathArguments, Token, Type};

/// Which attribute is expanded.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Kind {
    Resource,
    Prompt,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Self::Resource => "#[resource]",
            Self::Prompt => "#[prompt]",
        }
    }
}

/// What the attribute says.
#[derive(Default)]
struct Attr {
    uri: Option<LitStr>,
    name: Option<LitStr>,
    title: Option<LitStr>,
    mime_type: Option<LitStr>,
    permission: Option<LitStr>,
    complete: Vec<(syn::Ident, Path)>,
}

fn string(expr: &Expr, key: &str) -> syn::Result<LitStr> {
    match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(s), ..
        }) => Ok(s.clone()),
        other => Err(syn::Error::new(
            other.span(),
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )),
    }
}

fn attr(kind: Kind, args: TokenStream) -> syn::Result<Attr> {
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(args)?;
    let mut attr = Attr::default();
    for meta in metas {
        let key = meta
            .path()
            .get_ident()
            .map(ToString::to_string)
            .unwrap_or_default();
        match (&meta, key.as_str()) {
            (Meta::NameValue(nv), "uri") if kind == Kind::Resource => {
                attr.uri = Some(string(&nv.value, "uri")?);
            }
            (Meta::NameValue(nv), "name") => attr.name = Some(string(&nv.value, "name")?),
            (Meta::NameValue(nv), "title") => attr.title = Some(string(&nv.value, "title")?),
            (Meta::NameValue(nv), "mime_type") if kind == Kind::Resource => {
                attr.mime_type = Some(string(&nv.value, "mime_type")?);
            }
            (Meta::NameValue(nv), "permission") => {
                let level = string(&nv.value, "permission")?;
                if !["guest", "user", "admin", "owner"].contains(&level.value().as_str()) {
                    return Err(syn::Error::new(
                        level.span(),
                        "`permission` is one of \"guest\", \"user\", \"admin\", \"owner\"",
                    ));
                }
                attr.permission = Some(level);
            }
            (Meta::List(list), "complete") => {
                let pairs = Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated
                    .parse2(list.tokens.clone())?;
                for pair in pairs {
                    let argument = pair.path.get_ident().cloned().ok_or_else(|| {
                        syn::Error::new(
                            pair.path.span(),
                            "name the argument: `complete(arg = function)`",
                        )
                    })?;
                    let Expr::Path(function) = pair.value else {
                        return Err(syn::Error::new(
                            pair.value.span(),
                            "`complete(arg = function)` takes the path of a `fn(&str) -> Vec<String>`",
                        ));
                    };
                    attr.complete.push((argument, function.path));
                }
            }
            _ => {
                let known = match kind {
                    Kind::Resource => {
                        "uri, name, title, mime_type, permission, complete(var = function)"
                    }
                    Kind::Prompt => "name, title, permission, complete(arg = function)",
                };
                return Err(syn::Error::new(
                    meta.span(),
                    format!(
                        "unknown or misused key `{key}` for {}; it takes: {known}",
                        kind.attribute()
                    ),
                ));
            }
        }
    }
    Ok(attr)
}

/// One input of the function.
enum Input {
    /// `&Ctx`: the caller's context.
    Ctx,
    /// A template variable or a prompt argument (`String`, or `Option<String>` for a prompt's
    /// optional one), with `#[arg(desc = "...")]`.
    Named {
        ident: syn::Ident,
        key: String,
        optional: bool,
        desc: String,
    },
}

fn last_is(ty: &Type, name: &str) -> bool {
    matches!(ty, Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == name))
}

fn option_of_string(ty: &Type) -> bool {
    let Type::Path(path) = ty else { return false };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    if last.ident != "Option" {
        return false;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    matches!(args.args.first(), Some(syn::GenericArgument::Type(inner)) if last_is(inner, "String"))
}

fn inputs(kind: Kind, func: &mut ItemFn) -> syn::Result<Vec<Input>> {
    let mut inputs = Vec::new();
    for arg in &mut func.sig.inputs {
        let FnArg::Typed(typed) = arg else {
            return Err(syn::Error::new(
                arg.span(),
                format!("{} takes a free function, not a method", kind.attribute()),
            ));
        };
        let mut desc = String::new();
        let mut key = None;
        let mut kept = Vec::new();
        for a in typed.attrs.drain(..) {
            if a.path().is_ident("arg") {
                a.parse_nested_meta(|meta| {
                    if meta.path.is_ident("desc") {
                        desc = meta.value()?.parse::<LitStr>()?.value();
                        Ok(())
                    } else if meta.path.is_ident("name") {
                        key = Some(meta.value()?.parse::<LitStr>()?.value());
                        Ok(())
                    } else {
                        Err(meta.error("`#[arg]` here takes `desc = \"...\"` and `name = \"...\"` (the name clients use)"))
                    }
                })?;
            } else {
                kept.push(a);
            }
        }
        typed.attrs = kept;
        if let Type::Reference(reference) = &*typed.ty
            && last_is(&reference.elem, "Ctx")
        {
            inputs.push(Input::Ctx);
            continue;
        }
        let Pat::Ident(pat) = &*typed.pat else {
            return Err(syn::Error::new(
                typed.pat.span(),
                "name the argument with a plain identifier",
            ));
        };
        let optional = option_of_string(&typed.ty);
        if !(last_is(&typed.ty, "String") || (optional && kind == Kind::Prompt)) {
            let what = match kind {
                Kind::Resource => {
                    "a template variable is a `String` (or take the caller's context as `&Ctx`)"
                }
                Kind::Prompt => {
                    "a prompt's argument is a `String`, or `Option<String>` when it may be left out (or take the caller's context as `&Ctx`)"
                }
            };
            return Err(syn::Error::new(typed.ty.span(), what));
        }
        inputs.push(Input::Named {
            key: key.unwrap_or_else(|| pat.ident.to_string()),
            ident: pat.ident.clone(),
            optional,
            desc,
        });
    }
    Ok(inputs)
}

fn docs(func: &ItemFn) -> String {
    let lines: Vec<String> = (func.attrs.iter())
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    lines.join("\n").trim().to_owned()
}

/// Expands `#[resource]` or `#[prompt]`.
pub(crate) fn expand(kind: Kind, args: TokenStream, item: TokenStream) -> TokenStream {
    match try_expand(kind, args, item.clone()) {
        Ok(tokens) => tokens,
        Err(error) => {
            let error = error.into_compile_error();
            quote! { #item #error }
        }
    }
}

fn try_expand(kind: Kind, args: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let p = quote!(::tool_registry::__private);
    let o = quote!(::tool_registry::offer);
    let attr = attr(kind, args)?;
    let mut func: ItemFn = syn::parse2(item)?;
    let inputs = inputs(kind, &mut func)?;
    let ident = func.sig.ident.clone();
    let name = attr
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(&ident.to_string(), ident.span()));
    let description = docs(&func);
    let is_async = func.sig.asyncness.is_some();
    let await_ = is_async.then(|| quote!(.await));
    let named: Vec<(&syn::Ident, bool, &str, &str)> = (inputs.iter())
        .filter_map(|input| match input {
            Input::Named {
                ident,
                key,
                optional,
                desc,
            } => Some((ident, *optional, desc.as_str(), key.as_str())),
            Input::Ctx => None,
        })
        .collect();
    for (argument, _) in &attr.complete {
        if !named
            .iter()
            .any(|(ident, .., key)| *ident == argument || argument == *key)
        {
            return Err(syn::Error::new(
                argument.span(),
                format!("`complete({argument} = ...)` names no argument of the function"),
            ));
        }
    }
    let call_args = inputs.iter().map(|input| match input {
        Input::Ctx => quote!(&__request.ctx),
        Input::Named {
            key,
            optional: false,
            ..
        } => match kind {
            Kind::Resource => quote!(__request.variable(#key).to_owned()),
            Kind::Prompt => quote!(__request.argument(#key).unwrap_or_default().to_owned()),
        },
        Input::Named {
            key,
            optional: true,
            ..
        } => {
            quote!(__request.argument(#key).map(::std::borrow::ToOwned::to_owned))
        }
    });
    let completions = attr.complete.iter().map(|(argument, function)| {
        let key = (named.iter())
            .find(|(ident, ..)| *ident == argument)
            .map_or_else(|| argument.to_string(), |(.., key)| (*key).to_owned());
        quote! {
            .with_completion(#key, #o::completer(|__r: &#o::CompletionRequest| #function(&__r.value)))
        }
    });
    let title = attr.title.as_ref().map(|t| quote!(.with_title(#t)));
    let permission = attr.permission.as_ref().map(|level| {
        let variant = format_ident!("{}", {
            let l = level.value();
            let mut c = l.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        });
        quote!(.with_permission(#p::Permission::#variant))
    });
    let slot = format_ident!("__TOOL_REGISTRY_{}", ident.to_string().to_uppercase());
    let spec = match kind {
        Kind::Resource => {
            let uri = attr.uri.clone().ok_or_else(|| {
                syn::Error::new(Span::call_site(), "#[resource] needs `uri = \"scheme://...\"` (with `{variables}` for a template)")
            })?;
            let variables = template_variables(&uri)?;
            for (ident, .., key) in &named {
                if !variables.iter().any(|v| v == key) {
                    return Err(syn::Error::new(
                        ident.span(),
                        format!(
                            "`{key}` is no variable of the URI template `{}`",
                            uri.value()
                        ),
                    ));
                }
            }
            if let Some(missing) = variables
                .iter()
                .find(|v| !named.iter().any(|(.., key)| key == v))
            {
                return Err(syn::Error::new(
                    uri.span(),
                    format!(
                        "the URI template's `{{{missing}}}` is no argument of the function; add `{missing}: String`"
                    ),
                ));
            }
            let mime = attr.mime_type.as_ref().map(|m| quote!(.with_mime_type(#m)));
            let mime_arg = match &attr.mime_type {
                Some(m) => quote!(::std::option::Option::Some(#m)),
                None => quote!(::std::option::Option::None),
            };
            quote! {
                #o::ResourceSpec::new(#uri, #name, |__request: #o::ReadRequest| async move {
                    let __value = #ident(#(#call_args),*) #await_;
                    #o::IntoContents::into_contents(__value, &__request.uri, #mime_arg)
                })
                .expect("the URI template was checked by #[resource]")
                .with_description(#description)
                #title #mime #permission #(#completions)*
            }
        }
        Kind::Prompt => {
            let arguments = named.iter().map(|(_, optional, desc, key)| {
                if *optional {
                    quote!(.with_argument(#o::PromptArgument::optional(#key, #desc)))
                } else {
                    quote!(.with_argument(#o::PromptArgument::required(#key, #desc)))
                }
            });
            quote! {
                #o::PromptSpec::new(#name, |__request: #o::GetRequest| async move {
                    let __value = #ident(#(#call_args),*) #await_;
                    #o::IntoMessages::into_messages(__value)
                })
                .with_description(#description)
                #(#arguments)* #title #permission #(#completions)*
            }
        }
    };
    let (slice, ty) = match kind {
        Kind::Resource => (quote!(#p::RESOURCES), quote!(#o::ResourceSpec)),
        Kind::Prompt => (quote!(#p::PROMPTS), quote!(#o::PromptSpec)),
    };
    Ok(quote! {
        #func

        #[#p::linkme::distributed_slice(#slice)]
        #[linkme(crate = #p::linkme)]
        #[allow(non_upper_case_globals)]
        static #slot: fn() -> #ty = {
            fn __tool_registry_offer() -> #ty {
                #spec
            }
            __tool_registry_offer
        };
    })
}

/// The variables of a URI template, checked as the registry reads it.
fn template_variables(uri: &LitStr) -> syn::Result<Vec<String>> {
    let text = uri.value();
    let mut variables = Vec::new();
    let mut rest = text.as_str();
    let mut last_was_variable = false;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            last_was_variable = false;
        }
        if open == 0 && last_was_variable {
            return Err(syn::Error::new(
                uri.span(),
                "two variables side by side cannot be told apart; put a literal between them",
            ));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| syn::Error::new(uri.span(), "a `{` is never closed"))?;
        let name = &rest[open + 1..open + close];
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(syn::Error::new(
                uri.span(),
                format!(
                    "`{{{name}}}`: a variable is `{{name}}`, its name ASCII letters, digits and `_`"
                ),
            ));
        }
        variables.push(name.to_owned());
        rest = &rest[open + close + 1..];
        last_was_variable = true;
    }
    if rest.contains('}') {
        return Err(syn::Error::new(uri.span(), "a `}` closes nothing"));
    }
    Ok(variables)
}
