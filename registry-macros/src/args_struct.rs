//! The struct a tool's model arguments are read into, with its schema: plain when every
//! argument has a standard type, generic over the field types otherwise.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Type};

use crate::ast::{ToolFn, last_segment_is};
use crate::attr::ArgAttr;

/// How the model's arguments are parsed: into the user's `#[args]` struct, or into a generated
/// struct with one field per argument.
///
/// When every argument has a standard type the generated struct is plain ([`std_model_args`]).
/// Otherwise it is generic over its field types, so that its derives hold no user type and
/// cannot fail; the user's types are checked one by one (`__tool_registry_check`).
pub(crate) struct ModelArgs {
    /// The generated struct and the functions giving its defaults.
    pub(crate) items: Vec<TokenStream>,
    /// The user's types to check, one per field (none when nothing can fail).
    pub(crate) types: Vec<Type>,
    /// The parsed type in terms of the user's types.
    pub(crate) parsed: TokenStream,
    /// The pattern the parsed value is bound to in the call shim.
    pub(crate) pattern: TokenStream,
    /// How the input schema is made, when not from the parsed type's `JsonSchema`.
    pub(crate) schema: Option<TokenStream>,
}

pub(crate) fn model_args(func: &ToolFn, p: &TokenStream) -> ModelArgs {
    if let Some((_, ty)) = func.args_struct() {
        return ModelArgs {
            items: Vec::new(),
            types: vec![ty.clone()],
            parsed: quote!(#ty),
            pattern: quote!(__tool_registry_args),
            schema: None,
        };
    }

    if func.model_args().all(|arg| is_std_type(&arg.ty)) {
        return std_model_args(func, p);
    }

    let mut items = Vec::new();
    let mut params = Vec::new();
    let mut from = Vec::new();
    let mut types = Vec::new();
    let mut fields = Vec::new();
    let mut bindings = Vec::new();
    for (i, arg) in func.model_args().enumerate() {
        let ident = &arg.ident;
        let ty = &*arg.ty;
        let param = format_ident!("__tool_registry_T{}", i);
        let mut field_attrs = field_attrs(&arg.attr);
        let mut from_default = None;
        if let Some(default) = &arg.attr.default {
            let (fns, attrs) = default_fns(i, ty, default);
            items.extend(fns);
            field_attrs.push(attrs);
            from_default = Some(quote!(::core::convert::From<#ty>));
        }
        fields.push(quote!(#(#field_attrs)* #ident: #param));
        let local = format_ident!("__tool_registry_a{}", i);
        bindings.push(quote!(#ident: #local));
        params.push(param);
        from.push(from_default);
        types.push(ty.clone());
    }

    let serde_crate = path_string(&quote!(#p::serde));
    let schemars_crate = path_string(&quote!(#p::schemars));
    let where_clauses = params
        .iter()
        .zip(&from)
        .filter_map(|(param, from)| from.as_ref().map(|from| quote!(#param: #from)));
    if from.iter().any(Option::is_some) {
        // schemars' derive writes a bare `Some(..)` around a field's default; this keeps a user's
        // item named `Some` from capturing it.
        items.push(quote!(
            use ::core::option::Option::Some;
        ));
    }
    items.push(quote! {
        #[derive(#p::serde::Deserialize, #p::schemars::JsonSchema)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #[schemars(crate = #schemars_crate)]
        #[allow(non_camel_case_types)]
        struct __tool_registry_Args<#(#params),*> where #(#where_clauses),* { #(#fields),* }
    });
    ModelArgs {
        items,
        parsed: quote!(__tool_registry_Args<#(#types),*>),
        pattern: quote!(__tool_registry_Args { #(#bindings),* }),
        types,
        schema: None,
    }
}

/// [`model_args`] when every argument has a standard type ([`is_std_type`]): a plain struct
/// that derives `Deserialize` alone, whose derive cannot fail, so it needs neither type
/// parameters nor checks of its own; its schema is built at first use by one function of the
/// runtime crate from a short description of each argument (`ArgSchema`), instead of a derived
/// `JsonSchema` and a generic root per tool. rustc has less to check and to monomorphize.
fn std_model_args(func: &ToolFn, p: &TokenStream) -> ModelArgs {
    let mut items = Vec::new();
    let mut fields = Vec::new();
    let mut bindings = Vec::new();
    let mut schemas = Vec::new();
    for (i, arg) in func.model_args().enumerate() {
        let ident = &arg.ident;
        let ty = &*arg.ty;
        let mut serde_attrs = Vec::new();
        if let Some(rename) = &arg.attr.rename {
            serde_attrs.push(quote!(#[serde(rename = #rename)]));
        }
        let mut default_json = quote!(::core::option::Option::None);
        if let Some(default) = &arg.attr.default {
            let (value_fn, item) = default_value_fn(i, ty, default);
            let value_path = LitStr::new(&value_fn.to_string(), Span::call_site());
            items.push(item);
            serde_attrs.push(quote!(#[serde(default = #value_path)]));
            default_json = quote!(::core::option::Option::Some(
                || #p::serde_json::to_value(#value_fn()).ok()
            ));
        }
        fields.push(quote!(#(#serde_attrs)* #ident: #ty));
        let local = format_ident!("__tool_registry_a{}", i);
        bindings.push(quote!(#ident: #local));
        let name = arg.json_name();
        let description = arg
            .attr
            .desc
            .as_ref()
            .map_or_else(String::new, LitStr::value);
        // Only standard types reach here, so an `Option` is one as written, and is what
        // `#[derive(JsonSchema)]` would leave out of `required`.
        let is_option = last_segment_is(ty, "Option");
        let max_len = match &arg.attr.max_len {
            Some(max) => {
                let max = max.value as u64;
                quote!(::core::option::Option::Some(#max))
            }
            None => quote!(::core::option::Option::None),
        };
        let bound = |bound: &Option<Box<syn::Expr>>| match bound {
            Some(value) => quote!(::core::option::Option::Some(
                || #p::serde_json::Value::from(#value)
            )),
            None => quote!(::core::option::Option::None),
        };
        let (minimum, maximum) = (bound(&arg.attr.min), bound(&arg.attr.max));
        schemas.push(quote! {
            #p::ArgSchema {
                name: #name,
                schema: #p::schemars::SchemaGenerator::subschema_for::<#ty>,
                is_option: #is_option,
                description: #description,
                max_len: #max_len,
                minimum: #minimum,
                maximum: #maximum,
                default: #default_json,
            }
        });
    }
    let serde_crate = path_string(&quote!(#p::serde));
    items.push(quote! {
        #[derive(#p::serde::Deserialize)]
        #[serde(crate = #serde_crate, deny_unknown_fields)]
        #[allow(non_camel_case_types)]
        struct __tool_registry_Args { #(#fields),* }
    });
    ModelArgs {
        items,
        types: Vec::new(),
        parsed: quote!(__tool_registry_Args),
        pattern: quote!(__tool_registry_Args { #(#bindings),* }),
        schema: Some(quote!(#p::args_schema(&[#(#schemas),*]))),
    }
}

/// Whether `ty` is written as one of the standard types every argument may have, which derive
/// `Deserialize` and `JsonSchema` (`String`, `bool`, `char`, the numbers, and `Option` or `Vec`
/// of one of them), so that nothing about it needs checking.
pub(crate) fn is_std_type(ty: &Type) -> bool {
    let Type::Path(path) = ty else {
        return false;
    };
    let [segment] = path.path.segments.iter().collect::<Vec<_>>()[..] else {
        return false;
    };
    if path.qself.is_some() || path.path.leading_colon.is_some() {
        return false;
    }
    let name = segment.ident.to_string();
    match &segment.arguments {
        syn::PathArguments::None => matches!(
            name.as_str(),
            "String"
                | "bool"
                | "char"
                | "u8"
                | "u16"
                | "u32"
                | "u64"
                | "usize"
                | "i8"
                | "i16"
                | "i32"
                | "i64"
                | "isize"
                | "f32"
                | "f64"
        ),
        syn::PathArguments::AngleBracketed(args) if name == "Option" || name == "Vec" => {
            match &args.args.iter().collect::<Vec<_>>()[..] {
                [syn::GenericArgument::Type(inner)] => is_std_type(inner),
                _ => false,
            }
        }
        _ => false,
    }
}

/// The serde and schemars attributes of an argument's field, but for its default.
fn field_attrs(attr: &ArgAttr) -> Vec<TokenStream> {
    let mut field_attrs = Vec::new();
    if let Some(desc) = &attr.desc {
        field_attrs.push(quote!(#[schemars(description = #desc)]));
    }
    if let Some(rename) = &attr.rename {
        field_attrs.push(quote!(#[serde(rename = #rename)]));
    }
    if let Some(max) = &attr.max_len {
        let max = max.value;
        field_attrs.push(quote!(#[schemars(length(max = #max))]));
    }
    let bounds = match (&attr.min, &attr.max) {
        (Some(min), Some(max)) => Some(quote!(min = #min, max = #max)),
        (Some(min), None) => Some(quote!(min = #min)),
        (None, Some(max)) => Some(quote!(max = #max)),
        (None, None) => None,
    };
    if let Some(bounds) = bounds {
        field_attrs.push(quote!(#[schemars(range(#bounds))]));
    }
    field_attrs
}

/// The functions giving argument `i`'s default, and the field attributes that name them.
///
/// serde fills the generic field through `From`, which is the identity here; schemars shows the
/// value itself in the schema.
fn default_fns(i: usize, ty: &Type, default: &Expr) -> (Vec<TokenStream>, TokenStream) {
    let (value_fn, value_item) = default_value_fn(i, ty, default);
    let default_fn = format_ident!("__tool_registry_default_{}", i);
    let value_path = LitStr::new(&value_fn.to_string(), Span::call_site());
    let default_path = LitStr::new(&default_fn.to_string(), Span::call_site());
    let fns = vec![
        value_item,
        quote! {
            fn #default_fn<__tool_registry_T: ::core::convert::From<#ty>>() -> __tool_registry_T {
                __tool_registry_T::from(#value_fn())
            }
        },
    ];
    let attrs = quote!(#[serde(default = #default_path)] #[schemars(default = #value_path)]);
    (fns, attrs)
}

/// The function giving argument `i`'s default value, spanned on the default so that a value of
/// the wrong type is reported there: its name and the item.
fn default_value_fn(i: usize, ty: &Type, default: &Expr) -> (syn::Ident, TokenStream) {
    let value_fn = format_ident!("__tool_registry_default_value_{}", i);
    let item = quote_spanned! {default.span()=>
        fn #value_fn() -> #ty {
            let __tool_registry_value: #ty = #default;
            __tool_registry_value
        }
    };
    (value_fn, item)
}

/// A path as the `crate = "..."` attribute of serde's and schemars' derives takes it.
fn path_string(tokens: &TokenStream) -> String {
    tokens.to_string().replace(' ', "")
}
