//! Our model of the annotated function: its name, docs, inputs and output.

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, GenericArgument, Ident, ItemFn, Lit, Meta, Pat, PatType,
    PathArguments, ReturnType, Signature, Type,
};

use crate::attr::{ArgAttr, Text};
use crate::ctxt::Ctxt;

pub(crate) struct ToolFn {
    pub(crate) ident: Ident,
    pub(crate) is_async: bool,
    /// The doc comment, line by line.
    pub(crate) docs: Vec<Text>,
    pub(crate) inputs: Vec<Input>,
    pub(crate) output: Output,
}

pub(crate) enum Input {
    /// An argument the model fills in.
    Model(ModelArg),
    /// One struct whose fields are all of the model's arguments (`#[args]`).
    Struct { ident: Ident, ty: Box<Type> },
    /// `&Ctx`.
    Ctx,
    /// `State<T>`: the inner type.
    State(Box<Type>),
}

pub(crate) struct ModelArg {
    pub(crate) ident: Ident,
    pub(crate) ty: Box<Type>,
    pub(crate) attr: ArgAttr,
    pub(crate) optional: bool,
}

impl ModelArg {
    /// The name the model uses.
    pub(crate) fn json_name(&self) -> String {
        match &self.attr.rename {
            Some(name) => name.value(),
            None => syn::ext::IdentExt::unraw(&self.ident).to_string(),
        }
    }
}

pub(crate) enum Output {
    /// No return type.
    Unit,
    /// `ToolResult`.
    ToolResult,
    /// `Result<ToolResult, E>`, with `E` unless an alias hides it.
    ResultToolResult { err: Option<Box<Type>> },
    /// `Result<T, E>`, with `E` unless an alias hides it.
    Result {
        ok: Box<Type>,
        err: Option<Box<Type>>,
    },
    /// Any other `Serialize` type.
    Value(Box<Type>),
}

impl ToolFn {
    /// Reads the function and strips our helper attributes from its parameters, so that the
    /// function can be emitted as written.
    pub(crate) fn parse(cx: &mut Ctxt, item: &mut ItemFn) -> Self {
        let sig = &mut item.sig;
        check_signature(cx, sig);
        let mut inputs = Vec::new();
        for input in &mut sig.inputs {
            match input {
                FnArg::Receiver(receiver) => cx.error_spanned(
                    receiver.self_token,
                    "`#[tool]` works on free functions, not methods: remove `self` and pass what the tool needs as `State<T>` or `&Ctx`",
                ),
                FnArg::Typed(pat_type) => inputs.extend(Input::parse(cx, pat_type)),
            }
        }
        check_args_struct(cx, &inputs);

        let output = match &sig.output {
            ReturnType::Default => Output::Unit,
            ReturnType::Type(_, ty) => classify_output(ty),
        };

        ToolFn {
            ident: sig.ident.clone(),
            is_async: sig.asyncness.is_some(),
            docs: docs(&item.attrs),
            inputs,
            output,
        }
    }

    pub(crate) fn model_args(&self) -> impl Iterator<Item = &ModelArg> {
        self.inputs.iter().filter_map(|input| match input {
            Input::Model(arg) => Some(arg),
            _ => None,
        })
    }

    pub(crate) fn args_struct(&self) -> Option<(&Ident, &Type)> {
        self.inputs.iter().find_map(|input| match input {
            Input::Struct { ident, ty } => Some((ident, &**ty)),
            _ => None,
        })
    }

    pub(crate) fn name_span(&self) -> Span {
        self.ident.span()
    }
}

/// What the registry cannot call: generics, `unsafe`, variadics.
fn check_signature(cx: &mut Ctxt, sig: &Signature) {
    if let Some(param) = sig.generics.type_params().next() {
        cx.error_spanned(
            param,
            "`#[tool]` functions cannot be generic: the registry must know every argument type; use a concrete type",
        );
    }
    if let Some(param) = sig.generics.const_params().next() {
        cx.error_spanned(
            param,
            "`#[tool]` functions cannot have const generics; use a concrete value",
        );
    }
    if let Some(unsafety) = &sig.unsafety {
        cx.error_spanned(unsafety, "`#[tool]` functions cannot be `unsafe`");
    }
    if let Some(variadic) = &sig.variadic {
        cx.error_spanned(variadic, "`#[tool]` functions cannot be variadic");
    }
}

impl Input {
    /// Reads one parameter and strips its `#[arg]` / `#[args]`; `None` when it was reported.
    fn parse(cx: &mut Ctxt, pat_type: &mut PatType) -> Option<Self> {
        let (arg_attr, is_args) = take_helper_attrs(pat_type);
        let ident = match &*pat_type.pat {
            Pat::Ident(pat) if pat.subpat.is_none() => pat.ident.clone(),
            other => {
                cx.error_spanned(
                    other,
                    "`#[tool]` parameters must be plain names such as `query: String`, since each becomes an argument name",
                );
                return None;
            }
        };
        let ty = pat_type.ty.clone();
        if has_impl_trait(&ty) {
            cx.error_spanned(
                &ty,
                "`#[tool]` parameters cannot be `impl Trait`: the registry must know every argument type; use a concrete type",
            );
            return None;
        }
        if let Some(attr) = &is_args {
            if let Some(problem) = borrowed(&ty) {
                cx.error_spanned(&ty, problem);
            }
            if !matches!(attr.meta, Meta::Path(_)) {
                cx.error_spanned(
                    attr,
                    "`#[args]` takes no options; describe the fields with doc comments",
                );
            }
            return Some(Input::Struct { ident, ty });
        }
        if arg_attr.is_none() {
            if is_ctx(&ty) {
                return Some(Input::Ctx);
            }
            if let Some(inner) = state_inner(&ty) {
                return Some(Input::State(Box::new(inner.clone())));
            }
        }
        if let Some(problem) = borrowed(&ty) {
            cx.error_spanned(&ty, problem);
            return None;
        }
        let attr = arg_attr.map(|a| ArgAttr::parse(cx, &a)).unwrap_or_default();
        let optional = last_segment_is(&ty, "Option") || attr.default.is_some();
        Some(Input::Model(ModelArg {
            ident,
            ty,
            attr,
            optional,
        }))
    }

    pub(crate) fn span(&self) -> Span {
        match self {
            Input::Model(arg) => arg.ident.span(),
            Input::Struct { ident, .. } => ident.span(),
            Input::Ctx => Span::call_site(),
            Input::State(ty) => ty.span(),
        }
    }
}

/// Removes `#[arg(...)]` and `#[args]` from a parameter, which would not compile on the emitted
/// function, and returns them (the last of each).
fn take_helper_attrs(pat_type: &mut PatType) -> (Option<Attribute>, Option<Attribute>) {
    let mut arg_attr = None;
    let mut is_args = None;
    pat_type.attrs.retain(|attr| {
        if attr.path().is_ident("arg") {
            arg_attr = Some(attr.clone());
            false
        } else if attr.path().is_ident("args") {
            is_args = Some(attr.clone());
            false
        } else {
            true
        }
    });
    (arg_attr, is_args)
}

/// At most one `#[args]` struct, and then no other model argument.
fn check_args_struct(cx: &mut Ctxt, inputs: &[Input]) {
    let structs: Vec<_> = inputs
        .iter()
        .filter(|i| matches!(i, Input::Struct { .. }))
        .collect();
    if let Some(Input::Struct { ident, .. }) = structs.get(1) {
        cx.error_spanned(
            ident,
            "only one parameter can be `#[args]`; move these fields into the first `#[args]` struct",
        );
    }
    if !structs.is_empty() {
        for input in inputs {
            if let Input::Model(arg) = input {
                cx.error_spanned(
                    &arg.ident,
                    "with an `#[args]` struct, every model argument is a field of that struct; move this parameter into it",
                );
            }
        }
    }
}

fn docs(attrs: &[Attribute]) -> Vec<Text> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(Text::Literal(s.value())),
                expr @ Expr::Macro(_) => Some(Text::Macro(expr.clone())),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

/// Why a model argument's type cannot borrow, if it does: the arguments are parsed from JSON that
/// does not outlive the call.
fn borrowed(ty: &Type) -> Option<&'static str> {
    if let Type::Reference(reference) = ty
        && last_segment_is(&reference.elem, "Ctx")
    {
        return Some("take the context as `&Ctx`; a tool cannot borrow it mutably");
    }
    let borrows = ty
        .to_token_stream()
        .into_iter()
        .any(|token| has_borrow(&token));
    borrows.then_some(
        "`#[tool]` arguments must own their data, since they are parsed from the model's JSON: use `String` for `&str`, `Vec<T>` for `&[T]`, `T` for `&T`",
    )
}

fn has_borrow(token: &proc_macro2::TokenTree) -> bool {
    match token {
        proc_macro2::TokenTree::Punct(punct) => matches!(punct.as_char(), '&' | '\''),
        proc_macro2::TokenTree::Group(group) => group.stream().into_iter().any(|t| has_borrow(&t)),
        _ => false,
    }
}

/// Whether `impl Trait` appears anywhere in the type.
pub(crate) fn has_impl_trait(ty: &Type) -> bool {
    fn scan(tokens: proc_macro2::TokenStream) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => ident == "impl",
            proc_macro2::TokenTree::Group(group) => scan(group.stream()),
            _ => false,
        })
    }
    scan(ty.to_token_stream())
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last(),
        Type::Group(group) => last_segment(&group.elem),
        Type::Paren(paren) => last_segment(&paren.elem),
        _ => None,
    }
}

pub(crate) fn last_segment_is(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|segment| segment.ident == name)
}

fn type_args(segment: &syn::PathSegment) -> impl Iterator<Item = &Type> {
    let args = match &segment.arguments {
        PathArguments::AngleBracketed(args) => Some(&args.args),
        _ => None,
    };
    args.into_iter().flatten().filter_map(|arg| match arg {
        GenericArgument::Type(ty) => Some(ty),
        _ => None,
    })
}

/// `&Ctx` (any path ending in `Ctx`).
fn is_ctx(ty: &Type) -> bool {
    match ty {
        Type::Reference(reference) => {
            reference.mutability.is_none() && last_segment_is(&reference.elem, "Ctx")
        }
        _ => false,
    }
}

/// `State<T>` (any path ending in `State`) gives `T`.
fn state_inner(ty: &Type) -> Option<&Type> {
    let segment = last_segment(ty)?;
    if segment.ident != "State" {
        return None;
    }
    type_args(segment).next()
}

fn classify_output(ty: &Type) -> Output {
    if let Type::Tuple(tuple) = ty
        && tuple.elems.is_empty()
    {
        return Output::Unit;
    }
    match last_segment(ty) {
        Some(segment) if segment.ident == "ToolResult" => Output::ToolResult,
        Some(segment) if segment.ident == "Result" => {
            let mut args = type_args(segment);
            let ok = args.next();
            let err = args.next().map(|err| Box::new(err.clone()));
            match ok {
                Some(ok) if last_segment_is(ok, "ToolResult") => Output::ResultToolResult { err },
                Some(ok) => Output::Result {
                    ok: Box::new(ok.clone()),
                    err,
                },
                None => Output::Value(Box::new(ty.clone())),
            }
        }
        _ => Output::Value(Box::new(ty.clone())),
    }
}
