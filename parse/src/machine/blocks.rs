//! The call block being read: its family's reader behind the one trait every reader
//! implements, where it starts, and what its turning out not to be a call tells the scan. A
//! leaf of this folder: it knows the trait, not the machine.

use crate::block::{Env, Reader, Step};
use crate::scan::Input;

/// A call block being read.
#[derive(Debug)]
pub(super) struct Block {
    /// Where the block starts, which the stream keeps until the block is read.
    pub(super) start: usize,
    reader: Box<dyn Reader>,
    pub(super) kind: Kind,
    /// Whether the block is a form written as lines of its own (a tag line, an `Action:` line,
    /// a bare value standing alone, a fenced block): cut out, it takes its indentation and one
    /// line break with it.
    pub(super) line: bool,
}

/// What a block that is not a call tells the scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Nothing: a token or a line opened it.
    Marked,
    /// A bare value standing alone: no later one can be the whole message.
    Bare,
    /// GLM-4's name line: the message is not `NAME\n{json}`.
    NameLine,
}

impl Block {
    /// The block `reader` reads from `start`.
    pub(super) fn new(start: usize, reader: Box<dyn Reader>) -> Self {
        Self {
            start,
            reader,
            kind: Kind::Marked,
            line: false,
        }
    }

    /// [`Block::new`] for a reader made here.
    pub(super) fn of(start: usize, reader: impl Reader + 'static) -> Self {
        Self::new(start, Box::new(reader))
    }

    /// This block, of `kind`; a bare value stands on lines of its own.
    pub(super) fn kind(self, kind: Kind) -> Self {
        Self {
            kind,
            line: self.line || kind == Kind::Bare,
            ..self
        }
    }

    /// This block, a form written as lines of its own.
    pub(super) fn line(self) -> Self {
        Self { line: true, ..self }
    }

    pub(super) fn step(&mut self, input: &Input<'_>, env: &Env<'_>) -> Step {
        self.reader.step(input, env)
    }

    /// The name of the call being written, once the block is surely a call attempt.
    pub(super) fn name_hint(&self, input: &Input<'_>) -> Option<String> {
        self.reader.name_hint(input)
    }
}
