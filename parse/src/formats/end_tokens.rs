//! End-of-turn tokens (`<|eot_id|>`, `<|im_end|>`, …) at the end of the output: removed when
//! nothing but whitespace (and more of them) follows, or when the next Harmony message's
//! `<|start|>` does (gpt-oss ends each message with `<|end|>`). The list of the tokens is
//! here; the marker table scans for the ones that matter before the end, and the readers that
//! end where an end-of-turn token may follow ask [`end_token_at`].

use crate::block::{Env, Outcome, Reader, Step};
use crate::scan::{Input, Prefix, is_ws};

/// End-of-turn tokens that raw output (special tokens not skipped) ends with. At the very end
/// of the output they are removed; anywhere else they are text.
pub(crate) const END_TOKENS: &[&str] = &[
    "<|eot_id|>",
    "<|eom_id|>",
    "<|im_end|>",
    "<|end|>",
    "</s>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<|return|>",
    "<|python_end|>",
    "<｜end▁of▁sentence｜>",
    "<|end▁of▁sentence|>",
    "<|call|>",
    "[e~[",
    "<|END_OF_TURN_TOKEN|>",
    "<end_of_turn>",
    "<|user|>",
    "<|observation|>",
    "<turn|>",
    "<start_function_response>",
    "<|tool_response>",
    "<seed:eos>",
];

/// What starts the next message of a Harmony conversation.
const NEXT_MESSAGE: &str = "<|start|>";

/// End-of-turn tokens: removed when nothing but whitespace (and more of them) follows.
#[derive(Debug)]
pub(crate) struct EndTokenBlock {
    start: usize,
    cursor: usize,
}

impl EndTokenBlock {
    /// The tokens from the one at `start` on.
    pub(crate) fn new(start: usize) -> Self {
        Self {
            start,
            cursor: start,
        }
    }
}

impl Reader for EndTokenBlock {
    fn step(&mut self, input: &Input<'_>, _env: &Env<'_>) -> Step {
        loop {
            let at = input.skip_ws(self.cursor);
            if at == input.end() {
                if !input.eof() {
                    self.cursor = at;
                    return Step::NeedMore;
                }
                return Step::Done(Outcome {
                    end: at,
                    items: Vec::new(),
                    keep_text: false,
                });
            }
            match end_token_at(input, at) {
                EndToken::Whole(len) => self.cursor = at + len,
                EndToken::Partial => {
                    self.cursor = at;
                    return Step::NeedMore;
                }
                // The output ends inside another end token or the next message's start:
                // markup either way.
                EndToken::No
                    if END_TOKENS
                        .iter()
                        .chain(&[NEXT_MESSAGE])
                        .any(|t| input.ends_inside(at, t.as_bytes())) =>
                {
                    return Step::Done(Outcome {
                        end: at,
                        items: Vec::new(),
                        keep_text: false,
                    });
                }
                EndToken::No => {
                    return match input.prefix(at, NEXT_MESSAGE.as_bytes()) {
                        Prefix::Yes => Step::Done(Outcome {
                            end: at,
                            items: Vec::new(),
                            keep_text: false,
                        }),
                        Prefix::Partial => {
                            self.cursor = at;
                            Step::NeedMore
                        }
                        // Text follows: the token is part of it.
                        Prefix::No => Step::NotACall {
                            resume: self.start + 1,
                        },
                    };
                }
            }
        }
    }
}

/// What stands at a position, as far as end-of-turn tokens go.
pub(crate) enum EndToken {
    /// A whole token of this many bytes.
    Whole(usize),
    /// The start of one, cut off by the end of the input so far.
    Partial,
    /// None.
    No,
}

/// The end-of-turn token at `at`, if any.
pub(crate) fn end_token_at(input: &Input<'_>, at: usize) -> EndToken {
    let mut partial = false;
    for token in END_TOKENS {
        match input.prefix(at, token.as_bytes()) {
            Prefix::Yes => return EndToken::Whole(token.len()),
            Prefix::Partial => partial = true,
            Prefix::No => {}
        }
    }
    if partial {
        EndToken::Partial
    } else {
        EndToken::No
    }
}

/// Where the end-of-turn tokens that end `text` (with whitespace between and after them)
/// begin; `text.len()` when it does not end with one.
pub(crate) fn trailing_end_tokens(text: &[u8]) -> usize {
    let trim = |end: usize| end - text[..end].iter().rev().take_while(|b| is_ws(**b)).count();
    let mut cut = text.len();
    loop {
        let end = trim(cut);
        if !matches!(text[..end].last(), Some(b'>' | b'[')) {
            return cut;
        }
        match END_TOKENS
            .iter()
            .find(|token| text[..end].ends_with(token.as_bytes()))
        {
            Some(token) => cut = end - token.len(),
            None => return cut,
        }
    }
}
