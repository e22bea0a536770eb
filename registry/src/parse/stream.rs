//! Parsing a token stream as it arrives.

use super::event::{StreamDelta, StreamEvent};
use super::machine::Machine;
use super::scan::Input;
use super::tools::ToolSet;
use super::vocab::{Options, Parsed, Thinking};

/// Parses a model's output while it streams in.
///
/// Feed chunks with [`push`](StreamParser::push) and end with
/// [`finish`](StreamParser::finish). The parser holds back only a suffix that could still be a
/// call (the start of a marker such as `<tool_c`, a line that begins like a tag, an unfinished
/// call block, trailing whitespace) and emits everything else at once. Its result is the
/// whole-text parse ([`parse::text_with`](super::text_with) with the same [`Options`]) for any
/// way of splitting the output into chunks.
///
/// ```
/// use tool_registry::parse::{StreamEvent, StreamParser};
///
/// let tools = ["get_weather"];
/// let mut stream = StreamParser::new(&tools);
/// let mut events = Vec::new();
/// for chunk in ["Let me check.\n<tool", "_call>\n{\"name\": \"get_weather\", ", "\"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>"] {
///     events.extend(stream.push(chunk));
/// }
/// events.extend(stream.finish());
/// assert_eq!(events[0], StreamEvent::Text("Let me check.".into()));
/// assert!(events.contains(&StreamEvent::CallStarted { name: "get_weather".into() }));
/// let call = events.iter().find_map(|e| match e { StreamEvent::Call(c) => Some(c), _ => None }).unwrap();
/// assert_eq!(call.arguments["city"], "Oslo");
/// ```
pub struct StreamParser<'t, T: ToolSet + ?Sized = dyn ToolSet + 't> {
    tools: &'t T,
    machine: Machine,
    buf: String,
    base: usize,
    finished: bool,
}

impl<'t, T: ToolSet + ?Sized> StreamParser<'t, T> {
    /// A parser for a stream whose thinking, if any, the model opens itself with `<think>`
    /// ([`Thinking::ExplicitOnly`]); otherwise the default [`Options`].
    ///
    /// A stream cannot wait for a `</think>` to learn that the text before it was reasoning;
    /// when the chat template opens the thought (DeepSeek-R1, QwQ), use
    /// [`with_options`](StreamParser::with_options) with [`Thinking::StartsInside`].
    pub fn new(tools: &'t T) -> Self {
        Self::with_options(tools, Options::default().thinking(Thinking::ExplicitOnly))
    }

    /// A parser with these options. With [`Thinking::Auto`] text before the first `<think>`
    /// is held back until the parser sees `<think>`, `</think>` or the end.
    pub fn with_options(tools: &'t T, options: Options) -> Self {
        let machine = {
            let tools: &dyn ToolSet = &tools;
            Machine::new(tools, options, true)
        };
        Self {
            tools,
            machine,
            buf: String::new(),
            base: 0,
            finished: false,
        }
    }

    /// Reports through events only: the parser keeps no copy of the text and the calls, and
    /// [`into_parsed`](StreamParser::into_parsed) then returns an empty result. For servers that
    /// forward the events and need nothing at the end.
    #[must_use]
    pub fn events_only(mut self) -> Self {
        self.machine.sink.events_only = true;
        self
    }

    /// Reads the next chunk and returns what it completes. Chunks after
    /// [`finish`](StreamParser::finish) are ignored.
    pub fn push(&mut self, chunk: &str) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.push_with(chunk, |delta| events.push(delta.into_event()));
        events
    }

    /// Reads the next chunk and hands what it completes to `f`, in order, text borrowed: a
    /// push of prose allocates nothing. What a server forwarding tokens uses.
    ///
    /// ```
    /// use tool_registry::parse::{StreamDelta, StreamParser};
    ///
    /// let mut stream = StreamParser::new(&["get_time"]).events_only();
    /// let mut shown = String::new();
    /// for token in ["It is ", "late. ", "<tool_", "call>{\"name\": \"get_time\"}</tool_call>"] {
    ///     stream.push_with(token, |delta| match delta {
    ///         StreamDelta::Text(text) => shown.push_str(text),
    ///         StreamDelta::Event(event) => println!("{event:?}"),
    ///         _ => {}
    ///     });
    /// }
    /// stream.finish_with(|_| {});
    /// assert_eq!(shown, "It is late.");
    /// ```
    pub fn push_with(&mut self, chunk: &str, f: impl FnMut(StreamDelta<'_>)) {
        if self.finished {
            return;
        }
        let from = self.base + self.buf.len();
        self.buf.push_str(chunk);
        let input = Input::window(&self.buf, self.base, false);
        if !self.machine.plain_chunk(&input, from) {
            self.run(false);
        }
        self.compact();
        self.machine.sink.dispatch(f);
    }

    /// Ends the stream: whatever was held back is decided (an unfinished call is reported as
    /// truncated) and the last events are returned.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let mut events = Vec::new();
        self.finish_with(|delta| events.push(delta.into_event()));
        events
    }

    /// [`finish`](StreamParser::finish), handing the last events to `f`.
    pub fn finish_with(&mut self, f: impl FnMut(StreamDelta<'_>)) {
        if !self.finished {
            self.run(true);
            self.machine.finish();
            self.finished = true;
        }
        self.machine.sink.dispatch(f);
    }

    /// Everything the stream held, as the whole-text parse would give it (unless the parser is
    /// [`events_only`](StreamParser::events_only)). Finishes the stream if needed.
    pub fn into_parsed(mut self) -> Parsed {
        self.finish();
        self.machine.into_parsed()
    }

    fn run(&mut self, eof: bool) {
        let input = Input::window(&self.buf, self.base, eof);
        let tools: &dyn ToolSet = &self.tools;
        self.machine.run(&input, tools);
    }

    /// Drops the text the machine no longer needs, when that is at least half the buffer, so
    /// that each byte is moved at most once.
    fn compact(&mut self) {
        let mut drop = self
            .machine
            .keep_from()
            .saturating_sub(self.base)
            .min(self.buf.len());
        if drop == 0 || drop < self.buf.len() / 2 {
            return;
        }
        while !self.buf.is_char_boundary(drop) {
            drop -= 1;
        }
        self.buf.drain(..drop);
        self.base += drop;
    }
}

impl<T: ToolSet + ?Sized> std::fmt::Debug for StreamParser<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamParser")
            .field("position", &(self.base + self.buf.len()))
            .field(
                "held",
                &(self.base + self.buf.len() - self.machine.keep_from().max(self.base)),
            )
            .field("finished", &self.finished)
            .finish()
    }
}
