//! Calls as `<invoke name="…">` elements with one `<parameter name="…">` element per argument,
//! in a section of their own. Two families write them:
//!
//! - MiniMax M2 (chat template: <https://huggingface.co/MiniMaxAI/MiniMax-M2/blob/main/chat_template.jinja>):
//!
//!   ```text
//!   <minimax:tool_call>
//!   <invoke name="get_weather">
//!   <parameter name="city">Paris</parameter>
//!   </invoke>
//!   </minimax:tool_call>
//!   ```
//!
//!   The template writes strings as they are and other values as JSON, so a value is typed by
//!   the tool's schema when there is one, else read as JSON when it is JSON.
//!
//! - DeepSeek V3.2's DSML (encoding: <https://huggingface.co/deepseek-ai/DeepSeek-V3.2/tree/main/encoding>),
//!   with `function_calls` as the section's name, and V4's, with `tool_calls`:
//!
//!   ```text
//!   <｜DSML｜function_calls>
//!   <｜DSML｜invoke name="get_weather">
//!   <｜DSML｜parameter name="city" string="true">Paris</｜DSML｜parameter>
//!   <｜DSML｜parameter name="days" string="false">3</｜DSML｜parameter>
//!   </｜DSML｜invoke>
//!   </｜DSML｜function_calls>
//!   ```
//!
//!   `string="true"` marks a value taken as written, `string="false"` one written as JSON. The
//!   tokens are read with the ASCII `|` as well as the fullwidth `｜`.

use serde_json::{Map, Value};

use super::json;
use crate::call::unique;
use crate::parse::block::{Env, Item, Outcome, RawCall, Step};
use crate::parse::scan::{Finder, Input, delimited};
use crate::parse::typing::{arg_kinds, typed_value};
use crate::parse::vocab::{ErrorKind, Format};

/// One spelling of the markup.
#[derive(Debug)]
pub(crate) struct Spelling {
    open: &'static str,
    close: &'static str,
    invoke: &'static str,
    invoke_end: &'static str,
    parameter: &'static str,
    parameter_end: &'static str,
    format: Format,
}

/// MiniMax M2.
pub(crate) const MINIMAX: Spelling = Spelling {
    open: "<minimax:tool_call>",
    close: "</minimax:tool_call>",
    invoke: "<invoke ",
    invoke_end: "</invoke>",
    parameter: "<parameter ",
    parameter_end: "</parameter>",
    format: Format::MiniMax,
};

/// The DSML spellings: V3.2's `function_calls` and V4's `tool_calls`, each with fullwidth and
/// ASCII bars.
pub(crate) const DSML: [Spelling; 4] = [
    dsml(
        "<｜DSML｜function_calls>",
        "</｜DSML｜function_calls>",
        true,
    ),
    dsml("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>", true),
    dsml("<|DSML|function_calls>", "</|DSML|function_calls>", false),
    dsml("<|DSML|tool_calls>", "</|DSML|tool_calls>", false),
];

const fn dsml(open: &'static str, close: &'static str, fullwidth: bool) -> Spelling {
    let (invoke, invoke_end, parameter, parameter_end) = if fullwidth {
        (
            "<｜DSML｜invoke ",
            "</｜DSML｜invoke>",
            "<｜DSML｜parameter ",
            "</｜DSML｜parameter>",
        )
    } else {
        (
            "<|DSML|invoke ",
            "</|DSML|invoke>",
            "<|DSML|parameter ",
            "</|DSML|parameter>",
        )
    };
    Spelling {
        open,
        close,
        invoke,
        invoke_end,
        parameter,
        parameter_end,
        format: Format::Dsml,
    }
}

/// A section of `<invoke>` elements.
#[derive(Debug)]
pub(crate) struct InvokeBlock {
    start: usize,
    spelling: &'static Spelling,
    end: Finder,
}

impl InvokeBlock {
    pub(crate) fn new(start: usize, spelling: &'static Spelling) -> Self {
        Self {
            start,
            spelling,
            end: Finder::new(spelling.close),
        }
    }

    pub(crate) fn start(&self) -> usize {
        self.start
    }

    pub(crate) fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let s = self.spelling;
        let body = self.start + s.open.len();
        let Some((body_end, end, complete)) = self.end.closing(input, body) else {
            return Step::NeedMore;
        };
        let text = input.str(body..body_end);
        let items: Vec<Item> = delimited(text, s.invoke, s.invoke_end)
            .map(|(call_text, at, whole)| self.call(call_text, body + at, whole, env))
            .collect();
        if items.is_empty() {
            return Step::Done(Outcome::error(
                self.start..end,
                s.format,
                if complete {
                    ErrorKind::Malformed
                } else {
                    ErrorKind::Truncated
                },
                format!(
                    "the tool-call section holds no `{}name=\"...\">` call; nothing was called",
                    s.invoke
                ),
            ));
        }
        Step::Done(Outcome::new(end, items))
    }

    /// One `<invoke …>` element's text after `<invoke `; `complete` is false when its end tag
    /// never came.
    fn call(&self, text: &str, at: usize, complete: bool, env: &Env<'_>) -> Item {
        let s = self.spelling;
        let span = at..at + text.len();
        let error = |kind, message: String| Item::error(span.clone(), s.format, kind, message);
        if !complete {
            return Item::cut_off(
                span,
                s.format,
                format_args!("inside a call before `{}`", s.invoke_end),
            );
        }
        let Some((attributes, inner)) = start_tag(text) else {
            return error(
                ErrorKind::Malformed,
                format!(
                    "the call's `{}` tag is not closed with `>`",
                    s.invoke.trim_end()
                ),
            );
        };
        let Some(name) = attribute(&attributes, "name").filter(|n| !n.is_empty()) else {
            return error(
                ErrorKind::Malformed,
                format!("the call has no name; write {}name=\"...\">", s.invoke),
            );
        };
        let mut arguments = Map::new();
        for (param, _, whole) in delimited(inner, s.parameter, s.parameter_end) {
            let read = whole
                .then(|| start_tag(param))
                .flatten()
                .and_then(|(attributes, raw)| {
                    Some((attribute(&attributes, "name")?, attributes, raw))
                });
            let Some((key, attributes, raw)) = read else {
                return error(
                    ErrorKind::Malformed,
                    format!(
                        "an argument of `{name}` is not written as {}name=\"...\">VALUE{}",
                        s.parameter, s.parameter_end
                    ),
                );
            };
            let value = match attribute(&attributes, "string") {
                Some("true") => Value::String(raw.to_owned()),
                Some(_) => match json::value(raw.trim()) {
                    Ok(value) => value,
                    Err(message) => {
                        return error(
                            ErrorKind::Malformed,
                            format!("argument `{key}` of `{name}` is not valid JSON: {message}"),
                        );
                    }
                },
                None => untagged_value(raw, env, name, key),
            };
            if let Err(repeated) = unique::insert(&mut arguments, key.to_owned(), value) {
                return error(
                    ErrorKind::Arguments,
                    format!(
                        "the arguments of `{name}` are wrong: {repeated}; give each parameter once"
                    ),
                );
            }
        }
        Item::found(
            RawCall {
                name: name.to_owned(),
                arguments: Value::Object(arguments),
                id: None,
            },
            s.format,
            span,
        )
    }
}

/// A value without a `string` attribute: typed by the tool's schema, or else JSON when it reads
/// as JSON, else the text.
fn untagged_value(raw: &str, env: &Env<'_>, tool: &str, key: &str) -> Value {
    let kinds = arg_kinds(env.tools, tool, key);
    if kinds.is_unknown()
        && let Ok(value) = unique::from_str(raw.trim())
    {
        return value;
    }
    typed_value(raw, kinds)
}

/// The attributes of a start tag whose name is already read, and the text after its `>`:
/// `name="x" string="true">rest`.
fn start_tag(text: &str) -> Option<(Vec<(&str, &str)>, &str)> {
    let mut attributes = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('>') {
            return Some((attributes, after));
        }
        let (key, after) = rest.split_once('=')?;
        if key.contains(['>', '<']) {
            return None;
        }
        let after = after.trim_start();
        let quote = after.chars().next().filter(|q| matches!(q, '"' | '\''))?;
        let (value, after) = after[1..].split_once(quote)?;
        attributes.push((key.trim(), value));
        rest = after;
    }
}

fn attribute<'t>(attributes: &[(&str, &'t str)], key: &str) -> Option<&'t str> {
    attributes.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::parse::{self, Format};

    #[test]
    fn without_a_schema_json_values_are_json() {
        let output = "<minimax:tool_call><invoke name=\"f\"><parameter name=\"n\">7</parameter><parameter name=\"on\">true</parameter><parameter name=\"tags\">[\"a\"]</parameter><parameter name=\"city\">Paris</parameter></invoke></minimax:tool_call>";
        let parsed = parse::text(output, &["f"]);
        assert_eq!(
            parsed.calls[0].arguments,
            json!({"n": 7, "on": true, "tags": ["a"], "city": "Paris"})
        );
        assert_eq!(parsed.calls[0].format, Format::MiniMax);
    }

    #[test]
    fn attributes_in_either_order_and_quote() {
        let output = "<|DSML|tool_calls><|DSML|invoke name='f'><|DSML|parameter string=\"true\" name=\"x\">1</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>";
        let parsed = parse::text(output, &["f"]);
        assert_eq!(parsed.calls[0].arguments, json!({"x": "1"}));
        assert_eq!(parsed.calls[0].format, Format::Dsml);
    }
}
