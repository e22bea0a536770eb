//! Where a parse's results go: the display text and the reasoning, the calls, the unknown
//! calls and the errors, and for a stream the events.

use std::ops::Range;

use super::content::Assembler;
use super::event::{StreamDelta, StreamEvent};
use super::vocab::{ParseError, ParsedCall};

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
    /// What a stream has to report, in order: text as ranges of the assemblers' text (handed
    /// out borrowed, so a push of prose allocates nothing), other events as they are.
    pub(crate) events: Option<Vec<Pending>>,
    /// A stream that only reports events keeps no copy of the text and calls.
    pub(crate) events_only: bool,
}

/// One thing a stream has to report.
#[derive(Debug)]
pub(crate) enum Pending {
    Text(Range<usize>),
    Reasoning(Range<usize>),
    Event(StreamEvent),
}

impl Sink {
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
        let Some(events) = &mut self.events else {
            return;
        };
        let assembler = match region {
            Region::Content => &mut self.content,
            Region::Reasoning => &mut self.reasoning,
        };
        let Some(delta) = assembler.take_range() else {
            return;
        };
        // Text that follows text of the same kind extends it.
        match (events.last_mut(), region) {
            (Some(Pending::Text(last)), Region::Content)
            | (Some(Pending::Reasoning(last)), Region::Reasoning)
                if last.end == delta.start =>
            {
                last.end = delta.end;
            }
            (_, Region::Content) => events.push(Pending::Text(delta)),
            (_, Region::Reasoning) => events.push(Pending::Reasoning(delta)),
        }
    }

    /// Hands what is pending to `f`, in order, text borrowed; the list is kept for reuse, and a
    /// stream that keeps no copy of the text forgets it.
    pub(crate) fn dispatch(&mut self, mut f: impl FnMut(StreamDelta<'_>)) {
        let Some(mut events) = self.events.take() else {
            return;
        };
        for pending in events.drain(..) {
            match pending {
                Pending::Text(range) => f(StreamDelta::Text(self.content.slice(range))),
                Pending::Reasoning(range) => f(StreamDelta::Reasoning(self.reasoning.slice(range))),
                Pending::Event(event) => f(StreamDelta::Event(event)),
            }
        }
        self.events = Some(events);
        if self.events_only {
            self.content.forget();
            self.reasoning.forget();
        }
    }

    pub(crate) fn event(&mut self, event: StreamEvent) {
        if let Some(events) = &mut self.events {
            events.push(Pending::Event(event));
        }
    }
}
