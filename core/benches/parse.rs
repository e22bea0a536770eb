//! Parsing throughput: 1 MB of prose (and of technical markdown) with no calls against a
//! `memchr` scan of the same bytes (the limit for any parser that must look at every byte),
//! 1 MB of text with calls in several formats, and streaming in 16-byte and 4 KB chunks and token
//! by token (4-byte pushes, and a chat answer split into word-like tokens) against the
//! whole-text parse.
//!
//! Run with `cargo bench -p tool-registry-core --bench parse`; docs/PERFORMANCE.md has the figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tool_registry::parse::{self, Options, StreamDelta, StreamParser, Thinking};
use tool_registry::{Registry, tool};

/// Search the web.
#[tool]
fn search(query: String, limit: Option<u32>) -> String {
    format!("{query} {limit:?}")
}

/// Get the weather.
#[tool]
fn get_weather(city: String, days: Option<u32>) -> String {
    format!("{city} {days:?}")
}

/// Write a file.
#[tool]
fn write_file(path: String, content: String) -> String {
    format!("{path} {}", content.len())
}

/// Search the knowledge base.
#[tool(tag = "RESEARCH")]
fn research(query: String) -> String {
    query
}

/// Record what was learned.
#[tool(
    tag = "LEARNING",
    pattern = r"(factual|communication)\s+(.+)",
    groups(category, content)
)]
fn learning(category: String, content: String) -> String {
    category + &content
}

const MB: usize = 1 << 20;

/// Plain prose: sentences, numbers, quotes and a colon now and then, as in a chat answer.
const PROSE: &str = "The river rises in the hills north of the town and reaches the sea after about \
ninety kilometres. In spring, when the snow melts, it can climb two metres in a single night, and \
the old bridge (built in 1887) has been closed three times since the war. Most people here remember \
the flood of 1953: the water stood knee-deep in the market square for a week, and the church bells \
rang every hour so that the boats could find their way. Today the banks are lined with willows, \
the \"new\" embankment holds, and on summer evenings families walk along it to watch the herons.\n\n\
If you visit, start at the station, follow the main street down to the water, and turn left at the \
bakery; the path to the weir takes about twenty minutes. Bring boots after rain. The museum opens at \
ten, closes at five, and asks for a small donation rather than a fee.\n\n";

/// Technical markdown: the bytes that make a parser stop and look (`<`, `[`, backticks,
/// colons at line starts) at a realistic rate for code-heavy answers, but no calls.
const MARKDOWN: &str = "The borrow checker makes sure that references never outlive the data they point to. \
In practice this means a function cannot return a reference to a local variable, and two mutable \
references to the same value cannot exist at once. Note: the rules are checked at compile time, \
so they cost nothing when the program runs.\n\n\
Consider the [Rust book](https://doc.rust-lang.org/book/) chapter on ownership, or `std::mem::take` \
when you need to move out of a mutable reference. A value of type `Vec<T>` owns its elements; a \
slice `&[T]` borrows them.\n\n\
- Lifetimes name how long a borrow lasts.\n\
- `'static` means the data lives for the whole program.\n\
- Interior mutability (`RefCell<T>`, `Mutex<T>`) moves the checks to run time.\n\n\
Summary: prefer owned data at API boundaries, borrow inside, and let the compiler explain \
what it needs. If a < b and b > c, nothing here is a call.\n\n";

/// Calls in the formats models write, between paragraphs of prose.
const CALLS: &[&str] = &[
    "<tool_call>\n{\"name\": \"search\", \"arguments\": {\"query\": \"rust borrow checker\", \"limit\": 3}}\n</tool_call>\n",
    "<tool_call>\n<function=write_file>\n<parameter=path>\nsrc/main.rs\n</parameter>\n<parameter=content>\nfn main() {\n    println!(\"hello <world>\");\n}\n</parameter>\n</function>\n</tool_call>\n",
    "RESEARCH: ownership and lifetimes in async code\n",
    "LEARNING: factual The user prefers examples in Rust 2024 edition\n",
    "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Oslo\", \"days\": 3}\n",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>search<｜tool▁sep｜>{\"query\": \"deepseek\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>\n",
    "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing</arg_value>\n</tool_call>\n",
];

fn repeated(unit: &str, size: usize) -> String {
    unit.repeat(size / unit.len() + 1)[..size].to_owned()
}

fn with_calls(size: usize) -> String {
    let mut text = String::with_capacity(size + 1024);
    let mut i = 0;
    while text.len() < size {
        text.push_str(&MARKDOWN[..MARKDOWN.len() / 2]);
        text.push('\n');
        text.push_str(CALLS[i % CALLS.len()]);
        i += 1;
    }
    text
}

/// A typical chat answer (1,185 bytes): a thought, two calls, some text.
fn chat() -> String {
    format!(
        "<think>\nThe user asks about lifetimes. {}\n</think>\n\n{}\n<tool_call>\n{{\"name\": \"search\", \"arguments\": {{\"query\": \"lifetimes\"}}}}\n</tool_call>\n{}",
        &MARKDOWN[..600],
        &MARKDOWN[600..],
        CALLS[1]
    )
}

fn config() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .sample_size(30)
}

fn stream_in(text: &str, chunk: usize, registry: &Registry) -> usize {
    let mut stream =
        StreamParser::with_options(registry, Options::new().thinking(Thinking::ExplicitOnly))
            .events_only();
    let mut events = 0;
    let mut at = 0;
    while at < text.len() {
        let mut end = (at + chunk).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        events += stream.push(&text[at..end]).len();
        at = end;
    }
    events + stream.finish().len()
}

/// The median, over `rounds`, of the ratio `base time / other time`, the two timed back to back
/// (`runs` times each) in each round: stable under the load of a shared machine, where
/// criterion's absolute times drift by a third between runs.
fn paired(base: &dyn Fn() -> usize, other: &dyn Fn() -> usize, runs: usize, rounds: usize) -> f64 {
    let time = |f: &dyn Fn() -> usize| {
        let start = Instant::now();
        let mut sink = 0;
        for _ in 0..runs {
            sink += f();
        }
        black_box(sink);
        start.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            let base = time(base);
            base / time(other)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// [`paired`] `memchr time / parse time` over `text`, 8 runs a round, 301 rounds.
fn paired_ratio(text: &str, parse: impl Fn(&str) -> usize) -> f64 {
    paired(
        &|| memchr::memchr_iter(b'<', black_box(text.as_bytes())).count(),
        &|| parse(black_box(text)),
        8,
        301,
    )
}

fn no_calls_vs_memchr(c: &mut Criterion) {
    let registry = Registry::global();
    let names = ["search", "get_weather", "write_file"];
    for (group, text) in [
        ("prose_1mb", repeated(PROSE, MB)),
        ("markdown_1mb", repeated(MARKDOWN, MB)),
    ] {
        let parsed = parse::text(&text, registry);
        assert!(parsed.calls.is_empty() && parsed.errors.is_empty());
        assert_eq!(parsed.content.len(), text.trim().len());

        let with_tags = paired_ratio(&text, |t| parse::text(t, registry).content.len());
        let names_only = paired_ratio(&text, |t| parse::text(t, &names).content.len());
        println!(
            "{group}: paired median of memchr/parse time: {with_tags:.3}x with tags, {names_only:.3}x names only"
        );

        let mut group = c.benchmark_group(group);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function("memchr_lt", |b| {
            b.iter(|| memchr::memchr_iter(b'<', black_box(text.as_bytes())).count())
        });
        group.bench_function("parse_text_registry_with_tags", |b| {
            b.iter(|| parse::text(black_box(&text), registry))
        });
        group.bench_function("parse_text_names_only", |b| {
            b.iter(|| parse::text(black_box(&text), &names))
        });
        group.finish();
    }
}

fn text_with_calls(c: &mut Criterion) {
    let registry = Registry::global();
    let text = with_calls(MB);
    let parsed = parse::text(&text, registry);
    assert!(
        parsed.calls.len() > 1000 && parsed.errors.is_empty(),
        "{} calls, {:?}",
        parsed.calls.len(),
        parsed.errors.first()
    );

    let mut group = c.benchmark_group("calls_1mb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse_text", |b| {
        b.iter(|| parse::text(black_box(&text), registry))
    });
    group.finish();
}

fn streaming(c: &mut Criterion) {
    let registry = Registry::global();
    let inputs = [
        ("prose_1mb", repeated(PROSE, MB)),
        ("calls_1mb", with_calls(MB)),
        ("chat_1kb", chat()),
    ];
    let mut group = c.benchmark_group("stream");
    for (name, text) in &inputs {
        let options = Options::new().thinking(Thinking::ExplicitOnly);
        let whole = parse::text_with(text, registry, options);
        let mut stream = StreamParser::with_options(registry, options);
        stream.push(text);
        assert!(stream.into_parsed() == whole);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(BenchmarkId::new("whole", name), |b| {
            b.iter(|| parse::text_with(black_box(text), registry, options))
        });
        for chunk in [16, 64, 256, 1024, 4096] {
            group.bench_function(BenchmarkId::new(format!("chunks_{chunk}"), name), |b| {
                b.iter(|| stream_in(black_box(text), chunk, registry))
            });
        }
    }
    group.finish();
}

/// Streams `text` in `chunk`-byte pushes through `push_with`, the borrowed-delta API a server
/// forwarding tokens uses; returns the bytes of text handed out, and the events.
fn push_with_in(text: &str, chunk: usize, registry: &Registry) -> usize {
    let mut at = 0;
    let chunks = std::iter::from_fn(|| {
        let start = at;
        if start == text.len() {
            return None;
        }
        at = (start + chunk).min(text.len());
        while !text.is_char_boundary(at) {
            at += 1;
        }
        Some(&text[start..at])
    });
    push_pieces(chunks, registry)
}

/// `text` split roughly as a BPE tokenizer with GPT-style pre-tokenization splits it: the
/// special tokens of the chat answer whole, then a word with the space before it, a run of up to
/// three digits, a run of punctuation, a run of line breaks or spaces, each at most 8 bytes.
fn word_tokens(text: &str) -> Vec<&str> {
    const SPECIAL: [&str; 4] = ["<think>", "</think>", "<tool_call>", "</tool_call>"];
    let class = |b: u8| match b {
        b'\n' => 2,
        b' ' => 3,
        b'0'..=b'9' => 1,
        b if b.is_ascii_alphabetic() || b >= 0x80 => 0,
        _ => 4,
    };
    let special =
        |at: usize| (SPECIAL.iter()).find(|s| text.as_bytes()[at..].starts_with(s.as_bytes()));
    let bytes = text.as_bytes();
    let mut tokens = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if let Some(token) = special(at) {
            tokens.push(&text[at..at + token.len()]);
            at += token.len();
            continue;
        }
        let start = at;
        // A space joins the word or punctuation after it.
        if bytes[at] == b' '
            && bytes
                .get(at + 1)
                .is_some_and(|b| matches!(class(*b), 0 | 1 | 4))
        {
            at += 1;
        }
        let kind = class(bytes[at]);
        let limit = if kind == 1 { 3 } else { 8 };
        at += 1;
        while at < bytes.len()
            && class(bytes[at]) == kind
            && at - start < limit
            && special(at).is_none()
        {
            at += 1;
        }
        while !text.is_char_boundary(at) {
            at += 1;
        }
        tokens.push(&text[start..at]);
    }
    tokens
}

/// Streams `pieces` through `push_with`, as [`push_with_in`] says.
fn push_pieces<'a>(pieces: impl Iterator<Item = &'a str>, registry: &Registry) -> usize {
    let mut stream =
        StreamParser::with_options(registry, Options::new().thinking(Thinking::ExplicitOnly))
            .events_only();
    let mut seen = 0;
    let mut count = |delta: StreamDelta<'_>| match delta {
        StreamDelta::Text(text) | StreamDelta::Reasoning(text) => seen += text.len(),
        _ => seen += 1,
    };
    for piece in pieces {
        stream.push_with(piece, &mut count);
    }
    stream.finish_with(&mut count);
    seen
}

/// The cost of one push of a token-sized chunk (4, 16, 64 bytes) through `push_with`, and
/// token-sized streaming (4 bytes) against the whole-text parse of the same text.
fn pushes(c: &mut Criterion) {
    let registry = Registry::global();
    let options = Options::new().thinking(Thinking::ExplicitOnly);
    let prose = repeated(PROSE, 64 << 10);
    let mut group = c.benchmark_group("push");
    for chunk in [4, 16, 64] {
        group.throughput(Throughput::Elements(prose.len().div_ceil(chunk) as u64));
        group.bench_function(BenchmarkId::new("prose_64kb", chunk), |b| {
            b.iter(|| push_with_in(black_box(&prose), chunk, registry))
        });
    }
    group.finish();
    let answer = chat();
    let tokens = word_tokens(&answer);
    // The stream's time over the whole text's.
    let ratio = |stream: &dyn Fn() -> usize| {
        let whole = || (parse::text_with(black_box(&answer), registry, options).content).len();
        paired(stream, &whole, 200, 201)
    };
    let four = ratio(&|| push_with_in(black_box(&answer), 4, registry));
    let words = ratio(&|| push_pieces(black_box(&tokens).iter().copied(), registry));
    println!(
        "chat_1kb: paired median of stream/whole time: {four:.3}x in 4-byte pushes, {words:.3}x in {} word-like tokens ({:.2} bytes each)",
        tokens.len(),
        answer.len() as f64 / tokens.len() as f64
    );
    let mut group = c.benchmark_group("tokens");
    for (name, text) in [
        ("prose_64kb", prose.clone()),
        ("chat_1kb", chat()),
        ("calls_64kb", with_calls(64 << 10)),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(BenchmarkId::new("whole", name), |b| {
            b.iter(|| parse::text_with(black_box(&text), registry, options))
        });
        group.bench_function(BenchmarkId::new("chunks_4", name), |b| {
            b.iter(|| push_with_in(black_box(&text), 4, registry))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = no_calls_vs_memchr, text_with_calls, streaming, pushes
}
criterion_main!(benches);
