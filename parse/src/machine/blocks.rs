//! The call blocks, one per reader, and the one enum the machine steps them through. A leaf of
//! this folder: it knows the readers, not the machine.

use crate::block::{Env, Step};
use crate::formats::deepseek::DeepSeekBlock;
use crate::formats::end_tokens::EndTokenBlock;
use crate::formats::function::FunctionBlock;
use crate::formats::gemma::GemmaBlock;
use crate::formats::glm4::Glm4Block;
use crate::formats::harmony::HarmonyBlock;
use crate::formats::hermes::ToolCallBlock;
use crate::formats::invoke::InvokeBlock;
use crate::formats::json_blocks::{BareBlock, FenceBlock, WrapperBlock};
use crate::formats::kimi::KimiBlock;
use crate::formats::mistral::MistralBlock;
use crate::formats::react::ReactBlock;
use crate::formats::sections::SectionBlock;
use crate::formats::tags::{TagLine, TagRules};
use crate::scan::Input;

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
            Block::Section(b) => b.step(input, env),
            Block::Gemma(b) => b.step(input, env),
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
