//! Entering what a marker opens: whether the marker is enabled by the formats and counts where
//! it stands (not in backticks, a fence at a line start), and the call block, thought or
//! removed token it starts.

use super::blocks::Block;
use super::{Machine, Mode};
use crate::block::Env;
use crate::formats::deepseek::{self, DeepSeekBlock};
use crate::formats::end_tokens::EndTokenBlock;
use crate::formats::function::FunctionBlock;
use crate::formats::gemma::GemmaBlock;
use crate::formats::harmony::HarmonyBlock;
use crate::formats::hermes::ToolCallBlock;
use crate::formats::invoke::{self, InvokeBlock};
use crate::formats::json_blocks::{BareBlock, FenceBlock, Wrapper, WrapperBlock};
use crate::formats::kimi::KimiBlock;
use crate::formats::mistral::MistralBlock;
use crate::formats::sections::SectionBlock;
use crate::markers::{MINIMAX_NS, Marker};
use crate::scan::Input;
use crate::sink::Region;
use crate::vocab::{Format, Formats};

fn deepseek_tokens(ascii: bool) -> &'static deepseek::Tokens {
    if ascii {
        &deepseek::ASCII
    } else {
        &deepseek::FULLWIDTH
    }
}

impl Machine {
    /// Removes a token that only wraps the answer; the text around it joins as around a block.
    pub(super) fn drop_token(&mut self, at: usize, len: usize) {
        self.sink.cut(self.region, false);
        self.text_from = at + len;
        self.pos = self.text_from;
        self.line_start_at = self.pos;
    }

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
            Marker::MiniMax | Marker::MiniMaxM3 => formats.contains(Format::MiniMax),
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

    /// The marker a hit at `at` stands for, with where it begins: `<tool_call>` after MiniMax
    /// M3's namespace token (not yet handed on as text) is M3's section, from the token.
    pub(super) fn namespaced(
        &self,
        input: &Input<'_>,
        marker: Marker,
        at: usize,
        env: &Env<'_>,
    ) -> (Marker, usize) {
        if marker == Marker::ToolCall
            && let Some(ns) = at.checked_sub(MINIMAX_NS.len())
            && ns >= self.text_from
            && env.formats.contains(Format::MiniMax)
            && input.bytes_from(ns).starts_with(MINIMAX_NS.as_bytes())
        {
            return (Marker::MiniMaxM3, ns);
        }
        (marker, at)
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
            Marker::DeepSeekCalls { ascii, len } => Block::DeepSeek(DeepSeekBlock::new(
                at,
                usize::from(len),
                false,
                deepseek_tokens(ascii),
            )),
            Marker::DeepSeekCall { ascii } => {
                let tokens = deepseek_tokens(ascii);
                Block::DeepSeek(DeepSeekBlock::new(
                    at,
                    tokens.call_begin.len(),
                    true,
                    tokens,
                ))
            }
            Marker::MiniMax => Block::Invoke(InvokeBlock::new(at, &invoke::MINIMAX)),
            Marker::MiniMaxM3 => Block::Invoke(InvokeBlock::new(at, &invoke::MINIMAX_M3)),
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
}
