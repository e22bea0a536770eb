//! The hooks the reference binary runs around every call.

use std::borrow::Cow;

use serde_json::Value;
use tool_registry::ToolResult;
use tool_registry::content::Block;
use tool_registry::hook::{After, Hook, HookCall};

/// What replaces a secret in a result.
pub const REDACTED: &str = "[redacted secret]";

/// The beginnings of the secrets [`RedactSecrets`] finds, each with the least number of key
/// characters (letters, digits, `_` and `-`) that must follow: OpenAI and Anthropic keys
/// (`sk-`), GitHub tokens (`ghp_`, `github_pat_`), AWS access key ids (`AKIA`), Slack tokens
/// (`xoxb-`, `xoxp-`).
pub const SECRET_PREFIXES: &[(&str, usize)] = &[
    ("sk-", 20),
    ("ghp_", 30),
    ("github_pat_", 30),
    ("AKIA", 16),
    ("xoxb-", 20),
    ("xoxp-", 20),
];

/// An output guard: strings in a result that look like API keys or tokens
/// ([`SECRET_PREFIXES`]) or PEM private keys are replaced with [`REDACTED`] before the model
/// reads them, in the value, the message and the text blocks. A note in the knowledge base or
/// a file in the sandbox may hold a key a user pasted; the model never needs it.
#[derive(Debug, Default, Clone, Copy)]
pub struct RedactSecrets;

impl Hook for RedactSecrets {
    fn name(&self) -> &str {
        "redact_secrets"
    }

    fn after(&self, _call: &HookCall<'_>, result: &mut ToolResult) -> After {
        let mut found = redact_value(&mut result.content);
        if let Some(message) = &mut result.message {
            found += redact_text(message);
        }
        for block in result.blocks.as_mut_vec().iter_mut() {
            if let Block::Text(text) = block {
                found += redact_text(text);
            }
        }
        match found {
            0 => After::Kept,
            1 => After::changed("redacted 1 secret"),
            n => After::changed(format!("redacted {n} secrets")),
        }
    }
}

fn redact_value(value: &mut Value) -> usize {
    // Walked with a stack: a result may nest as deep as serde_json reads.
    let mut found = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::String(text) => found += redact_text(text),
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            _ => {}
        }
    }
    found
}

/// Replaces every secret in `text`; how many there were.
pub fn redact_text(text: &mut String) -> usize {
    let (redacted, found) = redacted(text);
    if let Cow::Owned(redacted) = redacted {
        *text = redacted;
    }
    found
}

fn is_key_char(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-'
}

fn redacted(text: &str) -> (Cow<'_, str>, usize) {
    let mut out = String::new();
    let mut copied = 0;
    let mut found = 0;
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(end) = secret_at(text, at) {
            out.push_str(&text[copied..at]);
            out.push_str(REDACTED);
            copied = end;
            at = end;
            found += 1;
        } else {
            at += 1;
        }
    }
    if found == 0 {
        return (Cow::Borrowed(text), 0);
    }
    out.push_str(&text[copied..]);
    (Cow::Owned(out), found)
}

/// The end of the secret that starts at byte `at` of `text`, if one does.
fn secret_at(text: &str, at: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    // A secret starts a word, with an ASCII character.
    if !bytes[at].is_ascii() || (at > 0 && is_key_char(bytes[at - 1])) {
        return None;
    }
    let rest = &text[at..];
    const PEM: &str = "-----BEGIN ";
    if let Some(after) = rest.strip_prefix(PEM) {
        let header = after.find("-----")?;
        if !after[..header].ends_with("PRIVATE KEY") {
            return None;
        }
        let end = rest.find("-----END ").map_or(rest.len(), |end| {
            let tail = &rest[end + 9..];
            end + 9 + tail.find("-----").map_or(tail.len(), |close| close + 5)
        });
        return Some(at + end);
    }
    for (prefix, least) in SECRET_PREFIXES {
        if let Some(key) = rest.strip_prefix(prefix) {
            let length = key.bytes().take_while(|b| is_key_char(*b)).count();
            if length >= *least {
                return Some(at + prefix.len() + length);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_private_keys_are_redacted_and_the_rest_kept() {
        let mut text = "key sk-abcdefghijklmnopqrstuvwxyz0123, and task-sk-short, \
            -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- end"
            .to_owned();
        assert_eq!(redact_text(&mut text), 2);
        assert_eq!(
            text,
            format!("key {REDACTED}, and task-sk-short, {REDACTED} end")
        );
        let mut plain = "nothing here: sk-short, AKIA".to_owned();
        assert_eq!(redact_text(&mut plain), 0);
        assert_eq!(plain, "nothing here: sk-short, AKIA");
        let mut unicode = "é sk-ééééééééééééééééééééééé".to_owned();
        assert_eq!(redact_text(&mut unicode), 0);
    }
}
