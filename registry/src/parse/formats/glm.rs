//! GLM-4.5 and later ([`Format::Glm`]) inside a `<tool_call>` element:
//! `NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…` or `NAME {json}`, values typed by
//! the tool's schema. The element itself is `hermes.rs`'s, which hands the block over here once
//! it has found a name. GLM-4-0414's whole-message `NAME\n{json}` ([`Format::Glm4`]) is
//! `glm4.rs`'s.

use serde_json::{Map, Value};

use super::json;
use crate::call::unique;
use crate::parse::block::{Env, Item, MAX_NAME, Outcome, RawCall, Step};
use crate::parse::scan::{Finder, Input, Prefix};
use crate::parse::typing::{arg_kinds, typed_value};
use crate::parse::vocab::{ErrorKind, Format};

/// The end of the `<tool_call>` element, which GLM's call reads to.
const TOOL_CALL_END: &str = "</tool_call>";

/// GLM's `<tool_call>NAME<arg_key>…</arg_key><arg_value>…</arg_value>…</tool_call>`, or
/// `<tool_call>NAME {json}</tool_call>`.
#[derive(Debug)]
pub(crate) struct GlmBlock {
    start: usize,
    name_start: usize,
    name: Option<String>,
    body: usize,
    end: Finder,
}

impl GlmBlock {
    pub(crate) fn new(start: usize, name_start: usize) -> Self {
        Self {
            start,
            name_start,
            name: None,
            body: name_start,
            end: Finder::new(TOOL_CALL_END),
        }
    }

    pub(crate) fn name_hint(&self) -> Option<String> {
        self.name.clone()
    }

    pub(crate) fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        if self.name.is_none()
            && let Some(step) = self.read_name(input)
        {
            return step;
        }
        let name = self.name.as_deref().unwrap_or_default();
        let Some(close) = self.end.find(input, self.body) else {
            if !input.eof() {
                return Step::NeedMore;
            }
            return Step::Done(Outcome::cut_off(
                self.start..input.end(),
                Format::Glm,
                format_args!("inside the call of `{name}` before `</tool_call>`"),
            ));
        };
        let end = close + TOOL_CALL_END.len();
        let body = input.str(self.body..close).trim();
        let arguments = if body.starts_with('{') {
            match json::value(body).map(json::arguments_object) {
                Ok(Ok(arguments)) => Ok(arguments),
                _ => Err((
                    ErrorKind::Malformed,
                    format!(
                        "the arguments of `{name}` are not a JSON object; write each as <arg_key>NAME</arg_key><arg_value>VALUE</arg_value>"
                    ),
                )),
            }
        } else {
            glm_arguments(body, name, env).map_err(|repeated| {
                (
                    ErrorKind::Arguments,
                    format!(
                        "the arguments of `{name}` are wrong: {repeated}; give each <arg_key> once"
                    ),
                )
            })
        };
        let item = match arguments {
            Ok(arguments) => Item::found(
                RawCall {
                    name: name.to_owned(),
                    arguments,
                    id: None,
                },
                Format::Glm,
                self.start..end,
            ),
            Err((kind, message)) => Item::error(self.start..end, Format::Glm, kind, message),
        };
        Step::Done(Outcome::new(end, vec![item]))
    }

    /// The name after `<tool_call>`, once what follows it shows this is a call; `Some` when the
    /// step ends here.
    fn read_name(&mut self, input: &Input<'_>) -> Option<Step> {
        let bytes = input.bytes_from(self.name_start);
        let limit = bytes.len().min(MAX_NAME + 1);
        let len = bytes[..limit]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
            .count();
        if len == limit && limit == bytes.len() && !input.eof() {
            return Some(Step::NeedMore);
        }
        if len > MAX_NAME {
            return Some(Step::NotACall {
                resume: self.start + 1,
            });
        }
        let after = input.skip_ws((self.name_start + len).max(self.body));
        self.body = after;
        if input.ends_inside(after, b"<arg_key>")
            || input.ends_inside(after, TOOL_CALL_END.as_bytes())
        {
            let name = input.str(self.name_start..self.name_start + len);
            return Some(Step::Done(Outcome::cut_off(
                self.start..input.end(),
                Format::Glm,
                format_args!("inside the call of `{name}` before `</tool_call>`"),
            )));
        }
        // Only `<arg_key>`, `</tool_call>` or a JSON object may follow the name; anything
        // else is prose that mentions `<tool_call>`.
        let decided = match input.byte(after) {
            None if !input.eof() => return Some(Step::NeedMore),
            Some(b'{') => true,
            Some(b'<') => match (
                input.prefix(after, b"<arg_key>"),
                input.prefix(after, TOOL_CALL_END.as_bytes()),
            ) {
                (Prefix::Yes, _) | (_, Prefix::Yes) => true,
                (Prefix::Partial, _) | (_, Prefix::Partial) => return Some(Step::NeedMore),
                _ => false,
            },
            _ => false,
        };
        if !decided {
            return Some(Step::NotACall {
                resume: self.start + 1,
            });
        }
        self.name = Some(input.str(self.name_start..self.name_start + len).to_owned());
        self.body = after;
        None
    }
}

/// The `<arg_key>`/`<arg_value>` pairs as an object; a key given twice is refused.
fn glm_arguments(body: &str, tool: &str, env: &Env<'_>) -> Result<Value, String> {
    let mut arguments = Map::new();
    let mut i = 0;
    while let Some(found) = body[i..].find("<arg_key>") {
        let key_start = i + found + "<arg_key>".len();
        let Some(key_len) = body[key_start..].find("</arg_key>") else {
            break;
        };
        let key = body[key_start..key_start + key_len].trim();
        let after_key = key_start + key_len + "</arg_key>".len();
        let Some(open) = body[after_key..].find("<arg_value>") else {
            break;
        };
        let value_start = after_key + open + "<arg_value>".len();
        let (value_len, next) = match body[value_start..].find("</arg_value>") {
            Some(close) => (close, close + "</arg_value>".len()),
            None => (body.len() - value_start, body.len() - value_start),
        };
        let raw = &body[value_start..value_start + value_len];
        unique::insert(
            &mut arguments,
            key.to_owned(),
            typed_value(raw, arg_kinds(env.tools, tool, key)),
        )?;
        i = value_start + next;
    }
    Ok(Value::Object(arguments))
}
