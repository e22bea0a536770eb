//! The hooks of one registry, and of one call: `before` in the order they were registered,
//! `after` in the reverse order, each within the call's deadline and with its panics caught.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use serde_json::Value;

use super::{Acted, After, Before, Hook, HookCall};
use crate::audit::Tick;
use crate::call::{ToolError, ToolResult, panicked, with_timeout};
use crate::def::Tool;

/// The most hooks one registry holds: which apply to a tool is one bit each.
pub const MAX_HOOKS: usize = 64;

/// Which tools a hook registered for some is for.
pub(crate) type ToolFilter = Box<dyn Fn(&Tool) -> bool + Send + Sync>;

/// A hook as the registry keeps it: its name, and which tools it is for besides its own
/// [`Hook::applies_to`].
struct Registered {
    hook: Arc<dyn Hook>,
    name: Arc<str>,
    on: Option<ToolFilter>,
}

/// The hooks of one registry, in the order they were registered.
#[derive(Default)]
pub(crate) struct HookSet {
    hooks: Vec<Registered>,
}

impl HookSet {
    /// Adds `hook`, for the tools `on` accepts (every tool: `None`). `Err` past [`MAX_HOOKS`].
    pub(crate) fn push(
        &mut self,
        hook: Arc<dyn Hook>,
        on: Option<ToolFilter>,
    ) -> Result<(), usize> {
        if self.hooks.len() >= MAX_HOOKS {
            return Err(MAX_HOOKS);
        }
        let name = Arc::from(hook.name());
        self.hooks.push(Registered { hook, name, on });
        Ok(())
    }

    /// Which hooks apply to `tool`: bit `i` for the `i`-th registered. Asked once per tool
    /// and snapshot.
    pub(crate) fn mask(&self, tool: &Tool) -> u64 {
        let mut mask = 0;
        for (i, registered) in self.hooks.iter().enumerate() {
            let on = registered.on.as_ref().is_none_or(|on| on(tool));
            // A hook whose `applies_to` panics applies: it runs, and fails its calls.
            let applies = on
                && std::panic::catch_unwind(AssertUnwindSafe(|| registered.hook.applies_to(tool)))
                    .unwrap_or(true);
            if applies {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// The names of the hooks `mask` selects, in the order their `before` sides run.
    pub(crate) fn names(&self, mask: u64) -> impl Iterator<Item = &str> {
        self.of(mask).map(|registered| &*registered.name)
    }

    fn of(&self, mask: u64) -> impl DoubleEndedIterator<Item = &Registered> {
        self.hooks
            .iter()
            .enumerate()
            .filter(move |(i, _)| mask & (1 << i) != 0)
            .map(|(_, registered)| registered)
    }

    /// Whether the registry has no hook at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

/// The hooks of one call: the registry's set and which of them apply to the tool.
#[derive(Clone, Copy)]
pub(crate) struct Hooks<'a> {
    pub(crate) set: &'a HookSet,
    pub(crate) mask: u64,
}

impl Hooks<'_> {
    /// Whether any hook applies.
    #[inline]
    pub(crate) fn any(self) -> bool {
        self.mask != 0
    }
}

/// How long is left of a call that started at `started` with `limit`.
fn left(started: Tick, limit: Duration) -> Duration {
    let spent = Duration::from_secs_f64(Tick::now().millis_since(started).max(0.0) / 1000.0);
    limit.saturating_sub(spent)
}

/// `hook`'s decision, within the call's deadline and with its panics caught.
async fn decide(
    registered: &Registered,
    call: &HookCall<'_>,
    started: Tick,
    limit: Duration,
) -> Result<Before<'static>, ToolError> {
    let decision = std::panic::catch_unwind(AssertUnwindSafe(|| registered.hook.before(call)))
        .map_err(|payload| hook_panicked(&registered.name, payload))?;
    let Before::Later(later) = decision else {
        // Nothing borrowed is left in a decision that is not `Later`.
        return Ok(match decision {
            Before::Continue => Before::Continue,
            Before::Refuse(reason) => Before::Refuse(reason),
            Before::Rewrite(value) => Before::Rewrite(value),
            Before::Confirm(reason) => Before::Confirm(reason),
            Before::Later(_) => unreachable!(),
        });
    };
    let mut later = later;
    loop {
        let waited = with_timeout(left(started, limit), AssertUnwindSafe(later).catch_unwind())
            .await
            .ok_or(ToolError::TimedOut {
                tool: String::new(),
                after: limit,
            })?
            .map_err(|payload| hook_panicked(&registered.name, payload))?;
        match waited {
            Before::Later(next) => later = next,
            decided => return Ok(decided),
        }
    }
}

fn hook_panicked(name: &str, payload: Box<dyn std::any::Any + Send>) -> ToolError {
    match panicked(payload) {
        ToolError::Panicked { tool, message } => ToolError::Panicked {
            tool,
            message: format!("in hook `{name}`: {message}"),
        },
        other => other,
    }
}

/// The `before` side of `hooks`, in order, on `call`. A rewrite is validated by `validate`
/// before the next hook sees it. `Ok(Some(reason))`: a hook asked for approval.
pub(crate) async fn run_before(
    hooks: Hooks<'_>,
    call: &mut HookCall<'_>,
    started: Tick,
    limit: Duration,
    acted: &mut Vec<Acted>,
    mut validate: impl FnMut(Value) -> Result<(), ToolError>,
) -> Result<Option<String>, ToolError> {
    let mut confirm = None;
    for registered in hooks.set.of(hooks.mask) {
        match decide(registered, call, started, limit).await? {
            Before::Continue | Before::Later(_) => {}
            Before::Refuse(reason) => {
                acted.push(Acted::new(
                    &registered.name,
                    "refused",
                    Some(reason.clone()),
                ));
                return Err(ToolError::Refused {
                    tool: String::new(),
                    hook: registered.name.to_string(),
                    reason,
                });
            }
            Before::Rewrite(value) => {
                acted.push(Acted::new(&registered.name, "rewrote", None));
                let text = value.to_string();
                validate(value)?;
                call.replace(text);
            }
            Before::Confirm(reason) => {
                acted.push(Acted::new(
                    &registered.name,
                    "asked_approval",
                    Some(reason.clone()),
                ));
                confirm.get_or_insert(reason);
            }
        }
    }
    Ok(confirm)
}

/// The `after` side of `hooks`, in the reverse order, on `result`.
pub(crate) async fn run_after(
    hooks: Hooks<'_>,
    call: &HookCall<'_>,
    result: &mut ToolResult,
    started: Tick,
    limit: Duration,
    acted: &mut Vec<Acted>,
) -> Result<(), ToolError> {
    for registered in hooks.set.of(hooks.mask).rev() {
        let seen: &mut ToolResult = &mut *result;
        let done = std::panic::catch_unwind(AssertUnwindSafe(move || {
            let seen = seen;
            registered.hook.after(call, seen)
        }))
        .map_err(|payload| hook_panicked(&registered.name, payload))?;
        let done = match done {
            After::Later(later) => {
                let mut later = later;
                loop {
                    let waited =
                        with_timeout(left(started, limit), AssertUnwindSafe(later).catch_unwind())
                            .await
                            .ok_or(ToolError::TimedOut {
                                tool: String::new(),
                                after: limit,
                            })?
                            .map_err(|payload| hook_panicked(&registered.name, payload))?;
                    match waited {
                        After::Later(next) => later = next,
                        done => break done,
                    }
                }
            }
            After::Kept => After::Kept,
            After::Changed(how) => After::Changed(how),
        };
        if let After::Changed(how) = done {
            acted.push(Acted::new(
                &registered.name,
                "changed",
                Some(how.into_owned()),
            ));
        }
    }
    Ok(())
}
