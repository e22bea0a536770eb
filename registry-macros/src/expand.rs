//! Generates the `ToolDef`, the argument type and the call shim beside the user's function.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ItemFn, LitStr, Path, Type, parse_quote};

use crate::ast::{Input, Output, ToolFn, has_impl_trait};
use crate::attr::{ArgAttr, Sp, Text, ToolAttr};
use crate::check::{self, Resolved, TagForm};
use crate::ctxt::Ctxt;
use crate::fallback;

pub(crate) fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(_) => {
            let error = syn::Error::new(
                item_keyword(&item),
                "`#[tool]` goes on a free function with a body: `async fn name(args...) -> Output { ... }`",
            );
            return fallback::emit(item, error);
        }
    };
    let mut cx = Ctxt::new();
    let attr = ToolAttr::parse(&mut cx, args);
    let func = ToolFn::parse(&mut cx, &mut item);
    let resolved = check::resolve(&mut cx, &attr, &func);
    if let Some(error) = cx.finish() {
        return fallback::emit(&item, error);
    }
    let generated = generate(&attr, &func, &resolved);
    quote! {
        #item
        #generated
    }
}

/// The span of the keyword that says what the item is (`struct`, `fn`, ...), past its attributes
/// and visibility.
fn item_keyword(item: &TokenStream) -> Span {
    let mut tokens = item.clone().into_iter().peekable();
    while let Some(token) = tokens.next() {
        match &token {
            TokenTree::Punct(punct) if punct.as_char() == '#' => {
                tokens.next_if(|t| matches!(t, TokenTree::Punct(p) if p.as_char() == '!'));
                tokens.next();
            }
            TokenTree::Ident(ident) if ident == "pub" => {
                tokens.next_if(
                    |t| matches!(t, TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis),
                );
            }
            _ => return token.span(),
        }
    }
    Span::call_site()
}

fn generate(attr: &ToolAttr, func: &ToolFn, resolved: &Resolved) -> TokenStream {
    let krate: Path = attr
        .krate
        .clone()
        .unwrap_or_else(|| parse_quote!(::tool_registry));
    let p = quote!(#krate::__private);
    let blocking = attr.blocking.as_ref().is_some_and(|b| b.value);

    let ModelArgs {
        items,
        types,
        parsed,
        pattern,
        schema: args_schema,
    } = model_args(func, &p);
    let arg_infos = arg_infos(func, &p);
    let CallInputs {
        args: call_args,
        states,
        length_checks,
    } = call_inputs(func, &p, blocking);
    let (output_check, convert) = convert_output(func, &p, &call_args);
    let boxed = boxed_future(&p, resolved.name_span, blocking, func.is_async, &convert);
    let checks = type_checks(&types, &p);
    let parts = parts(
        attr,
        resolved,
        &p,
        &arg_infos,
        output_schema(attr, func, &p),
    );
    let uniqueness = unique_names(attr, resolved);

    // Argument types that may fall short are checked one by one, and the whole argument type
    // goes through the probe, which reports nothing a second time; standard types need neither.
    let (probes, schema, parse) = if checks.is_empty() {
        (
            TokenStream::new(),
            args_schema.unwrap_or_else(|| quote!(#p::schema_for::<#parsed>())),
            quote!(#p::parse_args::<#parsed>(__tool_registry_raw)),
        )
    } else {
        (
            quote! {
                #[allow(unused_imports)]
                use #p::probe::{
                    Both as _, DeserializeOnly as _, JsonSchemaOnly as _, Neither as _, Typed as _,
                    Untyped as _,
                };

                #[allow(dead_code)]
                fn __tool_registry_check() {
                    #(#checks)*
                }
            },
            quote!((&&#p::probe::Probe::<#parsed>::new()).__tool_registry_schema()),
            quote!((&&#p::probe::Probe::<#parsed>::new()).__tool_registry_parse(__tool_registry_raw)),
        )
    };
    quote! {
        #uniqueness
        const _: () = {
            #(#items)*

            #probes

            fn __tool_registry_schema() -> #p::schemars::Schema {
                #schema
            }

            fn __tool_registry_call<'a>(
                __tool_registry_raw: #p::ToolArgs<'a>,
                __tool_registry_env: #p::CallEnv<'a>,
            ) -> #p::CallResult<'a> {
                let #pattern = #parse?;
                #(#length_checks)*
                #(#states)*
                #output_check
                #boxed
            }

            #[#p::linkme::distributed_slice(#p::TOOLS)]
            #[linkme(crate = #p::linkme)]
            static __TOOL_REGISTRY_DEF: #p::ToolDef = #p::ToolDef::__new(#parts);
        };
    }
}

/// The `ArgInfo` of each model argument, for the catalog.
fn arg_infos(func: &ToolFn, p: &TokenStream) -> Vec<TokenStream> {
    func.model_args()
        .map(|arg| {
            let json_name = arg.json_name();
            let rust_type = type_text(&arg.ty);
            let required = !arg.optional;
            quote! {
                #p::ArgInfo { name: #json_name, rust_type: #rust_type, required: #required }
            }
        })
        .collect()
}

/// What the call shim does with each input of the function.
struct CallInputs {
    /// The function's arguments, in order.
    args: Vec<TokenStream>,
    /// Statements that fetch the state and copy the context before the call.
    states: Vec<TokenStream>,
    /// The `#[arg(max_len)]` checks, run on the parsed arguments.
    length_checks: Vec<TokenStream>,
}

fn call_inputs(func: &ToolFn, p: &TokenStream, blocking: bool) -> CallInputs {
    let mut args = Vec::new();
    let mut states = Vec::new();
    let mut length_checks = Vec::new();
    let mut model_index = 0usize;
    for (i, input) in func.inputs.iter().enumerate() {
        match input {
            Input::Model(arg) => {
                let local = format_ident!("__tool_registry_a{}", model_index);
                model_index += 1;
                if let Some(max) = &arg.attr.max_len {
                    let (max, path, ty) = (max.value, arg.json_name(), &arg.ty);
                    let (first, _) = end_spans(ty);
                    length_checks.push(quote_spanned!(first=>
                        #p::check_max_len::<#ty>(&#local, #max, #path)?;
                    ));
                }
                args.push(quote!(#local));
            }
            Input::Struct { .. } => args.push(quote!(__tool_registry_args)),
            // A blocking handler outlives the call's borrow of the context: it gets a copy.
            Input::Ctx if blocking => {
                states.push(quote!(let __tool_registry_ctx = ::core::clone::Clone::clone(__tool_registry_env.ctx());));
                args.push(quote!(&__tool_registry_ctx));
            }
            Input::Ctx => args.push(quote!(__tool_registry_env.ctx())),
            Input::State(ty) => {
                let local = format_ident!("__tool_registry_s{}", i);
                states.push(quote_spanned!(input.span()=> let #local = __tool_registry_env.state::<#ty>()?;));
                args.push(quote!(#local));
            }
        }
    }
    CallInputs {
        args,
        states,
        length_checks,
    }
}

/// The check that the output can be serialized, when it needs one, and the expression that calls
/// the function and turns what it returns into the tool's output.
fn convert_output(
    func: &ToolFn,
    p: &TokenStream,
    call_args: &[TokenStream],
) -> (Option<TokenStream>, TokenStream) {
    let ident = &func.ident;
    let invoke = if func.is_async {
        quote!(#ident(#(#call_args),*).await)
    } else {
        quote!(#ident(#(#call_args),*))
    };
    // `assert_output` comes before the conversion, whose turbofish names the same user tokens: rustc
    // then reports the unmet `Serialize` bound once, with `ToolOutput`'s message.
    match &func.output {
        Output::Unit => (None, quote!({ #invoke; #p::output::value(()) })),
        Output::ToolResult => (None, quote!(#p::output::tool_result(#invoke))),
        Output::ResultToolResult { err } => {
            let err = error_type(err.as_deref());
            (
                None,
                quote!(#p::output::result_tool_result::<#err>(#invoke)),
            )
        }
        Output::Result { ok, err } => {
            let err = error_type(err.as_deref());
            (
                (!is_std_type(ok)).then(|| quote!(#p::assert_output::<#ok>();)),
                quote!(#p::output::result::<#ok, #err>(#invoke)),
            )
        }
        // An opaque type cannot be named in a turbofish; its bounds were checked where it was defined.
        Output::Value(ty) if has_impl_trait(ty) => (None, quote!(#p::output::value(#invoke))),
        // A standard type is `Serialize`: nothing to check.
        Output::Value(ty) => (
            (!is_std_type(ty)).then(|| quote!(#p::assert_output::<#ty>();)),
            quote!(#p::output::value::<#ty>(#invoke)),
        ),
    }
}

/// The shim's result: the call's future, boxed, or the job handed to the blocking pool.
fn boxed_future(
    p: &TokenStream,
    name_span: Span,
    blocking: bool,
    is_async: bool,
    convert: &TokenStream,
) -> TokenStream {
    match (blocking, is_async) {
        (false, _) => quote_spanned! {name_span=>
            ::core::result::Result::Ok(::std::boxed::Box::pin(async move { #convert }))
        },
        (true, false) => quote_spanned! {name_span=>
            ::core::result::Result::Ok(#p::blocking(move || #convert))
        },
        (true, true) => quote_spanned! {name_span=>
            ::core::result::Result::Ok(#p::blocking_async(async move { #convert }))
        },
    }
}

/// Each argument type is checked on its own tokens, so an unmet bound is reported there, once.
/// The call runs from the type's first token to its last, so that rustc's label for the call and
/// the one for the type are one and the same.
fn type_checks(types: &[Type], p: &TokenStream) -> Vec<TokenStream> {
    types
        .iter()
        .map(|ty| {
            let (first, last) = end_spans(ty);
            let mut call = proc_macro2::Group::new(Delimiter::Parenthesis, TokenStream::new());
            call.set_span(last);
            quote_spanned! {first=>
                (&&&&#p::probe::Probe::<#ty>::new()).__tool_registry_check::<#ty>#call;
            }
        })
        .collect()
}

/// The spans of the first and the last token of `ty`.
fn end_spans(ty: &Type) -> (Span, Span) {
    let mut tokens = ty.to_token_stream().into_iter();
    let first = tokens.next().map_or_else(Span::call_site, |t| t.span());
    let last = tokens.last().map_or(first, |t| t.span());
    (first, last)
}

/// The error type of a `Result`, as the user wrote it so that rustc reports a missing `Display`
/// there, or `_` for an alias such as `anyhow::Result<T>`.
fn error_type(err: Option<&Type>) -> TokenStream {
    match err {
        Some(err) => err.to_token_stream(),
        None => quote!(_),
    }
}

/// How the model's arguments are parsed: into the user's `#[args]` struct, or into a generated
/// struct with one field per argument.
///
/// The generated struct is generic over its field types, so that its derives hold no user type
/// and cannot fail; the user's types are checked one by one (`__tool_registry_check`).
struct ModelArgs {
    /// The generated struct and the functions giving its defaults.
    items: Vec<TokenStream>,
    /// The user's types, one per field.
    types: Vec<Type>,
    /// The parsed type in terms of the user's types.
    parsed: TokenStream,
    /// The pattern the parsed value is bound to in the call shim.
    pattern: TokenStream,
    /// How the input schema is made, when not from the parsed type's `JsonSchema`.
    schema: Option<TokenStream>,
}

fn model_args(func: &ToolFn, p: &TokenStream) -> ModelArgs {
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
        let max_len = match &arg.attr.max_len {
            Some(max) => {
                let max = max.value as u64;
                quote!(::core::option::Option::Some(#max))
            }
            None => quote!(::core::option::Option::None),
        };
        schemas.push(quote! {
            #p::ArgSchema {
                name: #name,
                schema: #p::schemars::SchemaGenerator::subschema_for::<#ty>,
                is_option: <#ty as #p::schemars::JsonSchema>::_schemars_private_is_option,
                description: #description,
                max_len: #max_len,
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
fn is_std_type(ty: &Type) -> bool {
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

/// `Some(schema function)` of the return type when the tool declares `output_schema`.
fn output_schema(attr: &ToolAttr, func: &ToolFn, p: &TokenStream) -> Option<TokenStream> {
    let wanted = attr.output_schema.as_ref().is_some_and(|f| f.value);
    let ty = match &func.output {
        Output::Result { ok, .. } if wanted => Some(&**ok),
        Output::Value(ty) if wanted => Some(&**ty),
        _ => None,
    };
    ty.map(|ty| {
        quote_spanned!(ty.span()=> ::core::option::Option::Some(
            <#ty as #p::OutputSchema>::output_schema as fn() -> #p::schemars::Schema
        ))
    })
}

/// The tool's `ToolParts`: the fields every tool has, the others only when the tool sets them
/// to something else than `ToolParts::DEFAULT` has, so that rustc has less to check per tool.
fn parts(
    attr: &ToolAttr,
    resolved: &Resolved,
    p: &TokenStream,
    arg_infos: &[TokenStream],
    output_schema: Option<TokenStream>,
) -> TokenStream {
    let name = &resolved.name;
    let description = description(&resolved.description);
    let source = source_location(p, resolved.name_span);
    let mut set: Vec<TokenStream> = Vec::new();
    let mut field = |name: &str, value: TokenStream| {
        let name = format_ident!("{}", name);
        set.push(quote!(#name: #value));
    };
    if !attr.aliases.is_empty() {
        let aliases = &attr.aliases;
        field("aliases", quote!(&[#(#aliases),*]));
    }
    if let Some(version) = &attr.version {
        field("version", option(Some(version)));
    }
    if let Some(category) = &attr.category {
        field("category", option(Some(category)));
    }
    if !attr.tags.is_empty() {
        let tags = &attr.tags;
        field("tags", quote!(&[#(#tags),*]));
    }
    for (key, ty, value, default) in [
        ("tier", "Tier", &attr.tier, "medium"),
        ("cost", "Cost", &attr.cost, "free"),
        ("permission", "Permission", &attr.permission, "guest"),
    ] {
        if value.as_ref().is_some_and(|v| v.value != default) {
            field(key, variant(p, ty, value.as_ref(), default));
        }
    }
    if [
        &attr.read_only,
        &attr.destructive,
        &attr.idempotent,
        &attr.open_world,
        &attr.requires_confirmation,
    ]
    .iter()
    .any(|flag| flag.is_some())
    {
        field("annotations", annotations(p, attr));
    }
    for (key, flag, default) in [
        ("requires_gate", &attr.requires_gate, false),
        ("defer_loading", &attr.defer_loading, false),
        ("sequential", &attr.sequential, false),
        ("gate_fail_closed", &attr.gate_fail_closed, false),
        ("strip_from_display", &attr.strip_from_display, true),
        ("blocking", &attr.blocking, false),
    ] {
        let value = flag_or(flag.as_ref(), default);
        if value != default {
            field(key, quote!(#value));
        }
    }
    if let Some(d) = &attr.cooldown_ms {
        field("cooldown", option(Some(millis(p, d.value))));
    }
    if let Some(d) = &attr.timeout_ms {
        field("timeout", option(Some(millis(p, d.value))));
    }
    if let Some(n) = &attr.daily_limit {
        field("daily_limit", option(Some(n.value)));
    }
    if let Some(n) = &attr.max_args_bytes {
        let n = n.value;
        field("max_args_bytes", quote!(#n));
    }
    if let Some(path) = &attr.enabled {
        field(
            "enabled",
            quote_spanned!(path.span()=> ::core::option::Option::Some(#path as fn(&#p::Scope) -> bool)),
        );
    }
    if let Some(tag) = &resolved.tag {
        field("tag", option(Some(tag_form(p, tag))));
    }
    if let Some(output_schema) = output_schema {
        field("output_schema", output_schema);
    }
    let targets = crate::targets::bits(&attr.targets);
    if targets != 0 {
        field("targets", quote!(#targets));
    }
    quote! {
        #p::ToolParts {
            name: #name,
            description: #description,
            source: #source,
            args: &[#(#arg_infos),*],
            input_schema: __tool_registry_schema,
            call: __tool_registry_call,
            #(#set,)*
            ..#p::ToolParts::DEFAULT
        }
    }
}

/// The annotations clients read: each one given, the others left out (`None`, for the client's
/// default).
fn annotations(p: &TokenStream, attr: &ToolAttr) -> TokenStream {
    let given = [
        ("read_only", &attr.read_only),
        ("destructive", &attr.destructive),
        ("idempotent", &attr.idempotent),
        ("open_world", &attr.open_world),
        ("requires_confirmation", &attr.requires_confirmation),
    ]
    .into_iter()
    .filter_map(|(name, flag)| {
        let name = format_ident!("{}", name);
        let value = option(Some(flag.as_ref()?.value));
        Some(quote!(#name: #value))
    });
    quote! {
        #p::Annotations {
            #(#given,)*
            ..#p::Annotations::NONE
        }
    }
}

fn tag_form(p: &TokenStream, tag: &TagForm) -> TokenStream {
    let (prefix, pattern, groups, example) = (&tag.prefix, &tag.pattern, &tag.groups, &tag.example);
    quote!(#p::TagForm {
        prefix: #prefix,
        pattern: #pattern,
        groups: &[#(#groups),*],
        example: #example,
    })
}

/// Where the tool was declared, spanned on its name.
fn source_location(p: &TokenStream, name_span: Span) -> TokenStream {
    quote_spanned! {name_span=>
        #p::SourceLocation {
            crate_name: ::core::env!("CARGO_CRATE_NAME"),
            module_path: ::core::module_path!(),
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
        }
    }
}

/// A `#[macro_export]` macro per name and alias: macros exported from one crate share one
/// namespace, so a second tool of the same name in the crate is a compile error (E0428) that
/// points at both names.
fn unique_names(attr: &ToolAttr, resolved: &Resolved) -> TokenStream {
    let names = std::iter::once((resolved.name.clone(), resolved.name_span)).chain(
        attr.aliases
            .iter()
            .map(|alias| (alias.value(), alias.span())),
    );
    names
        .map(|(name, span)| {
            let ident = syn::Ident::new(
                &format!("__tool_registry_tool_named_{}", mangle(&name)),
                span,
            );
            quote_spanned! {span=>
                #[doc(hidden)]
                #[macro_export]
                macro_rules! #ident { () => {}; }
            }
        })
        .collect()
}

/// A tool name as an identifier: the name itself when it is one, so that rustc's message shows it
/// as written; otherwise the name with `_` for `.` and `-`, then a hash of the name, so that
/// `notes.search` and `notes_search` stay apart.
fn mangle(name: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if name.chars().all(plain) {
        return name.to_owned();
    }
    let readable: String = name
        .chars()
        .map(|c| if plain(c) { c } else { '_' })
        .collect();
    // FNV-1a: stable across compilers and runs, unlike `DefaultHasher`.
    let hash = name.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("{readable}__{hash:016x}")
}

fn description(parts: &[Text]) -> TokenStream {
    if parts.iter().all(|p| matches!(p, Text::Literal(_))) {
        let text = join_doc_lines(parts.iter().map(|p| match p {
            Text::Literal(s) => s.as_str(),
            Text::Macro(_) => "",
        }));
        return quote!(#text);
    }
    let pieces = parts.iter().map(|part| match part {
        Text::Literal(line) => {
            let line = format!("{}\n", line.strip_prefix(' ').unwrap_or(line));
            quote!(#line)
        }
        Text::Macro(expr) => quote!(#expr, "\n"),
    });
    quote!(::core::concat!(#(#pieces),*))
}

/// Doc comment lines as rustdoc reads them: one leading space dropped, joined by newlines.
fn join_doc_lines<'a>(lines: impl Iterator<Item = &'a str>) -> String {
    let mut text = String::new();
    for line in lines {
        for sub in line.split('\n') {
            text.push_str(sub.strip_prefix(' ').unwrap_or(sub));
            text.push('\n');
        }
    }
    text.trim().to_owned()
}

/// `Some(value)` or `None`.
fn option(value: Option<impl ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// A flag's value, or `default` when it was left out.
fn flag_or(flag: Option<&Sp<bool>>, default: bool) -> bool {
    flag.map_or(default, |flag| flag.value)
}

fn millis(p: &TokenStream, ms: u64) -> TokenStream {
    quote!(#p::millis(#ms))
}

/// `Type::Variant` for a choice such as `tier = "low"`, or for `default` when it was left out.
fn variant(p: &TokenStream, ty: &str, value: Option<&Sp<String>>, default: &str) -> TokenStream {
    let ty = format_ident!("{}", ty);
    let value = value.map_or(default, |value| value.value.as_str());
    let mut chars = value.chars();
    let variant = match chars.next() {
        Some(first) => format!("{}{}", first.to_ascii_uppercase(), chars.as_str()),
        None => String::new(),
    };
    let variant = format_ident!("{}", variant);
    quote!(#p::#ty::#variant)
}

fn path_string(tokens: &TokenStream) -> String {
    tokens.to_string().replace(' ', "")
}

/// A type as a person would write it: `Option<Vec<String>>`, not `Option < Vec < String > >`.
fn type_text(ty: &syn::Type) -> String {
    let mut text = ty.to_token_stream().to_string();
    for (from, to) in [
        (" < ", "<"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" :: ", "::"),
        (":: ", "::"),
        ("& ", "&"),
        (" ,", ","),
        ("' ", "'"),
    ] {
        text = text.replace(from, to);
    }
    text
}
