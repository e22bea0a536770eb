//! Completion: the values a client may offer its user for a prompt's argument or a resource
//! template's variable, from what the user typed so far.

use std::collections::BTreeMap;
use std::sync::Arc;

/// The most values one completion answers (MCP's bound); [`Completion::total`] says how many
/// there were.
pub const MAX_COMPLETIONS: usize = 100;

/// What a completer is asked: the argument's value so far, and the other arguments the client
/// already has (`context.arguments` in MCP).
#[derive(Debug, Clone, Default)]
pub struct CompletionRequest {
    /// The value typed so far.
    pub value: String,
    /// The other arguments already given.
    pub context: BTreeMap<String, String>,
}

/// A function that completes one argument: the values that fit what was typed so far, best
/// first. Kept cheap and synchronous, since a client asks on every keystroke.
pub type Completer = Arc<dyn Fn(&CompletionRequest) -> Vec<String> + Send + Sync>;

/// Makes a [`Completer`] of a function or closure.
pub fn completer(
    f: impl Fn(&CompletionRequest) -> Vec<String> + Send + Sync + 'static,
) -> Completer {
    Arc::new(f)
}

/// A completer from a fixed list: the values that start with what was typed (ignoring case).
pub fn from_values<I, S>(values: I) -> Completer
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let values: Vec<String> = values.into_iter().map(Into::into).collect();
    Arc::new(move |request: &CompletionRequest| {
        let typed = request.value.to_lowercase();
        (values.iter())
            .filter(|value| value.to_lowercase().starts_with(&typed))
            .cloned()
            .collect()
    })
}

/// The answer to a completion: at most [`MAX_COMPLETIONS`] values, and how many there were.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Completion {
    /// The values, best first.
    pub values: Vec<String>,
    /// How many values there were in all.
    pub total: usize,
    /// Whether values were left out.
    #[serde(rename = "hasMore")]
    pub has_more: bool,
}

impl Completion {
    /// The first [`MAX_COMPLETIONS`] of `values`, each cut to 1,024 bytes.
    pub fn of(mut values: Vec<String>) -> Self {
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        for value in &mut values {
            if value.len() > 1024 {
                let mut end = 1024;
                while !value.is_char_boundary(end) {
                    end -= 1;
                }
                value.truncate(end);
            }
        }
        Self {
            has_more: total > values.len(),
            values,
            total,
        }
    }
}

/// What a completion is about: a prompt's argument, or a resource template's variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompletionTarget {
    /// The prompt of this name.
    Prompt(String),
    /// The resource template of this URI template (or a resource of this URI).
    Resource(String),
}

/// The completers of one prompt or template, by argument name.
pub(crate) type Completers = Vec<(String, Completer)>;
