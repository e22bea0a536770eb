//! `#[tool(confirm_if = path)]`: the function that reads a call's arguments as the call shim
//! does and asks the user's predicate whether the call needs a person's approval.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Path;
use syn::spanned::Spanned;

use crate::ast::{Input, ToolFn};

/// `confirm_if`'s function: the arguments read as the call shim reads them, then the user's
/// predicate given each model argument (or the `#[args]` struct) by reference, in order,
/// through `ConfirmIfFunction` (anything an argument borrows as is accepted: `&str` for a
/// `String`).
pub(crate) fn function(
    func: &ToolFn,
    p: &TokenStream,
    path: &Path,
    pattern: &TokenStream,
    parse: &TokenStream,
) -> TokenStream {
    let mut model_index = 0usize;
    let mut args = Vec::new();
    let mut types = Vec::new();
    for input in &func.inputs {
        match input {
            Input::Model(arg) => {
                let local = format_ident!("__tool_registry_a{}", model_index);
                model_index += 1;
                args.push(quote!(&#local));
                types.push(&arg.ty);
            }
            Input::Struct { ty, .. } => {
                args.push(quote!(&__tool_registry_args));
                types.push(ty);
            }
            Input::Ctx | Input::State(_) => {}
        }
    }
    // Called through a trait whose first parameter is the signature the function must have:
    // a function of another shape is one error naming that signature.
    let call = quote_spanned!(path.span()=>
        #p::ConfirmIfFunction::<fn(#(&#types),*) -> bool, _>::confirm(&#path, (#(#args,)*))
    );
    quote! {
        #[allow(unused_variables)]
        fn __tool_registry_confirm_if(
            __tool_registry_raw: #p::ToolArgs<'_>,
        ) -> ::core::result::Result<bool, #p::ToolError> {
            let #pattern = #parse?;
            ::core::result::Result::Ok(#call)
        }
    }
}
