//! Reading tool calls out of model output: realistic outputs of every format family (the case
//! files in `cases/`), the streaming parser against the whole-text parse for every way of
//! splitting each case, properties on arbitrary input, and linear-time inputs of 1 MB. The tools
//! are the knowledge-base tools of `support/kb.rs`, as a tool list with response tags;
//! tool-registry's `tests/parse.rs` reads every case with a registry of the same tools too.

#[path = "support/cases.rs"]
mod cases;
#[path = "support/kb.rs"]
mod kb;

use std::fmt::Write as _;

use cases::{Case, Tools, all_cases, markers_in, special_token_chunks};
use kb::{kb_tools, openai_tools};
use proptest::prelude::*;
use serde_json::{Value, json};
use tool_registry_parse::{
    self as parse, AnyTool, Options, Parsed, StreamDelta, StreamEvent, StreamParser, Thinking,
    ToolList, ToolSet,
};

fn parse_case(case: &Case) -> Parsed {
    parse_case_with(case, Tools::Listed)
}

fn parse_case_with(case: &Case, which: Tools) -> Parsed {
    let list;
    let tools: &dyn ToolSet = match which {
        Tools::Any => &AnyTool,
        Tools::Listed if case.openai_tools => {
            list = openai_tools();
            &list
        }
        Tools::Listed => kb_tools(),
    };
    if case.any {
        parse::any_with(&case.input, tools, case.options)
    } else {
        parse::text_with(&case.input, tools, case.options)
    }
}

fn describe(parsed: &Parsed) -> String {
    serde_json::to_string_pretty(parsed).unwrap()
}

fn check(case: &Case, parsed: &Parsed) -> Result<(), String> {
    let calls = serde_json::to_value(&parsed.calls).unwrap();
    let errors: Vec<&str> = parsed.errors.iter().map(|e| e.code()).collect();
    let unknown: Vec<&str> = parsed.unknown.iter().map(|c| c.name.as_str()).collect();
    let mut problems = String::new();
    if calls != case.calls {
        let _ = writeln!(
            problems,
            "calls: expected {}\n       got      {}",
            case.calls, calls
        );
    }
    if parsed.content != case.content {
        let _ = writeln!(
            problems,
            "content: expected {:?}\n         got      {:?}",
            case.content, parsed.content
        );
    }
    if parsed.reasoning != case.reasoning {
        let _ = writeln!(
            problems,
            "reasoning: expected {:?}\n           got      {:?}",
            case.reasoning, parsed.reasoning
        );
    }
    if errors != case.errors {
        let _ = writeln!(
            problems,
            "errors: expected {:?}, got {:?}",
            case.errors, parsed.errors
        );
    }
    if unknown != case.unknown {
        let _ = writeln!(
            problems,
            "unknown: expected {:?}, got {unknown:?}",
            case.unknown
        );
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[test]
fn every_case_parses_as_expected() {
    let cases = all_cases();
    let mut failures = Vec::new();
    for case in &cases {
        let parsed = parse_case(case);
        if let Err(problems) = check(case, &parsed) {
            failures.push(format!(
                "--- {} / {}\n{problems}{}\n",
                case.file,
                case.name,
                describe(&parsed)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Every case again without a tool list: every syntactically valid call is a call.
#[test]
fn every_case_parses_without_a_tool_list() {
    let cases = all_cases();
    let mut failures = Vec::new();
    let mut read = 0;
    for case in cases.iter().filter(|c| !c.list_only) {
        read += 1;
        let expected = case.without_list();
        let parsed = parse_case_with(case, Tools::Any);
        if let Err(problems) = check(&expected, &parsed) {
            failures.push(format!(
                "--- {} / {} (no tool list)\n{problems}{}\n",
                case.file,
                case.name,
                describe(&parsed)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {read} cases failed without a tool list:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        read * 10 >= cases.len() * 8,
        "{read} of {} cases",
        cases.len()
    );
}

#[test]
fn every_family_has_at_least_ten_cases() {
    let cases = all_cases();
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for case in &cases {
        *counts.entry(case.file.as_str()).or_default() += 1;
    }
    for (file, count) in &counts {
        assert!(
            *count >= 10,
            "{file} has {count} cases; each family needs at least 10"
        );
    }
    assert!(counts.len() >= 12, "{counts:?}");
}

// ---------------------------------------------------------------------------------------------
// Streaming: the same result for every way of splitting.

/// Runs the stream parser over `chunks` and checks what its events add up to.
fn stream_with(
    case: &Case,
    chunks: &[&str],
    options: Options,
    which: Tools,
) -> Result<Parsed, String> {
    let list;
    let tools: &dyn ToolSet = match which {
        Tools::Any => &AnyTool,
        Tools::Listed if case.openai_tools => {
            list = openai_tools();
            &list
        }
        Tools::Listed => kb_tools(),
    };
    let mut parser = StreamParser::with_options(tools, options);
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(parser.push(chunk));
    }
    events.extend(parser.finish());
    let parsed = parser.into_parsed();
    let events_seen = events.clone();

    let mut text = String::new();
    let mut reasoning = String::new();
    let mut calls = Vec::new();
    let mut unknown = Vec::new();
    let mut errors = Vec::new();
    let mut started: Option<String> = None;
    for event in events {
        match event {
            StreamEvent::Text(delta) => text.push_str(&delta),
            StreamEvent::Reasoning(delta) => reasoning.push_str(&delta),
            StreamEvent::CallStarted { name } => started = Some(name),
            StreamEvent::CallArgsDelta(_) => {
                if started.is_none() {
                    return Err("CallArgsDelta before CallStarted".into());
                }
            }
            StreamEvent::Call(call) | StreamEvent::Unknown(call)
                if started.as_deref() != Some(&call.name) =>
            {
                return Err(format!("{} arrived without its CallStarted", call.name));
            }
            StreamEvent::Call(call) => {
                started = None;
                calls.push(call);
            }
            StreamEvent::Unknown(call) => {
                started = None;
                unknown.push(call);
            }
            StreamEvent::Error(error) => errors.push(error),
            other => return Err(format!("unexpected event {other:?}")),
        }
    }
    if text != parsed.content {
        return Err(format!(
            "Text deltas {text:?} != content {:?}",
            parsed.content
        ));
    }
    if reasoning != parsed.reasoning {
        return Err(format!(
            "Reasoning deltas {reasoning:?} != reasoning {:?}",
            parsed.reasoning
        ));
    }
    if calls != parsed.calls || unknown != parsed.unknown || errors != parsed.errors {
        return Err("the events' calls, unknown calls or errors differ from the result".into());
    }
    // The same chunks through `push_with` on a parser that keeps nothing: the borrowed deltas
    // say the same, and the raw text of the calls is the same.
    let mut lean = StreamParser::with_options(tools, options).events_only();
    let (mut text, mut reasoning, mut args, mut others) =
        (String::new(), String::new(), String::new(), Vec::new());
    let mut take = |delta: StreamDelta<'_>| match delta {
        StreamDelta::Text(delta) => text.push_str(delta),
        StreamDelta::Reasoning(delta) => reasoning.push_str(delta),
        StreamDelta::CallArgs(delta) => args.push_str(delta),
        StreamDelta::Event(event) => others.push(event),
        other => panic!("unexpected delta {other:?}"),
    };
    for chunk in chunks {
        lean.push_with(chunk, &mut take);
    }
    lean.finish_with(&mut take);
    let owned_args: String = (events_seen.iter())
        .filter_map(|e| match e {
            StreamEvent::CallArgsDelta(delta) => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    let owned_others: Vec<&StreamEvent> = (events_seen.iter())
        .filter(|e| {
            !matches!(
                e,
                StreamEvent::Text(_) | StreamEvent::Reasoning(_) | StreamEvent::CallArgsDelta(_)
            )
        })
        .collect();
    if text != parsed.content
        || reasoning != parsed.reasoning
        || args != owned_args
        || others.iter().collect::<Vec<_>>() != owned_others
    {
        return Err(format!(
            "push_with on an events-only parser differs from push: text {text:?}, reasoning \
             {reasoning:?}, call text {args:?} (push: {owned_args:?}), events {others:?}"
        ));
    }
    Ok(parsed)
}

fn char_boundaries(text: &str) -> Vec<usize> {
    (0..=text.len())
        .filter(|i| text.is_char_boundary(*i))
        .collect()
}

fn whole(case: &Case, options: Options) -> Parsed {
    let mut case = case.clone();
    case.options = options;
    parse_case(&case)
}

fn assert_stream_matches(case: &Case, chunks: &[&str], options: Options, expected: &Parsed) {
    assert_stream_matches_with(case, chunks, options, expected, Tools::Listed);
}

fn assert_stream_matches_with(
    case: &Case,
    chunks: &[&str],
    options: Options,
    expected: &Parsed,
    which: Tools,
) {
    match stream_with(case, chunks, options, which) {
        Ok(parsed) => assert!(
            parsed == *expected,
            "{} / {}: streamed in {chunks:?} with {options:?}:\n{}\nwhole text:\n{}",
            case.file,
            case.name,
            describe(&parsed),
            describe(expected)
        ),
        Err(problem) => panic!(
            "{} / {}: streamed in {chunks:?}: {problem}",
            case.file, case.name
        ),
    }
}

/// Every split point of every case into two chunks, and one byte (char) at a time, under the
/// case's options and under each way of delimiting thinking.
#[test]
fn streaming_equals_whole_text_at_every_split_point() {
    for case in all_cases().iter().filter(|c| !c.any) {
        for options in [
            case.options,
            case.options.thinking(Thinking::ExplicitOnly),
            case.options.thinking(Thinking::StartsInside),
            case.options.calls_in_thinking(true),
        ] {
            let expected = whole(case, options);
            let input = case.input.as_str();
            for split in char_boundaries(input) {
                assert_stream_matches(
                    case,
                    &[&input[..split], &input[split..]],
                    options,
                    &expected,
                );
            }
            let chars: Vec<&str> = char_boundaries(input)
                .windows(2)
                .map(|w| &input[w[0]..w[1]])
                .collect();
            assert_stream_matches(case, &chars, options, &expected);
            // Token-sized chunks, at every offset of the first cut.
            let bounds = char_boundaries(input);
            for size in 2..=6 {
                for offset in 0..size.min(bounds.len() - 1) {
                    let cuts = std::iter::once(0)
                        .chain(bounds.iter().copied().skip(offset.max(1)).step_by(size))
                        .chain(std::iter::once(input.len()));
                    let mut cuts: Vec<usize> = cuts.collect();
                    cuts.dedup();
                    let chunks: Vec<&str> = cuts.windows(2).map(|w| &input[w[0]..w[1]]).collect();
                    assert_stream_matches(case, &chunks, options, &expected);
                }
            }
        }
        // Without a tool list, under the case's own options.
        if case.list_only {
            continue;
        }
        let expected = parse_case_with(case, Tools::Any);
        let input = case.input.as_str();
        for split in char_boundaries(input) {
            let chunks = [&input[..split], &input[split..]];
            assert_stream_matches_with(case, &chunks, case.options, &expected, Tools::Any);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Truncation: a call the output ends inside is never a call.

/// The tokens that open a call attempt, as every family writes them: once one is in the output,
/// an output that ends before its call is whole reports the call cut off. (Harmony's
/// `<|channel|>` opens answers too and Phi-4-mini's `functools[` an index in prose; bare JSON,
/// pythonic lists, GLM-4's name line and ReAct's action have no token: their attempt shows
/// where the parser first reports it.)
const OPENERS: &[&str] = &[
    "<tool_call>",
    "<function=",
    "<function name=",
    "<|python_tag|>",
    "<|python_start|>",
    "<|tool_call|>",
    "<|tool_calls_section_begin|>",
    "<|tool_call_section_begin|>",
    "<|tool_call_begin|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<|tool▁calls▁begin|>",
    "<|tool▁call▁begin|>",
    "<minimax:tool_call>",
    "<invoke ",
    "<｜DSML｜function_calls>",
    "<｜DSML｜tool_calls>",
    "<|DSML|function_calls>",
    "<|DSML|tool_calls>",
    "<｜DSML｜invoke ",
    "<|DSML|invoke ",
    "<start_function_call>",
    "<|tool_call>",
    "<|action_start|><|plugin|>",
    "<|START_ACTION|>",
    "<tool_calls>",
    "<|tool_call_start|>",
    "[TOOL_CALLS]",
    "<tools>",
    "<function_call>",
];

/// Where the output shows that the call spanning `span` is being written, when a token of
/// [`OPENERS`] says so: the end of the token when the span starts with it, the span's start
/// when the token (and whitespace) comes right before it.
fn attempt_shows_at(input: &str, span: &std::ops::Range<usize>) -> Option<usize> {
    let before = input[..span.start].trim_end();
    OPENERS
        .iter()
        .filter_map(|opener| {
            if input[span.start..].starts_with(opener) {
                Some(span.start + opener.len())
            } else {
                before.ends_with(opener).then_some(span.start)
            }
        })
        .max()
}

/// Splits `text` into chunks of about `size` bytes, on char boundaries.
fn token_chunks(text: &str, size: usize) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut from = 0;
    while from < text.len() {
        let mut to = (from + size).min(text.len());
        while !text.is_char_boundary(to) {
            to += 1;
        }
        chunks.push(&text[from..to]);
        from = to;
    }
    chunks
}

/// No family's markup leaks: no marker is in the content, the reasoning, a call's name or an
/// argument (string or key) unless the case expects it there; with the case's tool list and
/// without one.
#[test]
fn no_marker_leaks_into_what_a_parse_returns() {
    let mut failures = Vec::new();
    for case in all_cases() {
        for which in [Tools::Listed, Tools::Any] {
            if which == Tools::Any && case.list_only {
                continue;
            }
            let parsed = parse_case_with(&case, which);
            let expected = if which == Tools::Any {
                case.without_list()
            } else {
                case.clone()
            };
            let allowed = format!(
                "{}\n{}\n{}\n{}",
                expected.content,
                expected.reasoning,
                serde_json::to_string(&expected.calls).unwrap(),
                serde_json::to_string(&expected.any_calls).unwrap()
            );
            let mut returned = vec![parsed.content.clone(), parsed.reasoning.clone()];
            for call in parsed.calls.iter().chain(&parsed.unknown) {
                returned.push(call.name.clone());
                strings_of(&call.arguments, &mut returned);
            }
            for text in &returned {
                for marker in markers_in(text) {
                    let quoted = serde_json::to_string(marker).unwrap();
                    if !allowed.contains(marker) && !allowed.contains(&quoted[1..quoted.len() - 1])
                    {
                        failures.push(format!(
                            "{} / {} ({which:?}): `{marker}` in {text:?}",
                            case.file, case.name
                        ));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} leaks:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn strings_of(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| strings_of(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            strings_of(v, out);
        }),
        _ => {}
    }
}

/// Every case streamed as an inference server streams it: each special token a delta of its
/// own, the text between two of them one delta.
#[test]
fn streaming_at_special_token_boundaries_equals_whole_text() {
    for case in all_cases() {
        if case.any {
            continue;
        }
        let chunks = special_token_chunks(&case.input);
        assert_eq!(chunks.concat(), case.input);
        for which in [Tools::Listed, Tools::Any] {
            let whole = parse_case_with(&case, which);
            assert_stream_matches_with(&case, &chunks, case.options, &whole, which);
        }
    }
}

/// Every case cut at each char boundary strictly inside its last call (whole text, and streamed
/// in token-sized chunks; with the case's tool list and without one): the last call is never
/// returned half written, the output reports it cut off, and no markup of it is left in the
/// content.
///
/// The last call's range is its [`span`](tool_registry_parse::ParsedCall::span) in the whole
/// parse (the calls of one section that share a span are one last call). Inside it:
///
/// - Every call a cut output returns, known or unknown, is one the whole output returns before
///   the last one, or the last one exactly as the whole output has it (same name, same
///   arguments). The second holds only past the end of its arguments: where a family lets a
///   closing token be missing after complete arguments (servers cut stop tokens: `</function>`
///   after a JSON body, Gemma's `<end_function_call>`), the call is whole, not cut off. So once
///   a cut gives the whole call, every longer cut must too; before that, none may.
/// - Before that point the output reports a `truncated` error about the last call, from where
///   the attempt shows ([`attempt_shows_at`]; for families without an opening token, from the
///   first cut the parser reports it) on.
/// - Response tags are lines: a line is complete where the output ends (`RESEARCH: rust` cut
///   from `RESEARCH: rust async` is a call of its own), so tag calls are not cut here.
///
/// An array the output ends inside gives its complete calls: cut between two calls of the last
/// section (the calls that share its span), it gives those before the cut and no error.
///
/// Cases read through `parse::any` hold a provider's response: cut, it is no longer a native
/// message and is read as text, where no call may show either, half or whole, but no call
/// attempt need show; they are cut in the whole text only. About 42,000 cuts, 3 s in debug.
#[test]
fn a_call_cut_off_by_the_end_of_the_output_is_never_a_call() {
    let mut failures = Vec::new();
    let mut cuts = 0;
    for case in all_cases() {
        for which in [Tools::Listed, Tools::Any] {
            if which == Tools::Any && case.list_only {
                continue;
            }
            cuts += check_cuts(&case, which, &mut failures);
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures in {cuts} cuts:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(cuts > 1000, "{cuts} cuts");
}

/// The last call of a whole output: the calls sharing its span (one section's calls) and the
/// calls before it.
struct LastCall<'p> {
    span: std::ops::Range<usize>,
    lasts: Vec<&'p parse::ParsedCall>,
    before: Vec<&'p parse::ParsedCall>,
}

/// What an output cut inside the last call gives.
struct CutReading {
    /// A call the whole output does not have, or the last one with other arguments.
    half: bool,
    /// The last call (every call of its section) as the whole output has it.
    whole: bool,
    /// Some calls of the last section, whole, and the cut after them, between two calls (an
    /// array the output ends inside gives its complete calls).
    between: bool,
    /// A `truncated` error about the last call.
    reported: bool,
}

impl<'p> LastCall<'p> {
    /// The last call of `parsed`, unless it has none or it is a tag line.
    fn of(parsed: &'p Parsed) -> Option<Self> {
        let all: Vec<&parse::ParsedCall> = parsed.calls.iter().chain(&parsed.unknown).collect();
        let last = all.iter().max_by_key(|c| c.span.start)?;
        if last.format == parse::Format::Tag {
            return None;
        }
        let span = last.span.clone();
        let (lasts, before) = all
            .iter()
            .copied()
            .partition(|c| c.span.start == span.start);
        Some(LastCall {
            span,
            lasts,
            before,
        })
    }

    /// How `cut`, the output cut at `at`, reads.
    fn read(&self, cut: &Parsed, input: &str, at: usize) -> CutReading {
        let same = |a: &parse::ParsedCall, b: &parse::ParsedCall| {
            a.name == b.name && a.arguments == b.arguments
        };
        let returned: Vec<&parse::ParsedCall> = cut.calls.iter().chain(&cut.unknown).collect();
        let given: Vec<&&parse::ParsedCall> = (returned.iter())
            .filter(|c| !self.before.contains(c) && self.lasts.iter().any(|l| same(l, c)))
            .collect();
        let whole = (self.lasts.iter()).all(|l| given.iter().any(|c| same(l, c)));
        let after = given.iter().map(|c| c.span.end).max();
        CutReading {
            half: (returned.iter()).any(|c| !self.before.contains(c) && !given.contains(&c)),
            whole,
            between: !whole
                && after.is_some_and(|end| {
                    (input[end.min(at)..at].trim())
                        .trim_start_matches(',')
                        .trim()
                        .is_empty()
                }),
            reported: (cut.errors.iter())
                .any(|e| e.code() == "truncated" && e.span.end > self.span.start),
        }
    }
}

/// Whether streaming `case` in token-sized chunks gives `whole`; what differs if not.
fn stream_differs(case: &Case, which: Tools, whole: &Parsed) -> Option<String> {
    let chunks = token_chunks(&case.input, 4);
    match stream_with(case, &chunks, case.options, which) {
        Ok(streamed) if streamed == *whole => None,
        Ok(streamed) => Some(format!(
            "the stream differs:\n{}\nwhole text:\n{}",
            describe(&streamed),
            describe(whole)
        )),
        Err(problem) => Some(problem),
    }
}

/// [`a_call_cut_off_by_the_end_of_the_output_is_never_a_call`] for one case and tool set:
/// adds what went wrong to `failures`, returns how many cuts it made.
fn check_cuts(case: &Case, which: Tools, failures: &mut Vec<String>) -> usize {
    let whole = parse_case_with(case, which);
    let Some(last) = LastCall::of(&whole) else {
        return 0;
    };
    let span = last.span.clone();
    let shows = attempt_shows_at(&case.input, &span);
    let (mut whole_from, mut reported, mut cut_short, mut count) = (None, false, 0, 0);
    let bounds = char_boundaries(&case.input);
    for cut in bounds
        .into_iter()
        .filter(|c| span.start < *c && *c < span.end)
    {
        count += 1;
        let mut cut_case = case.clone();
        cut_case.input.truncate(cut);
        let parsed = parse_case_with(&cut_case, which);
        let here = format!(
            "{} / {} ({which:?}) cut at {cut} of {span:?}",
            case.file, case.name
        );
        if !case.any
            && let Some(problem) = stream_differs(&cut_case, which, &parsed)
        {
            failures.push(format!("{here}: {problem}"));
        }
        let expected = if which == Tools::Any {
            case.without_list()
        } else {
            case.clone()
        };
        let leaked: Vec<&str> = markers_in(&parsed.content)
            .into_iter()
            .filter(|m| !expected.content.contains(m))
            .collect();
        // A provider's response cut is not a message any more, and its text is prose.
        if !case.any && !leaked.is_empty() {
            failures.push(format!(
                "{here}: markup in the content: {leaked:?}\n{}",
                describe(&parsed)
            ));
        }
        let reading = last.read(&parsed, &case.input, cut);
        reported |= reading.reported;
        let problem = if reading.half {
            Some("returns a call the whole output does not")
        } else if reading.whole {
            whole_from.get_or_insert(cut);
            None
        } else if whole_from.is_some() {
            Some("loses the call a shorter cut gave whole")
        } else if reading.between || case.any {
            None
        } else {
            cut_short += 1;
            let due = reported || shows.is_some_and(|at| cut >= at);
            (due && !reading.reported).then_some("does not report the call cut off")
        };
        if let Some(problem) = problem {
            let written = &case.input[span.start..cut];
            failures.push(format!(
                "{here}: {problem}: {written:?}\n{}",
                describe(&parsed)
            ));
        }
    }
    if cut_short > 0 && !reported {
        failures.push(format!(
            "{} / {} ({which:?}): no cut inside {span:?} reports the call cut off",
            case.file, case.name
        ));
    }
    count
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Random multi-way splits of random cases.
    #[test]
    fn streaming_equals_whole_text_for_random_splits(pick in any::<prop::sample::Index>(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 1..12)) {
        let cases: Vec<Case> = all_cases().into_iter().filter(|c| !c.any).collect();
        let case = pick.get(&cases);
        let bounds = char_boundaries(&case.input);
        let mut points: Vec<usize> = cuts.iter().map(|c| *c.get(&bounds)).collect();
        points.push(0);
        points.push(case.input.len());
        points.sort_unstable();
        points.dedup();
        let chunks: Vec<&str> = points.windows(2).map(|w| &case.input[w[0]..w[1]]).collect();
        let expected = parse_case(case);
        assert_stream_matches(case, &chunks, case.options, &expected);
    }
}

// ---------------------------------------------------------------------------------------------
// Robustness: no panic on anything, the stream always agrees, and 1 MB of the worst input
// completes (the scanner never searches the same bytes twice; the benchmark has the timings).

/// Fragments that open, close and confuse every format, for random soups of them.
const FRAGMENTS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=get_weather>",
    "</function>",
    "<parameter=city>",
    "</parameter>",
    "<parameter=days>",
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "\"",
    "'",
    "\\",
    ":",
    ",",
    ";",
    "=",
    "\n",
    " ",
    "\n\n",
    "<think>",
    "</think>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "functools[",
    "```json\n",
    "```",
    "```python\n",
    "\"name\"",
    "\"arguments\"",
    "\"parameters\"",
    "\"get_weather\"",
    "\"city\"",
    "\"Paris\"",
    "get_weather(",
    "get_time()",
    "city=",
    "RESEARCH: ",
    "LEARNING: factual ",
    "NOTE: ",
    "RATE: 4 ",
    "<|python_tag|>",
    "<|python_start|>",
    "<|python_end|>",
    "<|eom_id|>",
    "<|tool_call|>",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "function",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "functions.get_time:0",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "é",
    "🎉",
    "`",
    "x",
    "1",
    "2.5",
    "true",
    "None",
    "null",
    "<",
    ">",
    "<b>",
    "search",
    "\r\n",
    "<|channel|>",
    "analysis<|message|>",
    "commentary to=functions.get_weather <|constrain|>json<|message|>",
    "<|start|>assistant",
    "<|end|>",
    "<|call|>",
    "<minimax:tool_call>",
    "<invoke name=\"get_weather\">",
    "<parameter name=\"city\">",
    "</invoke>",
    "<｜DSML｜function_calls>",
    "<｜DSML｜invoke name=\"get_time\">",
    "</｜DSML｜invoke>",
    "<|tool▁calls▁begin|>",
    "<｜tool_calls_begin｜>",
    "get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
    "]<]minimax[>[",
    "]<]minimax[>[<tool_call>",
    "]<]minimax[>[<invoke name=\"search\">",
    "]<]minimax[>[<query>",
    "]<]minimax[>[</query>",
    "<item>1</item>",
    "<|DSML|invoke name=\"get_time\">",
    " | ",
    "[TOOL_CALLS] get_time [ARGS] ",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|START_RESPONSE|>",
    "<|action_start|><|plugin|>",
    "<|action_end|>",
    "<tool_calls>",
    "</tool_calls>",
    "<answer>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<start_function_call>call:get_weather{city:<escape>",
    "<escape>",
    "<end_function_call>",
    "<|tool_call>call:get_time{",
    "<tool_call|>",
    "<|channel>thought",
    "<channel|>",
    "get_weather\n",
    "<|assistant|>",
    "\nAction: get_weather\n",
    "Action Input: ",
    "Thought: ",
];

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..48).prop_map(|parts| parts.concat())
}

fn options_strategy() -> impl Strategy<Value = Options> {
    (0..3u8, any::<bool>()).prop_map(|(thinking, calls)| {
        let thinking = [
            Thinking::Auto,
            Thinking::ExplicitOnly,
            Thinking::StartsInside,
        ][thinking as usize];
        Options::new().thinking(thinking).calls_in_thinking(calls)
    })
}

fn random_chunks<'a>(text: &'a str, cuts: &[prop::sample::Index]) -> Vec<&'a str> {
    let bounds = char_boundaries(text);
    let mut points: Vec<usize> = cuts.iter().map(|c| *c.get(&bounds)).collect();
    points.push(0);
    points.push(text.len());
    points.sort_unstable();
    points.dedup();
    points.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

fn soup_case(input: String, options: Options) -> Case {
    Case::new("soup", "random", input, options)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// Random soups of markers and JSON fragments: the stream agrees with the whole text
    /// however it is split, under every option.
    #[test]
    fn streaming_equals_whole_text_on_marker_soup(
        text in soup(),
        options in options_strategy(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..16),
    ) {
        let case = soup_case(text, options);
        let expected = parse_case(&case);
        assert_stream_matches(&case, &random_chunks(&case.input, &cuts), options, &expected);
        let chars: Vec<&str> = char_boundaries(&case.input).windows(2).map(|w| &case.input[w[0]..w[1]]).collect();
        assert_stream_matches(&case, &chars, options, &expected);
    }

    /// Arbitrary text never panics, and streams the same.
    #[test]
    fn arbitrary_text_never_panics(
        text in any::<String>(),
        options in options_strategy(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
    ) {
        let case = soup_case(text, options);
        let expected = parse_case(&case);
        prop_assert!(expected.content.len() <= case.input.len());
        assert_stream_matches(&case, &random_chunks(&case.input, &cuts), options, &expected);
        let _ = parse::any(&case.input, kb_tools());
    }

    /// The parts of the result are always what they say: calls of known tools with object
    /// arguments, unknown calls of unknown tools, spans inside the text.
    #[test]
    fn results_are_well_formed(text in soup(), options in options_strategy()) {
        let parsed = parse::text_with(&text, kb_tools(), options);
        for call in &parsed.calls {
            prop_assert!(kb_tools().contains(&call.name), "{call:?}");
            prop_assert!(call.arguments.is_object());
            prop_assert!(call.span.start <= call.span.end && call.span.end <= text.len());
        }
        for call in &parsed.unknown {
            prop_assert!(!kb_tools().contains(&call.name), "{call:?}");
        }
        for error in &parsed.errors {
            prop_assert!(error.span.end <= text.len());
            prop_assert!(!error.message.is_empty());
        }
        // The content's ends keep spaces, never a line break (a template's separator).
        let content = parsed.content.as_str();
        let lead = &content[..content.len() - content.trim_start().len()];
        let tail = &content[content.trim_end().len()..];
        prop_assert!(!lead.contains(['\n', '\r']) && !tail.contains(['\n', '\r']), "{content:?}");
    }
}

/// 1 MB of each adversarial pattern parses whole and streamed. Nothing here is timed: the
/// scanner is linear by construction (forward-only searches, no re-scan after a failed block),
/// and a quadratic path would not finish.
#[test]
fn one_megabyte_of_adversarial_input_completes() {
    const MB: usize = 1 << 20;
    let repeat = |unit: &str| unit.repeat(MB / unit.len() + 1);
    let inputs: Vec<(&str, String)> = vec![
        ("nested brackets", repeat("[")),
        ("nested braces", repeat("{")),
        ("nested mixed", repeat("[{(")),
        ("open strings", repeat("\"")),
        ("quotes and escapes", repeat("'\\\"")),
        (
            "balanced nesting",
            format!("{}{}", "[".repeat(MB / 2), "]".repeat(MB / 2)),
        ),
        ("unclosed tool_call", repeat("<tool_call>")),
        ("unclosed tool_call json", repeat("<tool_call>{")),
        (
            "tool_call then whitespace",
            format!("<tool_call>{}", " ".repeat(MB)),
        ),
        ("unclosed function", repeat("<function=a>")),
        (
            "unclosed parameters",
            format!(
                "<tool_call><function=get_weather>{}",
                repeat("<parameter=city>x")
            ),
        ),
        (
            "parameters that never close",
            format!(
                "<function=f><parameter=a>{}</function>",
                repeat("x<parameter=b>y")
            ),
        ),
        (
            "glm value full of closing tags",
            format!(
                "<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>{}",
                repeat("</arg_value>x")
            ),
        ),
        (
            "glm keys that never close",
            format!("<tool_call>f\n{}", repeat("<arg_key>a")),
        ),
        (
            "k3 value full of closing tags",
            format!(
                "<|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"a\" type=\"string\"<|sep|>{}",
                repeat("<|close|>argument<|sep|>x")
            ),
        ),
        ("k3 call tags", repeat("<|open|>call tool=\"f\"")),
        ("k3 thoughts", repeat("<|open|>think<|sep|>")),
        (
            "gemma string full of end tokens",
            format!("<|tool_call>call:f{{a:<|\"|>{}", repeat("<tool_call|>x")),
        ),
        ("mistral thoughts", repeat("[THINK]")),
        (
            "harmony recipients",
            format!(" to=functions.f{}", repeat("<|channel|>x")),
        ),
        (
            "dsml v4.1 invokes",
            format!("<｜DSML｜ calls>{}", repeat("<｜DSML｜ invoke name=\"f\">")),
        ),
        ("unclosed think", repeat("<think>")),
        (
            "plain dsml then whitespace",
            format!("<function_calls>{}", " ".repeat(MB)),
        ),
        (
            "hunyuan's token then whitespace",
            format!("<tool_calls>{}", " ".repeat(MB)),
        ),
        (
            "plain dsml self-closing invokes",
            format!("<tool_calls>{}", repeat("<invoke name=\"f\"/>")),
        ),
        (
            "call tags in an unclosed thought",
            format!("<think>{}", repeat("<tool_call>")),
        ),
        (
            "python code without its stop token",
            format!(
                "<|start|>assistant to=python<|channel|>analysis<|message|>{}",
                repeat("x<|ca")
            ),
        ),
        (
            "fence wrapping tags",
            format!("```json\n{}", repeat("<function_call>")),
        ),
        ("lone think ends", repeat("</think>")),
        ("think then text", format!("<think>{}", repeat("a "))),
        ("mistral markers", repeat("[TOOL_CALLS]")),
        ("mistral names", repeat("[TOOL_CALLS]a")),
        (
            "mistral long name",
            format!("[TOOL_CALLS]{}", "a".repeat(MB)),
        ),
        ("functools", repeat("functools[")),
        ("functools objects", repeat("functools[{")),
        ("json fences", repeat("```json\n{")),
        ("fences", repeat("```\n")),
        ("one long line", "x".repeat(MB)),
        ("long tag line", format!("RESEARCH: {}", "x".repeat(MB))),
        ("colons on one line", repeat("a: b: ")),
        ("tags without colons", repeat("RESEARCH")),
        ("tag lines", repeat("RESEARCH: x\n")),
        ("backslashes", repeat("\\")),
        ("whitespace", repeat(" \n")),
        ("python tags", repeat("<|python_tag|>")),
        ("python tag lists", repeat("<|python_tag|>[")),
        ("deepseek sections", repeat("<｜tool▁calls▁begin｜>")),
        (
            "deepseek calls",
            format!("<｜tool▁calls▁begin｜>{}", repeat("<｜tool▁call▁begin｜>x")),
        ),
        ("kimi sections", repeat("<|tool_calls_section_begin|>")),
        ("pythonic opens", repeat("[get_weather(")),
        ("glm names", repeat("<tool_call>get_weather<arg_key>")),
        (
            "glm values",
            format!("<tool_call>f{}", repeat("<arg_key>a</arg_key><arg_value>b")),
        ),
        (
            "m3 elements nested deep",
            format!(
                "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"create_event\">{}",
                repeat("]<]minimax[>[<reminder>")
            ),
        ),
        (
            "m3 elements that never close",
            format!(
                "<minimax:tool_call><invoke name=\"search\">{}</invoke></minimax:tool_call>",
                repeat("<a><b>x</a>")
            ),
        ),
        (
            "m2 elements balanced deep",
            format!(
                "<minimax:tool_call><invoke name=\"create_event\">{}x{}</invoke></minimax:tool_call>",
                "<a>".repeat(MB / 8),
                "</a>".repeat(MB / 8)
            ),
        ),
        ("m3 section tokens", repeat("]<]minimax[>[<tool_call>")),
        (
            "deepseek calls without begin tokens",
            format!("<｜tool▁calls▁begin｜>{}", repeat("f<｜tool▁sep｜>{}")),
        ),
        (
            "json objects and pipes",
            repeat("{\"name\": \"get_time\"} |"),
        ),
        ("quoted markers", repeat("`<tool_call>`")),
        ("angle brackets", repeat("<")),
        (
            "bare call soup",
            format!(
                "{}{}",
                "[{\"name\": \"get_time\", \"arguments\": ".repeat(MB / 40),
                "}"
            ),
        ),
    ];
    for (name, input) in &inputs {
        let parsed = parse::text(input, kb_tools());
        assert!(parsed.content.len() <= input.len(), "{name}");
        let mut stream =
            StreamParser::with_options(kb_tools(), Options::new().thinking(Thinking::ExplicitOnly));
        let mut streamed = 0;
        let mut at = 0;
        while at < input.len() {
            let mut end = (at + 4096).min(input.len());
            while !input.is_char_boundary(end) {
                end += 1;
            }
            streamed += stream.push(&input[at..end]).len();
            at = end;
        }
        streamed += stream.finish().len();
        let whole = parse::text_with(
            input,
            kb_tools(),
            Options::new().thinking(Thinking::ExplicitOnly),
        );
        assert!(stream.into_parsed() == whole, "{name}: the stream differs");
        let _ = streamed;
    }
}

// ---------------------------------------------------------------------------------------------
// The API around the parser.

#[test]
fn stream_holds_back_only_what_could_start_a_call() {
    let tools = ["get_weather"];
    let mut stream = StreamParser::new(&tools);
    assert_eq!(
        stream.push("Hello wor"),
        [StreamEvent::Text("Hello wor".into())]
    );
    // Trailing whitespace waits for the next word; it is trimmed if the output ends.
    assert_eq!(stream.push("ld. "), [StreamEvent::Text("ld.".into())]);
    // `<tool` could start `<tool_call>`.
    assert_eq!(
        stream.push("Next: <tool"),
        [StreamEvent::Text(" Next:".into())]
    );
    assert_eq!(
        stream.push("box> is not a call"),
        [StreamEvent::Text(" <toolbox> is not a call".into())]
    );
    let events = stream.push("\n<tool_call>\n{\"name\": \"get_weather\", \"argum");
    assert_eq!(
        events,
        [
            StreamEvent::CallStarted {
                name: "get_weather".into()
            },
            StreamEvent::CallArgsDelta("<tool_call>\n{\"name\": \"get_weather\", \"argum".into())
        ]
    );
    let events = stream.push("ents\": {\"city\": \"Oslo\"}}\n</tool_call>");
    assert!(
        matches!(&events[0], StreamEvent::CallArgsDelta(delta) if delta.ends_with("</tool_call>"))
    );
    assert!(
        matches!(&events[1], StreamEvent::Call(call) if call.arguments == json!({"city": "Oslo"}))
    );
    assert_eq!(stream.finish(), []);
}

#[test]
fn stream_announces_names_before_the_arguments_arrive() {
    let registry = kb_tools();
    let mut stream = StreamParser::new(registry);
    assert_eq!(
        stream.push("<tool_call>\n<function=write_file>\n<parameter=path>\n"),
        [
            StreamEvent::CallStarted {
                name: "write_file".into()
            },
            StreamEvent::CallArgsDelta(
                "<tool_call>\n<function=write_file>\n<parameter=path>\n".into()
            ),
        ]
    );
    let mut stream = StreamParser::new(registry);
    assert_eq!(
        stream.push("[TOOL_CALLS]search[ARGS]{\"qu"),
        [
            StreamEvent::CallStarted {
                name: "search".into()
            },
            StreamEvent::CallArgsDelta("[TOOL_CALLS]search[ARGS]{\"qu".into()),
        ]
    );
    // A tag line is held until it ends.
    let mut stream = StreamParser::new(registry);
    assert_eq!(
        stream.push("Sure.\nRESEA"),
        [StreamEvent::Text("Sure.".into())]
    );
    assert_eq!(stream.push("RCH: rust"), []);
    let events = stream.push("\nDone.");
    assert!(
        matches!(&events[..], [StreamEvent::CallStarted { .. }, StreamEvent::Call(call), StreamEvent::Text(text)] if call.name == "research" && text == "\nDone.")
    );
}

#[test]
fn auto_thinking_in_a_stream_waits_for_the_thought_to_end() {
    let tools = ["get_time"];
    let mut stream = StreamParser::with_options(&tools, Options::default());
    assert_eq!(stream.push("Okay, the user wants"), []);
    assert_eq!(
        stream.push(" the time.\n</think>\n\nIt is"),
        [
            StreamEvent::Reasoning("Okay, the user wants the time.".into()),
            StreamEvent::Text("It is".into()),
        ]
    );
    let mut stream =
        StreamParser::with_options(&tools, Options::new().thinking(Thinking::StartsInside));
    assert_eq!(stream.push("Okay"), [StreamEvent::Reasoning("Okay".into())]);
}

#[test]
fn crlf_line_endings() {
    let parsed = parse::text(
        "Sure.\r\nRESEARCH: rust\r\nSOURCE: a\r\nBye.\r\n",
        kb_tools(),
    );
    let names: Vec<&str> = parsed.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["research", "source"]);
    assert_eq!(parsed.calls[0].arguments, json!({"query": "rust"}));
    assert_eq!(parsed.content, "Sure.\r\nBye.");

    let parsed = parse::text(
        "<tool_call>\r\n{\"name\": \"get_time\", \"arguments\": {}}\r\n</tool_call>\r\n",
        kb_tools(),
    );
    assert_eq!(parsed.calls.len(), 1);
    assert_eq!(parsed.content, "");

    let parsed = parse::text(
        "<tool_call>\r\n<function=get_weather>\r\n<parameter=city>\r\nLima\r\n</parameter>\r\n</function>\r\n</tool_call>",
        kb_tools(),
    );
    assert_eq!(parsed.calls[0].arguments, json!({"city": "Lima"}));
}

#[test]
fn formats_can_be_restricted() {
    let text = "[TOOL_CALLS]get_time[ARGS]{}\n<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"a\"}}</tool_call>";
    let only_hermes = Options::new().formats(parse::Formats::only([parse::Format::Hermes]));
    let parsed = parse::text_with(text, kb_tools(), only_hermes);
    assert_eq!(parsed.calls.len(), 1);
    assert_eq!(parsed.calls[0].name, "search");
    assert_eq!(parsed.content, "[TOOL_CALLS]get_time[ARGS]{}");

    let tags_only = parse::tags(
        "RESEARCH: x\n<tool_call>{\"name\": \"get_time\"}</tool_call>",
        kb_tools(),
    );
    assert_eq!(tags_only.calls.len(), 1);
    assert_eq!(
        tags_only.content,
        "<tool_call>{\"name\": \"get_time\"}</tool_call>"
    );

    let none = parse::text_with(
        "<think>a</think>RESEARCH: x",
        kb_tools(),
        Options::new().formats(parse::Formats::NONE),
    );
    assert!(none.calls.is_empty());
    assert_eq!(
        (none.reasoning.as_str(), none.content.as_str()),
        ("a", "RESEARCH: x")
    );
}

#[test]
fn calls_carry_format_span_and_id() {
    let text = "Hi.\n[TOOL_CALLS]search[CALL_ID]abc123xyz[ARGS]{\"query\": \"q\"}";
    let parsed = parse::text(text, kb_tools());
    let call = &parsed.calls[0];
    assert_eq!(call.format, parse::Format::Mistral);
    assert_eq!(call.id.as_deref(), Some("abc123xyz"));
    assert_eq!(
        &text[call.span.clone()],
        "[TOOL_CALLS]search[CALL_ID]abc123xyz[ARGS]{\"query\": \"q\"}"
    );
}

#[test]
fn parsed_serializes_in_the_cli_shape() {
    let parsed = parse::text(
        "<think>t</think>Ok.\n<tool_call>{\"name\": \"nope\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"get_time\"",
        kb_tools(),
    );
    let value = serde_json::to_value(&parsed).unwrap();
    assert_eq!(value["calls"], json!([]));
    assert_eq!(value["unknown"], json!([{"name": "nope", "arguments": {}}]));
    assert_eq!(value["reasoning"], "t");
    // The call cut off is only in its error.
    assert_eq!(value["content"], "Ok.");
    assert_eq!(value["errors"][0]["code"], "truncated");
    assert_eq!(value["errors"][0]["format"], "hermes");
    let message = value["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("cut off") && message.contains("nothing was called"),
        "{message}"
    );
}

#[test]
fn tag_errors_say_how_to_write_the_tag() {
    let parsed = parse::text("LEARNING: trivia cats sleep a lot", kb_tools());
    assert_eq!(parsed.errors[0].code(), "tag_mismatch");
    assert_eq!(
        parsed.errors[0].message,
        "the line starts with `LEARNING:` but does not fit the tag `learning` (pattern `(factual|communication|structured_data)\\s+(.+)`); write it as `LEARNING: [category] [what was learned]` on a line of its own"
    );
}

#[test]
fn tool_lists_read_several_shapes_and_say_what_is_wrong() {
    let body = json!({"model": "m", "tools": [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]});
    assert_eq!(
        ToolList::from_json(&body)
            .unwrap()
            .names()
            .collect::<Vec<_>>(),
        ["a"]
    );
    let anthropic = json!([{"name": "b", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}]);
    let list = ToolList::from_json(&anthropic).unwrap();
    let parsed = parse::text(
        "<function=b>\n<parameter=n>\n4\n</parameter>\n</function>",
        &list,
    );
    assert_eq!(parsed.calls[0].arguments, json!({"n": 4}));

    let error = ToolList::from_json(&json!([{"type": "function", "function": {}}])).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("tool 0 of the list has no `name`"),
        "{error}"
    );
    let error = ToolList::from_json_str("not json").unwrap_err();
    assert!(error.to_string().contains("not valid JSON"), "{error}");
    let error = ToolList::from_json(&json!(42)).unwrap_err();
    assert!(error.to_string().contains("JSON array of tools"), "{error}");
}

#[test]
fn names_without_schemas_keep_text_values_as_strings() {
    let names = vec!["get_weather".to_owned()];
    let parsed = parse::text(
        "<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>",
        &names,
    );
    assert_eq!(parsed.calls[0].arguments, json!({"days": "3"}));
}

/// A stream that keeps nothing reports the same through its events.
#[test]
fn events_only_streams_report_the_same() {
    for case in all_cases().iter().filter(|c| !c.any) {
        let expected = parse_case(case);
        let list;
        let tools: &dyn ToolSet = if case.openai_tools {
            list = openai_tools();
            &list
        } else {
            kb_tools()
        };
        let mut stream = StreamParser::with_options(tools, case.options).events_only();
        let mut events = Vec::new();
        let bounds = char_boundaries(&case.input);
        let starts: Vec<usize> = bounds
            .chunks(7)
            .map(|c| c[0])
            .chain([case.input.len()])
            .collect();
        for pair in starts.windows(2) {
            events.extend(stream.push(&case.input[pair[0]..pair[1]]));
        }
        events.extend(stream.finish());
        let mut text = String::new();
        let mut calls = Vec::new();
        for event in events {
            match event {
                StreamEvent::Text(delta) => text.push_str(&delta),
                StreamEvent::Call(call) => calls.push(call),
                _ => {}
            }
        }
        assert_eq!(text, expected.content, "{} / {}", case.file, case.name);
        assert_eq!(calls, expected.calls, "{} / {}", case.file, case.name);
        assert_eq!(stream.into_parsed(), Parsed::default());
    }
}

/// With a cap, each list keeps at most that many items and counts the rest; the text is what it
/// would be without the cap, in the whole text and in a stream alike.
#[test]
fn a_cap_keeps_the_first_calls_and_counts_the_rest() {
    let mut tools = ToolList::default();
    tools.add("known", json!({ "type": "object" }));
    let mut output = String::from("Before.\n");
    for i in 0..50 {
        let _ = writeln!(
            output,
            r#"<tool_call>{{"name": "known", "arguments": {{"i": {i}}}}}</tool_call>"#
        );
        let _ = writeln!(
            output,
            r#"<tool_call>{{"name": "other", "arguments": {{}}}}</tool_call>"#
        );
        output.push_str("<tool_call>{\"name\": \"known\", \"arguments\": 5}</tool_call>\n");
    }
    output.push_str("After.");
    let capped = parse::any_with(&output, &tools, Options::new().max_calls(3));
    let whole = parse::any_with(&output, &tools, Options::new());
    assert_eq!(capped.calls, whole.calls[..3]);
    assert_eq!(capped.unknown, whole.unknown[..3]);
    assert_eq!(capped.errors, whole.errors[..3]);
    assert_eq!(capped.content, whole.content);
    let left_out = capped.left_out;
    assert_eq!(
        (left_out.calls, left_out.unknown, left_out.errors),
        (47, 47, 47)
    );
    assert!(whole.left_out.is_empty());
    let printed = serde_json::to_value(&capped).unwrap();
    assert_eq!(
        printed["left_out"],
        json!({"calls": 47, "unknown": 47, "errors": 47})
    );
    assert!(
        serde_json::to_value(&whole)
            .unwrap()
            .get("left_out")
            .is_none()
    );
    // A stream in small chunks finds the same.
    let mut stream = StreamParser::with_options(&tools, Options::new().max_calls(3));
    let mut events = Vec::new();
    for chunk in output.as_bytes().chunks(7) {
        events.extend(stream.push(std::str::from_utf8(chunk).unwrap()));
    }
    events.extend(stream.finish());
    let calls = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::Call(_)))
        .count();
    assert_eq!(calls, 3, "no event for a call past the cap");
    assert_eq!(stream.into_parsed(), capped);
}

/// How deep a value nests: its lists and objects, one inside another.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// One bound on how deep a value read from model output nests, the registry's argument bound too: the readers
/// that read nested values themselves (pythonic calls, Gemma, MiniMax M3's child elements) read
/// a value of `MAX_DEPTH` levels, the arguments' object the first, and refuse a deeper one or
/// keep what lies below the bound as text.
#[test]
fn values_nest_up_to_the_one_depth_bound() {
    use parse::MAX_DEPTH;
    let lists = |levels: usize| format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
    let refused = |parsed: &Parsed| {
        parsed.calls.is_empty()
            && parsed.errors.len() == 1
            && parsed.errors[0]
                .message
                .contains("nests deeper than 127 levels")
    };

    let pythonic = |levels| format!("<|python_start|>[f(a={})]<|python_end|>", lists(levels));
    let gemma = |levels| {
        format!(
            "<start_function_call>call:f{{a:{}}}<end_function_call>",
            lists(levels)
        )
    };
    for (family, text) in [
        ("pythonic", &pythonic as &dyn Fn(usize) -> String),
        ("gemma", &gemma),
    ] {
        // The arguments' object and `MAX_DEPTH - 1` lists in it.
        let parsed = parse::text(&text(MAX_DEPTH - 1), &AnyTool);
        assert_eq!(parsed.calls.len(), 1, "{family}: {:?}", parsed.errors);
        assert_eq!(depth(&parsed.calls[0].arguments), MAX_DEPTH, "{family}");
        let parsed = parse::text(&text(MAX_DEPTH), &AnyTool);
        assert!(refused(&parsed), "{family}: {parsed:?}");
    }

    let ns = "]<]minimax[>[";
    let m3 = |levels: usize| {
        format!(
            "{ns}<tool_call>{ns}<invoke name=\"f\">{}x{}{ns}</invoke>{ns}</tool_call>",
            format!("{ns}<a>").repeat(levels),
            format!("{ns}</a>").repeat(levels),
        )
    };
    let innermost = |arguments: &Value| {
        let mut value = arguments;
        while let Some(inner) = value.get("a") {
            value = inner;
        }
        value.clone()
    };
    // `levels` elements: the arguments' object and `levels - 1` objects.
    let parsed = parse::text(&m3(MAX_DEPTH), &AnyTool);
    assert_eq!(depth(&parsed.calls[0].arguments), MAX_DEPTH);
    assert_eq!(innermost(&parsed.calls[0].arguments), "x");
    let parsed = parse::text(&m3(MAX_DEPTH + 1), &AnyTool);
    assert_eq!(depth(&parsed.calls[0].arguments), MAX_DEPTH);
    assert_eq!(
        innermost(&parsed.calls[0].arguments),
        format!("{ns}<a>x{ns}</a>")
    );
}
