//! `tool_files!("src/tools")`: one module per file of a folder, so that adding a tool is adding
//! a file.

use std::path::{Path, PathBuf};

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::LitStr;

/// The modules of the `.rs` files in the folder `input` names (relative to the crate's
/// `Cargo.toml`): `name.rs` becomes `pub mod name;`, `_name.rs` the private helper module
/// `_name`. Sorted by file name, so the expansion does not depend on the file system's order.
pub(crate) fn tool_files(input: TokenStream) -> syn::Result<TokenStream> {
    let folder: LitStr = syn::parse2(input)?;
    let root = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .ok_or_else(|| {
            syn::Error::new(
                folder.span(),
                "`CARGO_MANIFEST_DIR` is not set; build with cargo",
            )
        })?;
    let dir = root.join(folder.value());
    let mut files = read_folder(&dir).map_err(|e| {
        syn::Error::new(
            folder.span(),
            format!("cannot read the tools folder {}: {e}", dir.display()),
        )
    })?;
    files.sort();
    let mut modules = Vec::new();
    for file in &files {
        let Some(stem) = file.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let internal = stem.starts_with('_');
        if !is_module_name(stem.strip_prefix('_').unwrap_or(stem)) {
            return Err(syn::Error::new(
                folder.span(),
                format!(
                    "`{stem}.rs` in {} is not a module name: use lowercase letters, digits and `_`, starting with a letter (or one `_` for a helper file)",
                    dir.display()
                ),
            ));
        }
        let ident = syn::Ident::new(stem, Span::call_site());
        modules.push(if internal {
            quote! { mod #ident; }
        } else {
            quote! { pub mod #ident; }
        });
    }
    Ok(quote! { #(#modules)* })
}

fn read_folder(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|ext| ext == "rs") {
            files.push(path);
        }
    }
    Ok(files)
}

fn is_module_name(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}
