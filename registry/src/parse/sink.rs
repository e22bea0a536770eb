//! Where a parse's results go: the display text and the reasoning, the calls, the unknown
//! calls and the errors, and for a stream the events.

use super::content::Assembler;
use super::event::StreamEvent;
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
    pub(crate) events: Option<Vec<StreamEvent>>,
    /// A stream that only reports events keeps no copy of the text and calls.
    pub(crate) events_only: bool,
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
        if self.events.is_none() {
            return;
        }
        let keep = !self.events_only;
        let assembler = self.assembler(region);
        let delta = if keep {
            assembler.take_delta()
        } else {
            assembler.take_delta_unkept()
        };
        if let Some(delta) = delta
            && let Some(events) = &mut self.events
        {
            events.push(match region {
                Region::Content => StreamEvent::Text(delta),
                Region::Reasoning => StreamEvent::Reasoning(delta),
            });
        }
    }

    pub(crate) fn event(&mut self, event: StreamEvent) {
        if let Some(events) = &mut self.events {
            events.push(event);
        }
    }
}
