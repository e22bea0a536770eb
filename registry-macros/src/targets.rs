//! `#[tool(targets(openai_strict, anthropic_strict, gemini))]`: the formats a tool promises to
//! fit. What the macro can see of the arguments (the types written in the signature) is checked
//! here, as a compile error at the type; what it cannot (the schema of a type declared
//! elsewhere) is checked when the registry is built.

use quote::ToTokens;
use syn::{GenericArgument, PathArguments, Type};

use crate::ast::ToolFn;
use crate::attr::Sp;
use crate::ctxt::Ctxt;

/// Every target `targets(...)` accepts, with the bit the runtime reads.
pub(crate) const TARGETS: &[(&str, u8)] =
    &[("openai_strict", 1), ("anthropic_strict", 2), ("gemini", 4)];

/// The bit set of the named targets (the names were checked when read).
pub(crate) fn bits(targets: &[Sp<String>]) -> u8 {
    (targets.iter())
        .filter_map(|t| TARGETS.iter().find(|(name, _)| *name == t.value))
        .fold(0, |bits, (_, bit)| bits | bit)
}

/// Checks each argument type the signature shows against the strict targets.
pub(crate) fn check(cx: &mut Ctxt, targets: &[Sp<String>], func: &ToolFn) {
    let Some(strict) = targets
        .iter()
        .find(|t| t.value == "openai_strict" || t.value == "anthropic_strict")
    else {
        return;
    };
    let types = func
        .args_struct()
        .map(|(_, ty)| ty)
        .into_iter()
        .chain(func.model_args().map(|arg| &*arg.ty));
    for ty in types {
        if let Some((at, construct)) = inexpressible(ty) {
            let shown = at.to_token_stream().to_string().replace(' ', "");
            cx.error_spanned(
                at,
                format!(
                    "`{shown}` cannot be given in strict mode (`{}` in `targets`): {construct}; take a struct with named fields, or leave `{}` out of `targets`",
                    strict.value, strict.value
                ),
            );
        }
    }
}

/// The first part of `ty` that strict mode cannot say, and why.
fn inexpressible(ty: &Type) -> Option<(&Type, &'static str)> {
    match ty {
        Type::Group(group) => inexpressible(&group.elem),
        Type::Paren(paren) => inexpressible(&paren.elem),
        Type::Array(array) => inexpressible(&array.elem),
        Type::Slice(slice) => inexpressible(&slice.elem),
        Type::Reference(reference) => inexpressible(&reference.elem),
        Type::Tuple(tuple) if !tuple.elems.is_empty() => Some((
            ty,
            "a tuple is an array whose items differ by position, which strict mode cannot say",
        )),
        Type::Path(path) if path.qself.is_none() => {
            let segment = path.path.segments.last()?;
            let name = segment.ident.to_string();
            if MAPS.contains(&name.as_str()) {
                return Some((
                    ty,
                    "a map has keys that are not named in advance, and strict mode needs every key of an object named",
                ));
            }
            if name == "Value" || name == "JsonValue" {
                return Some((ty, "any JSON value has no type, and strict mode needs one"));
            }
            match &segment.arguments {
                PathArguments::AngleBracketed(args) => args.args.iter().find_map(|arg| match arg {
                    GenericArgument::Type(inner) => inexpressible(inner),
                    _ => None,
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Map types, by their last path segment.
const MAPS: &[&str] = &["HashMap", "BTreeMap", "IndexMap", "Map", "FxHashMap"];
