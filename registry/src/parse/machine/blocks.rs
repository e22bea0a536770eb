//! The call blocks, one per format family: entering one where the scanner found its marker,
//! stepping it, and what its outcome leaves in the parse.

use super::*;
use crate::parse::sink::List;

fn deepseek_tokens(ascii: bool) -> &'static deepseek::Tokens {
    if ascii {
        &deepseek::ASCII
    } else {
        &deepseek::FULLWIDTH
    }
}

/// The call blocks, one per format family.
#[derive(Debug)]
pub(super) enum Block {
    ToolCall(ToolCallBlock),
    Function(FunctionBlock),
    Wrapper(WrapperBlock),
    Bare(BareBlock),
    Fence(FenceBlock),
    Mistral(MistralBlock),
    DeepSeek(DeepSeekBlock),
    Kimi(KimiBlock),
    Harmony(HarmonyBlock),
    Invoke(InvokeBlock),
    Section(SectionBlock),
    Gemma(GemmaBlock),
    Glm4(Glm4Block),
    React(ReactBlock),
    TagLine(TagLine),
    EndToken(EndTokenBlock),
}

impl Block {
    pub(super) fn start(&self) -> usize {
        match self {
            Block::ToolCall(b) => b.start(),
            Block::Function(b) => b.start(),
            Block::Wrapper(b) => b.start(),
            Block::Bare(b) => b.start(),
            Block::Fence(b) => b.start(),
            Block::Mistral(b) => b.start(),
            Block::DeepSeek(b) => b.start(),
            Block::Kimi(b) => b.start(),
            Block::Harmony(b) => b.start(),
            Block::Invoke(b) => b.start(),
            Block::Section(b) => b.start(),
            Block::Gemma(b) => b.start(),
            Block::Glm4(b) => b.start(),
            Block::React(b) => b.start(),
            Block::TagLine(b) => b.start,
            Block::EndToken(b) => b.start,
        }
    }

    pub(super) fn step(
        &mut self,
        input: &Input<'_>,
        env: &Env<'_>,
        tags: Option<&TagRules>,
    ) -> Step {
        match self {
            Block::ToolCall(b) => b.step(input, env),
            Block::Function(b) => b.step(input, env),
            Block::Wrapper(b) => b.step(input, env),
            Block::Bare(b) => b.step(input, env),
            Block::Fence(b) => b.step(input, env),
            Block::Mistral(b) => b.step(input),
            Block::DeepSeek(b) => b.step(input),
            Block::Kimi(b) => b.step(input),
            Block::Harmony(b) => b.step(input),
            Block::Invoke(b) => b.step(input, env),
            Block::Section(b) => b.step(input),
            Block::Gemma(b) => b.step(input),
            Block::Glm4(b) => b.step(input, env),
            Block::React(b) => b.step(input, env),
            Block::TagLine(b) => b.step(input, tags),
            Block::EndToken(b) => b.step(input),
        }
    }

    /// The name of the call being written, once the block is surely a call attempt.
    pub(super) fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        match self {
            Block::ToolCall(b) => b.name_hint(input),
            Block::Function(b) => b.name_hint(),
            Block::Wrapper(b) => b.name_hint(input),
            Block::Mistral(b) => b.name_hint(input),
            Block::Harmony(b) => b.name_hint(),
            Block::Glm4(b) => b.name_hint(),
            Block::React(b) => b.name_hint(),
            _ => None,
        }
    }
}

impl Machine {
    pub(super) fn marker_enabled(&self, marker: Marker, formats: Formats) -> bool {
        match marker {
            Marker::Think(_) => self.region == Region::Content,
            // A thought's end is taken above, in `scan_text`, when it closes the open thought.
            Marker::ThinkEnd | Marker::ThoughtEnd => false,
            Marker::Harmony => formats.contains(Format::Harmony),
            Marker::ToolCall => {
                formats.contains(Format::Hermes)
                    || formats.contains(Format::Function)
                    || formats.contains(Format::Glm)
            }
            Marker::Function => formats.contains(Format::Function),
            Marker::PythonTag => formats.contains(Format::PythonTag),
            Marker::PythonStart => formats.contains(Format::Pythonic),
            Marker::Granite | Marker::Functools => formats.contains(Format::Json),
            Marker::Kimi | Marker::KimiSingular => formats.contains(Format::Kimi),
            Marker::DeepSeekCalls { .. } | Marker::DeepSeekCall { .. } => {
                formats.contains(Format::DeepSeek)
            }
            Marker::MiniMax => formats.contains(Format::MiniMax),
            Marker::Dsml(_) => formats.contains(Format::Dsml),
            Marker::Section(section) => formats.contains(section.format()),
            Marker::Gemma(_) => formats.contains(Format::Gemma),
            Marker::Drop { format, .. } => formats.contains(format),
            Marker::Mistral => formats.contains(Format::Mistral),
            Marker::Tools | Marker::FunctionCall => formats.contains(Format::Json),
            Marker::FunctionAttr => formats.contains(Format::Function),
            Marker::LineValue => {
                self.region == Region::Content
                    && (formats.contains(Format::Json) || formats.contains(Format::Pythonic))
            }
            Marker::Fence | Marker::EndToken => true,
        }
    }

    /// Whether a marker the automaton found at `at` opens something here: it is enabled,
    /// not quoted in backticks, a fence starts its line, `functools` is a whole word.
    pub(super) fn marker_counts(
        &self,
        input: &Input<'_>,
        at: usize,
        marker: Marker,
        env: &Env<'_>,
    ) -> bool {
        if !self.marker_enabled(marker, env.formats) {
            return false;
        }
        match marker {
            Marker::Fence => self.fence_at_line_start(input, at),
            Marker::Functools => {
                !Self::backtick_before(input, at)
                    && (at == 0
                        || input
                            .byte(at - 1)
                            .is_none_or(|b| !(b.is_ascii_alphanumeric() || b == b'_')))
            }
            _ => !Self::backtick_before(input, at),
        }
    }

    pub(super) fn enter(&mut self, input: &Input<'_>, marker: Marker, at: usize) {
        let block = match marker {
            Marker::Think(thought) => return self.start_think(at + thought.open().len(), thought),
            Marker::ThinkEnd | Marker::ThoughtEnd => return self.end_think(at),
            Marker::Harmony => Block::Harmony(HarmonyBlock::new(at)),
            Marker::ToolCall => Block::ToolCall(ToolCallBlock::new(at)),
            Marker::Function => Block::Function(FunctionBlock::new(at, false)),
            Marker::PythonTag => Block::Wrapper(WrapperBlock::new(at, Wrapper::PythonTag)),
            Marker::PythonStart => Block::Wrapper(WrapperBlock::new(at, Wrapper::PythonStart)),
            Marker::Granite => Block::Wrapper(WrapperBlock::new(at, Wrapper::Granite)),
            Marker::Functools => Block::Wrapper(WrapperBlock::new(at, Wrapper::Functools)),
            Marker::Kimi => Block::Kimi(KimiBlock::new(at, false)),
            Marker::KimiSingular => Block::Kimi(KimiBlock::new(at, true)),
            Marker::DeepSeekCalls { ascii } => {
                Block::DeepSeek(DeepSeekBlock::new(at, false, deepseek_tokens(ascii)))
            }
            Marker::DeepSeekCall { ascii } => {
                Block::DeepSeek(DeepSeekBlock::new(at, true, deepseek_tokens(ascii)))
            }
            Marker::MiniMax => Block::Invoke(InvokeBlock::new(at, &invoke::MINIMAX)),
            Marker::Dsml(i) => Block::Invoke(InvokeBlock::new(at, &invoke::DSML[usize::from(i)])),
            Marker::Section(section) => Block::Section(SectionBlock::new(at, section)),
            Marker::Gemma(dialect) => Block::Gemma(GemmaBlock::new(at, dialect)),
            Marker::Drop { len, .. } => return self.drop_token(at, usize::from(len)),
            Marker::Mistral => Block::Mistral(MistralBlock::new(at)),
            Marker::Tools => Block::Wrapper(WrapperBlock::new(at, Wrapper::Tools)),
            Marker::FunctionCall => Block::Wrapper(WrapperBlock::new(at, Wrapper::FunctionCall)),
            Marker::FunctionAttr => Block::Function(FunctionBlock::with_name_attribute(at)),
            Marker::LineValue => {
                // The line break stays with the text before.
                self.commit(input, at + 1);
                Block::Bare(BareBlock::line(at + 1))
            }
            Marker::EndToken => Block::EndToken(EndTokenBlock {
                start: at,
                cursor: at,
            }),
            Marker::Fence => Block::Fence(FenceBlock::new(
                at,
                self.region == Region::Content || self.options.calls_in_thinking,
            )),
        };
        self.enter_block(input, block);
    }

    pub(super) fn enter_block(&mut self, _input: &Input<'_>, block: Block) {
        self.pos = block.start();
        self.mode = Mode::Block(block);
        self.announced = None;
        self.hint_off = false;
    }

    #[inline(never)]
    pub(super) fn step_block(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        let Mode::Block(block) = &mut self.mode else {
            return false;
        };
        let start = block.start();
        let step = block.step(input, env, self.tags.as_deref().map(TagSet::rules));
        let hint = match &step {
            Step::NeedMore if self.sink.streaming && self.announced.is_none() && !self.hint_off => {
                block.name_hint(input)
            }
            _ => None,
        };
        if hint.is_none() && input.end() - start > HINT_WINDOW {
            self.hint_off = true;
        }
        let is_bare = matches!(block, Block::Bare(_));
        let is_name_line = matches!(block, Block::Glm4(_));
        match step {
            Step::NeedMore => {
                if let Some(name) = hint {
                    self.sink
                        .event(StreamEvent::CallStarted { name: name.clone() });
                    self.announced = Some(name);
                    self.args_from = start;
                }
                if self.announced.is_some() {
                    self.args_delta(input.end());
                }
                false
            }
            Step::NotACall { resume } => {
                if is_bare {
                    self.bare_off = true;
                }
                if is_name_line {
                    self.name_line_off = true;
                }
                self.pos = resume;
                self.mode = self.text_mode();
                true
            }
            Step::CodeBlock { body } => {
                self.fence_close = Finder::new("```");
                self.fence_from = start;
                self.pos = body;
                self.mode = Mode::FenceText;
                true
            }
            Step::Done(outcome) => {
                self.finish_block(input, env, outcome);
                true
            }
        }
    }

    pub(super) fn args_delta(&mut self, upto: usize) {
        if upto > self.args_from {
            self.sink.args(self.args_from..upto);
            self.args_from = upto;
        }
    }

    pub(super) fn finish_block(&mut self, input: &Input<'_>, env: &Env<'_>, outcome: Outcome) {
        let end = outcome.end;
        if self.check_hidden_text(input, self.text_from..end) {
            return;
        }
        if self.announced.is_some() {
            self.args_delta(end);
        }
        if outcome.keep_text {
            self.commit(input, end);
        } else {
            self.sink.cut(self.region, false);
            self.text_from = end;
            self.line_start_at = end;
        }
        if self.region == Region::Content {
            self.bare_off = true;
        }
        let mut announced = self.announced.take();
        for item in outcome.items {
            match item {
                Item::Found { call, format, span } => {
                    let RawCall {
                        mut name,
                        arguments,
                        id,
                    } = call;
                    // Llama 3.1's built-in tools are called as `brave_search.call(query=...)`.
                    if let Some(stripped) = name.strip_suffix(".call")
                        && !env.tools.is_tool(&name)
                    {
                        name = stripped.to_owned();
                    }
                    let known = env.tools.is_tool(&name);
                    if !self
                        .sink
                        .keep(if known { List::Calls } else { List::Unknown })
                    {
                        crate::call::dispose(arguments);
                        continue;
                    }
                    if announced.take().as_deref() != Some(name.as_str()) {
                        self.sink
                            .event(StreamEvent::CallStarted { name: name.clone() });
                    }
                    let call = ParsedCall {
                        name,
                        arguments,
                        id,
                        format,
                        span,
                    };
                    if known {
                        if self.sink.events_only {
                            self.sink.event(StreamEvent::Call(call));
                        } else {
                            self.sink.event(StreamEvent::Call(call.clone()));
                            self.sink.calls.push(call);
                        }
                    } else {
                        if self.sink.events_only {
                            self.sink.event(StreamEvent::Unknown(call));
                        } else {
                            self.sink.event(StreamEvent::Unknown(call.clone()));
                            self.sink.unknown.push(call);
                        }
                    }
                }
                Item::Thought(thought) => {
                    if self.region == Region::Content {
                        self.start_think(end, thought);
                        return;
                    }
                }
                Item::Error(error) => {
                    if !self.sink.keep(List::Errors) {
                        continue;
                    }
                    if self.sink.events_only {
                        self.sink.event(StreamEvent::Error(error));
                    } else {
                        self.sink.event(StreamEvent::Error(error.clone()));
                        self.sink.errors.push(error);
                    }
                }
            }
        }
        self.pos = end;
        self.text_from = end;
        self.mode = self.text_mode();
    }
}
