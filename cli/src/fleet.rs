//! `--redis URL`: every command as an instance of a fleet. Rate-limit counts, pending
//! approvals, switches and module manifests live in that Redis instead of files, so any number
//! of `toolreg` processes and servers on any number of machines share them.

use std::io::Write;

use super::output::{EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, shown};
use super::runtime::block_on;
use super::switches::SwitchArgs;
use tool_registry_redis::{DEFAULT_PREFIX, Fleet};

/// The Redis a fleet shares when `--redis` is not given.
pub const REDIS_ENV: &str = "TOOLREG_REDIS";

/// The fleet flags.
#[derive(clap::Args)]
pub(super) struct FleetArgs {
    /// Share rate limits, approvals, switches and module manifests with every instance on this
    /// Redis: redis://[user:password@]host:port[/db] (a password may come from
    /// $TOOLREG_REDIS_PASSWORD instead) [default: $TOOLREG_REDIS].
    #[arg(long, global = true, value_name = "URL")]
    redis: Option<String>,
    /// The prefix of this deployment's keys, so that several can share one Redis.
    #[arg(long, global = true, value_name = "PREFIX", default_value = DEFAULT_PREFIX)]
    redis_prefix: String,
    /// The longest any operation on Redis may take, connecting included, as `2s` or `500ms`.
    /// Once Redis has not answered, the operations that follow within that time fail at once:
    /// a command waits one timeout in all [default: 500ms].
    #[arg(long, global = true, value_name = "DURATION", value_parser = positive_duration)]
    redis_timeout: Option<std::time::Duration>,
}

/// A duration of more than zero, as `500ms` or `2s`.
fn positive_duration(text: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(text) {
        Ok(duration) if duration.is_zero() => Err("it must be more than zero".to_owned()),
        Ok(duration) => Ok(duration),
        Err(error) => Err(error.to_string()),
    }
}

impl FleetArgs {
    /// The fleet, when one is named; a URL that does not read is a usage error (without the
    /// URL, which may hold a password).
    pub(super) fn fleet(&self, err: &mut dyn Write) -> Result<Option<Fleet>, i32> {
        let url = self
            .redis
            .clone()
            .or_else(|| std::env::var(REDIS_ENV).ok().filter(|url| !url.is_empty()));
        let Some(url) = url else {
            return Ok(None);
        };
        match Fleet::new(&url) {
            Ok(fleet) => {
                let fleet = fleet.prefix(self.redis_prefix.clone());
                Ok(Some(match self.redis_timeout {
                    Some(timeout) => fleet.timeout(timeout),
                    None => fleet,
                }))
            }
            Err(error) => {
                let _ = writeln!(err, "error: {error}");
                Err(EXIT_USAGE)
            }
        }
    }
}

/// Reads the fleet's switches into `registry`, and for a command that serves, follows them;
/// with Redis unreachable, says so and goes on without them.
pub(super) fn join(
    fleet: &Fleet,
    registry: &std::sync::Arc<tool_registry_core::Registry>,
    serves: bool,
    err: &mut dyn Write,
) -> Option<tool_registry_redis::Following> {
    let joined = block_on(err, async {
        if serves {
            fleet.join(registry.clone()).await.map(Some)
        } else {
            let switches = fleet.switches().await?;
            tool_registry_core::registry::SwitchSet::default().apply(&switches, registry);
            Ok(None)
        }
    })?;
    match joined {
        Ok(following) => following,
        Err(error) => {
            let _ = writeln!(
                err,
                "warning: the fleet's switches are not applied: {error}"
            );
            None
        }
    }
}

/// `disable` (`off`) and `enable` across the fleet.
pub(super) fn switch(
    fleet: &Fleet,
    args: &SwitchArgs,
    off: bool,
    registry: &tool_registry_core::Registry,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let selector = args.selector(registry);
    let stored = if off {
        block_on(err, fleet.disable(&selector))
    } else {
        block_on(err, fleet.enable(&selector))
    };
    match stored {
        Some(Ok(())) => {
            let (tool_registry_core::registry::Selector::Name(value)
            | tool_registry_core::registry::Selector::Tag(value)
            | tool_registry_core::registry::Selector::Category(value)) = &selector;
            let verb = if off { "disabled" } else { "enabled" };
            let _ = writeln!(
                out,
                "{verb} {} across the fleet at {}",
                shown(value),
                fleet.address()
            );
            EXIT_OK
        }
        Some(Err(error)) => {
            let _ = writeln!(err, "error: {error}");
            EXIT_TOOL_ERROR
        }
        None => EXIT_TOOL_ERROR,
    }
}
