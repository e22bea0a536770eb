//! What the front ends report beside the calls, through the `metrics` facade: a counter or a
//! gauge each, which costs an atomic load where no recorder is installed
//! ([`Metrics::install`](crate::Metrics) installs one), and the names of every metric.

/// Every metric's name, with what it counts.
pub mod names {
    /// Counter, labels `tool`, `outcome`: calls that ended, by how (`ok`, `failed` or an
    /// error's code). A name that is no tool the caller may see is counted as `tool="?"`.
    pub const CALLS: &str = "tool_registry_tool_calls_total";
    /// Histogram, label `tool`: how long calls took, in seconds.
    pub const CALL_DURATION: &str = "tool_registry_tool_call_duration_seconds";
    /// Counter, label `gate`: calls a stage refused (`scope`, `validate`, `hook:NAME`,
    /// `rate_limit`, `eval_gate`, `confirmation`, `batch`).
    pub const GATE_REFUSALS: &str = "tool_registry_gate_refusals_total";
    /// Counter, label `tool`: calls refused by a rate limit.
    pub const RATE_LIMITED: &str = "tool_registry_rate_limited_total";
    /// Counter, labels `tool`, `result` (`hit` or `miss`): calls of tools with a result cache.
    pub const CACHE: &str = "tool_registry_cache_requests_total";
    /// Gauge, label `server` (`mcp`): sessions open now.
    pub const SESSIONS: &str = "tool_registry_sessions_open";
    /// Gauge: HTTP connections open now.
    pub const CONNECTIONS: &str = "tool_registry_connections_open";
    /// Counter, labels `server`, `reason`: requests or connections a server refused before any
    /// call (`unauthorized`, `forbidden`, `too_many_sessions`, `too_many_connections`, ...).
    pub const REFUSED: &str = "tool_registry_refused_requests_total";
    /// Counter, label `state`: tasks that entered a state (`working`, `input_required`,
    /// `completed`, `failed`, `cancelled`), counted by the core's task runner.
    pub const TASKS: &str = "tool_registry_tasks_total";
}

/// A connection was taken.
pub fn connection_opened() {
    metrics::gauge!(names::CONNECTIONS).increment(1.0);
}

/// A connection ended.
pub fn connection_closed() {
    metrics::gauge!(names::CONNECTIONS).decrement(1.0);
}

/// A session of `server` (`mcp`) began.
pub fn session_opened(server: &'static str) {
    metrics::gauge!(names::SESSIONS, "server" => server).increment(1.0);
}

/// A session of `server` ended.
pub fn session_closed(server: &'static str) {
    metrics::gauge!(names::SESSIONS, "server" => server).decrement(1.0);
}

/// `server` (`mcp`, `modules`, `http`) refused a request or a connection before any call, for
/// `reason`.
pub fn refused(server: &'static str, reason: &'static str) {
    metrics::counter!(names::REFUSED, "server" => server, "reason" => reason).increment(1);
}
