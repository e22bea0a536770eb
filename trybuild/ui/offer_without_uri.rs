use tool_registry::resource;

/// The message of the day.
#[resource(mime_type = "text/plain")]
async fn motd() -> String {
    "hello".into()
}

fn main() {}
