//! The `#[tool]` attribute of [`tool-registry`](https://docs.rs/tool-registry). Use it through
//! `tool_registry::tool`; this crate is an implementation detail.

mod args_struct;
mod ast;
mod attr;
mod check;
mod ctxt;
mod expand;
mod fallback;
mod files;
mod targets;

use proc_macro::TokenStream;

/// Declares an LLM tool. Documented on `tool_registry::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let expanded = expand::tool(args.into(), item.into());
    if std::env::var_os("TOOL_REGISTRY_MACROS_DEBUG").is_some_and(|v| v == "1") {
        eprintln!("{expanded}");
    }
    expanded.into()
}

/// One module per file of a folder of tools. Documented on `tool_registry::tool_files`.
#[proc_macro]
pub fn tool_files(input: TokenStream) -> TokenStream {
    files::tool_files(input.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
