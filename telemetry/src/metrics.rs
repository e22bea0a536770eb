//! Metrics in Prometheus's text format: a recorder for the `metrics` facade, an audit sink that
//! counts every call, and the `GET /metrics` route.
//!
//! The names follow Prometheus's conventions (a unit suffix, `_total` on counters) under the
//! `tool_registry_` prefix; a tool's name is the label `tool`, as OpenTelemetry's generative-AI
//! conventions name it `gen_ai.tool.name`. The front ends report what only they see (sessions,
//! connections, refused requests, tasks) through the same facade ([`report`](crate::report)).

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tool_registry_core::audit::{AuditRecord, AuditSink};

use crate::TelemetryError;
use crate::report::names;

/// Upper bounds of the call-latency histogram's buckets, in seconds: 100 µs to 60 s.
const BUCKETS: &[f64] = &[
    0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0,
];

/// The process's metrics: a Prometheus recorder installed for the `metrics` facade.
#[derive(Clone)]
pub struct Metrics {
    handle: PrometheusHandle,
}

impl Metrics {
    /// Installs the recorder, once per process (a second call is an error), and describes
    /// every metric of [`names`].
    pub fn install() -> Result<Self, TelemetryError> {
        let failed = |error: metrics_exporter_prometheus::BuildError| {
            TelemetryError::Metrics(error.to_string())
        };
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Full(names::CALL_DURATION.to_owned()), BUCKETS)
            .map_err(failed)?
            .install_recorder()
            .map_err(failed)?;
        describe();
        Ok(Self { handle })
    }

    /// The audit sink that counts calls: give it to the registry
    /// ([`RegistryBuilder::also_audit`](tool_registry_core::RegistryBuilder::also_audit)).
    pub fn sink(&self) -> MetricsSink {
        MetricsSink { _private: () }
    }

    /// Every metric now, in Prometheus's text format (version 0.0.4).
    pub fn render(&self) -> String {
        self.handle.run_upkeep();
        self.handle.render()
    }

    /// `GET /metrics`, to serve on an address of its own or merge into a server's router.
    pub fn router(&self) -> axum::Router {
        let metrics = self.clone();
        axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let metrics = metrics.clone();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4; charset=utf-8",
                        )],
                        metrics.render(),
                    )
                }
            }),
        )
    }

    /// Serves [`router`](Self::router) on `listener` until the task is dropped.
    pub async fn serve(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        axum::serve(listener, self.router()).await
    }
}

/// Counts each call the registry audits: calls by tool and outcome, their latency, refusals by
/// gate, rate-limit refusals, cache hits and misses.
#[derive(Clone)]
pub struct MetricsSink {
    _private: (),
}

impl AuditSink for MetricsSink {
    fn record(&self, record: &AuditRecord<'_>) {
        // A name no tool answered to is the caller's text: never a label.
        let tool = match record.risk {
            Some(_) => record.tool.to_string(),
            None if record.tool.contains(':') => {
                record.tool.split(':').next().unwrap_or("?").to_owned()
            }
            None => "?".to_owned(),
        };
        metrics::counter!(names::CALLS, "tool" => tool.clone(), "outcome" => record.outcome.to_string())
            .increment(1);
        metrics::histogram!(names::CALL_DURATION, "tool" => tool.clone())
            .record(record.duration_ms / 1000.0);
        if let Some(gate) = &record.gate {
            metrics::counter!(names::GATE_REFUSALS, "gate" => gate.to_string()).increment(1);
            if gate == "rate_limit" {
                metrics::counter!(names::RATE_LIMITED, "tool" => tool.clone()).increment(1);
            }
        }
        if let Some(result) = record.cache {
            metrics::counter!(names::CACHE, "tool" => tool, "result" => result.as_str())
                .increment(1);
        }
    }
}

/// The HELP line of each metric.
fn describe() {
    use metrics::{Unit, describe_counter, describe_gauge, describe_histogram};
    describe_counter!(names::CALLS, "Tool calls that ended, by tool and outcome.");
    describe_histogram!(
        names::CALL_DURATION,
        Unit::Seconds,
        "How long tool calls took."
    );
    describe_counter!(
        names::GATE_REFUSALS,
        "Tool calls a stage of the pipeline refused, by stage."
    );
    describe_counter!(
        names::RATE_LIMITED,
        "Tool calls refused by a rate limit, by tool."
    );
    describe_counter!(
        names::CACHE,
        "Calls of tools with a result cache, by hit or miss."
    );
    describe_gauge!(names::SESSIONS, "Sessions open now, by server.");
    describe_gauge!(names::CONNECTIONS, "Connections open now, by server.");
    describe_counter!(
        names::REFUSED,
        "Requests or connections a server refused before any call, by reason."
    );
    describe_counter!(names::TASKS, "Tasks that entered a state, by state.");
}
