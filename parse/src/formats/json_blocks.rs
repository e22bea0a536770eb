//! The block readers of the JSON family: a wrapper and the values after it (Llama 3.1/4,
//! Granite, Phi-4-mini), a bare value that is the whole message, and fenced code blocks.

use std::ops::Range;

use serde_json::Value;

use super::end_tokens::{EndToken, end_token_at};
use super::json::{Shape, calls, sniff_name, value, value_items};
use super::pythonic;
use crate::block::{Env, Family, Item, Open, Outcome, RawCall, Reader, Step, Token};
use crate::scan::{Input, Prefix, SeqEnd, Values};
use crate::typing::ByTools;
use crate::vocab::{ErrorKind, Format};

/// The wrappers' row of the family table. A bare value and a fenced block are not opened by
/// a token of their own: the scanner finds where they stand (`machine/text.rs`).
pub(crate) const FAMILY: Family = Family {
    tokens: &[
        Wrapper::PythonTag.token(|at, _| Box::new(WrapperBlock::new(at, Wrapper::PythonTag))),
        Wrapper::PythonStart.token(|at, _| Box::new(WrapperBlock::new(at, Wrapper::PythonStart))),
        Wrapper::Granite.token(|at, _| Box::new(WrapperBlock::new(at, Wrapper::Granite))),
        Wrapper::Functools
            .token(|at, _| Box::new(WrapperBlock::new(at, Wrapper::Functools)))
            .word(),
        Wrapper::Tools.token(|at, _| Box::new(WrapperBlock::new(at, Wrapper::Tools))),
        Wrapper::FunctionCall.token(|at, _| Box::new(WrapperBlock::new(at, Wrapper::FunctionCall))),
    ],
};

/// The wrappers that introduce one or more values: `<|python_tag|>` (Llama 3.1),
/// `<|python_start|>` (Llama 4), `<|tool_call|>` (Granite 3) and `functools[` (Phi-4-mini).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wrapper {
    PythonTag,
    PythonStart,
    Granite,
    Functools,
    /// `<tools>…</tools>`, `<function_call>…</function_call>`: only when what they wrap is
    /// calls (a `<tools>` list of definitions is prose).
    Tools,
    FunctionCall,
}

impl Wrapper {
    /// The wrapper's token in the family table, read by the reader `open` makes.
    const fn token(self, open: Open) -> Token {
        let text = match self {
            Wrapper::Functools => "functools[",
            _ => self.marker(),
        };
        Token::opens(text, self.format(), open)
    }

    const fn marker(self) -> &'static str {
        match self {
            Wrapper::PythonTag => "<|python_tag|>",
            Wrapper::PythonStart => "<|python_start|>",
            Wrapper::Granite => "<|tool_call|>",
            Wrapper::Functools => "functools",
            Wrapper::Tools => "<tools>",
            Wrapper::FunctionCall => "<function_call>",
        }
    }

    const fn format(self) -> Format {
        match self {
            Wrapper::PythonTag => Format::PythonTag,
            Wrapper::PythonStart => Format::Pythonic,
            Wrapper::Granite | Wrapper::Functools | Wrapper::Tools | Wrapper::FunctionCall => {
                Format::Json
            }
        }
    }

    fn python(self) -> bool {
        matches!(self, Wrapper::PythonTag | Wrapper::PythonStart)
    }

    /// End tokens that may follow the values and belong to the block.
    fn closers(self) -> &'static [&'static str] {
        match self {
            Wrapper::PythonTag => &["<|eom_id|>", "<|eot_id|>"],
            Wrapper::PythonStart => &["<|python_end|>"],
            Wrapper::Granite | Wrapper::Functools => &[],
            Wrapper::Tools => &["</tools>"],
            Wrapper::FunctionCall => &["</function_call>"],
        }
    }

    /// A wrapper that is a call only when what it wraps is entirely calls.
    fn lenient(self) -> bool {
        matches!(self, Wrapper::Tools | Wrapper::FunctionCall)
    }
}

/// A wrapper and the values after it.
#[derive(Debug)]
struct WrapperBlock {
    start: usize,
    wrapper: Wrapper,
    values: Values,
    closing: Option<(usize, Outcome)>,
    /// Whether the block is known to hold calls (only `functools[` needs a look first), and
    /// how far whitespace before that look has been skipped.
    checked: bool,
    cursor: usize,
}

impl WrapperBlock {
    fn new(start: usize, wrapper: Wrapper) -> Self {
        let body = start + wrapper.marker().len();
        let multi = wrapper != Wrapper::Functools;
        Self {
            start,
            wrapper,
            values: Values::new(body, wrapper.python(), multi),
            closing: None,
            checked: wrapper != Wrapper::Functools,
            cursor: start + "functools[".len(),
        }
    }
}

impl Reader for WrapperBlock {
    fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        let from = self
            .values
            .spans
            .first()
            .map(|s| s.start)
            .or_else(|| self.values.open_start())?;
        sniff_name(input.str(from..input.end()), 512).map(str::to_owned)
    }

    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        if let Some(step) = self.look_after_functools(input) {
            return step;
        }
        if self.closing.is_none()
            && let Some(step) = self.scan_values(input, env)
        {
            return step;
        }
        self.close(input)
    }
}

impl WrapperBlock {
    /// `functools[0]` in prose: only `functools[{` opens calls. `Some` when the step ends here.
    fn look_after_functools(&mut self, input: &Input<'_>) -> Option<Step> {
        if !self.checked {
            let object = input.skip_ws(self.cursor);
            self.cursor = object;
            match input.byte(object) {
                Some(b'{') => self.checked = true,
                None if !input.eof() => return Some(Step::NeedMore),
                _ => {
                    return Some(Step::NotACall {
                        resume: self.start + "functools[".len(),
                    });
                }
            }
        }
        None
    }

    /// The values after the wrapper, read into the block's outcome; `Some` when the step ends
    /// here.
    fn scan_values(&mut self, input: &Input<'_>, env: &Env<'_>) -> Option<Step> {
        let format = self.wrapper.format();
        match self.values.scan(input) {
            SeqEnd::NeedMore => return Some(Step::NeedMore),
            SeqEnd::Ended {
                complete: false, ..
            } => {
                return Some(Step::Done(Outcome::cut_off(
                    self.start..input.end(),
                    format,
                    format_args!("inside the call after `{}`", self.wrapper.marker()),
                )));
            }
            SeqEnd::Ended { at, complete: true } => {
                if self.wrapper.lenient()
                    && (self.values.spans.is_empty()
                        || (self.values.spans.iter())
                            .any(|span| bare_calls(input.str(span.clone()), env).is_err()))
                {
                    return Some(Step::NotACall {
                        resume: self.start + 1,
                    });
                }
                let Some(last_end) = self.values.last_end() else {
                    if self.wrapper == Wrapper::Functools {
                        return Some(Step::NotACall {
                            resume: self.start + "functools[".len(),
                        });
                    }
                    if input.ends_at(at) {
                        return Some(Step::Done(Outcome::cut_off(
                            self.start..input.end(),
                            format,
                            format_args!("right after `{}`", self.wrapper.marker()),
                        )));
                    }
                    let end = self.start + self.wrapper.marker().len();
                    return Some(Step::Done(Outcome::error(
                        self.start..end,
                        format,
                        ErrorKind::Malformed,
                        format!(
                            "`{}` is not followed by a call; write {{\"name\": \"...\", \"parameters\": {{...}}}} after it",
                            self.wrapper.marker()
                        ),
                    )));
                };
                let mut items = Vec::new();
                for span in &self.values.spans {
                    items.extend(value_items(
                        input.str(span.clone()),
                        span.clone(),
                        format,
                        self.wrapper.python().then_some(env.tools),
                    ));
                }
                self.closing = Some((at, Outcome::new(last_end, items)));
            }
        }
        None
    }

    /// The wrapper's closing token, if it has one, taken into the block.
    fn close(&mut self, input: &Input<'_>) -> Step {
        let Some((cursor, outcome)) = &mut self.closing else {
            return Step::NeedMore;
        };
        let at = input.skip_ws(*cursor);
        *cursor = at;
        for closer in self.wrapper.closers() {
            match input.prefix(at, closer.as_bytes()) {
                Prefix::Yes => {
                    outcome.end = at + closer.len();
                    break;
                }
                Prefix::Partial => return Step::NeedMore,
                Prefix::No => {}
            }
        }
        if at == input.end() && !input.eof() && !self.wrapper.closers().is_empty() {
            return Step::NeedMore;
        }
        Step::Done(std::mem::take(outcome))
    }
}

/// The calls a bare value stands for, if it is entirely calls: `Err` when any part is not.
fn bare_calls(text: &str, env: &Env<'_>) -> Result<Vec<(RawCall, Format)>, ()> {
    let formats = env.formats;
    let first = text.as_bytes().first().copied().unwrap_or(b' ');
    if first != b'{'
        && formats.contains(Format::Pythonic)
        && let Ok(calls) = pythonic::calls(text, &mut ByTools::new(env.tools))
    {
        return Ok(calls
            .into_iter()
            .map(|c| {
                (
                    RawCall {
                        name: c.name,
                        arguments: Value::Object(c.arguments),
                        id: None,
                        typed: true,
                    },
                    Format::Pythonic,
                )
            })
            .collect());
    }
    if !formats.contains(Format::Json) || !matches!(first, b'{' | b'[') {
        return Err(());
    }
    let value = value(text).map_err(|_| ())?;
    let calls = calls(value, Shape::Bare).map_err(|_| ())?;
    Ok(calls.into_iter().map(|c| (c, Format::Json)).collect())
}

/// The items for bare values that are all calls and name at least one known tool.
fn known_calls(input: &Input<'_>, spans: &[Range<usize>], env: &Env<'_>) -> Option<Vec<Item>> {
    let mut items = Vec::new();
    let mut known = false;
    for span in spans {
        for (call, format) in bare_calls(input.str(span.clone()), env).ok()? {
            known |= env.tools.is_tool(&call.name)
                || call
                    .name
                    .strip_suffix(".call")
                    .is_some_and(|n| env.tools.is_tool(n));
            items.push(Item::found(call, format, span.clone()));
        }
    }
    known.then_some(items)
}

/// A cut-off bare call is reported only when it names a known tool; otherwise it is prose.
fn truncated_known(
    input: &Input<'_>,
    start: usize,
    env: &Env<'_>,
    format: Format,
) -> Option<Outcome> {
    let text = input.str(start..input.end());
    let name = sniff_name(text, 4096).or_else(|| sniff_python_name(text))?;
    env.tools.is_tool(name).then(|| {
        Outcome::cut_off(
            start..input.end(),
            format,
            format_args!("inside the call of `{name}` before its JSON is complete"),
        )
    })
}

/// The name of the first call in a partial pythonic list, `[name(` or `name(`.
fn sniff_python_name(text: &str) -> Option<&str> {
    let rest = text.trim_start();
    let rest = rest.strip_prefix('[').map_or(rest, str::trim_start);
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        .count();
    (len > 0 && rest[len..].starts_with('(')).then(|| &rest[..len])
}

/// JSON or a pythonic list standing alone: as the whole message, `[{"name": …, "arguments":
/// …}]`, `{"name": …, "parameters": …}` (Llama 3.x, several joined by `;`), `[f(a=1)]`; or a
/// JSON object or array, or a bracketed pythonic list, on lines of its own among prose (it
/// starts a line and nothing but whitespace follows it on its last line). A stray `]` after
/// it is dropped; an array cut off at the end of the output after complete calls gives those
/// calls.
#[derive(Debug)]
pub(crate) struct BareBlock {
    start: usize,
    values: Values,
    /// Found at the start of a line among prose rather than as the start of the message.
    line: bool,
    /// Where scanning goes on when this is not a call (its start, unless found by its end).
    resume: Option<usize>,
}

impl BareBlock {
    pub(crate) fn new(start: usize) -> Self {
        Self {
            start,
            values: Values::new(start, true, true),
            line: false,
            resume: None,
        }
    }

    /// A value at the start of a line after prose (`{` or `[` there).
    pub(crate) fn line(start: usize) -> Self {
        Self {
            line: true,
            ..Self::new(start)
        }
    }

    /// A pythonic call list found by its end, `)]` at `end - 2`: when it is not one, scanning
    /// goes on after it.
    pub(crate) fn list_ending(start: usize, end: usize) -> Self {
        Self {
            resume: Some(end),
            ..Self::line(start)
        }
    }
}

impl Reader for BareBlock {
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        let not_a_call = Step::NotACall {
            resume: self.resume.unwrap_or(self.start),
        };
        match self.values.scan(input) {
            SeqEnd::NeedMore => Step::NeedMore,
            SeqEnd::Ended {
                complete: false, ..
            } => {
                if let Some(items) = cut_array_calls(input, self.start, env) {
                    return Step::Done(Outcome::new(input.end(), items));
                }
                match truncated_known(input, self.start, env, Format::Json) {
                    Some(outcome) => Step::Done(outcome),
                    None => not_a_call,
                }
            }
            SeqEnd::Ended { at, .. } => {
                let bracketed = matches!(input.byte(self.start), Some(b'{' | b'['));
                // From the end of the last value: the scan may have looked past a line break.
                let at = self.values.last_end().unwrap_or(at);
                let end = match rest_of_line(input, at, bracketed) {
                    None => return Step::NeedMore,
                    Some(Alone::Message(end)) => end,
                    // Lines of their own among prose: only JSON or a bracketed list.
                    Some(Alone::Line(end)) if bracketed => end,
                    Some(_) => return not_a_call,
                };
                if self.line && !bracketed {
                    return not_a_call;
                }
                match known_calls(input, &self.values.spans, env) {
                    Some(items) => Step::Done(Outcome::new(end, items)),
                    None => not_a_call,
                }
            }
        }
    }
}

/// How a value stands alone.
enum Alone {
    /// Nothing but whitespace and end-of-turn tokens to the end of the output: the block ends
    /// at the end.
    Message(usize),
    /// Nothing but spaces to the end of its line: the block ends there.
    Line(usize),
    Not,
}

/// What follows the values that end at `at`: the end of the message, of the line, or more on
/// the same line; `None` while the input may still say. A stray `]` right after a bracketed
/// value is taken into the block.
fn rest_of_line(input: &Input<'_>, mut at: usize, bracketed: bool) -> Option<Alone> {
    let spaces = |at: usize| {
        at + input
            .bytes_from(at)
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\r'))
            .count()
    };
    at = spaces(at);
    if bracketed && input.byte(at) == Some(b']') {
        at = spaces(at + 1);
    }
    match input.byte(at) {
        None if !input.eof() => None,
        Some(b'\n') => match only_end_tokens(input, at)? {
            true => Some(Alone::Message(input.end())),
            false => Some(Alone::Line(at)),
        },
        _ => match only_end_tokens(input, at)? {
            true => Some(Alone::Message(input.end())),
            false => Some(Alone::Not),
        },
    }
}

/// The calls of a JSON array the output ends inside, when every element before the cut is a
/// complete call: `[{…}, {…}` with the closing `]` never written.
fn cut_array_calls(input: &Input<'_>, start: usize, env: &Env<'_>) -> Option<Vec<Item>> {
    let text = input.str(start..input.end());
    let mut rest = text.strip_prefix('[')?;
    let mut offset = start + 1;
    let mut items = Vec::new();
    loop {
        let trimmed = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        offset += rest.len() - trimmed.len();
        rest = trimmed;
        if rest.is_empty() || !rest.starts_with('{') {
            break;
        }
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Value>();
        let Some(Ok(_)) = values.next() else {
            // The element the output was cut in.
            return None;
        };
        let len = values.byte_offset();
        items.push(offset..offset + len);
        offset += len;
        rest = &rest[len..];
    }
    if !rest.trim().is_empty() || items.is_empty() {
        return None;
    }
    known_calls(input, &items, env)
}

/// Whether only whitespace and end-of-turn tokens follow `at` to the end of the output;
/// `None` while the input may still say otherwise.
fn only_end_tokens(input: &Input<'_>, mut at: usize) -> Option<bool> {
    loop {
        at = input.skip_ws(at);
        if at == input.end() {
            return input.eof().then_some(true);
        }
        match end_token_at(input, at) {
            EndToken::Whole(len) => at += len,
            EndToken::Partial => return None,
            EndToken::No => return Some(false),
        }
    }
}

/// Whether the backticks at `at` begin their line (after at most three spaces).
fn fence_line(input: &Input<'_>, body: usize, at: usize) -> bool {
    let mut start = at;
    while at - start < 3 && start > body && input.byte(start - 1) == Some(b' ') {
        start -= 1;
    }
    start == body || input.byte(start - 1) == Some(b'\n')
}

/// A fenced code block. Calls count in a ```` ```json ````, ```` ```tool_call ````,
/// ```` ```tool_code ````, ```` ```function_call ```` or unlabelled fence that holds nothing but
/// calls of known tools; any other fence is text, and markers inside it are not calls. As
/// llama.cpp's Hermes 2 Pro parser reads them (common/chat.cpp, `common_chat_parse_hermes_2_pro`,
/// and its cases in tests/test-chat.cpp), the calls may be wrapped in one of its tags
/// (```` ```json\n<function_call> {"name": …} </function_call>\n``` ````,
/// ```` ```xml\n<response>{…}</response>\n``` ````), the tag removed with the fence.
#[derive(Debug)]
pub(crate) struct FenceBlock {
    start: usize,
    calls_allowed: bool,
    state: FenceState,
}

#[derive(Debug)]
enum FenceState {
    Info {
        scanned: usize,
    },
    /// The info line is read: the calls, or a wrapping tag, begin after `body`.
    Wrapper {
        body: usize,
    },
    Values {
        body: usize,
        values: Values,
        /// Where the calls begin: `body`, or after a wrapping tag.
        from: usize,
        /// The wrapping tag's close, looked for after the calls.
        close: Option<&'static str>,
    },
}

/// The tags llama.cpp's Hermes 2 Pro parser lets wrap the calls in a fence, each with its
/// close.
const WRAPPERS: [(&str, &str); 8] = [
    ("<tool_call>", "</tool_call>"),
    ("<function_call>", "</function_call>"),
    ("<tool>", "</tool>"),
    ("<tools>", "</tools>"),
    ("<response>", "</response>"),
    ("<json>", "</json>"),
    ("<xml>", "</xml>"),
    ("<JSON>", "</JSON>"),
];

/// The wrapping tag `input` holds at `at` (after whitespace): its close and where the calls
/// begin; `Err(true)` while the input ends inside what may be one, `Err(false)` when none.
fn wrapper(input: &Input<'_>, at: usize) -> Result<(&'static str, usize), bool> {
    let available = input.bytes_from(at);
    let Some(first) = available.iter().position(|b| !b.is_ascii_whitespace()) else {
        return Err(!input.eof());
    };
    let start = at + first;
    let mut partial = false;
    for (open, close) in WRAPPERS {
        match input.prefix(start, open.as_bytes()) {
            Prefix::Yes => return Ok((close, start + open.len())),
            Prefix::Partial => partial = true,
            Prefix::No => {}
        }
    }
    Err(partial)
}

impl FenceBlock {
    pub(crate) fn new(start: usize, calls_allowed: bool) -> Self {
        Self {
            start,
            calls_allowed,
            state: FenceState::Info { scanned: start + 3 },
        }
    }
}

impl Reader for FenceBlock {
    fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        loop {
            match &mut self.state {
                FenceState::Info { scanned } => {
                    let Some(i) = memchr::memchr(b'\n', input.bytes_from(*scanned)) else {
                        if input.eof() {
                            return Step::CodeBlock { body: input.end() };
                        }
                        *scanned = input.end();
                        return Step::NeedMore;
                    };
                    let newline = *scanned + i;
                    let body = newline + 1;
                    let info = input
                        .str(self.start + 3..newline)
                        .trim()
                        .to_ascii_lowercase();
                    let callable = matches!(
                        info.as_str(),
                        "" | "json"
                            | "json5"
                            | "xml"
                            | "tool_call"
                            | "tool_calls"
                            | "tool_code"
                            | "function_call"
                            | "function_calls"
                    );
                    if !callable || !self.calls_allowed {
                        return Step::CodeBlock { body };
                    }
                    self.state = FenceState::Wrapper { body };
                }
                FenceState::Wrapper { body } => {
                    let body = *body;
                    let (close, from) = match wrapper(input, body) {
                        Ok((close, from)) => (Some(close), from),
                        Err(true) => return Step::NeedMore,
                        Err(false) => (None, body),
                    };
                    self.state = FenceState::Values {
                        body,
                        values: Values::new(from, true, true),
                        from,
                        close,
                    };
                }
                FenceState::Values {
                    body,
                    values,
                    from,
                    close,
                } => {
                    let (body, from) = (*body, *from);
                    return match values.scan(input) {
                        SeqEnd::NeedMore => Step::NeedMore,
                        SeqEnd::Ended {
                            complete: false, ..
                        } if close.is_some() => Step::Done(Outcome::cut_off(
                            self.start..input.end(),
                            Format::Json,
                            "inside the call its tag opened in the fence before its JSON is complete",
                        )),
                        SeqEnd::Ended {
                            complete: false, ..
                        } => match truncated_known(input, from, env, Format::Json) {
                            Some(outcome) => Step::Done(outcome),
                            None => Step::CodeBlock { body },
                        },
                        SeqEnd::Ended { at, .. } if values.spans.is_empty() => {
                            let _ = at;
                            Step::CodeBlock { body }
                        }
                        SeqEnd::Ended { at, .. } => {
                            // The wrapping tag's close, after whitespace.
                            let mut at = at;
                            if let Some(close) = close {
                                let gap = input.bytes_from(at);
                                let ws = gap.iter().take_while(|b| b.is_ascii_whitespace()).count();
                                match input.prefix(at + ws, close.as_bytes()) {
                                    Prefix::Yes => {
                                        let after = at + ws + close.len();
                                        let more = input.bytes_from(after);
                                        let pad = more
                                            .iter()
                                            .take_while(|b| b.is_ascii_whitespace())
                                            .count();
                                        at = after + pad;
                                    }
                                    Prefix::Partial => return Step::NeedMore,
                                    Prefix::No if at + ws == input.end() && !input.eof() => {
                                        return Step::NeedMore;
                                    }
                                    Prefix::No => return Step::CodeBlock { body },
                                }
                            }
                            let end = match input.prefix(at, b"```") {
                                Prefix::Partial => return Step::NeedMore,
                                Prefix::Yes if fence_line(input, body, at) => at + 3,
                                // A fence cut off after its calls.
                                Prefix::No if at == input.end() && input.eof() => at,
                                _ => return Step::CodeBlock { body },
                            };
                            match known_calls(input, &values.spans, env) {
                                Some(items) => Step::Done(Outcome::new(end, items)),
                                None => Step::CodeBlock { body },
                            }
                        }
                    };
                }
            }
        }
    }
}
