//! `<parameter=KEY>VALUE</parameter>` elements inside `<function=NAME>` (Qwen3-Coder), read
//! one by one as the input comes, with where each value ends decided by the structure; and
//! where a value ends by the tool's declared names in the other parameter markups (GLM's
//! `<arg_value>`, MiniMax's `<parameter name=…>`), [`end_by_names`].

use serde_json::{Map, Value};

use crate::block::Env;
use crate::scan::{Input, Prefix};
use crate::typing::{ToolTypes, arg_kinds, typed_value};
use tool_registry_json::unique;

const TOOL_CALL_END: &str = "</tool_call>";
const FUNCTION: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAMETER: &str = "<parameter=";
const PARAMETER_END: &str = "</parameter>";

/// The longest parameter name read.
const MAX_NAME: usize = 256;

/// The value of one `<parameter=KEY>` being read: where it starts, how far it has been looked
/// at, and how many `<function=` elements opened inside it are still open.
#[derive(Debug)]
pub(crate) struct ValueScan {
    key: String,
    start: usize,
    pos: usize,
    depth: u32,
}

/// What reading the parameters came to.
pub(crate) enum ParamsStep {
    NeedMore,
    Truncated,
    /// `</function>` closes the call; the block ends here.
    End(usize),
}

/// Reads `<parameter=KEY>VALUE</parameter>` elements up to `</function>`, resuming where the
/// last call stopped. Where a value ends is decided by the structure, so that values may hold
/// tool-call markup (an agent writing a file about the format):
///
/// - `</parameter>` ends the value when `<parameter=`, `</function>` or the end of the output
///   follows it (whitespace between), outside any `<function=` element opened in the value (an
///   element starts a line; `'<function=x>'` in a line of code is text);
/// - a `<parameter=NAME>` at the start of a line ends it too (its `</parameter>` left out) when
///   `NAME` is a parameter still to come: one the tool's schema declares, or any not yet given
///   when the tool set has no schema. With a schema, a line naming a parameter the tool does
///   not declare belongs to the value it appears in (vLLM's Qwen3-Coder rule);
/// - so does a `</function>` at the start of a line followed by `</tool_call>` or the end of
///   the output, outside any `<function=` element opened in the value.
///
/// Everything else, `</parameter>` in a sentence, `<parameter=…>` mid-line, a whole
/// `<tool_call>` element, is part of the value. Each byte is looked at once however the input
/// is split. A key given twice keeps its first value and sets `repeated` to the refusal the call
/// ends with.
pub(crate) fn params_step(
    input: &Input<'_>,
    env: &Env<'_>,
    tool: &str,
    at: &mut usize,
    arguments: &mut Map<String, Value>,
    repeated: &mut Option<Box<str>>,
    value: &mut Option<ValueScan>,
) -> ParamsStep {
    loop {
        if let Some(scan) = value {
            let (value_end, next) = match value_end(input, env, tool, arguments, scan) {
                ValueEnd::NeedMore => return ParamsStep::NeedMore,
                ValueEnd::Truncated => return ParamsStep::Truncated,
                ValueEnd::At { end, next } => (end, next),
            };
            let raw = input.str(scan.start..value_end);
            let typed = typed_value(raw, arg_kinds(env.tools, tool, &scan.key));
            // The call is still read to its end, so that the block's extent does not depend on
            // the repetition; the first repeated key is what its error names.
            if let Err(error) = unique::insert(arguments, std::mem::take(&mut scan.key), typed) {
                repeated.get_or_insert(error.into());
            }
            *value = None;
            *at = next;
        }
        let p = input.skip_ws(*at);
        *at = p;
        if p == input.end() {
            return match input.eof() {
                true => ParamsStep::Truncated,
                false => ParamsStep::NeedMore,
            };
        }
        match (
            input.prefix(p, PARAMETER.as_bytes()),
            input.prefix(p, FUNCTION_END.as_bytes()),
        ) {
            (_, Prefix::Yes) => return ParamsStep::End(p + FUNCTION_END.len()),
            (Prefix::Yes, _) => {
                let key_start = p + PARAMETER.len();
                let bytes = input.bytes_from(key_start);
                let limit = bytes.len().min(MAX_NAME + 1);
                match bytes[..limit].iter().position(|b| *b == b'>') {
                    Some(len) => {
                        *value = Some(ValueScan {
                            key: input.str(key_start..key_start + len).trim().to_owned(),
                            start: key_start + len + 1,
                            pos: key_start + len + 1,
                            depth: 0,
                        });
                    }
                    None if limit == bytes.len() && !input.eof() => return ParamsStep::NeedMore,
                    // A key that never closes: the rest is not a parameter.
                    None => *at = key_start,
                }
            }
            (Prefix::Partial, _) | (_, Prefix::Partial) => return ParamsStep::NeedMore,
            // Stray text between parameters: passed over.
            _ => {
                *at = match memchr::memchr(b'<', input.bytes_from(p + 1)) {
                    Some(i) => p + 1 + i,
                    None => input.end(),
                }
            }
        }
    }
}

/// Where a value ends.
enum ValueEnd {
    NeedMore,
    Truncated,
    /// The value is the text before `end`; reading goes on at `next`.
    At {
        end: usize,
        next: usize,
    },
}

/// Where the value being read ends, by the rules [`params_step`] lists.
///
/// Long: one loop over the `<` of the value with each element's rule beside the others, so that
/// each byte is looked at once and the loop stays in one frame.
fn value_end(
    input: &Input<'_>,
    env: &Env<'_>,
    tool: &str,
    given: &Map<String, Value>,
    scan: &mut ValueScan,
) -> ValueEnd {
    loop {
        let Some(i) = memchr::memchr(b'<', input.bytes_from(scan.pos)) else {
            scan.pos = input.end();
            return match input.eof() {
                true => ValueEnd::Truncated,
                false => ValueEnd::NeedMore,
            };
        };
        let p = scan.pos + i;
        let line_start = p == scan.start || input.byte(p - 1) == Some(b'\n');
        let rest = input.bytes_from(p);
        // Not enough input to tell which element this is.
        if rest.len() < FUNCTION_END.len().max(PARAMETER_END.len()) && !input.eof() {
            let could_be = [FUNCTION, FUNCTION_END, PARAMETER, PARAMETER_END]
                .iter()
                .any(|m| m.as_bytes().starts_with(rest) || rest.starts_with(m.as_bytes()));
            if could_be {
                scan.pos = p;
                return ValueEnd::NeedMore;
            }
        }
        if rest.starts_with(FUNCTION.as_bytes()) {
            // An element, not a mention in a line of text or code.
            if line_start {
                scan.depth += 1;
            }
        } else if rest.starts_with(FUNCTION_END.as_bytes()) {
            if scan.depth > 0 && line_start {
                scan.depth -= 1;
            } else if line_start {
                let after = input.skip_ws(p + FUNCTION_END.len());
                match followed(input, after, &[TOOL_CALL_END]) {
                    Follow::Yes => return ValueEnd::At { end: p, next: p },
                    Follow::NeedMore => {
                        scan.pos = p;
                        return ValueEnd::NeedMore;
                    }
                    Follow::No => {}
                }
            }
        } else if rest.starts_with(PARAMETER_END.as_bytes()) {
            if scan.depth == 0 {
                let after = input.skip_ws(p + PARAMETER_END.len());
                match followed(input, after, &[PARAMETER, FUNCTION_END]) {
                    Follow::Yes => {
                        return ValueEnd::At {
                            end: p,
                            next: p + PARAMETER_END.len(),
                        };
                    }
                    Follow::NeedMore => {
                        scan.pos = p;
                        return ValueEnd::NeedMore;
                    }
                    Follow::No => {}
                }
            }
        } else if rest.starts_with(PARAMETER.as_bytes()) && line_start && scan.depth == 0 {
            let key_start = p + PARAMETER.len();
            let bytes = input.bytes_from(key_start);
            let limit = bytes.len().min(MAX_NAME + 1);
            match bytes[..limit].iter().position(|b| *b == b'>') {
                Some(len) => {
                    let key = input.str(key_start..key_start + len).trim();
                    if starts_next(env, tool, given, &scan.key, key) {
                        return ValueEnd::At { end: p, next: p };
                    }
                }
                None if limit == bytes.len() && !input.eof() => {
                    scan.pos = p;
                    return ValueEnd::NeedMore;
                }
                None => {}
            }
        }
        scan.pos = p + 1;
    }
}

/// Whether what comes at `at` is one of `markers`, or the end of the output.
enum Follow {
    Yes,
    No,
    NeedMore,
}

fn followed(input: &Input<'_>, at: usize, markers: &[&str]) -> Follow {
    if at == input.end() {
        return match input.eof() {
            true => Follow::Yes,
            false => Follow::NeedMore,
        };
    }
    let mut partial = false;
    for marker in markers {
        match input.prefix(at, marker.as_bytes()) {
            Prefix::Yes => return Follow::Yes,
            Prefix::Partial => partial = true,
            Prefix::No => {}
        }
    }
    match partial {
        true => Follow::NeedMore,
        false => Follow::No,
    }
}

/// Whether `key`, met at the start of a line inside the value of `current`, starts the next
/// parameter: with a schema, one it declares that is still to come ([`ToolTypes::starts_next`]);
/// without one, any not given yet.
fn starts_next(
    env: &Env<'_>,
    tool: &str,
    given: &Map<String, Value>,
    current: &str,
    key: &str,
) -> bool {
    let types = ToolTypes::of(env.tools, tool);
    match types.has_schema() {
        true => types.starts_next(key, current, given),
        false => key != current && !given.contains_key(key),
    }
}

/// Where a value (`rest`, the text after its start tag) ends by the tool's declared names, in
/// the markups whose values end at an end tag (`close`): a start tag naming a parameter still
/// to come (`next_name` reads its name, `starts_next` judges it) ends it, its end tag left out;
/// any other `nest` tag inside it opens an element that the next end tag closes, so that a
/// value may hold the markup of a parameter the tool does not declare. An end tag at the
/// value's own level ends it when `ends` accepts what follows it (GLM's: the next key or the
/// call's end), else it is text of the value. Gives the value's length and where reading goes
/// on; `None` when the tags never balance.
pub(crate) fn end_by_names<'r>(
    rest: &'r str,
    close: &str,
    nest: &str,
    next_name: impl Fn(&'r str) -> Option<&'r str>,
    starts_next: impl Fn(&str) -> bool,
    ends: impl Fn(&str) -> bool,
) -> Option<(usize, usize)> {
    let mut depth = 0u32;
    let mut at = 0;
    while let Some(i) = memchr::memchr(b'<', &rest.as_bytes()[at..]) {
        let p = at + i;
        let tail = &rest[p..];
        if let Some(after) = tail.strip_prefix(close) {
            if depth == 0 {
                if ends(after) {
                    return Some((p, p + close.len()));
                }
                at = p + 1;
                continue;
            }
            depth -= 1;
        } else {
            if depth == 0 && next_name(tail).is_some_and(&starts_next) {
                return Some((p, p));
            }
            if tail.starts_with(nest) {
                depth += 1;
            }
        }
        at = p + 1;
    }
    None
}
