//! The stages every call goes through, as one ordered list (`STAGES`), and the gates among
//! them: rate limits, the evaluation gate, confirmation by a person. The hooks of
//! [`hook`](crate::hook) and its built-ins (`cache`, `max_result_bytes`) are stages of the same
//! list.
//!
//! Each stage says whether it applies to a tool (`Stage::applies`) and whether it waits for
//! something outside the call (a store, a gate, a person: `Stage::waits`). A tool to which no
//! waiting stage applies takes the direct path (`direct`): the call future runs the rest in
//! place, without boxing the stages. That is decided once per tool, from this list; nothing else
//! says which tools are direct.
//!
//! | file | what |
//! | --- | --- |
//! | `mod.rs` | `STAGES`, `Stage`, `direct` |
//! | `gates.rs` | `Gates`: the gate, the stores and the key the waiting stages read |
//! | `rate_limit.rs` | stage 5 (rate limit): a call counted against `cooldown` and `daily_limit` |
//! | `decision.rs` | [`Gate`], the outside policy an application writes, and its [`Decision`] |
//! | `eval.rs` | stage 6 (eval gate): the gate asked under its timeout |
//! | `confirm.rs` | stage 7 (confirmation): the call kept, signed, under a fresh token |
//! | `limits.rs` | [`RateLimitStore`], the admission rule every store applies, the counts in memory |
//! | `limits_file.rs` | [`JsonFileRateLimits`]: the counts in a file shared by processes |
//! | `pending.rs` | [`PendingCall`]: a call waiting for a person, and its arguments in canonical form |
//! | `approval.rs` | [`ApprovalStore`]: pending calls in memory or in a shared file |
//! | `approval_key.rs` | [`ApprovalKey`]: the key pending calls are signed with, and their tokens |

use crate::def::Entry;

mod approval;
mod approval_key;
mod confirm;
mod decision;
mod eval;
mod gates;
mod limits;
mod limits_file;
mod pending;
mod rate_limit;

pub use approval::{ApprovalStore, InMemoryApprovals, JsonFileApprovals};
pub use approval_key::ApprovalKey;
pub(crate) use approval_key::new_token;
/// `#[async_trait]`, to implement [`Gate`] and the stores' traits.
pub use async_trait::async_trait;
pub use decision::{Decision, Gate};
pub(crate) use gates::Gates;
pub use limits::utc_day;
pub use limits::{InMemoryRateLimits, Limits, Permit, RateLimitStore, Refusal};
pub use limits_file::JsonFileRateLimits;
pub use pending::PendingCall;
pub(crate) use pending::{canonical, canonical_args, to_millis};

/// One stage of a call. [`STAGES`] lists them in the order every call takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Resolve the name or alias; a tool out of scope or switched off is an unknown tool.
    Scope,
    /// Read the arguments into what the handler takes; the handler is not started.
    Validate,
    /// The `before` side of the registry's hooks that apply, in the order they were
    /// registered: go on, refuse, rewrite the arguments (validated again), ask for approval.
    BeforeHooks,
    /// `cache`: a result kept for an identical call answers it, and the stages that guard
    /// running the tool (rate limit, eval gate, confirmation) have nothing to guard; a miss
    /// goes on, and runs the handler once for every identical call that misses meanwhile.
    Cache,
    /// Per user and tool: `cooldown` and `daily_limit`.
    RateLimit,
    /// An outside policy approves or blocks the call.
    EvalGate,
    /// A person approves the call first: it answers with a token and waits. For a tool that
    /// always asks, one whose `confirm_if` asks for these arguments, or a hook that asked.
    Confirmation,
    /// The handler, under its timeout, with panics caught.
    Handler,
    /// The `after` side of the hooks, in the reverse order: they may change the result.
    AfterHooks,
    /// `max_result_bytes`: a longer result shortened to fit, with a note.
    ResultCap,
    /// One record to the audit sink; the result stamped.
    Audit,
}

/// Every stage, in the order a call takes them.
pub(crate) const STAGES: [Stage; 11] = [
    Stage::Scope,
    Stage::Validate,
    Stage::BeforeHooks,
    Stage::Cache,
    Stage::RateLimit,
    Stage::EvalGate,
    Stage::Confirmation,
    Stage::Handler,
    Stage::AfterHooks,
    Stage::ResultCap,
    Stage::Audit,
];

impl Stage {
    /// Whether the stage has anything to do for calls of `tool`, when `hooked` says whether
    /// any of the registry's hooks applies to it.
    #[inline]
    pub(crate) fn applies(self, tool: &Entry, hooked: bool) -> bool {
        match self {
            Self::Scope | Self::Validate | Self::Handler | Self::Audit => true,
            Self::BeforeHooks | Self::AfterHooks => hooked,
            Self::RateLimit => tool.cooldown().is_some() || tool.daily_limit().is_some(),
            Self::EvalGate => tool.requires_gate(),
            Self::Confirmation => tool.confirm || tool.confirms_conditionally() || hooked,
            Self::Cache => tool.cache().is_some(),
            Self::ResultCap => tool.max_result_bytes().is_some(),
        }
    }

    /// Whether the stage waits for something outside the call: a store, a gate, a person, a
    /// hook.
    pub(crate) const fn waits(self) -> bool {
        matches!(
            self,
            Self::BeforeHooks
                | Self::RateLimit
                | Self::EvalGate
                | Self::Confirmation
                | Self::Cache
                | Self::AfterHooks
        )
    }

    /// The stage's name, as the pipeline's documentation lists it.
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Scope => "scope",
            Self::Validate => "validate",
            Self::BeforeHooks => "before hooks",
            Self::RateLimit => "rate limit",
            Self::EvalGate => "eval gate",
            Self::Confirmation => "confirmation",
            Self::Cache => "cache",
            Self::Handler => "handler",
            Self::AfterHooks => "after hooks",
            Self::ResultCap => "result cap",
            Self::Audit => "audit",
        }
    }
}

/// Whether calls of `tool` take the direct path when no hook applies to it: no stage that
/// waits applies. Computed once per tool, on its first call, and kept in its entry; a call
/// takes the direct path when this holds and none of the registry's hooks applies to the tool.
pub(crate) fn direct(tool: &Entry) -> bool {
    !STAGES
        .into_iter()
        .any(|stage| stage.waits() && stage.applies(tool, false))
}

#[cfg(test)]
mod tests {
    use super::STAGES;

    /// The pipeline's documentation lists the stages as `N. **name**`, in the order of
    /// [`STAGES`].
    #[test]
    fn the_pipeline_documentation_lists_the_stages_in_order() {
        let doc = include_str!("../exec/mod.rs");
        let listed: Vec<&str> = doc
            .lines()
            .filter_map(|line| line.strip_prefix("//! "))
            .filter_map(|line| {
                let (number, rest) = line.split_once(". **")?;
                number.parse::<usize>().ok()?;
                rest.split_once("**").map(|(name, _)| name)
            })
            .collect();
        let names: Vec<&str> = STAGES.iter().map(|stage| stage.name()).collect();
        assert_eq!(listed, names);
    }

    /// Every mention of a stage by number in the crate's source names the stage that
    /// [`STAGES`] has at that place: `Stage 6, eval gate`, `stage 11 (audit)`, `stages 2 to 10`.
    #[test]
    fn every_stage_named_by_number_is_the_stage_at_that_place() {
        let names: Vec<&str> = STAGES.iter().map(|stage| stage.name()).collect();
        let mut wrong = Vec::new();
        let mut files = vec![std::path::PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/src"
        ))];
        let mut seen = 0;
        while let Some(path) = files.pop() {
            if path.is_dir() {
                files.extend(
                    std::fs::read_dir(&path)
                        .unwrap()
                        .map(|entry| entry.unwrap().path()),
                );
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            for (at, _) in text.match_indices("tage") {
                let before = &text[..at];
                if !(before.ends_with('s') || before.ends_with('S')) {
                    continue;
                }
                let rest = &text[at + 4..];
                let (plural, rest) = match rest.strip_prefix("s ") {
                    Some(rest) => (true, rest),
                    None => (false, rest.strip_prefix(' ').unwrap_or("")),
                };
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                let Ok(number) = digits.parse::<usize>() else {
                    continue;
                };
                seen += 1;
                let after = &rest[digits.len()..];
                let place = format!(
                    "{}: stage{} {number}",
                    path.display(),
                    if plural { "s" } else { "" }
                );
                if !(1..=names.len()).contains(&number) {
                    wrong.push(format!("{place}: there are {} stages", names.len()));
                    continue;
                }
                let expected = names[number - 1];
                let named = after
                    .strip_prefix(", ")
                    .or_else(|| after.strip_prefix(" ("))
                    .filter(|_| !plural);
                if let Some(named) = named {
                    if !named.starts_with(expected) {
                        let shown: String = named.chars().take(20).collect();
                        wrong.push(format!("{place} is `{expected}`, not `{shown}`"));
                    }
                } else if plural {
                    let Some(last) = after
                        .strip_prefix(" to ")
                        .or_else(|| after.strip_prefix(" and "))
                    else {
                        wrong.push(format!("{place}: write a range as `stages N to M`"));
                        continue;
                    };
                    let last: String = last.chars().take_while(char::is_ascii_digit).collect();
                    if last
                        .parse::<usize>()
                        .is_ok_and(|last| last > names.len() || last <= number)
                    {
                        wrong.push(format!(
                            "{place} to {last}: not a range of the {} stages",
                            names.len()
                        ));
                    }
                }
            }
        }
        assert!(
            seen > 10,
            "the source names stages by number ({seen} found)"
        );
        assert!(
            wrong.is_empty(),
            "stages named against STAGES:\n{}",
            wrong.join("\n")
        );
    }
}
