//! `#[tool(targets(openai_strict, anthropic_strict, gemini))]`: the formats a tool promises to
//! fit. What the macro can see of the arguments (the types written in the signature) is checked
//! here, as a compile error at the type; what it cannot (the schema of a type declared
//! elsewhere) is checked when the registry is built.

use quote::ToTokens;
use syn::{GenericArgument, PathArguments, Type};

use crate::ctxt::Ctxt;

/// Every target `targets(...)` accepts, with the bit the runtime reads.
pub(crate) const TARGETS: &[(&str, u8)] =
    &[("openai_strict", 1), ("anthropic_strict", 2), ("gemini", 4)];

/// The bit set of the named targets (the names were checked when read).
pub(crate) fn bits<'a>(targets: impl IntoIterator<Item = &'a str>) -> u8 {
    (targets.into_iter())
        .filter_map(|t| TARGETS.iter().find(|(name, _)| *name == t))
        .fold(0, |bits, (_, bit)| bits | bit)
}

/// Checks each argument type the signature shows (`types`) against the strict targets among
/// `targets`.
pub(crate) fn check<'a>(
    cx: &mut Ctxt,
    targets: impl IntoIterator<Item = &'a str>,
    types: impl IntoIterator<Item = &'a Type>,
) {
    let Some(strict) =
        (targets.into_iter()).find(|t| *t == "openai_strict" || *t == "anthropic_strict")
    else {
        return;
    };
    for ty in types {
        if let Some((at, construct)) = inexpressible(ty) {
            let shown = at.to_token_stream().to_string().replace(' ', "");
            cx.error_spanned(
                at,
                format!(
                    "`{shown}` cannot be given in strict mode (`{}` in `targets`): {construct}; take a struct with named fields, or leave `{}` out of `targets`",
                    strict, strict
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
