//! What the catalog's tools cost in prompt tokens, per provider ([`TokenShare`] of each tool,
//! [`ListCost`] of the whole list), counted when asked
//! ([`Catalog::with_token_counts`](super::Catalog::with_token_counts), feature `tokens`), and
//! said in words for the Markdown and the page.

use serde::Serialize;

/// What one tool's definition costs one provider's models in prompt tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TokenShare {
    /// The provider (`openai`, `anthropic`, `gemini`).
    pub provider: &'static str,
    /// The tokens of the tool's definition alone.
    pub tokens: usize,
    /// Whether the count is exact (the provider's rendering and tokenizer are public) or an
    /// estimate.
    pub exact: bool,
}

/// What the whole list of the catalog's tools costs one provider's models.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ListCost {
    /// The provider (`openai`, `anthropic`, `gemini`).
    pub provider: &'static str,
    /// The tokens of the whole list, as one request carries it.
    pub total: usize,
    /// Whether the count is exact or an estimate.
    pub exact: bool,
    /// How the count is made.
    pub method: &'static str,
}

/// The counts a catalog holds: the list's per provider, and each tool's, in the catalog's
/// order. The registry counts them (it sees the providers' formats; the catalog does not).
#[derive(Debug, Clone, Default)]
pub(crate) struct Costs {
    pub(crate) lists: Vec<ListCost>,
    pub(crate) tools: Vec<Vec<TokenShare>>,
}

/// What counts a catalog's tools, when the registry can (feature `tokens`).
#[cfg(feature = "tokens")]
pub(crate) type Counter = fn(&[crate::Tool]) -> Costs;

/// A provider's name as a person writes it.
fn label(provider: &str) -> &str {
    match provider {
        "openai" => "OpenAI",
        "anthropic" => "Anthropic",
        "gemini" => "Gemini",
        other => other,
    }
}

/// `1,234`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// One count in words: `1,234 for OpenAI` or `~1,400 for Anthropic (estimate)`.
fn one(provider: &str, tokens: usize, exact: bool) -> String {
    let (about, note) = if exact {
        ("", "")
    } else {
        ("~", " (estimate)")
    };
    format!("{about}{} for {}{note}", grouped(tokens), label(provider))
}

/// A tool's costs in words: `97 for OpenAI · ~120 for Anthropic (estimate) · ...`.
pub(super) fn tool_text(shares: &[TokenShare]) -> String {
    let parts: Vec<String> = shares
        .iter()
        .map(|share| one(share.provider, share.tokens, share.exact))
        .collect();
    parts.join(" · ")
}

/// The list's costs in a sentence, with how the counts are made.
pub(super) fn list_text(lists: &[ListCost]) -> String {
    let parts: Vec<String> = lists
        .iter()
        .map(|list| one(list.provider, list.total, list.exact))
        .collect();
    format!(
        "Prompt tokens of the whole list, per request: {}. OpenAI's count is exact: its models \
         read the tools rendered as the Harmony format's namespace functions block, counted in \
         o200k_base. Anthropic and Gemini publish no tokenizer: theirs are estimates (o200k_base \
         over the definitions' JSON), to check with their counting endpoints.",
        parts.join(" · ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_as_words() {
        assert_eq!(grouped(7), "7");
        assert_eq!(grouped(1234), "1,234");
        assert_eq!(grouped(1_234_567), "1,234,567");
        let shares = [
            TokenShare {
                provider: "openai",
                tokens: 97,
                exact: true,
            },
            TokenShare {
                provider: "gemini",
                tokens: 1200,
                exact: false,
            },
        ];
        assert_eq!(
            tool_text(&shares),
            "97 for OpenAI · ~1,200 for Gemini (estimate)"
        );
    }
}
