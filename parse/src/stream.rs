//! Parsing a token stream as it arrives.

use super::block::ToolLookup;
use super::event::{StreamDelta, StreamEvent};
use super::machine::{Machine, Plain};
use super::scan::Input;
use super::tools::ToolSet;
use super::vocab::{Options, Parsed, Thinking};

/// Parses a model's output while it streams in.
///
/// Feed chunks with [`push`](StreamParser::push) (or [`push_with`](StreamParser::push_with),
/// which allocates nothing for text) and end with [`finish`](StreamParser::finish). The parser
/// holds back only a suffix that could still be a call (the start of a marker such as
/// `<tool_c`, a line that begins like a tag, an unfinished call block, trailing whitespace) and
/// emits everything else at once. Inside a call block it reads chunks in groups, at a byte
/// that can end something (`>`, `}`, `]`, `)`, `|`, a line break, a non-ASCII byte) or every
/// 32 bytes: a call's name and raw text come at most that late. Its result is the
/// whole-text parse ([`parse::text_with`](super::text_with) with the same [`Options`]) for any
/// way of splitting the output into chunks.
///
/// ```
/// use tool_registry_parse::{StreamEvent, StreamParser};
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
        let mut parser = Self {
            tools,
            machine,
            buf: String::with_capacity(INITIAL_BUFFER),
            base: 0,
            finished: false,
        };
        if let Some(markup) = options.opened() {
            // The markup the prompt left open says where the output starts; it reports nothing.
            parser.push_with(markup, |_| {});
        }
        parser
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
    /// use tool_registry_parse::{StreamDelta, StreamParser};
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
    pub fn push_with(&mut self, chunk: &str, mut f: impl FnMut(StreamDelta<'_>)) {
        if self.finished {
            return;
        }
        let tools: &dyn ToolLookup = &self.tools;
        match advance(
            &mut self.machine,
            &mut self.buf,
            &mut self.base,
            tools,
            chunk,
        ) {
            Plain::Span(region, span) => {
                if !span.is_empty() {
                    f(region.delta(&self.buf[span.start - self.base..span.end - self.base]));
                }
            }
            Plain::Assembled(region) => self.machine.sink.hand_out(region, f),
            Plain::Wait => {}
            Plain::Scan => self.machine.sink.dispatch(&self.buf, self.base, f),
        }
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
        self.machine.sink.dispatch(&self.buf, self.base, f);
    }

    /// Everything the stream held, as the whole-text parse would give it (unless the parser is
    /// [`events_only`](StreamParser::events_only)). Finishes the stream if needed.
    pub fn into_parsed(mut self) -> Parsed {
        self.finish();
        self.machine.into_parsed()
    }

    fn run(&mut self, eof: bool) {
        let input = Input::window(&self.buf, self.base, eof);
        let tools: &dyn ToolLookup = &self.tools;
        self.machine.run(&input, tools);
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

/// The buffer a stream starts with: enough for the text it usually holds, so that a short
/// answer does not grow it step by step.
const INITIAL_BUFFER: usize = 512;

/// A stream's work for one chunk, apart from handing out what it completes: the chunk added
/// (the text the machine no longer needs dropped when the buffer is full) and read, as plain
/// text when it can be ([`Machine::plain_chunk`]), otherwise by the scan ([`scan`]). Not
/// generic, so that it is compiled once, in this crate. Says where what the chunk completes is
/// ([`Plain`]).
fn advance(
    machine: &mut Machine,
    buf: &mut String,
    base: &mut usize,
    tools: &dyn ToolLookup,
    chunk: &str,
) -> Plain {
    if buf.len() + chunk.len() > buf.capacity() {
        compact(machine, buf, base);
    }
    let from = *base + buf.len();
    buf.push_str(chunk);
    let input = Input::window(buf, *base, false);
    match machine.plain_chunk(&input, from) {
        Some(plain) => plain,
        None => scan(machine, &input, tools, chunk),
    }
}

/// The chunk at the end of `input` read by the scan (or, inside a call block, left for the next
/// chunk: [`Machine::block_waits`]), out of the way of the plain path.
fn scan(machine: &mut Machine, input: &Input<'_>, tools: &dyn ToolLookup, chunk: &str) -> Plain {
    if machine.block_waits(chunk.as_bytes()) {
        return Plain::Wait;
    }
    machine.run(input, tools);
    machine.ready = machine.readiness(input.end());
    Plain::Scan
}

/// Drops the text the machine no longer needs, when the buffer is full, if that is at least
/// half of it (otherwise the buffer grows), so that each byte is moved at most once and a push
/// mostly only appends. Done before a chunk is added, not after it is read: the raw text of a
/// call is handed out from the buffer.
#[cold]
fn compact(machine: &Machine, buf: &mut String, base: &mut usize) {
    let mut drop = machine.keep_from().saturating_sub(*base).min(buf.len());
    if drop == 0 || drop < buf.len() / 2 {
        return;
    }
    while !buf.is_char_boundary(drop) {
        drop -= 1;
    }
    buf.drain(..drop);
    *base += drop;
}
