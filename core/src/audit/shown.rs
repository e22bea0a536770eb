//! Text from a model, as a log line or a span shows it.

use std::fmt::{self, Display, Write as _};

/// Text from a model as a span shows it: at most `max` characters, escaped, so a megabyte or a
/// terminal escape written as a tool's name or a call's id stays one short field.
pub(crate) struct Shown<'a> {
    text: &'a str,
    max: usize,
}

impl<'a> Shown<'a> {
    /// A name asked for: at most as many characters as a tool's name may have.
    pub(crate) fn name(text: &'a str) -> Self {
        Self {
            text,
            max: tool_registry_rules::MAX_NAME_LEN,
        }
    }

    /// A call's id: providers' ids are a few dozen characters; 128 leaves room for any of them.
    pub(crate) fn call_id(text: &'a str) -> Self {
        Self { text, max: 128 }
    }
}

impl Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = self.text;
        let end = text
            .char_indices()
            .nth(self.max)
            .map_or(text.len(), |(at, _)| at);
        Display::fmt(&text[..end].escape_debug(), f)?;
        if end < text.len() {
            f.write_char('…')?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Shown;

    #[test]
    fn text_from_a_model_is_escaped_and_cut() {
        assert_eq!(Shown::name("math.add").to_string(), "math.add");
        assert_eq!(
            Shown::name("a\nb\u{1b}[31m").to_string(),
            "a\\nb\\u{1b}[31m"
        );
        let long = "x".repeat(1000);
        assert_eq!(
            Shown::name(&long).to_string(),
            format!("{}…", "x".repeat(64))
        );
        assert_eq!(Shown::name(&"é".repeat(64)).to_string(), "é".repeat(64));
        let id = "call_0123456789abcdefghijklmnopqrstuvwxyz0123456789";
        assert_eq!(Shown::call_id(id).to_string(), id);
        assert_eq!(
            Shown::call_id(&long).to_string(),
            format!("{}…", "x".repeat(128))
        );
    }
}
