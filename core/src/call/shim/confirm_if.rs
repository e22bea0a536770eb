//! `#[tool(confirm_if = path)]`: the function named must take the tool's model arguments by
//! reference, in order, and return `bool`. The generated code calls it through
//! [`ConfirmIfFunction`], whose first parameter is the signature it must have, so that a
//! function of another shape is one error that names that signature (`required for
//! `fn(&str) -> bool {outside_tmp}` to implement `ConfirmIfFunction<fn(&String, &bool) ->
//! bool, _>``), not a mismatch at the call. An argument may be taken as anything the argument's
//! type borrows as (`&str` for a `String`, `&[T]` for a `Vec<T>`, `&Path` for a `PathBuf`).

use std::borrow::Borrow;

/// A function that can be a tool's `confirm_if` predicate of the signature `S` (a
/// `fn(&A, &B, ...) -> bool` of the model arguments' types), given its arguments' borrowed
/// forms `M`.
#[doc(hidden)]
pub trait ConfirmIfFunction<S: Signature, M> {
    /// Calls the predicate with the arguments, borrowed as it takes them.
    fn confirm(&self, arguments: S::Arguments<'_>) -> bool;
}

/// A `fn(&A, &B, ...) -> bool` signature: the tuple of references its arguments are.
#[doc(hidden)]
pub trait Signature {
    /// `(&'a A, &'a B, ...)`.
    type Arguments<'a>
    where
        Self: 'a;
}

macro_rules! confirm_if_arity {
    ($(($x:ident, $a:ident, $v:ident)),*) => {
        impl<$($x),*> Signature for fn($(&$x),*) -> bool {
            type Arguments<'a> = ($(&'a $x,)*) where Self: 'a;
        }

        impl<F, $($x, $a: ?Sized),*> ConfirmIfFunction<fn($(&$x),*) -> bool, ($(*const $a,)*)> for F
        where
            F: Fn($(&$a),*) -> bool,
            $($x: Borrow<$a>),*
        {
            #[allow(unused_variables, clippy::unused_unit)]
            fn confirm(&self, arguments: ($(&$x,)*)) -> bool {
                let ($($v,)*) = arguments;
                self($($v.borrow()),*)
            }
        }
    };
}

/// Every arity from the list's length down to none: each suffix of the list is one arity.
macro_rules! confirm_if_arities {
    () => {
        confirm_if_arity!();
    };
    ($head:tt $(, $tail:tt)*) => {
        confirm_if_arity!($head $(, $tail)*);
        confirm_if_arities!($($tail),*);
    };
}

// Up to sixteen model arguments.
confirm_if_arities!(
    (X15, A15, v15),
    (X14, A14, v14),
    (X13, A13, v13),
    (X12, A12, v12),
    (X11, A11, v11),
    (X10, A10, v10),
    (X9, A9, v9),
    (X8, A8, v8),
    (X7, A7, v7),
    (X6, A6, v6),
    (X5, A5, v5),
    (X4, A4, v4),
    (X3, A3, v3),
    (X2, A2, v2),
    (X1, A1, v1),
    (X0, A0, v0)
);
