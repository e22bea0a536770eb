//! `#[arg(min = N, max = N)]`: a number argument bounded, as its schema's `minimum` and
//! `maximum` say.

use std::fmt::Display;

use crate::call::ToolError;
use crate::call::args::invalid;

/// A number argument that `#[arg(min, max)]` can bound.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`min` and `max` bound a number argument, not `{Self}`",
    label = "this argument is not a number",
    note = "use `min` and `max` on an integer or float argument (or an `Option` of one); a string's length is bounded by `max_len`"
)]
pub trait Bounded {
    /// The number the bounds are written in.
    type Number: PartialOrd + Display + Copy;
    /// The value, when there is one.
    fn number(&self) -> Option<Self::Number>;
}

macro_rules! bounded {
    ($($ty:ty),*) => {$(
        impl Bounded for $ty {
            type Number = $ty;
            fn number(&self) -> Option<$ty> {
                Some(*self)
            }
        }
    )*};
}

bounded!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

impl<T: Bounded> Bounded for Option<T> {
    type Number = T::Number;
    fn number(&self) -> Option<T::Number> {
        self.as_ref()?.number()
    }
}

/// `#[arg(min, max)]`: the argument at `path` is within the bounds its schema states.
#[doc(hidden)]
pub fn check_range<T: Bounded + ?Sized>(
    value: &T,
    min: Option<T::Number>,
    max: Option<T::Number>,
    path: &str,
) -> Result<(), ToolError> {
    let Some(number) = value.number() else {
        return Ok(());
    };
    let below = min.filter(|min| number < *min);
    let above = max.filter(|max| number > *max);
    match (below, above) {
        (Some(min), _) => Err(invalid(
            path.to_owned(),
            format!("is {number}, less than the least allowed, {min}"),
        )),
        (_, Some(max)) => Err(invalid(
            path.to_owned(),
            format!("is {number}, more than the most allowed, {max}"),
        )),
        _ => Ok(()),
    }
}
