//! The case files: `=== name` blocks of a model output and what parsing it must give.

use std::path::Path;

use serde_json::{Value, json};
use tool_registry_parse::{Options, Thinking};

/// One case: a model output and what parsing it must give.
#[derive(Debug, Clone)]
pub struct Case {
    pub file: String,
    pub name: String,
    pub input: String,
    pub options: Options,
    pub openai_tools: bool,
    pub any: bool,
    pub calls: Value,
    pub content: String,
    pub reasoning: String,
    pub errors: Vec<String>,
    pub unknown: Vec<String>,
    /// What parsing without a tool list ([`AnyTool`]) gives, where it differs: `--- any calls`,
    /// `--- any content`, `--- any errors`.
    pub any_calls: Option<Value>,
    pub any_content: Option<String>,
    pub any_errors: Option<Vec<String>>,
    /// Parsed with the tool list only: `--- options: list_only`, for cases about what a list
    /// decides (a tag line, a name that must be known).
    pub list_only: bool,
    /// The generation prompt the output follows (`--- prompt`), given to the parse with
    /// [`Options::generation_prompt`].
    pub prompt: Option<String>,
}

impl Case {
    /// A case with nothing expected yet.
    pub fn new(file: &str, name: &str, input: String, options: Options) -> Case {
        Case {
            file: file.to_owned(),
            name: name.to_owned(),
            input,
            options,
            openai_tools: false,
            any: false,
            calls: json!([]),
            content: String::new(),
            reasoning: String::new(),
            errors: Vec::new(),
            unknown: Vec::new(),
            any_calls: None,
            any_content: None,
            any_errors: None,
            list_only: false,
            prompt: None,
        }
    }

    /// The case as it reads without a tool list: its `any` sections where it has them, else
    /// what it expects with the list, every unknown call becoming a call.
    pub fn without_list(&self) -> Case {
        let mut case = self.clone();
        case.unknown = Vec::new();
        if let Some(calls) = &self.any_calls {
            case.calls = calls.clone();
        }
        if let Some(content) = &self.any_content {
            case.content = content.clone();
        }
        if let Some(errors) = &self.any_errors {
            case.errors = errors.clone();
        }
        case
    }
}

/// Which tools a case is parsed with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tools {
    /// The case's own: the registry's, or the OpenAI list (`tools=openai`).
    Listed,
    /// None: [`AnyTool`].
    Any,
}

/// Reads `=== name` cases with `--- input`, `--- prompt`, `--- calls`, `--- content`, `--- reasoning`,
/// `--- errors`, `--- unknown` sections and an optional `--- options: ...` line. A missing
/// section expects nothing (no calls, empty content, ...). Text sections end before the next
/// section line, without their last newline.
pub fn read_cases(file: &str, text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    for block in text.split("\n=== ").skip(1) {
        let (name, rest) = block.split_once('\n').unwrap_or((block, ""));
        let mut case = Case::new(file, name.trim(), String::new(), Options::default());
        let mut section: Option<String> = None;
        let mut body = String::new();
        let finish = |case: &mut Case, section: &Option<String>, body: &mut String| {
            let text = body.strip_suffix('\n').unwrap_or(body).to_owned();
            body.clear();
            match section.as_deref() {
                None => {}
                Some("input") => case.input = text,
                Some("content") => case.content = text,
                Some("prompt") => {
                    case.options = case.options.generation_prompt(&text);
                    case.prompt = Some(text);
                }
                Some("reasoning") => case.reasoning = text,
                Some("calls") => {
                    case.calls = serde_json::from_str(&text).unwrap_or_else(|e| {
                        panic!("{file}: {}: calls are not JSON: {e}", case.name)
                    })
                }
                Some("errors") => {
                    case.errors =
                        serde_json::from_str(&text).expect("errors: a JSON array of codes")
                }
                Some("unknown") => {
                    case.unknown =
                        serde_json::from_str(&text).expect("unknown: a JSON array of names")
                }
                Some("any calls") => {
                    case.any_calls = Some(serde_json::from_str(&text).unwrap_or_else(|e| {
                        panic!("{file}: {}: any calls are not JSON: {e}", case.name)
                    }))
                }
                Some("any content") => case.any_content = Some(text),
                Some("any errors") => {
                    case.any_errors =
                        Some(serde_json::from_str(&text).expect("any errors: a JSON array"))
                }
                Some(other) => panic!("{file}: {}: unknown section `{other}`", case.name),
            }
        };
        for line in rest.split_inclusive('\n') {
            let bare = line.trim_end_matches('\n');
            if let Some(options) = bare.strip_prefix("--- options:") {
                for option in options.split_whitespace() {
                    match option {
                        "thinking=starts_inside" => {
                            case.options = case.options.thinking(Thinking::StartsInside)
                        }
                        "thinking=tags_only" => {
                            case.options = case.options.thinking(Thinking::ExplicitOnly)
                        }
                        "calls_in_thinking" => case.options = case.options.calls_in_thinking(true),
                        "tools=openai" => case.openai_tools = true,
                        "any" => case.any = true,
                        "list_only" => case.list_only = true,
                        other => panic!("{file}: {}: unknown option `{other}`", case.name),
                    }
                }
                continue;
            }
            if let Some(name) = bare.strip_prefix("--- ")
                && [
                    "input",
                    "prompt",
                    "calls",
                    "content",
                    "reasoning",
                    "errors",
                    "unknown",
                    "any calls",
                    "any content",
                    "any errors",
                ]
                .contains(&name)
            {
                finish(&mut case, &section, &mut body);
                section = Some(name.to_owned());
                continue;
            }
            body.push_str(line);
        }
        finish(&mut case, &section, &mut body);
        cases.push(case);
    }
    cases
}

pub fn all_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../parse/tests/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the case folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            read_cases(&name, &std::fs::read_to_string(path).expect("case file"))
        })
        .collect()
}

/// Every family's markers: the tokens and tags that are markup, never text a user reads, a
/// tool's name, or an argument, unless written inside a complete value.
pub const MARKERS: &[&str] = &[
    "<tool_call>",
    "</tool_call>",
    "<function=",
    "</function>",
    "<parameter=",
    "</parameter>",
    "<arg_key>",
    "</arg_key>",
    "<arg_value>",
    "</arg_value>",
    "<seed:tool_call>",
    "</seed:tool_call>",
    "<seed:think>",
    "</seed:think>",
    "<think>",
    "</think>",
    "<|python_tag|>",
    "<|python_start|>",
    "<|python_end|>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "[THINK]",
    "[/THINK]",
    "<｜tool▁calls▁begin｜>",
    "<｜tool▁call▁begin｜>",
    "<｜tool▁sep｜>",
    "<｜tool▁call▁end｜>",
    "<｜tool▁calls▁end｜>",
    "<｜end▁of▁sentence｜>",
    "｜DSML｜",
    "|DSML|",
    "<|tool_calls_section_begin|>",
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<|tool_calls_section_end|>",
    "<|open|>",
    "<|close|>",
    "<|sep|>",
    "<|end_of_msg|>",
    "<|start|>",
    "<|channel|>",
    "<|message|>",
    "<|constrain|>",
    "<|call|>",
    "<|end|>",
    "<|return|>",
    "<minimax:tool_call>",
    "</minimax:tool_call>",
    "]<]minimax[>[",
    "<|action_start|>",
    "<|plugin|>",
    "<|action_end|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<tool_calls>",
    "</tool_calls>",
    "<|tool_call_start|>",
    "<start_function_call>",
    "<end_function_call>",
    "<|tool_call>",
    "<tool_call|>",
    "<|\"|>",
    "<escape>",
    "<|channel>",
    "<channel|>",
    "<|im_end|>",
    "<|eot_id|>",
    "<|eom_id|>",
];

/// The markers in `text`.
pub fn markers_in(text: &str) -> Vec<&'static str> {
    MARKERS
        .iter()
        .copied()
        .filter(|m| text.contains(m))
        .collect()
}

/// `text` split as a tokenizer's special tokens split it: each special token (`<|…|>`,
/// `<｜…｜>`, `[UPPER]`, `<tag>`, `</tag>`, `<|tag>`, `<tag|>`, a marker) a chunk of its own, the
/// text between them one chunk each.
pub fn special_token_chunks(text: &str) -> Vec<&str> {
    let mut chunks = Vec::new();
    let mut from = 0;
    let mut at = 0;
    while at < text.len() {
        let token = special_token_at(&text[at..]);
        match token {
            Some(len) => {
                if at > from {
                    chunks.push(&text[from..at]);
                }
                chunks.push(&text[at..at + len]);
                at += len;
                from = at;
            }
            None => at += text[at..].chars().next().map_or(1, char::len_utf8),
        }
    }
    if from < text.len() {
        chunks.push(&text[from..]);
    }
    chunks
}

fn special_token_at(rest: &str) -> Option<usize> {
    if let Some(m) = MARKERS
        .iter()
        .filter(|m| rest.starts_with(**m))
        .max_by_key(|m| m.len())
    {
        return Some(m.len());
    }
    let close = match rest.as_bytes().first()? {
        b'<' => '>',
        b'[' => ']',
        _ => return None,
    };
    let end = rest
        .char_indices()
        .take(48)
        .skip(1)
        .find(|(_, c)| *c == close || c.is_whitespace() || *c == '<')?;
    let inner = &rest[1..end.0];
    let special = end.1 == close
        && !inner.is_empty()
        && (inner.starts_with('|')
            || inner.ends_with('|')
            || inner.starts_with('｜')
            || inner.starts_with('/')
            || (close == ']'
                && inner
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b == b'_' || b == b'/'))
            || inner
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b':'));
    special.then_some(end.0 + 1)
}
