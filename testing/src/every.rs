//! [`call_every_tool`]: every tool a scope may see, called with arguments drawn from its
//! schema, and a [`Report`] of what each did.

use std::fmt;
use std::future::{Future, IntoFuture};
use std::pin::Pin;
use std::time::{Duration, Instant};

use serde_json::Value;
use tool_registry_core::{Ctx, Registry, ToolError};

use crate::values::{self, Case};

/// How long one call may take unless [`EveryTool::timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many values are drawn at random per tool, beside the edge cases, unless
/// [`EveryTool::drawn`] says otherwise.
pub const DEFAULT_DRAWN: usize = 8;

/// Calls every tool of `registry` that the context's scope may see (every tool, with the
/// default [`Ctx::trusted`]) with arguments valid for its input schema, through every gate, and
/// reports what each call did: the smoke test of a whole registry in one line.
///
/// Each tool gets its edge cases (its required fields only, at their low edges: empty strings,
/// minimums, empty arrays, the first of an `enum`; every field at its low edge; every field at
/// its high edge: `maxLength` (or 200 characters of mixed text), maximums, the last of an
/// `enum`) and [`DEFAULT_DRAWN`] values drawn at random by proptest strategies built from the
/// schema, with a fixed seed, so that a run is the same run again. A value the schema does not
/// accept is never sent.
///
/// A panic, a timeout and a result that breaks the tool's output schema or limits are
/// [problems](Outcome::is_problem); [`Report::assert_healthy`] fails a test on any, naming each
/// tool and the arguments that did it. Arguments the schema accepts but the tool (or the type
/// it reads) refuses as invalid are [refusals](Outcome::Refused): reported, one line per tool,
/// since a model reads only the schema (write the rule in it where one can: `#[arg(min, max)]`,
/// a `pattern`); [`Report::assert_no_refusals`] fails on them too. The tools' own errors and
/// the calls a gate held (approval, rate limits) are reported, not problems.
///
/// ```
/// use tool_registry::{Registry, tool};
/// use tool_registry::testing::call_every_tool;
///
/// /// The first character of `text`, upper-cased.
/// #[tool(name = "initial")]
/// fn initial(text: String) -> String {
///     text[..1].to_uppercase() // panics on the empty string
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let registry = Registry::builder().build()?;
/// let report = call_every_tool(&registry).await;
/// let panic = report.problems().next().expect("the empty string was tried");
/// assert_eq!(panic.tool, "initial");
/// assert_eq!(panic.arguments, serde_json::json!({"text": ""}));
/// assert!(report.to_string().contains(r#"initial {"text":""}"#));
/// # Ok(())
/// # }
/// ```
pub fn call_every_tool(registry: &Registry) -> EveryTool<'_> {
    EveryTool {
        registry,
        ctx: Ctx::trusted(),
        drawn: DEFAULT_DRAWN,
        seed: 0,
        timeout: DEFAULT_TIMEOUT,
        confirmed: false,
        skip: Vec::new(),
    }
}

/// The run [`call_every_tool`] makes; its methods change it, `.await` runs it.
#[must_use = "nothing is called until it is awaited"]
pub struct EveryTool<'r> {
    registry: &'r Registry,
    ctx: Ctx,
    drawn: usize,
    seed: u64,
    timeout: Duration,
    confirmed: bool,
    skip: Vec<String>,
}

impl<'r> EveryTool<'r> {
    /// Calls with `ctx` (its scope decides which tools are called, its state and user what
    /// they see) instead of [`Ctx::trusted`].
    pub fn ctx(mut self, ctx: Ctx) -> Self {
        self.ctx = ctx;
        self
    }

    /// Draws `count` values per tool at random beside the edge cases ([`DEFAULT_DRAWN`]
    /// unless set; 0: the edge cases only).
    pub fn drawn(mut self, count: usize) -> Self {
        self.drawn = count;
        self
    }

    /// Seeds the random values (0 unless set): the same seed draws the same values.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// How long one call may take before it counts as timed out ([`DEFAULT_TIMEOUT`] unless
    /// set; the registry's own timeouts apply too).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Runs the tools that ask for a person's approval as if they had it
    /// ([`Call::confirmed`](tool_registry_core::registry::Call::confirmed)); without it, such a
    /// call is reported as held. Only for a registry whose tools act on a sandbox the test
    /// owns: destructive tools run on the drawn arguments.
    pub fn confirmed(mut self) -> Self {
        self.confirmed = true;
        self
    }

    /// Leaves out the tools named (a tool that waits for the world, or that no test may run).
    pub fn skip<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.skip.extend(names.into_iter().map(Into::into));
        self
    }

    /// Calls every tool and reports what each call did.
    pub async fn run(self) -> Report {
        let started = Instant::now();
        let mut tools = self.registry.tools(self.ctx.scope());
        tools.sort_by(|a, b| a.name().cmp(b.name()));
        let mut report = Report::default();
        for (index, tool) in tools.iter().enumerate() {
            if self.skip.iter().any(|name| name == tool.name()) {
                report.skipped.push(tool.name().to_owned());
                continue;
            }
            let seed = self.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let (cases, dropped) = values::cases(tool.input_schema().as_value(), self.drawn, seed);
            report.not_generated += dropped;
            if cases.is_empty() {
                report.ungenerated.push(tool.name().to_owned());
            }
            for Case { label, arguments } in cases {
                let outcome = self.call(tool.name(), &arguments).await;
                report.calls.push(Finding {
                    tool: tool.name().to_owned(),
                    label,
                    arguments,
                    outcome,
                });
            }
        }
        report.took = started.elapsed();
        report
    }

    /// One call of `name` with `arguments`, through every gate, bounded by the timeout.
    async fn call(&self, name: &str, arguments: &Value) -> Outcome {
        let call = self.registry.call(name, arguments.clone(), &self.ctx);
        let call = if self.confirmed {
            call.confirmed()
        } else {
            call
        };
        match tokio::time::timeout(self.timeout, call).await {
            Err(_) => Outcome::TimedOut {
                message: format!("no answer within {:?}", self.timeout),
            },
            Ok(Ok(result)) if result.success => Outcome::Ok,
            Ok(Ok(result)) => Outcome::Failed {
                code: result
                    .audit
                    .outcome
                    .as_deref()
                    .unwrap_or("unsuccessful")
                    .to_owned(),
                message: result.content.to_string(),
            },
            Ok(Err(error)) => Outcome::of(&error),
        }
    }
}

impl<'r> IntoFuture for EveryTool<'r> {
    type Output = Report;
    type IntoFuture = Pin<Box<dyn Future<Output = Report> + Send + 'r>>;

    fn into_future(self) -> Self::IntoFuture {
        Box::pin(self.run())
    }
}

/// What one call did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// The tool answered successfully.
    Ok,
    /// The tool reported an error of its own, or refused the arguments' meaning (a file that
    /// does not exist): reported, not a problem.
    Failed {
        /// The error's code ([`ToolError::code`]).
        code: String,
        /// The error's text.
        message: String,
    },
    /// A gate held or refused the call (approval, a rate limit, a hook, the evaluation gate):
    /// the tool did not run; not a problem.
    Held {
        /// The error's code ([`ToolError::code`]).
        code: String,
        /// The error's text.
        message: String,
    },
    /// The tool panicked.
    Panicked {
        /// The panic's message.
        message: String,
    },
    /// The call did not end within the timeout (the kit's or the registry's).
    TimedOut {
        /// Which timeout.
        message: String,
    },
    /// The tool answered with what it may not: a value that breaks its output schema, a
    /// block past the limits.
    InvalidOutput {
        /// What was wrong.
        message: String,
    },
    /// The arguments fit the tool's input schema, yet the tool (or the type it reads) refused
    /// them as invalid: a rule the schema does not say (a range, a pattern, a path that must
    /// stay in a sandbox). Not a problem; see [`Report::refusals`].
    Refused {
        /// What the tool said.
        message: String,
    },
}

impl Outcome {
    /// The outcome of a call that ended in `error`.
    fn of(error: &ToolError) -> Self {
        let message = error.to_string();
        match error {
            ToolError::Panicked { message, .. } => Outcome::Panicked {
                message: message.clone(),
            },
            ToolError::TimedOut { .. } => Outcome::TimedOut { message },
            ToolError::InvalidOutput { .. } => Outcome::InvalidOutput { message },
            ToolError::InvalidArguments { .. }
            | ToolError::ArgumentsTooLarge { .. }
            | ToolError::ArgumentsTooDeep { .. } => Outcome::Refused { message },
            ToolError::NeedsApproval { .. }
            | ToolError::RateLimited { .. }
            | ToolError::Refused { .. }
            | ToolError::Denied { .. }
            | ToolError::GateUnavailable { .. } => Outcome::Held {
                code: error.code().to_owned(),
                message,
            },
            _ => Outcome::Failed {
                code: error.code().to_owned(),
                message,
            },
        }
    }

    /// Whether the outcome is a fault of the tool: a panic, a timeout, an invalid result.
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            Outcome::Panicked { .. } | Outcome::TimedOut { .. } | Outcome::InvalidOutput { .. }
        )
    }

    /// A word for the outcome: `ok`, `failed`, `held`, `panicked`, `timed out`,
    /// `invalid output`, `refused`.
    pub fn word(&self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed { .. } => "failed",
            Outcome::Held { .. } => "held",
            Outcome::Panicked { .. } => "panicked",
            Outcome::TimedOut { .. } => "timed out",
            Outcome::InvalidOutput { .. } => "invalid output",
            Outcome::Refused { .. } => "refused",
        }
    }

    /// The outcome's text (empty for [`Outcome::Ok`]).
    pub fn message(&self) -> &str {
        match self {
            Outcome::Ok => "",
            Outcome::Failed { message, .. }
            | Outcome::Held { message, .. }
            | Outcome::Panicked { message }
            | Outcome::TimedOut { message }
            | Outcome::InvalidOutput { message }
            | Outcome::Refused { message } => message,
        }
    }
}

/// One call [`call_every_tool`] made: the tool, the arguments and what it did.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Finding {
    /// The tool's name.
    pub tool: String,
    /// How the arguments were made (`required fields at their low edges`, `drawn #3`).
    pub label: String,
    /// The arguments it was called with.
    pub arguments: Value,
    /// What it did.
    pub outcome: Outcome,
}

impl fmt::Display for Finding {
    /// `panicked  initial {"text":""} (required fields at their low edges): …`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:<14} {} {} ({})",
            self.outcome.word(),
            self.tool,
            self.arguments,
            self.label
        )?;
        match self.outcome.message() {
            "" => Ok(()),
            message => write!(f, ": {}", message.replace('\n', " ")),
        }
    }
}

/// What [`call_every_tool`] found: every call, and what could not be called.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Report {
    /// Every call made, by tool name, edge cases first.
    pub calls: Vec<Finding>,
    /// The tools left out with [`EveryTool::skip`].
    pub skipped: Vec<String>,
    /// The tools for which no value the schema accepts could be made (a schema nothing
    /// satisfies, or one the generator does not read): not called.
    pub ungenerated: Vec<String>,
    /// How many generated values the schemas refused (never sent).
    pub not_generated: usize,
    /// How long the run took.
    pub took: Duration,
}

impl Report {
    /// The calls that found a problem ([`Outcome::is_problem`]).
    pub fn problems(&self) -> impl Iterator<Item = &Finding> {
        self.calls.iter().filter(|call| call.outcome.is_problem())
    }

    /// The calls whose arguments the schema accepts and the tool refused ([`Outcome::Refused`]).
    pub fn refusals(&self) -> impl Iterator<Item = &Finding> {
        self.calls
            .iter()
            .filter(|call| matches!(call.outcome, Outcome::Refused { .. }))
    }

    /// The calls of one tool.
    pub fn of<'a>(&'a self, tool: &'a str) -> impl Iterator<Item = &'a Finding> + 'a {
        self.calls.iter().filter(move |call| call.tool == tool)
    }

    /// How many calls ended as `word` ([`Outcome::word`]).
    pub fn count(&self, word: &str) -> usize {
        self.calls
            .iter()
            .filter(|call| call.outcome.word() == word)
            .count()
    }

    /// Panics, with this report, if a call found a problem or a tool could not be called.
    #[track_caller]
    pub fn assert_healthy(&self) {
        if self.problems().next().is_some() || !self.ungenerated.is_empty() {
            panic!("call_every_tool found problems:\n{self}");
        }
    }
}

impl Report {
    /// Panics, with this report, as [`assert_healthy`](Self::assert_healthy) does, and also if
    /// a tool refused arguments its schema accepts: for a registry whose schemas say every
    /// rule.
    #[track_caller]
    pub fn assert_no_refusals(&self) {
        self.assert_healthy();
        if self.refusals().next().is_some() {
            let lines: Vec<String> = self.refusals().map(ToString::to_string).collect();
            panic!(
                "call_every_tool: tools refused arguments their schemas accept:\n{}",
                lines.join("\n")
            );
        }
    }
}

impl fmt::Display for Report {
    /// A summary line, one line per problem, one per tool that refused arguments its schema
    /// accepts (the first such call), then the tools not called.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut tools: Vec<&str> = self.calls.iter().map(|call| call.tool.as_str()).collect();
        tools.dedup();
        write!(
            f,
            "{} tools, {} calls in {:.1?}:",
            tools.len(),
            self.calls.len(),
            self.took
        )?;
        for word in [
            "ok",
            "failed",
            "held",
            "panicked",
            "timed out",
            "invalid output",
            "refused",
        ] {
            let count = self.count(word);
            if count > 0 {
                write!(f, " {count} {word},")?;
            }
        }
        writeln!(f)?;
        for problem in self.problems() {
            writeln!(f, "{problem}")?;
        }
        let mut refused: Vec<&str> = Vec::new();
        for call in self.refusals() {
            if !refused.contains(&call.tool.as_str()) {
                refused.push(&call.tool);
                let of = self.of(&call.tool).count();
                let times = self
                    .of(&call.tool)
                    .filter(|c| c.outcome.word() == "refused")
                    .count();
                writeln!(f, "{call} [{times} of {of} calls refused]")?;
            }
        }
        if !self.ungenerated.is_empty() {
            writeln!(
                f,
                "no arguments could be made for: {} (their schemas accept nothing the generator writes)",
                self.ungenerated.join(", ")
            )?;
        }
        if !self.skipped.is_empty() {
            writeln!(f, "skipped: {}", self.skipped.join(", "))?;
        }
        Ok(())
    }
}
