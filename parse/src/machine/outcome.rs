//! A call block stepped, and what its outcome leaves in the parse: the calls (known or
//! unknown), the errors, a thought that follows, the block's text kept or cut out, and the
//! stream's `CallStarted` and `CallArgsDelta` events while it is read.

use std::ops::Range;

use super::blocks::Kind;
use super::{HINT_WINDOW, Machine, Mode};
use crate::block::{Env, Item, Outcome, RawCall, Step};
use crate::event::StreamEvent;
use crate::scan::{Finder, Input};
use crate::sink::{List, Region};
use crate::typing::type_json_arguments;
use crate::vocab::{Format, ParseError, ParsedCall};

impl Machine {
    #[inline(never)]
    pub(super) fn step_block(&mut self, input: &Input<'_>, env: &Env<'_>) -> bool {
        let Mode::Block(block) = &mut self.mode else {
            return false;
        };
        let start = block.start;
        let step = block.step(input, env);
        let hint = match &step {
            Step::NeedMore if self.sink.streaming && self.announced.is_none() && !self.hint_off => {
                block.name_hint(input)
            }
            _ => None,
        };
        if hint.is_none() && input.end() - start > HINT_WINDOW {
            self.hint_off = true;
        }
        let kind = block.kind;
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
                match kind {
                    Kind::Bare => self.bare_off = true,
                    Kind::NameLine => self.name_line_off = true,
                    Kind::Marked => {}
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
            if matches!(&self.mode, Mode::Block(block) if block.line) {
                self.sink.assembler(self.region).take_line();
            }
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
                    self.found_call(env, call, format, span, &mut announced);
                }
                Item::Thought(thought) => {
                    if self.region == Region::Content {
                        self.start_think(end, thought);
                        return;
                    }
                }
                Item::Error(error) => self.found_error(error),
            }
        }
        self.pos = end;
        self.text_from = end;
        self.mode = self.text_mode();
    }

    /// A call the block read: a call or an unknown one, or dropped past the cap; its
    /// `CallStarted` goes out first unless the stream announced it already (`announced`).
    fn found_call(
        &mut self,
        env: &Env<'_>,
        call: RawCall,
        format: Format,
        span: Range<usize>,
        announced: &mut Option<String>,
    ) {
        let RawCall {
            mut name,
            mut arguments,
            id,
            typed,
        } = call;
        // Llama 3.1's built-in tools are called as `brave_search.call(query=...)`.
        if let Some(stripped) = name.strip_suffix(".call")
            && !env.tools.is_tool(&name)
        {
            name = stripped.to_owned();
        }
        // A call read from JSON is typed by its tool's schema; a schema found also says the
        // tool is known, so one lookup serves both.
        let has_schema = if typed {
            None
        } else {
            type_json_arguments(&mut arguments, env.tools, &name)
        };
        let known = has_schema == Some(true) || env.tools.is_tool(&name);
        if !self
            .sink
            .keep(if known { List::Calls } else { List::Unknown })
        {
            tool_registry_json::depth::dispose(arguments);
            return;
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
            span: self.in_output(span),
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

    /// An error the block read, unless past the cap.
    fn found_error(&mut self, mut error: ParseError) {
        if !self.sink.keep(List::Errors) {
            return;
        }
        error.span = self.in_output(error.span);
        if self.sink.events_only {
            self.sink.event(StreamEvent::Error(error));
        } else {
            self.sink.event(StreamEvent::Error(error.clone()));
            self.sink.errors.push(error);
        }
    }
}

impl Machine {
    /// A span of the input as a span of the output, which starts at [`Machine::origin`].
    fn in_output(&self, span: Range<usize>) -> Range<usize> {
        span.start.saturating_sub(self.origin)..span.end.saturating_sub(self.origin)
    }
}
