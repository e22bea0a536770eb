//! Response tags (the knowledge-base bot spec): a line `TAG: argument` is a call of the tool
//! declared with `#[tool(tag = "TAG")]`; the tool's pattern (compiled into [`TagRules`], which a
//! tool set's [`TagSet`](crate::TagSet) holds) splits the argument into its groups. The
//! prompt block that teaches a model the tags is the registry's (`tool_registry::format`).

use std::fmt;
use std::sync::Arc;

use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::block::{Env, Item, Outcome, RawCall, Reader, Step};
use crate::scan::Input;
use crate::typing::{Kinds, schema_arg_kinds, typed_value};
use crate::vocab::{ErrorKind, Format};

/// The response-tag form of a tool: lines `PREFIX: <pattern>` in a model's text are calls.
///
/// `#[tool(tag = "...")]` declares one; a program that only reads model output writes it as a
/// literal and builds a [`TagSet`](crate::TagSet) from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TagForm {
    /// The literal tag, e.g. `RESEARCH`.
    pub prefix: &'static str,
    /// The regex for what follows `PREFIX:` and whitespace, e.g. `(.+)`.
    pub pattern: &'static str,
    /// The argument each capture group binds to, in order.
    pub groups: &'static [&'static str],
    /// How the prompt shows the tag, e.g. `RESEARCH: [query]`.
    pub example: &'static str,
}

/// One tool with a tag form, as [`TagSet::new`](crate::TagSet::new) takes it.
#[derive(Debug, Clone, Copy)]
pub struct TagTool<'a> {
    /// The tool's name, which a tag line calls.
    pub name: &'a str,
    /// Its tag form.
    pub form: &'a TagForm,
    /// Whether its tag lines leave the content ([`Parsed::content`](crate::Parsed::content)).
    pub strip_from_display: bool,
    /// The JSON Schema of its arguments, which types the captured groups (`"3"` becomes `3` for
    /// an integer argument); without it, every group is a string.
    pub schema: Option<&'a Value>,
}

impl<'a> TagTool<'a> {
    /// A tool whose tag lines leave the content and whose groups are strings.
    pub fn new(name: &'a str, form: &'a TagForm) -> Self {
        TagTool {
            name,
            form,
            strip_from_display: true,
            schema: None,
        }
    }

    /// With the JSON Schema of its arguments, which types the captured groups.
    #[must_use]
    pub fn schema(mut self, schema: &'a Value) -> Self {
        self.schema = Some(schema);
        self
    }

    /// With its tag lines kept in the content (`false`) or removed from it (`true`, the default).
    #[must_use]
    pub fn strip_from_display(mut self, strip: bool) -> Self {
        self.strip_from_display = strip;
        self
    }
}

/// A `TAG: argument` line, read by the patterns of the parse's tools.
pub(crate) struct TagLine {
    start: usize,
    scanned: usize,
    tags: Arc<TagRules>,
}

impl fmt::Debug for TagLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TagLine")
            .field("start", &self.start)
            .field("scanned", &self.scanned)
            .finish_non_exhaustive()
    }
}

impl TagLine {
    /// The line that starts at `start`.
    pub(crate) fn new(start: usize, tags: Arc<TagRules>) -> Self {
        Self {
            start,
            scanned: start,
            tags,
        }
    }
}

impl Reader for TagLine {
    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        let line_end = match memchr::memchr(b'\n', input.bytes_from(self.scanned)) {
            Some(i) => self.scanned + i,
            None if input.eof() => input.end(),
            None => {
                self.scanned = input.end();
                return Step::NeedMore;
            }
        };
        let line = input.str(self.start..line_end).trim_end();
        Step::Done(match self.tags.read_line(line) {
            Ok(call) => Outcome {
                end: line_end,
                items: vec![Item::found(
                    RawCall {
                        name: call.tool,
                        arguments: call.arguments,
                        id: None,
                        typed: true,
                    },
                    Format::Tag,
                    self.start..line_end,
                )],
                keep_text: !call.strip,
            },
            Err(message) => Outcome::error(
                self.start..line_end,
                Format::Tag,
                ErrorKind::TagMismatch,
                message,
            ),
        })
    }
}

/// The response-tag patterns of a set of tools, compiled into one anchored regex.
pub(crate) struct TagRules {
    rules: Vec<Rule>,
    /// Each distinct `PREFIX`, with the byte the scanner looks for after it (`:`).
    pub(crate) prefixes: Vec<String>,
    combined: Option<Regex>,
    /// The index of each rule's wrapping group in `combined`.
    wrappers: Vec<usize>,
    /// Per rule, when the combined regex could not be built (two patterns with the same group
    /// name): `\A(?:PREFIX):\s+(?:pattern)\z`.
    singles: Vec<Regex>,
}

struct Rule {
    tool: String,
    prefix: String,
    pattern: String,
    example: String,
    groups: Vec<String>,
    kinds: Vec<Kinds>,
    strip: bool,
    captures: usize,
}

impl Rule {
    /// The rule of a tool's tag form; `None` without one, or when its pattern does not compile
    /// (the tag is then ignored, with a warning).
    fn of(tool: &TagTool<'_>) -> Option<Self> {
        let tag = tool.form;
        let schema = tool.schema;
        let captures = match Regex::new(tag.pattern) {
            Ok(regex) => regex.captures_len() - 1,
            Err(error) => {
                tracing::warn!(tool = tool.name, %error, "the tag pattern does not compile; the tag is ignored");
                return None;
            }
        };
        let kinds = tag
            .groups
            .iter()
            .map(|g| schema.map(|s| schema_arg_kinds(s, g)).unwrap_or_default())
            .collect();
        Some(Rule {
            tool: tool.name.to_owned(),
            prefix: tag.prefix.to_owned(),
            pattern: tag.pattern.to_owned(),
            example: tag.example.to_owned(),
            groups: tag.groups.iter().map(|g| (*g).to_owned()).collect(),
            kinds,
            strip: tool.strip_from_display,
            captures,
        })
    }
}

/// Every rule's `PREFIX:\s+pattern` as one alternative of one anchored regex, and the index of
/// each rule's wrapping group; `None` when the patterns cannot share one regex (two use the
/// same group name).
fn combined_regex(rules: &[Rule]) -> (Option<Regex>, Vec<usize>) {
    let mut alternatives = Vec::new();
    let mut wrappers = Vec::new();
    let mut next_group = 1;
    for rule in rules {
        alternatives.push(format!(
            r"({}:\s+(?:{}))",
            regex::escape(&rule.prefix),
            rule.pattern
        ));
        wrappers.push(next_group);
        next_group += 1 + rule.captures;
    }
    let combined = Regex::new(&format!(r"\A(?:{})\z", alternatives.join("|"))).ok();
    (combined, wrappers)
}

/// A tag line read: the tool, its arguments, and whether the line leaves the display.
pub(crate) struct TagCall {
    pub(crate) tool: String,
    pub(crate) arguments: Value,
    pub(crate) strip: bool,
}

impl TagRules {
    /// The rules of the tools that declare a tag; `None` when none does.
    pub(crate) fn build<'a>(tools: impl IntoIterator<Item = TagTool<'a>>) -> Option<Self> {
        let rules: Vec<Rule> = tools
            .into_iter()
            .filter_map(|tool| Rule::of(&tool))
            .collect();
        if rules.is_empty() {
            return None;
        }
        let mut prefixes: Vec<String> = rules.iter().map(|r| r.prefix.clone()).collect();
        prefixes.sort();
        prefixes.dedup();
        let (combined, wrappers) = combined_regex(&rules);
        let singles = if combined.is_some() {
            Vec::new()
        } else {
            rules
                .iter()
                .filter_map(|r| {
                    Regex::new(&format!(
                        r"\A(?:{}):\s+(?:{})\z",
                        regex::escape(&r.prefix),
                        r.pattern
                    ))
                    .ok()
                })
                .collect()
        };
        Some(TagRules {
            rules,
            prefixes,
            combined,
            wrappers,
            singles,
        })
    }

    /// Whether a rule calls the tool `name`.
    pub(crate) fn calls(&self, name: &str) -> bool {
        self.rules.iter().any(|rule| rule.tool == name)
    }

    /// Whether `line` (a whole line or the start of one) begins with `TAG:` for a known tag.
    pub(crate) fn starts_tag(&self, line: &[u8]) -> bool {
        self.prefixes
            .iter()
            .any(|p| line.starts_with(p.as_bytes()) && line.get(p.len()) == Some(&b':'))
    }

    /// Whether `partial`, the start of a line seen so far, could still become `TAG:`.
    pub(crate) fn could_start(&self, partial: &[u8]) -> bool {
        self.prefixes.iter().any(|p| {
            let tag = p.as_bytes();
            if partial.len() <= tag.len() {
                tag.starts_with(partial)
            } else {
                partial.starts_with(tag) && partial[tag.len()] == b':'
            }
        })
    }

    /// Reads a line that starts with a known `TAG:` (trailing whitespace already trimmed).
    /// `Err` carries the message for a line that does not fit its tag's pattern.
    pub(crate) fn read_line(&self, line: &str) -> Result<TagCall, String> {
        let found =
            match &self.combined {
                Some(regex) => regex.captures(line).and_then(|caps| {
                    let i = self.wrappers.iter().position(|&w| caps.get(w).is_some())?;
                    let first = self.wrappers[i] + 1;
                    Some((
                        i,
                        (0..self.rules[i].captures)
                            .map(|k| caps.get(first + k).map(|m| m.as_str()))
                            .collect::<Vec<_>>(),
                    ))
                }),
                None => self.rules.iter().zip(&self.singles).enumerate().find_map(
                    |(i, (rule, regex))| {
                        let caps = regex.captures(line)?;
                        Some((
                            i,
                            (0..rule.captures)
                                .map(|k| caps.get(1 + k).map(|m| m.as_str()))
                                .collect(),
                        ))
                    },
                ),
            };
        let Some((i, values)) = found else {
            let rule = self
                .rules
                .iter()
                .find(|r| {
                    line.starts_with(&r.prefix)
                        && line.as_bytes().get(r.prefix.len()) == Some(&b':')
                })
                .or(self.rules.first());
            return Err(match rule {
                Some(rule) => format!(
                    "the line starts with `{}:` but does not fit the tag `{}` (pattern `{}`); write it as `{}` on a line of its own",
                    rule.prefix, rule.tool, rule.pattern, rule.example
                ),
                None => "the line does not fit any tag".to_owned(),
            });
        };
        let rule = &self.rules[i];
        let mut arguments = Map::new();
        for ((group, kinds), value) in rule.groups.iter().zip(&rule.kinds).zip(values) {
            if let Some(value) = value {
                arguments.insert(group.clone(), typed_value(value, *kinds));
            }
        }
        Ok(TagCall {
            tool: rule.tool.clone(),
            arguments: Value::Object(arguments),
            strip: rule.strip,
        })
    }
}
