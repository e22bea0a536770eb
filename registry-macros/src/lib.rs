//! The `#[tool]` attribute of [`tool-registry`](https://docs.rs/tool-registry). Use it through
//! `tool_registry::tool`; this crate is an implementation detail.
//!
//! One file per job, each using only files above it in this list:
//!
//! - `ctxt.rs` collects the errors of one expansion, so that all are reported at once.
//! - `targets.rs` knows the formats `targets(...)` names and the types strict mode cannot say.
//! - `attr/key.rs` is one key of `#[tool(...)]` or `#[arg(...)]` as it is read, and the errors
//!   about keys themselves (unknown, repeated).
//! - `attr/values.rs` reads what a key is given, each value with the error a mistake deserves.
//! - `attr/mod.rs` reads `#[tool(...)]` and `#[arg(...)]`, key by key, into `ToolAttr` and
//!   `ArgAttr`.
//! - `ast.rs` is our model of the annotated function: name, docs, inputs, output.
//! - `args_struct.rs` makes the struct the model's arguments are parsed into, and its schema.
//! - `check.rs` holds the checks that span several attributes and the signature.
//! - `fallback.rs` is what is emitted when there are errors: the function as written.
//! - `confirm_if.rs` makes `confirm_if`'s function: the arguments read, the predicate asked.
//! - `expand.rs` generates the `ToolDef` and the call shim beside the user's function.
//! - `files.rs` is `tool_files!`: one module per file of a folder.
//! - `offer.rs` is `#[resource]` and `#[prompt]`: a function as a resource, a resource template
//!   or a prompt, in the registry's linked slices (uses none of the others).

mod args_struct;
mod ast;
mod attr;
mod check;
mod confirm_if;
mod ctxt;
mod expand;
mod fallback;
mod files;
mod offer;
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

/// Declares a resource or a resource template. Documented on `tool_registry::resource`.
#[proc_macro_attribute]
pub fn resource(args: TokenStream, item: TokenStream) -> TokenStream {
    offer::expand(offer::Kind::Resource, args.into(), item.into()).into()
}

/// Declares a prompt. Documented on `tool_registry::prompt`.
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, item: TokenStream) -> TokenStream {
    offer::expand(offer::Kind::Prompt, args.into(), item.into()).into()
}
