//! Generates the `ToolDef`, the argument type and the call shim beside the user's function.

use proc_macro2::{Delimiter, Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, Path, Type, parse_quote};

use crate::args_struct::{ModelArgs, is_std_type, model_args};
use crate::ast::{Input, Output, ToolFn, has_impl_trait};
use crate::attr::{Sp, Text, ToolAttr};
use crate::check::{self, Resolved, TagForm};
use crate::ctxt::Ctxt;
use crate::fallback;
use crate::targets;

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
        (output_schema(attr, func, &p), returns(attr, func, &p)),
        func.inputs.iter().any(|input| matches!(input, Input::Ctx)),
    );
    let uniqueness = unique_names(attr, resolved);

    let (probes, schema, parse) = reading(&p, &parsed, &checks, args_schema);
    let confirm_if = attr
        .confirm_if
        .as_ref()
        .map(|path| crate::confirm_if::function(func, &p, path, &pattern, &parse));
    quote! {
        #uniqueness
        const _: () = {
            #(#items)*

            #probes

            fn __tool_registry_schema() -> #p::schemars::Schema {
                #schema
            }

            fn __tool_registry_call<'t, 'a>(
                __tool_registry_raw: #p::ToolArgs<'t>,
                __tool_registry_env: #p::CallEnv<'a>,
            ) -> #p::CallResult<'a> {
                let #pattern = #parse?;
                #(#length_checks)*
                #(#states)*
                #output_check
                #boxed
            }

            #confirm_if

            #[#p::linkme::distributed_slice(#p::TOOLS)]
            #[linkme(crate = #p::linkme)]
            static __TOOL_REGISTRY_DEF: #p::ToolDef = #p::ToolDef::__new(#parts);
        };
    }
}

/// How the call shim parses the arguments and how the input schema is made, with the items
/// that takes. Argument types that may fall short are checked one by one (`checks`), and the
/// whole argument type goes through the probe, which reports nothing a second time; standard
/// types need neither.
fn reading(
    p: &TokenStream,
    parsed: &TokenStream,
    checks: &[TokenStream],
    args_schema: Option<TokenStream>,
) -> (TokenStream, TokenStream, TokenStream) {
    if checks.is_empty() {
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
                if arg.attr.min.is_some() || arg.attr.max.is_some() {
                    let (path, ty) = (arg.json_name(), &arg.ty);
                    let (first, _) = end_spans(ty);
                    // The bounds are typed by the argument: spanned at it, so that an argument
                    // that is no number is one error there.
                    let bound = |bound: &Option<Box<syn::Expr>>| match bound {
                        Some(value) => quote_spanned!(first=> ::core::option::Option::Some(#value)),
                        None => quote_spanned!(first=> ::core::option::Option::None),
                    };
                    let (min, max) = (bound(&arg.attr.min), bound(&arg.attr.max));
                    length_checks.push(quote_spanned!(first=>
                        #p::check_range::<#ty>(&#local, #min, #max, #path)?;
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

/// The type a tool's return value is converted from, when the macro can name it: `T` of `T` or
/// `Result<T, E>`; none for `()`, a `ToolResult` or an `impl Trait`.
fn returned_type(func: &ToolFn) -> Option<&Type> {
    match &func.output {
        Output::Result { ok, .. } if !has_impl_trait(ok) => Some(&**ok),
        Output::Value(ty) if !has_impl_trait(ty) => Some(&**ty),
        _ => None,
    }
}

/// The `output_schema` field: the JSON Schema of the returned value's structured part
/// (`<T as IntoToolResult>::Value`). By default, when that type implements `JsonSchema` (a
/// probe picks it, so a type without one is no error); with `output_schema`, required (an
/// error says what to derive); with `output_schema = false`, none.
fn output_schema(attr: &ToolAttr, func: &ToolFn, p: &TokenStream) -> Option<TokenStream> {
    let wanted = attr.output_schema.as_ref().map(|f| f.value);
    let ty = returned_type(func).filter(|_| wanted != Some(false))?;
    Some(if wanted == Some(true) {
        let value = quote_spanned!(ty.span()=> <#ty as #p::IntoToolResult>::Value);
        quote_spanned!(ty.span()=> ::core::option::Option::Some(
            || ::core::option::Option::Some(<#value as #p::OutputSchema>::output_schema())
        ))
    } else {
        quote!(::core::option::Option::Some(|| {
            use #p::probe::{OutputTyped as _, OutputUntyped as _};
            (&&#p::probe::Probe::<#ty>::new()).__tool_registry_output_schema()
        }))
    })
}

/// The `returns` field: the kinds of blocks the tool gives besides its value, as
/// `returns(...)` lists them, else as the returned type says.
fn returns(attr: &ToolAttr, func: &ToolFn, p: &TokenStream) -> Option<TokenStream> {
    if let Some(kinds) = &attr.returns {
        let variants = kinds.iter().filter_map(|kind| {
            crate::attr::BLOCK_KINDS
                .iter()
                .find(|(name, _)| *name == kind.value)
                .map(|(_, variant)| format_ident!("{}", variant))
        });
        return Some(quote!(|| &[#(#p::BlockKind::#variants),*]));
    }
    returned_type(func).map(|ty| {
        quote!(|| {
            use #p::probe::{ReturnsKnown as _, ReturnsUnknown as _};
            (&&#p::probe::Probe::<#ty>::new()).__tool_registry_returns()
        })
    })
}

/// The tool's `ToolParts`: the fields every tool has, the others only when the tool sets them
/// to something else than `ToolParts::DEFAULT` has, so that rustc has less to check per tool.
///
/// It stays one function: one short step per `#[tool]` key, in the order of `ToolParts`, so that
/// what a key becomes is found by reading down one list.
fn parts(
    attr: &ToolAttr,
    resolved: &Resolved,
    p: &TokenStream,
    arg_infos: &[TokenStream],
    (output_schema, returns): (Option<TokenStream>, Option<TokenStream>),
    takes_ctx: bool,
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
    if let Some(short) = &attr.short_description {
        field("short_description", option(Some(short)));
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
        ("task", "TaskSupport", &attr.task, "forbidden"),
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
    if let Some(d) = &attr.cache_ms {
        let ttl = millis(p, d.value);
        let per_user = attr.cache_per_user.as_ref().is_none_or(|f| f.value);
        field(
            "cache",
            quote!(::core::option::Option::Some(#p::CachePolicy { ttl: #ttl, per_user: #per_user })),
        );
    }
    if let Some(n) = &attr.max_result_bytes {
        let n = n.value;
        field("max_result_bytes", quote!(::core::option::Option::Some(#n)));
    }
    if attr.confirm_if.is_some() {
        field(
            "confirm_if",
            quote!(::core::option::Option::Some(__tool_registry_confirm_if)),
        );
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
    if let Some(returns) = returns {
        field("returns", returns);
    }
    let targets = targets::bits(attr.target_names());
    if targets != 0 {
        field("targets", quote!(#targets));
    }
    // What a transport may answer without a stream: a function that takes no `Ctx` writes
    // nothing to its caller's client.
    if !takes_ctx {
        field("takes_ctx", quote!(false));
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
