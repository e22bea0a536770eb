//! `scheduler.*`: recurring jobs kept in one JSON file.
//!
//! The tools only keep the list; running the jobs is the host's business. Every change is one
//! read-modify-write of the file under an OS lock ([`tool_registry::store`]), so processes
//! sharing the schedule lose no job, and the new file replaces the old one atomically, so a
//! crash never leaves half a schedule behind. Keys the file holds that these tools do not know
//! (at the top or in a job) are kept.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use tool_registry::store::JsonFile;
use tool_registry::{Ctx, State, ToolError, ToolResult, tool};

use crate::Config;
use crate::error::{failed, invalid};
use crate::fsutil;

/// The most jobs the schedule holds.
pub const MAX_JOBS: usize = 500;

/// One scheduled job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Job {
    /// Unique name.
    pub name: String,
    /// When it runs, normalized: `*/15 * * * *`, `@daily` or `every 30m`.
    pub schedule: String,
    /// What to run.
    pub command: String,
    /// Why the job exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// When it was added (RFC 3339, UTC).
    pub created_at: String,
    /// Who added it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// Keys of the job these tools do not know, kept as they are.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The file's layout.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ScheduleFile {
    #[serde(default)]
    version: u32,
    #[serde(default)]
    jobs: Vec<Job>,
    /// Keys these tools do not know, kept as they are.
    #[serde(flatten)]
    other: Map<String, Value>,
}

/// Add a recurring job to the scheduler.
///
/// `schedule` is a five-field cron expression (`minute hour day-of-month month day-of-week`,
/// e.g. `*/15 * * * *` or `0 9 * * 1-5`), a shortcut (`@hourly`, `@daily`, `@weekly`,
/// `@monthly`, `@yearly`), or an interval (`every 30m`, `every 2h`, at least one second).
/// Job names are unique.
#[tool(
    name = "scheduler.add_job",
    version = "1.0.0",
    category = "scheduling",
    tags(scheduler, write),
    tier = "medium",
    cost = "free",
    permission = "admin",
    idempotent = false,
    open_world = false,
    sequential
)]
pub async fn add_job(
    #[arg(desc = "A unique name: letters, digits, `_`, `-` and `.`, at most 64 characters")]
    name: String,
    #[arg(desc = "When to run: cron (`*/15 * * * *`), `@daily`-style shortcut, or `every 30m`")]
    schedule: String,
    #[arg(desc = "The command the job runs")] command: String,
    #[arg(desc = "Why the job exists")] description: Option<String>,
    ctx: &Ctx,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    check_name(&name)?;
    let schedule = normalize_schedule(&schedule).map_err(|e| invalid("schedule", e))?;
    let command = command.trim().to_owned();
    if command.is_empty() {
        return Err(invalid("command", "is empty; say what the job runs"));
    }
    let job = Job {
        name,
        schedule,
        command,
        description: description
            .map(|d| d.trim().to_owned())
            .filter(|d| !d.is_empty()),
        created_at: fsutil::now_rfc3339(),
        created_by: ctx.user().map(str::to_owned),
        other: Map::new(),
    };

    let added = job.clone();
    update(&config.schedule_file, move |file| {
        if file.jobs.iter().any(|existing| existing.name == added.name) {
            return Err(invalid(
                "name",
                format!(
                    "a job named {:?} already exists; remove it first or pick another name",
                    added.name
                ),
            ));
        }
        if file.jobs.len() >= MAX_JOBS {
            return Err(failed(format!(
                "the schedule already holds {MAX_JOBS} jobs; remove one first"
            )));
        }
        file.jobs.push(added);
        Ok(())
    })
    .await?;
    Ok(ToolResult::ok(json!(job))
        .with_message(format!("Scheduled {:?} ({}).", job.name, job.schedule))
        .with_side_effect(format!("scheduled:{}", job.name)))
}

/// List the scheduled jobs, sorted by name.
#[tool(
    name = "scheduler.list_jobs",
    version = "1.0.0",
    category = "scheduling",
    tags(scheduler, read),
    tier = "medium",
    cost = "free",
    permission = "user",
    read_only,
    idempotent,
    open_world = false
)]
pub async fn list_jobs(config: State<Config>) -> Result<Vec<Job>, ToolError> {
    let file = schedule(&config.schedule_file);
    let read = tokio::task::spawn_blocking(move || file.read::<ScheduleFile>()).await;
    let mut jobs = read.map_err(failed)?.map_err(failed)?.jobs;
    jobs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(jobs)
}

/// Remove a scheduled job by name.
#[tool(
    name = "scheduler.remove_job",
    version = "1.0.0",
    category = "scheduling",
    tags(scheduler, write),
    tier = "medium",
    cost = "free",
    permission = "admin",
    destructive,
    open_world = false,
    sequential
)]
pub async fn remove_job(
    #[arg(desc = "The name of the job to remove")] name: String,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    let job = update(&config.schedule_file, move |file| {
        let Some(at) = file.jobs.iter().position(|job| job.name == name) else {
            let known: Vec<&str> = file.jobs.iter().map(|job| job.name.as_str()).collect();
            let hint = if known.is_empty() {
                "the schedule is empty".to_owned()
            } else {
                format!("the jobs are {}", known.join(", "))
            };
            return Err(invalid(
                "name",
                format!("there is no job named {name:?}; {hint}"),
            ));
        };
        Ok(file.jobs.remove(at))
    })
    .await?;
    Ok(ToolResult::ok(json!(job))
        .with_message(format!("Removed {:?}.", job.name))
        .with_side_effect(format!("removed:{}", job.name)))
}

fn schedule(path: &Path) -> JsonFile {
    JsonFile::new(path, "schedule file")
}

/// One change of the schedule under its lock, off the async threads (the lock may wait for
/// another process). The jobs are written sorted by name.
async fn update<R: Send + 'static>(
    path: &Path,
    change: impl FnOnce(&mut ScheduleFile) -> Result<R, ToolError> + Send + 'static,
) -> Result<R, ToolError> {
    let file = schedule(path);
    tokio::task::spawn_blocking(move || {
        file.update(|doc: &mut ScheduleFile| {
            let out = change(doc)?;
            doc.version = 1;
            doc.jobs.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(out)
        })
    })
    .await
    .map_err(failed)?
}

fn check_name(name: &str) -> Result<(), ToolError> {
    if name.is_empty() || name.len() > 64 {
        return Err(invalid("name", "must have 1 to 64 characters"));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return Err(invalid(
            "name",
            format!("{bad:?} is not allowed; use letters, digits, `_`, `-` and `.`"),
        ));
    }
    Ok(())
}

/// The five cron fields: name, least and greatest value.
const CRON_FIELDS: [(&str, u32, u32); 5] = [
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
];

const SHORTCUTS: [&str; 7] = [
    "@hourly",
    "@daily",
    "@midnight",
    "@weekly",
    "@monthly",
    "@yearly",
    "@annually",
];

/// Checks a schedule and returns it in one spelling: fields separated by one space,
/// `@every 5m` written `every 5m`.
pub fn normalize_schedule(schedule: &str) -> Result<String, String> {
    let words: Vec<&str> = schedule.split_whitespace().collect();
    let Some(first) = words.first() else {
        return Err(
            "is empty; write a cron expression such as `*/15 * * * *`, `@daily` or `every 30m`"
                .into(),
        );
    };
    let lower = first.to_ascii_lowercase();
    if lower == "every" || lower == "@every" {
        let text = words[1..].join(" ");
        let interval = humantime::parse_duration(&text)
            .map_err(|e| format!("cannot read the interval {text:?} ({e}); write it like `every 30m` or `every 1h 30m`"))?;
        if interval.as_secs() < 1 {
            return Err("the interval must be at least one second".into());
        }
        return Ok(format!("every {text}"));
    }
    if lower.starts_with('@') {
        if words.len() == 1 && SHORTCUTS.contains(&lower.as_str()) {
            return Ok(lower);
        }
        return Err(format!(
            "unknown shortcut {first:?}; use one of {} or `every <interval>`",
            SHORTCUTS.join(", ")
        ));
    }
    if words.len() != CRON_FIELDS.len() {
        return Err(format!(
            "a cron expression has 5 fields (minute hour day-of-month month day-of-week); {:?} has {}",
            words.join(" "),
            words.len()
        ));
    }
    for (field, (what, min, max)) in words.iter().zip(CRON_FIELDS) {
        check_cron_field(field, min, max)
            .map_err(|problem| format!("the {what} field {field:?} {problem}"))?;
    }
    Ok(words.join(" "))
}

/// `*`, `n`, `a-b`, any of them with `/step`, or a comma-separated list of those.
fn check_cron_field(field: &str, min: u32, max: u32) -> Result<(), String> {
    for item in field.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => (range, Some(step)),
            None => (item, None),
        };
        if let Some(step) = step {
            match step.parse::<u32>() {
                Ok(n) if n >= 1 && n <= max.max(1) => {}
                _ => {
                    return Err(format!(
                        "has the step {step:?}; a step is a whole number from 1 to {max}"
                    ));
                }
            }
        }
        if range == "*" {
            continue;
        }
        let number = |text: &str| match text.parse::<u32>() {
            Ok(n) if (min..=max).contains(&n) => Ok(n),
            _ => Err(format!(
                "has {text:?}; use numbers from {min} to {max}, `*`, ranges `a-b`, steps `/n` and lists `a,b`"
            )),
        };
        match range.split_once('-') {
            Some((from, to)) => {
                if number(from)? > number(to)? {
                    return Err(format!("has the range {range:?}, which runs backwards"));
                }
            }
            None => {
                number(range)?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::normalize_schedule;

    #[test]
    fn accepts_cron_shortcuts_and_intervals() {
        for (input, normal) in [
            ("*/15 * * * *", "*/15 * * * *"),
            ("  0   9 * * 1-5 ", "0 9 * * 1-5"),
            ("0,30 8-18/2 1 1,6,12 0", "0,30 8-18/2 1 1,6,12 0"),
            ("@Daily", "@daily"),
            ("every 30m", "every 30m"),
            ("@every 1h 30m", "every 1h 30m"),
        ] {
            assert_eq!(normalize_schedule(input).as_deref(), Ok(normal), "{input}");
        }
    }

    #[test]
    fn refuses_what_it_cannot_read_and_says_where() {
        for (input, expected) in [
            ("", "is empty"),
            ("* * * *", "has 5 fields"),
            ("60 * * * *", "the minute field \"60\""),
            ("* 24 * * *", "the hour field \"24\""),
            ("* * 0 * *", "the day of month field \"0\""),
            ("* * * 5-2 *", "runs backwards"),
            ("*/0 * * * *", "step"),
            ("MON * * * *", "the minute field"),
            ("@sometimes", "unknown shortcut"),
            ("every soon", "cannot read the interval"),
            ("every 10ms", "at least one second"),
        ] {
            let error = normalize_schedule(input).unwrap_err();
            assert!(error.contains(expected), "{input}: {error}");
        }
    }
}
