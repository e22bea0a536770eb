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
//!   MiniMax M3 (<https://huggingface.co/MiniMaxAI/MiniMax-M3/blob/main/chat_template.jinja>)
//!   writes the namespace token `]<]minimax[>[` before every tag, opens with
//!   `]<]minimax[>[<tool_call>`, and writes the arguments as child elements named by the key
//!   (`]<]minimax[>[<city>Paris]<]minimax[>[</city>`), read by `elements.rs`; a call without
//!   `<parameter` tags whose inside begins with an element is read so in M2's section too.
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
//!   tokens are read with the ASCII `|` as well as the fullwidth `｜`. V4.1 (encoding:
//!   <https://huggingface.co/deepseek-ai/DeepSeek-V4.1-Flash/tree/main/encoding>) writes a
//!   space before each tag name and names the section ` calls`:
//!
//!   ```text
//!   <｜DSML｜ calls>
//!   <｜DSML｜ invoke name="get_weather">
//!   <｜DSML｜ parameter name="city" string="true">Paris</｜DSML｜ parameter>
//!   </｜DSML｜ invoke>
//!   </｜DSML｜ calls>
//!   ```
//!
//!   A server whose detokenizer drops the `｜DSML｜` marker gives the plain tags
//!   (`<function_calls>`, V4's `<tool_calls>`, `<invoke name="…">`,
//!   `<parameter name="…" string="…">`), as sglang's V3.2 detector reads them
//!   (python/sglang/srt/function_call/deepseekv32_detector.py, "Format 3 - Without DSML tags").
//!   Such a section is a call only when an `<invoke ` tag is the first thing in it; V4's
//!   `<tool_calls>` is also Hunyuan's token, whose reader hands such a section to this one
//!   (`sections.rs`). V4 writes a call without arguments as one self-closing tag,
//!   `<｜DSML｜invoke name="submit"/>` (sglang's `test_self_closing_zero_arg_invoke`).

use serde_json::{Map, Value};

use super::elements::Elements;
use super::json;
use super::parameters::end_by_names;
use crate::block::{Env, Family, Item, Outcome, RawCall, Reader, Step, Token};
use crate::scan::{Finder, Input};
use crate::typing::{Kinds, ToolTypes, typed_json, typed_string, typed_value};
use crate::vocab::{ErrorKind, Format};
use tool_registry_json::unique;

/// MiniMax M3's namespace token, written before each of its tags.
const MINIMAX_NS: &str = "]<]minimax[>[";

/// The row of `<invoke>` sections in the family table. M3's section is found as `<tool_call>`
/// after its namespace token: a search pattern beginning `]<` made the automaton's search of
/// prose a quarter slower (markdown's `](` shares its fingerprint).
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Token::opens(MINIMAX.open, Format::MiniMax, |at, _| {
            Box::new(InvokeBlock::new(at, &MINIMAX))
        }),
        Token::opens(MINIMAX_M3.open, Format::MiniMax, |at, _| {
            Box::new(InvokeBlock::new(at, &MINIMAX_M3))
        })
        .lead(MINIMAX_NS.len()),
        Token::opens(DSML[0].open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &DSML[0]))
        }),
        Token::opens(DSML[1].open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &DSML[1]))
        }),
        Token::opens(DSML[2].open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &DSML[2]))
        }),
        Token::opens(DSML[3].open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &DSML[3]))
        }),
        Token::opens(DSML[4].open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &DSML[4]))
        }),
        Token::opens(DSML[5].open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &DSML[5]))
        }),
        Token::opens(PLAIN_V32.open, Format::Dsml, |at, _| {
            Box::new(InvokeBlock::new(at, &PLAIN_V32))
        }),
    ],
};

/// DSML with the marker dropped: V3.2's section.
const PLAIN_V32: Spelling = plain("<function_calls>", "</function_calls>");

/// DSML with the marker dropped: V4's section, whose token Hunyuan shares.
const PLAIN_V4: Spelling = plain("<tool_calls>", "</tool_calls>");

const PLAIN_TAGS: [Tags; 1] = [Tags {
    invoke: "<invoke ",
    invoke_end: "</invoke>",
    parameter: "<parameter ",
    parameter_end: "</parameter>",
    ns: "",
}];

const fn plain(open: &'static str, close: &'static str) -> Spelling {
    Spelling {
        open,
        close,
        tags: &PLAIN_TAGS,
        format: Format::Dsml,
    }
}

/// Whether the section opened at `start` by `open` (a plain DSML token) begins with an
/// `<invoke ` tag after whitespace: `Some(true)` or `Some(false)` once that is known, `None`
/// while the input stops before it.
pub(crate) fn begins_with_invoke(input: &Input<'_>, start: usize, open: &str) -> Option<bool> {
    let body = input.bytes_from(start + open.len());
    let first = body.iter().position(|b| !b.is_ascii_whitespace());
    let Some(first) = first else {
        return input.eof().then_some(false);
    };
    let tag = PLAIN_TAGS[0].invoke.as_bytes();
    let rest = &body[first..];
    if rest.len() < tag.len() {
        // What came so far may still become the tag.
        return (input.eof() || !tag.starts_with(rest)).then_some(false);
    }
    Some(rest.starts_with(tag))
}

/// The reader of V4's plain `<tool_calls>` section begun at `start`.
pub(crate) fn plain_v4(start: usize) -> Box<dyn Reader> {
    Box::new(InvokeBlock::new(start, &PLAIN_V4))
}

/// One spelling of the markup: the section's tokens and the tags of the calls inside it.
#[derive(Debug)]
struct Spelling {
    open: &'static str,
    close: &'static str,
    /// The tags of a call, in each spelling a section may hold (a DSML section mixes the
    /// fullwidth and ASCII bars); all begin with the same byte.
    tags: &'static [Tags],
    format: Format,
}

/// The tags of one call and its arguments.
#[derive(Debug)]
struct Tags {
    invoke: &'static str,
    invoke_end: &'static str,
    parameter: &'static str,
    parameter_end: &'static str,
    /// What comes before the tag of each child element (`]<]minimax[>[` in M3).
    ns: &'static str,
}

/// MiniMax M2.
const MINIMAX: Spelling = Spelling {
    open: "<minimax:tool_call>",
    close: "</minimax:tool_call>",
    tags: &[Tags {
        invoke: "<invoke ",
        invoke_end: "</invoke>",
        parameter: "<parameter ",
        parameter_end: "</parameter>",
        ns: "",
    }],
    format: Format::MiniMax,
};

/// MiniMax M3: every tag follows the namespace token.
const MINIMAX_M3: Spelling = Spelling {
    open: "]<]minimax[>[<tool_call>",
    close: "]<]minimax[>[</tool_call>",
    tags: &[Tags {
        invoke: "]<]minimax[>[<invoke ",
        invoke_end: "]<]minimax[>[</invoke>",
        parameter: "]<]minimax[>[<parameter ",
        parameter_end: "]<]minimax[>[</parameter>",
        ns: "]<]minimax[>[",
    }],
    format: Format::MiniMax,
};

/// The DSML spellings: V3.2's `function_calls`, V4's `tool_calls` and V4.1's ` calls`, whose
/// tag names follow a space (`<｜DSML｜ calls>`, `<｜DSML｜ invoke name="…">`), each with
/// fullwidth and ASCII bars; the calls inside any of them in any of these spellings.
const DSML: [Spelling; 6] = [
    dsml("<｜DSML｜function_calls>", "</｜DSML｜function_calls>"),
    dsml("<｜DSML｜tool_calls>", "</｜DSML｜tool_calls>"),
    dsml("<|DSML|function_calls>", "</|DSML|function_calls>"),
    dsml("<|DSML|tool_calls>", "</|DSML|tool_calls>"),
    dsml("<｜DSML｜ calls>", "</｜DSML｜ calls>"),
    dsml("<|DSML| calls>", "</|DSML| calls>"),
];

const DSML_TAGS: [Tags; 4] = [
    Tags {
        invoke: "<｜DSML｜invoke ",
        invoke_end: "</｜DSML｜invoke>",
        parameter: "<｜DSML｜parameter ",
        parameter_end: "</｜DSML｜parameter>",
        ns: "",
    },
    Tags {
        invoke: "<|DSML|invoke ",
        invoke_end: "</|DSML|invoke>",
        parameter: "<|DSML|parameter ",
        parameter_end: "</|DSML|parameter>",
        ns: "",
    },
    Tags {
        invoke: "<｜DSML｜ invoke ",
        invoke_end: "</｜DSML｜ invoke>",
        parameter: "<｜DSML｜ parameter ",
        parameter_end: "</｜DSML｜ parameter>",
        ns: "",
    },
    Tags {
        invoke: "<|DSML| invoke ",
        invoke_end: "</|DSML| invoke>",
        parameter: "<|DSML| parameter ",
        parameter_end: "</|DSML| parameter>",
        ns: "",
    },
];

const fn dsml(open: &'static str, close: &'static str) -> Spelling {
    Spelling {
        open,
        close,
        tags: &DSML_TAGS,
        format: Format::Dsml,
    }
}

/// The calls in a section's `text`, each as its text after the start tag, where that text
/// begins, whether its end tag came, and the tags it is written with (a call ends at the end
/// tag of its own spelling). A start tag closed with `/>` (`<｜DSML｜invoke name="submit"/>`,
/// DeepSeek V4's call without arguments) is the whole call.
fn invokes<'t>(
    text: &'t str,
    tags: &'static [Tags],
) -> impl Iterator<Item = (&'t str, usize, bool, &'static Tags)> + 't {
    let first = tags[0].invoke.as_bytes()[0];
    let mut offset = 0;
    std::iter::from_fn(move || {
        let rest = &text[offset..];
        let (at, t) = memchr::memchr_iter(first, rest.as_bytes()).find_map(|at| {
            let t = tags.iter().find(|t| rest[at..].starts_with(t.invoke))?;
            Some((at, t))
        })?;
        let start = offset + at + t.invoke.len();
        if let Some(tag) = self_closing(&text[start..]) {
            offset = start + tag.len();
            return Some((tag, start, true, t));
        }
        Some(match text[start..].find(t.invoke_end) {
            Some(len) => {
                offset = start + len + t.invoke_end.len();
                (&text[start..start + len], start, true, t)
            }
            None => {
                offset = text.len();
                (&text[start..], start, false, t)
            }
        })
    })
}

/// The rest of a start tag closed with `/>` that `text` begins (`name="submit"/>`), looked for
/// within [`MAX_TAG`] bytes; `None` for a tag closed with `>` alone.
fn self_closing(text: &str) -> Option<&str> {
    let window = &text.as_bytes()[..text.len().min(MAX_TAG)];
    let close = memchr::memchr(b'>', window)?;
    let (attributes, _) = start_tag(&text[..=close])?;
    let tag = &text[..=close];
    (tag.ends_with("/>") && attribute(&attributes, "name").is_some()).then_some(tag)
}

/// A section of `<invoke>` elements.
#[derive(Debug)]
struct InvokeBlock {
    start: usize,
    spelling: &'static Spelling,
    end: Finder,
}

impl InvokeBlock {
    fn new(start: usize, spelling: &'static Spelling) -> Self {
        Self {
            start,
            spelling,
            end: Finder::new(spelling.close),
        }
    }
}

impl Reader for InvokeBlock {
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let s = self.spelling;
        // The plain tags are words of prose too: a section is one only when a call begins it.
        if s.open == PLAIN_V32.open {
            match begins_with_invoke(input, self.start, s.open) {
                None => return Step::NeedMore,
                Some(false) => {
                    return Step::NotACall {
                        resume: self.start + 1,
                    };
                }
                Some(true) => {}
            }
        }
        let body = self.start + s.open.len();
        let Some((body_end, end, complete)) = self.end.closing(input, body) else {
            return Step::NeedMore;
        };
        let text = input.str(body..body_end);
        let items: Vec<Item> = invokes(text, s.tags)
            .map(|(call_text, at, whole, tags)| self.call(call_text, body + at, whole, tags, env))
            .collect();
        if items.is_empty() && complete && text.trim().is_empty() {
            // An empty section calls nothing and says nothing: removed.
            return Step::Done(Outcome::new(end, Vec::new()));
        }
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
                    s.tags[0].invoke
                ),
            ));
        }
        Step::Done(Outcome::new(end, items))
    }
}

impl InvokeBlock {
    /// One `<invoke …>` element's text after `<invoke `; `complete` is false when its end tag
    /// never came.
    fn call(&self, text: &str, at: usize, complete: bool, t: &Tags, env: &Env<'_>) -> Item {
        let s = self.spelling;
        let span = at..at + text.len();
        let error = |kind, message: String| Item::error(span.clone(), s.format, kind, message);
        if !complete {
            return Item::cut_off(
                span,
                s.format,
                format_args!("inside a call before `{}`", t.invoke_end),
            );
        }
        let Some((attributes, inner)) = start_tag(text) else {
            return error(
                ErrorKind::Malformed,
                format!(
                    "the call's `{}` tag is not closed with `>`",
                    t.invoke.trim_end()
                ),
            );
        };
        let Some(name) = attribute(&attributes, "name").filter(|n| !n.is_empty()) else {
            return error(
                ErrorKind::Malformed,
                format!("the call has no name; write {}name=\"...\">", t.invoke),
            );
        };
        let arguments = match arguments(inner, name, t, env) {
            Ok(arguments) => arguments,
            Err((kind, message)) => return error(kind, message),
        };
        Item::found(
            RawCall {
                name: name.to_owned(),
                arguments: Value::Object(arguments),
                id: None,
                typed: true,
            },
            s.format,
            span,
        )
    }
}

/// The arguments of a call of `name`, typed by the tool's schema: its `<parameter name="…">`
/// elements or, when it has none and begins with an element, one child element per key
/// (`elements.rs`); the error's kind and message when one is not well written or a key comes
/// twice.
fn arguments(
    inner: &str,
    name: &str,
    s: &Tags,
    env: &Env<'_>,
) -> Result<Map<String, Value>, (ErrorKind, String)> {
    let types = ToolTypes::of(env.tools, name);
    if !inner.contains(s.parameter) {
        let mut elements = Elements::new(s.ns, types.schema(), types.without_schema());
        if elements.begins(inner) {
            return elements.arguments(inner).map_err(|message| {
                (
                    ErrorKind::Malformed,
                    format!("the arguments of `{name}` are not well written: {message}"),
                )
            });
        }
    }
    let mut by_names = types.has_schema();
    let mut arguments = Map::new();
    let mut rest = inner;
    while let Some(open) = rest.find(s.parameter) {
        let read = start_tag(&rest[open + s.parameter.len()..]).and_then(|(attributes, after)| {
            let key = attribute(&attributes, "name")?;
            let (end, next) = value_end(after, s, key, &types, &arguments, &mut by_names)?;
            Some((key, attributes, &after[..end], &after[next..]))
        });
        let Some((key, attributes, raw, after)) = read else {
            return Err((
                ErrorKind::Malformed,
                format!(
                    "an argument of `{name}` is not written as {}name=\"...\">VALUE{}",
                    s.parameter, s.parameter_end
                ),
            ));
        };
        rest = after;
        let kinds = types.kinds(key);
        let value = match attribute(&attributes, "string") {
            Some("true") => typed_string(raw.to_owned(), kinds),
            // A value marked as JSON that is not JSON is kept as the model wrote it, as the
            // engines do (sglang's V3.2 detector, vLLM's DSML parser): the tool's own checks
            // say what is wrong with it.
            Some(_) => match json::value(raw.trim()) {
                Ok(value) => typed_json(value, kinds),
                Err(_) => Value::String(raw.trim().to_owned()),
            },
            None => untagged_value(raw, kinds),
        };
        unique::insert(&mut arguments, key.to_owned(), value).map_err(|repeated| {
            (
                ErrorKind::Arguments,
                format!(
                    "the arguments of `{name}` are wrong: {repeated}; give each parameter once"
                ),
            )
        })?;
    }
    Ok(arguments)
}

/// A value without a `string` attribute: typed by the tool's schema, or else JSON when it reads
/// as JSON, else the text.
fn untagged_value(raw: &str, kinds: Kinds) -> Value {
    if kinds.is_unknown()
        && let Ok(value) = unique::from_str(raw.trim())
    {
        return value;
    }
    typed_value(raw, kinds)
}

/// Where the value of `key` (the text after its start tag) ends, and where reading goes on,
/// by `glm.rs`'s rule with this spelling's tags: without a schema (`by_names` off), at its
/// first end tag; with one, a start tag naming a parameter still to come ends it (its end tag
/// left out), and any other start tag inside it opens an element that the next end tag closes,
/// so that a value may hold the markup of a parameter the tool does not declare. `None` when
/// no end tag comes.
fn value_end(
    rest: &str,
    s: &Tags,
    key: &str,
    types: &ToolTypes<'_>,
    given: &Map<String, Value>,
    by_names: &mut bool,
) -> Option<(usize, usize)> {
    let first = || {
        let close = rest.find(s.parameter_end)?;
        Some((close, close + s.parameter_end.len()))
    };
    if !*by_names {
        return first();
    }
    let next_name = |tail| parameter_name(str::strip_prefix(tail, s.parameter)?);
    let found = end_by_names(
        rest,
        s.parameter_end,
        s.parameter,
        next_name,
        |name| types.starts_next(name, key, given),
        |_| true,
    );
    if found.is_some() {
        return found;
    }
    // Unbalanced: the first end tag, for this value and the rest of the call, which keeps the
    // reading linear.
    *by_names = false;
    first()
}

/// The `name` attribute of the start tag `after` begins, looked for within [`MAX_TAG`] bytes.
fn parameter_name(after: &str) -> Option<&str> {
    let window = &after.as_bytes()[..after.len().min(MAX_TAG)];
    let close = memchr::memchr(b'>', window)?;
    let (attributes, _) = start_tag(&after[..=close])?;
    attribute(&attributes, "name")
}

/// The longest start tag looked into inside a value.
const MAX_TAG: usize = 512;

/// The attributes of a start tag whose name is already read, and the text after its `>`:
/// `name="x" string="true">rest`.
fn start_tag(text: &str) -> Option<(Vec<(&str, &str)>, &str)> {
    let mut attributes = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('>').or_else(|| rest.strip_prefix("/>")) {
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

    use crate::{self as parse, Format};

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
    fn with_a_list_an_undeclared_parameter_inside_a_value_belongs_to_it() {
        let tools = parse::ToolList::from_json_str(
            r#"[{"name": "edit", "parameters": {"type": "object", "properties": {
                "path": {"type": "string"}, "new_string": {"type": "string"}, "n": {"type": "integer"}}}}]"#,
        )
        .unwrap();
        let output = "<minimax:tool_call>\n<invoke name=\"edit\">\n<parameter name=\"new_string\">a\n<parameter name=\"old_string\">x</parameter>\nb</parameter>\n<parameter name=\"path\">f.txt</parameter>\n</invoke>\n</minimax:tool_call>";
        assert_eq!(
            parse::text(output, &tools).calls[0].arguments,
            json!({"new_string": "a\n<parameter name=\"old_string\">x</parameter>\nb", "path": "f.txt"})
        );
        // Without a list, the first `</parameter>` ends the value.
        assert_eq!(
            parse::text(output, &parse::AnyTool).calls[0].arguments,
            json!({"new_string": "a\n<parameter name=\"old_string\">x", "path": "f.txt"})
        );
        // A declared parameter still to come ends a value left open; a quoted number is read
        // for a declared integer.
        let open = "<minimax:tool_call><invoke name=\"edit\"><parameter name=\"new_string\">a\n<parameter name=\"n\">\"4\"</parameter></invoke></minimax:tool_call>";
        assert_eq!(
            parse::text(open, &tools).calls[0].arguments,
            json!({"new_string": "a", "n": 4})
        );
    }

    /// `invokes` looks for a call's start by the first byte of the section's first spelling.
    #[test]
    fn the_call_tags_of_a_section_begin_with_one_byte() {
        for spelling in [
            &super::MINIMAX,
            &super::MINIMAX_M3,
            &super::PLAIN_V32,
            &super::PLAIN_V4,
        ]
        .into_iter()
        .chain(&super::DSML)
        {
            let first = spelling.tags[0].invoke.as_bytes()[0];
            assert!(
                (spelling.tags.iter()).all(|t| t.invoke.as_bytes()[0] == first),
                "{}",
                spelling.open
            );
        }
    }

    #[test]
    fn attributes_in_either_order_and_quote() {
        let output = "<|DSML|tool_calls><|DSML|invoke name='f'><|DSML|parameter string=\"true\" name=\"x\">1</|DSML|parameter></|DSML|invoke></|DSML|tool_calls>";
        let parsed = parse::text(output, &["f"]);
        assert_eq!(parsed.calls[0].arguments, json!({"x": "1"}));
        assert_eq!(parsed.calls[0].format, Format::Dsml);
    }
}
