//! GLM-4.5 and later ([`Format::Glm`]) inside a `<tool_call>` element:
//! `NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…` or `NAME {json}`, values typed by
//! the tool's schema. The element itself is `hermes.rs`'s, which hands the block over here once
//! it has found a name. GLM-4-0414's whole-message `NAME\n{json}` ([`Format::Glm4`]) is
//! `glm4.rs`'s.

use serde_json::{Map, Value};

use super::json;
use super::parameters::end_by_names;
use crate::block::{Env, Item, MAX_NAME, Outcome, RawCall, Reader, Step};
use crate::scan::{Finder, Input, Prefix};
use crate::typing::{ToolTypes, typed_exact};
use crate::vocab::{ErrorKind, Format};
use tool_registry_json::unique;

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
    /// How far the arguments have been read element by element ([`GlmBlock::call_end`]).
    walked: usize,
    /// The value being read: where it starts, where the search for its end goes on, and
    /// whether an `</arg_value>` was met in it.
    value: Option<(usize, usize, bool)>,
    end: Finder,
}

impl GlmBlock {
    pub(crate) fn new(start: usize, name_start: usize) -> Self {
        Self {
            start,
            name_start,
            name: None,
            body: name_start,
            walked: 0,
            value: None,
            end: Finder::new(TOOL_CALL_END),
        }
    }
}

impl Reader for GlmBlock {
    fn name_hint(&self, _input: &Input<'_>) -> Option<String> {
        self.name.clone()
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        if self.name.is_none()
            && let Some(step) = self.read_name(input)
        {
            return step;
        }
        let close = self.call_end(input);
        let name = self.name.as_deref().unwrap_or_default();
        let Some(close) = close else {
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
        let typed = !body.starts_with('{');
        let arguments = if !typed {
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
                    typed,
                },
                Format::Glm,
                self.start..end,
            ),
            Err((kind, message)) => Item::error(self.start..end, Format::Glm, kind, message),
        };
        Step::Done(Outcome::new(end, vec![item]))
    }
}

impl GlmBlock {
    /// Where the `</tool_call>` that ends the call is: the first after the last argument, read
    /// element by element, so that one written inside a value stays in it (a value ends at the
    /// `</arg_value>` that the next `<arg_key>` or the call's end follows). Arguments written as
    /// JSON, or markup that is not GLM's, end at the first `</tool_call>`. `None` until it
    /// comes; a stream resumes after the arguments already read.
    fn call_end(&mut self, input: &Input<'_>) -> Option<usize> {
        let mut at = self.walked.max(self.body);
        loop {
            at = input.skip_ws(at);
            match input.prefix(at, TOOL_CALL_END.as_bytes()) {
                Prefix::Yes => return Some(at),
                Prefix::Partial => return None,
                Prefix::No => {}
            }
            let after_key = match input.prefix(at, ARG_KEY.as_bytes()) {
                Prefix::Yes => {
                    let key = at + ARG_KEY.len();
                    let window = &input.bytes_from(key)[..input
                        .end()
                        .saturating_sub(key)
                        .min(MAX_NAME + ARG_KEY_END.len())];
                    match memchr::memmem::find(window, ARG_KEY_END.as_bytes()) {
                        Some(len) => key + len + ARG_KEY_END.len(),
                        None if window.len() < MAX_NAME + ARG_KEY_END.len() && !input.eof() => {
                            return None;
                        }
                        None => return self.end.find(input, at),
                    }
                }
                Prefix::Partial => return None,
                Prefix::No => return self.end.find(input, at),
            };
            let value = input.skip_ws(after_key);
            match input.prefix(value, ARG_VALUE.as_bytes()) {
                Prefix::Yes => {}
                Prefix::Partial => return None,
                Prefix::No => return self.end.find(input, value),
            }
            let from = value + ARG_VALUE.len();
            // Only an end tag the next element follows ends a value here; a stream resumes
            // the search where it stopped, so a long value is searched once.
            let (searched, mut any_close) = match self.value {
                Some((start, searched, any)) if start == from => (searched, any),
                _ => (from, false),
            };
            let mut search = searched;
            let end = loop {
                let Some(i) =
                    memchr::memmem::find(input.bytes_from(search), ARG_VALUE_END.as_bytes())
                else {
                    if !input.eof() {
                        let resume = input
                            .end()
                            .saturating_sub(ARG_VALUE_END.len() - 1)
                            .max(search);
                        self.value = Some((from, resume, any_close));
                        return None;
                    }
                    // A last value whose `</arg_value>` the model left out (GLM-4.7 does) ends
                    // at the call's end; otherwise the output ends inside the value.
                    if !any_close {
                        return memchr::memmem::find(
                            input.bytes_from(from),
                            TOOL_CALL_END.as_bytes(),
                        )
                        .map(|i| from + i);
                    }
                    return None;
                };
                let close = search + i;
                any_close = true;
                let after = close + ARG_VALUE_END.len();
                let next = input.skip_ws(after);
                let follows = [ARG_KEY, TOOL_CALL_END].map(|t| input.prefix(next, t.as_bytes()));
                if follows.contains(&Prefix::Yes) || input.ends_at(next) {
                    break after;
                }
                if follows.contains(&Prefix::Partial) || next == input.end() {
                    self.value = Some((from, close, any_close));
                    return None;
                }
                // The text of a closing tag inside the value.
                search = close + 1;
            };
            self.value = None;
            at = end;
            self.walked = at;
        }
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

const ARG_KEY: &str = "<arg_key>";
const ARG_KEY_END: &str = "</arg_key>";
const ARG_VALUE: &str = "<arg_value>";
const ARG_VALUE_END: &str = "</arg_value>";

/// The `<arg_key>`/`<arg_value>` pairs as an object; a key given twice is refused.
fn glm_arguments(body: &str, tool: &str, env: &Env<'_>) -> Result<Value, String> {
    let types = ToolTypes::of(env.tools, tool);
    let mut by_names = types.has_schema();
    let mut arguments = Map::new();
    let mut i = 0;
    while let Some(found) = body[i..].find(ARG_KEY) {
        let key_start = i + found + ARG_KEY.len();
        let Some(key_len) = body[key_start..].find(ARG_KEY_END) else {
            break;
        };
        let key = body[key_start..key_start + key_len].trim();
        let after_key = key_start + key_len + ARG_KEY_END.len();
        let Some(open) = body[after_key..].find(ARG_VALUE) else {
            break;
        };
        let value_start = after_key + open + ARG_VALUE.len();
        let (value_len, next) =
            value_end(&body[value_start..], key, &types, &arguments, &mut by_names);
        let mut raw = &body[value_start..value_start + value_len];
        if !body[value_start + value_len..].starts_with(ARG_VALUE_END) {
            // A value left open ends before the line break that separates the next key.
            raw = raw.strip_suffix('\n').unwrap_or(raw);
        }
        unique::insert(
            &mut arguments,
            key.to_owned(),
            typed_exact(raw, types.kinds(key)),
        )?;
        i = value_start + next;
    }
    Ok(Value::Object(arguments))
}

/// Where the value of `key` (the text after its `<arg_value>`) ends, and where reading goes
/// on. Without a schema, at its first `</arg_value>`. With one (`by_names`), by the tool's
/// declared names: an `<arg_key>` naming a parameter still to come ends it (its
/// `</arg_value>` left out), and an `<arg_value>` inside it opens one that the next
/// `</arg_value>` closes, so that a value may hold the markup of a parameter the tool does not
/// declare. When that finds no end, the first `</arg_value>` ends it after all, and so for the
/// rest of the call (`by_names` turned off), so that the call is read in linear time. The rest
/// of the call when no `</arg_value>` comes.
fn value_end(
    rest: &str,
    key: &str,
    types: &ToolTypes<'_>,
    given: &Map<String, Value>,
    by_names: &mut bool,
) -> (usize, usize) {
    let first = || value_close(rest, false).unwrap_or((rest.len(), rest.len()));
    if !*by_names {
        return first();
    }
    let found = end_by_names(
        rest,
        ARG_VALUE_END,
        ARG_VALUE,
        arg_key,
        |name| types.starts_next(name, key, given),
        |after| {
            let next = after.trim_start();
            next.is_empty() || next.starts_with(ARG_KEY) || next.starts_with(TOOL_CALL_END)
        },
    );
    if let Some(end) = found {
        return end;
    }
    *by_names = false;
    first()
}

/// Where a value (`rest`, the text after its `<arg_value>`) ends: at the first `</arg_value>`
/// that the next `<arg_key>`, the call's `</tool_call>` or the end of `rest` follows (after
/// whitespace), so that the text of a closing tag inside a value stays in it; when none does,
/// the first `</arg_value>`. The value's length and where reading goes on; `(rest.len(), …)`
/// when no `</arg_value>` comes. `None` when `more` input may still decide it.
fn value_close(rest: &str, more: bool) -> Option<(usize, usize)> {
    let mut first = None;
    for close in memchr::memmem::find_iter(rest.as_bytes(), ARG_VALUE_END.as_bytes()) {
        let after = close + ARG_VALUE_END.len();
        first.get_or_insert((close, after));
        let next = &rest[after..].trim_start();
        if next.is_empty() {
            return if more { None } else { Some((close, after)) };
        }
        if [ARG_KEY, TOOL_CALL_END].iter().any(|t| next.starts_with(t)) {
            return Some((close, after));
        }
        if more && [ARG_KEY, TOOL_CALL_END].iter().any(|t| t.starts_with(next)) {
            return None;
        }
    }
    if more {
        return None;
    }
    Some(first.unwrap_or((rest.len(), rest.len())))
}

/// The name of the `<arg_key>NAME</arg_key>` that `tail` starts with, looked for within
/// [`MAX_NAME`] bytes.
fn arg_key(tail: &str) -> Option<&str> {
    let after = tail.strip_prefix(ARG_KEY)?;
    let window = &after.as_bytes()[..after.len().min(MAX_NAME + ARG_KEY_END.len())];
    let len = memchr::memmem::find(window, ARG_KEY_END.as_bytes())?;
    Some(after[..len].trim())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{self as parse, AnyTool, ToolList};

    fn tools() -> ToolList {
        ToolList::from_json_str(
            r#"[{"name": "edit", "parameters": {"type": "object", "properties": {
                "path": {"type": "string"}, "new_string": {"type": "string"}}}}]"#,
        )
        .unwrap()
    }

    #[test]
    fn an_undeclared_key_inside_a_value_belongs_to_it() {
        let output = "<tool_call>edit\n<arg_key>new_string</arg_key>\n<arg_value>a\n<arg_key>old_string</arg_key>\n<arg_value>x</arg_value>\nb</arg_value>\n<arg_key>path</arg_key>\n<arg_value>f.txt</arg_value>\n</tool_call>";
        assert_eq!(
            parse::text(output, &tools()).calls[0].arguments,
            json!({"new_string": "a\n<arg_key>old_string</arg_key>\n<arg_value>x</arg_value>\nb", "path": "f.txt"})
        );
        // Without a list, an `</arg_value>` ends the value only where the next key or the
        // call's end follows it: here too the inner one stays in the value.
        assert_eq!(
            parse::text(output, &AnyTool).calls[0].arguments,
            json!({"new_string": "a\n<arg_key>old_string</arg_key>\n<arg_value>x</arg_value>\nb", "path": "f.txt"})
        );
    }

    #[test]
    fn a_declared_key_still_to_come_ends_a_value_left_open() {
        let output = "<tool_call>edit\n<arg_key>new_string</arg_key>\n<arg_value>a\n<arg_key>path</arg_key>\n<arg_value>f.txt</arg_value>\n</tool_call>";
        assert_eq!(
            parse::text(output, &tools()).calls[0].arguments,
            json!({"new_string": "a", "path": "f.txt"})
        );
    }
}
