//! What the transforms of strict mode and Gemini share: what a target cannot say as keywords,
//! said in the description instead.

/// Adds what a target cannot say as keywords to a schema's description, in brackets after the
/// description it has: `What to look for (at most 1000 characters)`. What the transforms of
/// strict mode and Gemini share.
pub(super) fn describe(schema: &mut serde_json::Map<String, serde_json::Value>, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let notes = notes.join("; ");
    let description = match schema
        .get("description")
        .and_then(serde_json::Value::as_str)
    {
        Some(description) => format!("{description} ({notes})"),
        None => format!("({notes})"),
    };
    schema.insert("description".into(), description.into());
}
