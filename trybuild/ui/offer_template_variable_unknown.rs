use tool_registry::resource;

/// One note, by its id.
#[resource(uri = "notes://note/{id}")]
async fn note(name: String) -> String {
    name
}

fn main() {}
