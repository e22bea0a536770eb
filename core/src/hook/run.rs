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
        self.of(mask).map(|(_, registered)| &*registered.name)
    }

    /// The hooks `mask` selects, with their positions, in the order they were registered.
    fn of(&self, mask: u64) -> Selected<'_> {
        Selected {
            hooks: &self.hooks,
            mask,
        }
    }

    /// Whether the registry has no hook at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }
}

/// The hooks a mask selects, found bit by bit (a call pays for the hooks that apply to it,
/// not for every hook of the registry).
struct Selected<'a> {
    hooks: &'a [Registered],
    mask: u64,
}

impl<'a> Iterator for Selected<'a> {
    type Item = (usize, &'a Registered);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        while self.mask != 0 {
            let index = self.mask.trailing_zeros() as usize;
            self.mask &= self.mask - 1;
            if let Some(registered) = self.hooks.get(index) {
                return Some((index, registered));
            }
        }
        None
    }
}

impl DoubleEndedIterator for Selected<'_> {
    #[inline]
    fn next_back(&mut self) -> Option<Self::Item> {
        while self.mask != 0 {
            let index = 63 - self.mask.leading_zeros() as usize;
            self.mask &= !(1 << index);
            if let Some(registered) = self.hooks.get(index) {
                return Some((index, registered));
            }
        }
        None
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

fn hook_panicked(name: &str, payload: Box<dyn std::any::Any + Send>) -> ToolError {
    match panicked(payload) {
        ToolError::Panicked { tool, message } => ToolError::Panicked {
            tool,
            message: format!("in hook `{name}`: {message}"),
        },
        other => other,
    }
}

/// `future`, within the call's deadline and with its panics caught.
async fn wait<T>(
    name: &str,
    future: super::HookFuture<T>,
    started: Tick,
    limit: Duration,
) -> Result<T, ToolError> {
    with_timeout(
        left(started, limit),
        AssertUnwindSafe(future).catch_unwind(),
    )
    .await
    .ok_or(ToolError::TimedOut {
        tool: String::new(),
        after: limit,
    })?
    .map_err(|payload| hook_panicked(name, payload))
}

/// Where the `before` sides of a call's hooks stopped answering at once: the hook at `index`
/// waits, or asks for approval, with its decision.
pub(crate) struct Escalate {
    pub(crate) index: usize,
    pub(crate) decision: Before,
}

/// What one `before` decision does to the call: `Ok(true)` when it asked for approval.
fn apply(
    registered: &Registered,
    decision: Before,
    call: &mut HookCall<'_>,
    acted: &mut Vec<Acted>,
    validate: &mut impl FnMut(Value) -> Result<(), ToolError>,
    asked: &mut Option<String>,
) -> Result<(), ToolError> {
    match decision {
        Before::Continue | Before::Later(_) => Ok(()),
        Before::Refuse(reason) => {
            acted.push(Acted::new(
                &registered.name,
                "refused",
                Some(reason.clone()),
            ));
            Err(ToolError::Refused {
                tool: String::new(),
                hook: registered.name.to_string(),
                reason,
            })
        }
        Before::Rewrite(value) => {
            acted.push(Acted::new(&registered.name, "rewrote", None));
            let text = value.to_string();
            validate(value)?;
            call.replace(text);
            Ok(())
        }
        Before::Confirm(reason) => {
            acted.push(Acted::new(
                &registered.name,
                "asked_approval",
                Some(reason.clone()),
            ));
            asked.get_or_insert(reason);
            Ok(())
        }
    }
}

fn ask_before(registered: &Registered, call: &HookCall<'_>) -> Result<Before, ToolError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| registered.hook.before(call)))
        .map_err(|payload| hook_panicked(&registered.name, payload))
}

/// The `before` sides of `hooks` that answer at once, in order, on `call`: `Ok(None)` when
/// every one did; `Ok(Some(..))` at the first that waits or asks for approval, for
/// [`run_before_from`] to go on from. A rewrite is validated by `validate` before the next hook
/// sees it.
pub(crate) fn before_now(
    hooks: Hooks<'_>,
    call: &mut HookCall<'_>,
    acted: &mut Vec<Acted>,
    mut validate: impl FnMut(Value) -> Result<(), ToolError>,
) -> Result<Option<Escalate>, ToolError> {
    for (index, registered) in hooks.set.of(hooks.mask) {
        match ask_before(registered, call)? {
            // Nothing to drop: said so, so that the common answer costs no drop glue.
            decision @ Before::Continue => std::mem::forget(decision),
            decision @ (Before::Later(_) | Before::Confirm(_)) => {
                return Ok(Some(Escalate { index, decision }));
            }
            decision => apply(registered, decision, call, acted, &mut validate, &mut None)?,
        }
    }
    Ok(None)
}

/// The `before` sides of `hooks`, in order, on `call`, from the hook at `from` on (whose
/// decision is `pending` when it was asked already), each within the call's deadline. A
/// rewrite is validated by `validate` before the next hook sees it. `Ok(Some(reason))`: a hook
/// asked for approval.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_before_from(
    hooks: Hooks<'_>,
    call: &mut HookCall<'_>,
    started: Tick,
    limit: Duration,
    acted: &mut Vec<Acted>,
    mut validate: impl FnMut(Value) -> Result<(), ToolError>,
    from: usize,
    mut pending: Option<Before>,
) -> Result<Option<String>, ToolError> {
    let mut asked = None;
    for (index, registered) in hooks.set.of(hooks.mask) {
        if index < from {
            continue;
        }
        let mut decision = match pending.take() {
            Some(decision) => decision,
            None => ask_before(registered, call)?,
        };
        while let Before::Later(later) = decision {
            decision = wait(&registered.name, later, started, limit).await?;
        }
        apply(registered, decision, call, acted, &mut validate, &mut asked)?;
    }
    Ok(asked)
}

fn ask_after(
    registered: &Registered,
    call: &HookCall<'_>,
    result: &mut ToolResult,
) -> Result<After, ToolError> {
    std::panic::catch_unwind(AssertUnwindSafe(|| registered.hook.after(call, result)))
        .map_err(|payload| hook_panicked(&registered.name, payload))
}

fn note_after(registered: &Registered, done: After, acted: &mut Vec<Acted>) {
    if let After::Changed(how) = done {
        acted.push(Acted::new(
            &registered.name,
            "changed",
            Some(how.into_owned()),
        ));
    }
}

/// A hook's `after` side that waits: its position, and the future of its edit.
pub(crate) type Waiting = (usize, super::HookFuture<super::ResultEdit>);

/// The `after` sides of `hooks` that answer at once, in the reverse order, on `result`:
/// `Ok(Some(..))` at the first that waits, for [`run_after_from`] to go on from.
#[inline]
pub(crate) fn after_now(
    hooks: Hooks<'_>,
    call: &HookCall<'_>,
    result: &mut ToolResult,
    acted: &mut Vec<Acted>,
) -> Result<Option<Waiting>, ToolError> {
    for (index, registered) in hooks.set.of(hooks.mask).rev() {
        match ask_after(registered, call, result)? {
            After::Kept => {}
            After::Later(later) => return Ok(Some((index, later))),
            changed => note_after(registered, changed, acted),
        }
    }
    Ok(None)
}

/// The `after` sides of `hooks`, in the reverse order, on `result`, each within the call's
/// deadline; `waiting`: the hook to go on from, whose edit is on its way.
pub(crate) async fn run_after_from(
    hooks: Hooks<'_>,
    call: &HookCall<'_>,
    result: &mut ToolResult,
    started: Tick,
    limit: Duration,
    acted: &mut Vec<Acted>,
    mut waiting: Option<Waiting>,
) -> Result<(), ToolError> {
    for (index, registered) in hooks.set.of(hooks.mask).rev() {
        let done = match waiting.take() {
            Some((from, later)) if from == index => Some(later),
            Some(other) => {
                // Hooks after the one that waits, in this order, ran already.
                waiting = Some(other);
                continue;
            }
            None => match ask_after(registered, call, result)? {
                After::Later(later) => Some(later),
                done => {
                    note_after(registered, done, acted);
                    None
                }
            },
        };
        if let Some(later) = done {
            let edit = wait(&registered.name, later, started, limit).await?;
            let done = std::panic::catch_unwind(AssertUnwindSafe(|| edit(result)))
                .map_err(|payload| hook_panicked(&registered.name, payload))?;
            note_after(registered, done, acted);
        }
    }
    Ok(())
}
