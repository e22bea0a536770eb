//! Questions on the stateless revision (2026-07-28, SEP-2322): a tool's
//! [`Ctx::ask`](tool_registry_core::Ctx::ask), [`Ctx::sample`](tool_registry_core::Ctx::sample)
//! and [`Ctx::roots`](tool_registry_core::Ctx::roots) become an `input_required` result, and the
//! call resumes when the client sends the request again with its answers.
//!
//! A call resumes by running again with the answers in hand: each question is looked up by
//! its name (`inputRequests` key, [`Form::named`](tool_registry_core::call::Form::named), `q1`,
//! `q2`, ... by default) among the answers given so far; the first unanswered ones are raised,
//! the run is dropped, and the answer is an `input_required` result asking them. The answers
//! of earlier rounds ride in `requestState`, sealed (HMAC-SHA256 with a key derived from the
//! registry's approval key, the same on every instance of a fleet that shares it), bound to
//! the caller, the method and its target and arguments, and expiring after [`STATE_TTL`]; a
//! state is redeemed once on an instance ([`Spent`]). Nothing is kept between rounds but that
//! record of spent states, so a call that asks nothing costs nothing, and any instance can
//! answer the next round: no session affinity.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    RequestStateCodec, SealOptions,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::Notify;
use tool_registry_core::Scope;

/// How `requestState` marks the answers of earlier rounds (an approval token is
/// `approval.`).
pub(super) const STATE_PREFIX: &str = "ask.";

/// How long a round's `requestState` stays good.
pub const STATE_TTL: Duration = Duration::from_secs(600);

/// The most the answers carried from round to round may hold, as JSON: a call that needs more
/// is refused rather than handing a client an ever larger state.
pub const MAX_STATE_BYTES: usize = 1 << 20;

/// The most answers one request may bring (`inputResponses` keys).
const MAX_RESPONSES: usize = 64;

/// What `requestState` carries, sealed.
#[derive(Serialize, Deserialize)]
struct Carried {
    /// The answers so far, by question name.
    answers: BTreeMap<String, Value>,
    /// Drawn per round: what [`Spent`] remembers.
    nonce: String,
}

/// The states redeemed on this instance, until they expire: a state answers one round once.
#[derive(Clone, Default)]
pub(super) struct Spent(Arc<Mutex<HashMap<String, Instant>>>);

/// How many spent states an instance remembers at most; past it, expired ones are dropped,
/// and then the oldest.
const MAX_SPENT: usize = 100_000;

impl Spent {
    /// Records `nonce` as redeemed; `false` when it already was.
    fn redeem(&self, nonce: &str, ttl: Duration) -> bool {
        let mut spent = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        if spent.len() >= MAX_SPENT {
            spent.retain(|_, at| now.duration_since(*at) < ttl);
            if spent.len() >= MAX_SPENT
                && let Some(oldest) = spent
                    .iter()
                    .min_by_key(|(_, at)| **at)
                    .map(|(k, _)| k.clone())
            {
                spent.remove(&oldest);
            }
        }
        spent.insert(nonce.to_owned(), now).is_none()
    }
}

/// The sealing of states: the codec, made from the registry's derived key on first use.
#[derive(Clone)]
pub(super) struct Sealer {
    codec: Arc<tokio::sync::OnceCell<RequestStateCodec>>,
    pub(super) spent: Spent,
    /// How long a state stays good ([`STATE_TTL`] unless set).
    pub(super) ttl: Duration,
}

impl Default for Sealer {
    fn default() -> Self {
        Self {
            codec: Arc::default(),
            spent: Spent::default(),
            ttl: STATE_TTL,
        }
    }
}

impl Sealer {
    async fn codec(
        &self,
        registry: &tool_registry_core::Registry,
    ) -> Result<&RequestStateCodec, ErrorData> {
        self.codec
            .get_or_try_init(|| async {
                let key = registry
                    .derived_key("mcp/request-state")
                    .await
                    .map_err(|error| {
                        ErrorData::internal_error(
                            format!("no key to seal questions with: {error}"),
                            None,
                        )
                    })?;
                RequestStateCodec::try_new(key.to_vec())
                    .map_err(|error| ErrorData::internal_error(error.to_string(), None))
            })
            .await
    }
}

/// What binds a state to its call: the caller, the method, its target and its arguments (as
/// `serde_json` writes them).
pub(super) fn binding(caller: &str, method: &str, target: &str, arguments: &str) -> Vec<u8> {
    let mut bound = Vec::new();
    for part in [caller, method, target, arguments] {
        bound.extend_from_slice(&(part.len() as u64).to_le_bytes());
        bound.extend_from_slice(part.as_bytes());
    }
    bound
}

/// A call's [`binding`], made when first needed: a call that brings no state and asks nothing
/// never writes its arguments out for it.
pub(super) struct Binding<'a> {
    scope: &'a Scope,
    method: &'a str,
    target: &'a str,
    /// The arguments as `serde_json` writes them.
    arguments: &'a (dyn Fn() -> String + Sync),
    made: std::sync::OnceLock<Vec<u8>>,
}

impl<'a> Binding<'a> {
    pub(super) fn new(
        scope: &'a Scope,
        method: &'a str,
        target: &'a str,
        arguments: &'a (dyn Fn() -> String + Sync),
    ) -> Self {
        Self {
            scope,
            method,
            target,
            arguments,
            made: std::sync::OnceLock::new(),
        }
    }

    /// The binding's bytes.
    fn bytes(&self) -> &[u8] {
        self.made.get_or_init(|| {
            let caller = caller_key(self.scope);
            binding(&caller, self.method, self.target, &(self.arguments)())
        })
    }
}

/// The questions of one run of a call: the answers it has, the ones it raised.
pub(super) struct Rounds {
    answers: BTreeMap<String, Value>,
    used: Mutex<BTreeSet<String>>,
    raised: Mutex<InputRequests>,
    signal: Notify,
    capabilities: Option<ClientCapabilities>,
    /// The capabilities the call asked for that the client did not declare.
    missing: Mutex<BTreeSet<&'static str>>,
}

/// What a question is.
pub(super) enum Asked {
    /// Answered: the client's answer, as it sent it.
    Answered(Value),
    /// Raised: the run stops here and the client is asked.
    Raised,
}

impl Rounds {
    /// The rounds of a request: the answers its `requestState` carries (opened and checked)
    /// and its `inputResponses`.
    pub(super) async fn of(
        sealer: &Sealer,
        registry: &tool_registry_core::Registry,
        state: Option<&str>,
        responses: Option<&InputResponses>,
        binding: &Binding<'_>,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<Self, ErrorData> {
        let refused = || {
            ErrorData::invalid_params(
                "`requestState` is not one this server gave for this call, or it expired or was used; call again without it",
                None,
            )
        };
        let mut answers = BTreeMap::new();
        if let Some(state) = state {
            let sealed = state.strip_prefix(STATE_PREFIX).ok_or_else(refused)?;
            let codec = sealer.codec(registry).await?;
            // The client hears one answer whatever went wrong; an operator reads why.
            let carried: Carried = codec.open_json_with(sealed, binding.bytes()).map_err(|error| {
                tracing::info!(target: "tool_registry::mcp", %error, "a requestState was refused");
                refused()
            })?;
            if !sealer.spent.redeem(&carried.nonce, sealer.ttl) {
                tracing::info!(target: "tool_registry::mcp", "a requestState was refused: used already");
                return Err(refused());
            }
            answers = carried.answers;
        }
        if let Some(responses) = responses {
            if responses.len() > MAX_RESPONSES {
                return Err(ErrorData::invalid_params(
                    format!(
                        "`inputResponses` holds {} answers, more than the {MAX_RESPONSES} one request may bring",
                        responses.len()
                    ),
                    None,
                ));
            }
            for (key, response) in responses {
                if !response.is_object() {
                    return Err(ErrorData::invalid_params(
                        format!(
                            "the answer `{}` in `inputResponses` is not a result object",
                            key.escape_debug()
                        ),
                        None,
                    ));
                }
                answers.insert(key.clone(), response.clone());
            }
        }
        Ok(Self {
            answers,
            used: Mutex::default(),
            raised: Mutex::default(),
            signal: Notify::new(),
            capabilities,
            missing: Mutex::default(),
        })
    }

    /// The client's capabilities, as the request declares them.
    pub(super) fn capabilities(&self) -> Option<&ClientCapabilities> {
        self.capabilities.as_ref()
    }

    /// Notes that the call asked for `capability`, which the client did not declare.
    pub(super) fn lacks(&self, capability: &'static str) {
        lock(&self.missing).insert(capability);
    }

    /// The missing-capability error (`-32021`, SEP-2575) for a call that failed after asking
    /// for capabilities the client did not declare, naming them in
    /// `data.requiredCapabilities`; `None` when it asked for none.
    pub(super) fn missing_error(&self) -> Option<ErrorData> {
        let missing = lock(&self.missing);
        if missing.is_empty() {
            return None;
        }
        let required: serde_json::Map<String, Value> = (missing.iter())
            .map(|capability| {
                (
                    (*capability).to_owned(),
                    Value::Object(serde_json::Map::new()),
                )
            })
            .collect();
        let required: ClientCapabilities = serde_json::from_value(Value::Object(required)).ok()?;
        Some(ErrorData::missing_required_client_capability(required))
    }

    /// The answer the request brings to the question `key`, if any.
    pub(super) fn answer(&self, key: &str) -> Option<Value> {
        let answer = self.answers.get(key)?.clone();
        lock(&self.used).insert(key.to_owned());
        Some(answer)
    }

    /// The answer to the question `key`, or the question raised.
    pub(super) fn ask(&self, key: String, request: impl FnOnce() -> InputRequest) -> Asked {
        if let Some(answer) = self.answers.get(&key) {
            lock(&self.used).insert(key);
            return Asked::Answered(answer.clone());
        }
        lock(&self.raised).insert(key, request());
        self.signal.notify_one();
        Asked::Raised
    }

    /// Waits until a question is raised.
    pub(super) async fn raised(&self) {
        self.signal.notified().await;
    }

    /// The questions raised, and the state that carries the answers used so far to the next
    /// round.
    pub(super) async fn next_round(
        &self,
        sealer: &Sealer,
        registry: &tool_registry_core::Registry,
        binding: &Binding<'_>,
    ) -> Result<(InputRequests, String), ErrorData> {
        let answers = {
            let used = lock(&self.used);
            (self.answers.iter())
                .filter(|(key, _)| used.contains(*key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        };
        let carried = Carried {
            answers,
            nonce: nonce()?,
        };
        let bytes = serde_json::to_vec(&carried.answers).map_or(0, |json| json.len());
        if bytes > MAX_STATE_BYTES {
            return Err(ErrorData::invalid_params(
                format!(
                    "the answers of this call hold {bytes} bytes, more than the {MAX_STATE_BYTES} a state carries"
                ),
                None,
            ));
        }
        tracing::debug!(target: "tool_registry::mcp", questions = lock(&self.raised).len(), answered = carried.answers.len(), "a call asks its client (input_required)");
        let codec = sealer.codec(registry).await?;
        let sealed = codec
            .seal_json_with(
                &carried,
                &SealOptions::new()
                    .associated_data(binding.bytes())
                    .ttl(sealer.ttl),
            )
            .map_err(|error| ErrorData::internal_error(error.to_string(), None))?;
        Ok((
            std::mem::take(&mut *lock(&self.raised)),
            format!("{STATE_PREFIX}{sealed}"),
        ))
    }
}

/// Who the caller is, for binding a `requestState` to it.
pub(super) fn caller_key(scope: &Scope) -> String {
    format!(
        "{}\u{1f}{}",
        scope.user_id().unwrap_or(""),
        scope.limit_key()
    )
}

/// `work`'s answer, or the questions it raised as an `input_required` result.
pub(super) async fn or_raised<T>(
    work: impl Future<Output = Result<T, ErrorData>>,
    rounds: Option<&Rounds>,
    sealer: &Sealer,
    registry: &tool_registry_core::Registry,
    bound: &Binding<'_>,
) -> Result<Result<T, InputRequiredResult>, ErrorData> {
    let Some(rounds) = rounds else {
        return work.await.map(Ok);
    };
    tokio::select! {
        biased;
        done = work => done.map(Ok),
        () = rounds.raised() => {
            let (requests, state) = rounds.next_round(sealer, registry, bound).await?;
            Ok(Err(InputRequiredResult::new(Some(requests), Some(state))))
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn nonce() -> Result<String, ErrorData> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|error| {
        ErrorData::internal_error(format!("no randomness for a state: {error}"), None)
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_redeemed_once() {
        let spent = Spent::default();
        assert!(spent.redeem("a", STATE_TTL));
        assert!(!spent.redeem("a", STATE_TTL));
        assert!(spent.redeem("b", STATE_TTL));
    }

    #[test]
    fn bindings_of_different_calls_differ() {
        let a = binding("ada", "tools/call", "x", r#"{"n":1}"#);
        let b = binding("ada", "tools/call", "x", r#"{"n":2}"#);
        let c = binding("bob", "tools/call", "x", r#"{"n":1}"#);
        let d = binding("ad", "atools/call", "x", r#"{"n":1}"#);
        assert!(a != b && a != c && a != d);
    }
}
