//! Where a parse's results go: the display text and the reasoning, the calls, the unknown
//! calls and the errors, and for a stream the events.

use std::ops::Range;

use super::content::Assembler;
use super::event::{StreamDelta, StreamEvent};
use super::vocab::{LeftOut, ParseError, ParsedCall};

/// Which text a stretch of output belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Region {
    Content,
    Reasoning,
}

/// Where the results go: display text, reasoning, calls, errors, and (for a stream) events.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    pub(crate) content: Assembler,
    pub(crate) reasoning: Assembler,
    pub(crate) calls: Vec<ParsedCall>,
    pub(crate) unknown: Vec<ParsedCall>,
    pub(crate) errors: Vec<ParseError>,
    /// Whether the parse reports events (a stream).
    pub(crate) streaming: bool,
    /// What a stream has to report, in order: text as ranges of the assemblers' text and the
    /// raw text of a call being written as a range of the input (both handed out borrowed, so
    /// a push allocates nothing for them), other events boxed, so that an entry stays small.
    pub(crate) pending: Vec<Pending>,
    /// A stream that only reports events keeps no copy of the text and calls.
    pub(crate) events_only: bool,
    /// The most items each list keeps ([`Options::max_calls`](super::Options::max_calls)).
    pub(crate) max: Option<usize>,
    /// Items kept so far: calls, unknown calls, errors.
    pub(crate) kept: [usize; 3],
    pub(crate) left_out: LeftOut,
}

/// The lists a parse keeps items in, as indices of [`Sink::kept`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum List {
    Calls = 0,
    Unknown = 1,
    Errors = 2,
}

/// One thing a stream has to report.
#[derive(Debug)]
pub(crate) enum Pending {
    Text(Range<usize>),
    Reasoning(Range<usize>),
    /// The raw text of the call being written, as absolute positions in the input.
    Args(Range<usize>),
    Event(Box<StreamEvent>),
}

impl Region {
    /// `text` as a stream hands it out for this region.
    #[inline]
    pub(crate) fn delta(self, text: &str) -> StreamDelta<'_> {
        match self {
            Region::Content => StreamDelta::Text(text),
            Region::Reasoning => StreamDelta::Reasoning(text),
        }
    }
}

impl Sink {
    /// Whether an item of `list` is kept (and reported); if not, it is counted as left out.
    #[inline]
    pub(crate) fn keep(&mut self, list: List) -> bool {
        let kept = &mut self.kept[list as usize];
        if self.max.is_none_or(|max| *kept < max) {
            *kept += 1;
            return true;
        }
        let left_out = match list {
            List::Calls => &mut self.left_out.calls,
            List::Unknown => &mut self.left_out.unknown,
            List::Errors => &mut self.left_out.errors,
        };
        *left_out += 1;
        false
    }

    #[inline]
    pub(crate) fn assembler(&mut self, region: Region) -> &mut Assembler {
        match region {
            Region::Content => &mut self.content,
            Region::Reasoning => &mut self.reasoning,
        }
    }

    pub(crate) fn text(&mut self, region: Region, text: &str) {
        self.assembler(region).push(text);
        self.flush(region);
    }

    pub(crate) fn cut(&mut self, region: Region, paragraph: bool) {
        self.assembler(region).cut(paragraph);
    }

    pub(crate) fn flush(&mut self, region: Region) {
        if !self.streaming {
            return;
        }
        let assembler = match region {
            Region::Content => &mut self.content,
            Region::Reasoning => &mut self.reasoning,
        };
        let Some(delta) = assembler.take_range() else {
            return;
        };
        // Text that follows text of the same kind extends it.
        match (self.pending.last_mut(), region) {
            (Some(Pending::Text(last)), Region::Content)
            | (Some(Pending::Reasoning(last)), Region::Reasoning)
                if last.end == delta.start =>
            {
                last.end = delta.end;
            }
            (_, Region::Content) => self.pending.push(Pending::Text(delta)),
            (_, Region::Reasoning) => self.pending.push(Pending::Reasoning(delta)),
        }
    }

    /// The raw text of the call being written, from `range` of the input.
    pub(crate) fn args(&mut self, range: Range<usize>) {
        if !self.streaming {
            return;
        }
        match self.pending.last_mut() {
            Some(Pending::Args(last)) if last.end == range.start => last.end = range.end,
            _ => self.pending.push(Pending::Args(range)),
        }
    }

    /// Hands what is pending to `f`, in order, text borrowed (the raw text of calls from
    /// `input`, which starts at position `base`); the list is kept for reuse, and a stream
    /// that keeps no copy of the text forgets it.
    pub(crate) fn dispatch(
        &mut self,
        input: &str,
        base: usize,
        mut f: impl FnMut(StreamDelta<'_>),
    ) {
        let Sink {
            content,
            reasoning,
            pending,
            events_only,
            ..
        } = self;
        for entry in pending.drain(..) {
            match entry {
                Pending::Text(range) => f(StreamDelta::Text(content.slice(range))),
                Pending::Reasoning(range) => f(StreamDelta::Reasoning(reasoning.slice(range))),
                Pending::Args(range) => {
                    f(StreamDelta::CallArgs(
                        &input[range.start - base..range.end - base],
                    ));
                }
                Pending::Event(event) => f(StreamDelta::Event(*event)),
            }
        }
        if *events_only {
            content.forget();
            reasoning.forget();
        }
    }

    /// Hands the text added to `region` to `f`, when nothing else is pending.
    #[inline]
    pub(crate) fn hand_out(&mut self, region: Region, mut f: impl FnMut(StreamDelta<'_>)) {
        debug_assert!(self.pending.is_empty());
        let events_only = self.events_only;
        let assembler = self.assembler(region);
        if let Some(range) = assembler.take_range() {
            f(region.delta(assembler.slice(range)));
        }
        if events_only {
            assembler.forget();
        }
    }

    pub(crate) fn event(&mut self, event: StreamEvent) {
        if self.streaming {
            self.pending.push(Pending::Event(Box::new(event)));
        }
    }
}
