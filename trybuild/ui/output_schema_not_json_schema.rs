use serde::Serialize;
use tool_registry::tool;

#[derive(Serialize)]
struct Forecast {
    celsius: f64,
}

/// The weather now.
#[tool(output_schema)]
fn now() -> Forecast {
    Forecast { celsius: 21.0 }
}

fn main() {}
