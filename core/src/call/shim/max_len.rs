//! `#[arg(max_len = N)]`: a string argument bounded in characters.

use crate::call::ToolError;
use crate::call::args::invalid;

/// A string argument that `#[arg(max_len = N)]` can bound.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "`max_len` bounds a string argument, not `{Self}`",
    label = "this argument is not a string",
    note = "use `max_len` on a `String` or `Option<String>` argument; the whole argument text is bounded by `#[tool(max_args_bytes = N)]`"
)]
pub trait MaxLen {
    /// The length in characters when it is more than `max`.
    fn longer_than(&self, max: usize) -> Option<usize>;
}

impl MaxLen for str {
    fn longer_than(&self, max: usize) -> Option<usize> {
        // A string has no more characters than bytes: most strings are settled without counting.
        if self.len() <= max {
            return None;
        }
        let chars = self.chars().count();
        (chars > max).then_some(chars)
    }
}

macro_rules! max_len_via_str {
    ($($ty:ty),*) => {$(
        impl MaxLen for $ty {
            fn longer_than(&self, max: usize) -> Option<usize> {
                str::longer_than(self, max)
            }
        }
    )*};
}

max_len_via_str!(
    String,
    Box<str>,
    std::sync::Arc<str>,
    std::borrow::Cow<'_, str>
);

impl<T: MaxLen> MaxLen for Option<T> {
    fn longer_than(&self, max: usize) -> Option<usize> {
        self.as_ref()?.longer_than(max)
    }
}

/// `#[arg(max_len = N)]`: the argument at `path` has at most `max` characters (Unicode scalar
/// values, as JSON Schema's `maxLength` counts them).
#[doc(hidden)]
pub fn check_max_len<T: MaxLen + ?Sized>(
    value: &T,
    max: usize,
    path: &'static str,
) -> Result<(), ToolError> {
    match value.longer_than(max) {
        None => Ok(()),
        Some(chars) => Err(invalid(
            path.to_owned(),
            format!(
                "is {chars} characters long, more than the limit of {max}; send a shorter text"
            ),
        )),
    }
}
