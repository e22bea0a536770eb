//! The span exporter the standard `OTEL_*` variables describe, and the layer that feeds it.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::{Layer, Registry};

use crate::TelemetryError;

/// The service name when `OTEL_SERVICE_NAME` (or `service.name` in
/// `OTEL_RESOURCE_ATTRIBUTES`) does not give one.
const SERVICE: &str = "toolreg";

/// Spans exported over OTLP, and the runtime the gRPC exporter's connection lives on.
pub(crate) struct Traces {
    provider: SdkTracerProvider,
    /// gRPC only: tonic's connection is a task on a runtime of its own, which no command's
    /// runtime shutdown can cut off.
    _runtime: Option<tokio::runtime::Runtime>,
}

impl Traces {
    /// The exporter the variables ask for; `None` when none is asked for.
    pub(crate) fn from_env() -> Result<Option<Self>, TelemetryError> {
        let var = |name: &str| {
            std::env::var(name)
                .ok()
                .filter(|value| !value.trim().is_empty())
        };
        let off = var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.eq_ignore_ascii_case("none"));
        if off
            || (var("OTEL_EXPORTER_OTLP_ENDPOINT").is_none()
                && var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_none())
        {
            return Ok(None);
        }
        let protocol = var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"))
            .unwrap_or_else(|| "http/protobuf".to_owned());
        let failed = |error: opentelemetry_otlp::ExporterBuildError| {
            TelemetryError::Exporter(error.to_string())
        };
        let (exporter, runtime) = match protocol.as_str() {
            "http/protobuf" => {
                let exporter = opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_protocol(opentelemetry_otlp::Protocol::HttpBinary)
                    .build()
                    .map_err(failed)?;
                (exporter, None)
            }
            "grpc" => {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("otlp-grpc")
                    .enable_all()
                    .build()
                    .map_err(|error| TelemetryError::Exporter(error.to_string()))?;
                let exporter = {
                    let _in = runtime.enter();
                    opentelemetry_otlp::SpanExporter::builder()
                        .with_tonic()
                        .build()
                        .map_err(failed)?
                };
                (exporter, Some(runtime))
            }
            other => {
                return Err(TelemetryError::Exporter(format!(
                    "the OTLP protocol `{other}` is not one this build speaks: set OTEL_EXPORTER_OTLP_PROTOCOL to `http/protobuf` or `grpc`"
                )));
            }
        };
        let named = var("OTEL_SERVICE_NAME").is_some()
            || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|a| a.contains("service.name="));
        let mut resource = Resource::builder();
        if !named {
            resource = resource.with_service_name(SERVICE);
        }
        let resource = resource
            .with_attribute(opentelemetry::KeyValue::new(
                "service.version",
                env!("CARGO_PKG_VERSION"),
            ))
            .build();
        let provider = SdkTracerProvider::builder()
            .with_batch_exporter(exporter)
            .with_resource(resource)
            .build();
        Ok(Some(Self {
            provider,
            _runtime: runtime,
        }))
    }

    /// The layer that exports the registry's spans (targets `tool_registry*`, INFO and above),
    /// whatever `RUST_LOG` lets through to the log lines.
    pub(crate) fn layer(&self) -> Box<dyn Layer<Registry> + Send + Sync> {
        let tracer = self.provider.tracer("tool-registry");
        let targets = Targets::new()
            .with_target("tool_registry", LevelFilter::INFO)
            .with_target("tool_registry_http", LevelFilter::INFO)
            .with_target("tool_registry_mcp", LevelFilter::INFO);
        tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_filter(targets)
            .boxed()
    }

    /// Sends what is buffered and stops.
    pub(crate) fn shutdown(self) {
        if let Err(error) = self.provider.shutdown() {
            eprintln!("warning: the last spans could not be exported: {error}");
        }
    }
}
