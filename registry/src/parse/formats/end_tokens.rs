//! End-of-turn tokens (`<|eot_id|>`, `<|im_end|>`, …) at the end of the output: removed when
//! nothing but whitespace (and more of them) follows, or when the next Harmony message's
//! `<|start|>` does (gpt-oss ends each message with `<|end|>`).

use crate::parse::block::{Outcome, Step};
use crate::parse::markers::{EndToken, end_token_at};
use crate::parse::scan::{Input, Prefix};

/// What starts the next message of a Harmony conversation.
const NEXT_MESSAGE: &str = "<|start|>";

/// End-of-turn tokens: removed when nothing but whitespace (and more of them) follows.
#[derive(Debug)]
pub(crate) struct EndTokenBlock {
    pub(crate) start: usize,
    pub(crate) cursor: usize,
}

impl EndTokenBlock {
    pub(crate) fn step(&mut self, input: &Input<'_>) -> Step {
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
