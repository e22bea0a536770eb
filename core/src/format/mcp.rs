//! What only MCP has among the formats: structured content beside the text, and content blocks
//! of its own kinds. Both directions live here, so what the server writes and what a mounted
//! MCP module reads back stay one contract:
//!
//! - **Structured output.** MCP's `outputSchema` must be an object schema, and
//!   `structuredContent` an object
//!   (<https://modelcontextprotocol.io/specification/2025-11-25/server/tools#output-schema>).
//!   A tool whose output schema is not of `"type": "object"` (a list, a number, a union) is
//!   listed with the schema wrapped, `{"type": "object", "properties": {"result": SCHEMA},
//!   "required": ["result"], "x-tool-registry-wrapped": "result"}`, and answers
//!   `{"result": VALUE}` ([`output_schema`], [`structured_content`]). The marker key
//!   ([`WRAPPED_KEY`]) tells a reader of ours to take the value back out
//!   ([`unwrap_output_schema`]); other clients see an ordinary object schema, as the Python
//!   SDK's servers write for the same case. The wrapped schema's `$defs` move to its root and
//!   its local `$ref`s are rewritten to match, so it still validates what it did.
//! - **Files.** MCP has no file block. A [`File`](crate::content::File) travels as an embedded
//!   resource with a `blob`: its MIME type as the resource's, its name in the URI
//!   `attachment:NAME`, the name percent-encoded ([`FILE_SCHEME`]). Any MCP client can save or
//!   show it; a module of ours reads it back as the same `File` ([`file_name`]). The scheme is
//!   not `file:`, which would name a path on the client's own disk.

use serde_json::{Map, Value};

use crate::media::{Block, Resource, ResourceBody, wire};

/// The key of ours on an MCP `outputSchema` that wraps a tool's schema: its value is the
/// property the tool's value sits under, `"result"`.
pub const WRAPPED_KEY: &str = "x-tool-registry-wrapped";

/// The property a wrapped value sits under.
const RESULT: &str = "result";

/// The URI scheme of a [`File`](crate::content::File) sent over MCP as an embedded resource:
/// `attachment:q3%20report.pdf` is the file `q3 report.pdf`.
pub const FILE_SCHEME: &str = "attachment";

/// Keys that belong at a schema document's root: they move to the wrapper's root, and back.
const ROOT_KEYS: &[&str] = &["$schema", "$id", "$defs", "definitions"];

/// Whether MCP takes `schema` as it is: an object schema.
fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The `outputSchema` MCP lists for a tool whose output schema is `schema`: the schema itself
/// when it is an object schema, else the wrapper described above.
pub fn output_schema(schema: &Value) -> Value {
    if is_object_schema(schema) {
        return schema.clone();
    }
    let mut inner = schema.clone();
    let mut wrapper = Map::new();
    if let Value::Object(map) = &mut inner {
        for key in ROOT_KEYS {
            if let Some(value) = map.remove(*key) {
                wrapper.insert((*key).into(), value);
            }
        }
    }
    wrapper.insert("type".into(), "object".into());
    let mut properties = Map::new();
    properties.insert(RESULT.into(), inner);
    wrapper.insert("properties".into(), Value::Object(properties));
    wrapper.insert("required".into(), Value::Array(vec![RESULT.into()]));
    wrapper.insert(WRAPPED_KEY.into(), RESULT.into());
    let mut wrapper = Value::Object(wrapper);
    rebase_refs(&mut wrapper, Rebase::Wrap);
    wrapper
}

/// The tool's own output schema from an MCP `outputSchema`, and whether its values come
/// wrapped: a schema of ours with [`WRAPPED_KEY`] unwrapped, any other as it is.
pub fn unwrap_output_schema(mut schema: Value) -> (Value, bool) {
    let wrapped = schema.get(WRAPPED_KEY).and_then(Value::as_str) == Some(RESULT)
        && schema.pointer("/properties/result").is_some();
    if !wrapped {
        return (schema, false);
    }
    rebase_refs(&mut schema, Rebase::Unwrap);
    let mut wrapper = match schema {
        Value::Object(wrapper) => wrapper,
        other => return (other, false),
    };
    let mut inner = wrapper
        .get_mut("properties")
        .and_then(|properties| properties.as_object_mut())
        .and_then(|properties| properties.remove(RESULT))
        .unwrap_or(Value::Bool(true));
    if let Value::Object(map) = &mut inner {
        for key in ROOT_KEYS {
            if let Some(value) = wrapper.remove(*key) {
                map.insert((*key).into(), value);
            }
        }
    }
    (inner, true)
}

/// The `structuredContent` of a successful call whose tool declares `schema`: `value` as it is
/// for an object schema, `{"result": value}` for a wrapped one. `None` for a value MCP cannot
/// carry there (not an object, where the schema promised one).
pub fn structured_content(schema: &Value, value: &Value) -> Option<Value> {
    if !is_object_schema(schema) {
        let mut wrapper = Map::new();
        wrapper.insert(RESULT.into(), value.clone());
        return Some(Value::Object(wrapper));
    }
    value.is_object().then(|| value.clone())
}

/// The value inside a wrapped `structuredContent`; anything else as it is (and then checked
/// against the tool's schema like any value).
pub fn unwrap_structured(value: Value) -> Value {
    match value {
        Value::Object(mut map) if map.contains_key(RESULT) => {
            map.remove(RESULT).unwrap_or(Value::Null)
        }
        other => other,
    }
}

/// One block in MCP's shapes: a file as an embedded resource (see above), every other kind as
/// [`wire`] writes it, which are MCP's own.
pub fn content_block(block: &Block) -> Value {
    match block {
        Block::File(file) => wire::to_value(&Block::Resource(Resource {
            uri: file_uri(file.name()),
            mime_type: Some(file.mime_type().to_owned()),
            // A reference count, not a copy of the bytes.
            body: ResourceBody::Blob(file.data().clone()),
        })),
        other => wire::to_value(other),
    }
}

/// The URI a file named `name` travels under: `attachment:` and the name, every byte other
/// than the unreserved characters of RFC 3986 percent-encoded.
pub fn file_uri(name: &str) -> String {
    let mut uri = String::with_capacity(FILE_SCHEME.len() + 1 + name.len());
    uri.push_str(FILE_SCHEME);
    uri.push(':');
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The file name an `attachment:` URI carries; `None` for any other URI, or one whose name is
/// not percent-encoded UTF-8.
pub fn file_name(uri: &str) -> Option<String> {
    let (scheme, encoded) = uri.split_once(':')?;
    if !scheme.eq_ignore_ascii_case(FILE_SCHEME) || encoded.is_empty() {
        return None;
    }
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut rest = encoded.as_bytes();
    while let Some((&byte, after)) = rest.split_first() {
        if byte == b'%' {
            let hex = after.get(..2)?;
            let hex = std::str::from_utf8(hex).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &after[2..];
        } else {
            bytes.push(byte);
            rest = after;
        }
    }
    String::from_utf8(bytes).ok()
}

/// Which way [`rebase_refs`] moves a wrapped schema's local references.
#[derive(Clone, Copy)]
enum Rebase {
    /// `#` and `#/...` (not into the definitions) to `#/properties/result...`.
    Wrap,
    /// Back.
    Unwrap,
}

/// Rewrites the local `$ref`s of every schema in `schema` (through the applicator keywords,
/// never inside `const`, `enum` or `default`, which are data), so that the tool's schema,
/// moved under `properties.result` or taken back out, still points where it did. Definitions
/// move with the root, so references into them stay.
fn rebase_refs(schema: &mut Value, way: Rebase) {
    use crate::schema::{child_path, children};
    const PLACE: &str = "#/properties/result";
    let mut rewrites: Vec<(String, String)> = Vec::new();
    let mut stack = vec![(&*schema, String::new())];
    while let Some((here, path)) = stack.pop() {
        if let Some(reference) = here.get("$ref").and_then(Value::as_str) {
            let into_definitions =
                reference.starts_with("#/$defs/") || reference.starts_with("#/definitions/");
            let rebased = match way {
                Rebase::Wrap if !into_definitions => reference
                    .strip_prefix('#')
                    .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                    .map(|rest| format!("{PLACE}{rest}")),
                Rebase::Unwrap => reference
                    .strip_prefix(PLACE)
                    .filter(|rest| rest.is_empty() || rest.starts_with('/'))
                    .map(|rest| format!("#{rest}")),
                Rebase::Wrap => None,
            };
            if let Some(rebased) = rebased {
                rewrites.push((format!("{path}/$ref"), rebased));
            }
        }
        for (key, segment, child) in children(here) {
            stack.push((child, child_path(&path, key, segment)));
        }
    }
    for (pointer, rebased) in rewrites {
        if let Some(place) = schema.pointer_mut(&pointer) {
            *place = Value::String(rebased);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::media::{File, Image};

    #[test]
    fn an_object_schema_is_listed_as_it_is_and_anything_else_wrapped() {
        let object = json!({"type": "object", "properties": {"n": {"type": "integer"}}});
        assert_eq!(output_schema(&object), object);
        assert_eq!(
            unwrap_output_schema(object.clone()),
            (object.clone(), false)
        );
        assert_eq!(
            structured_content(&object, &json!({"n": 1})),
            Some(json!({"n": 1}))
        );
        assert_eq!(structured_content(&object, &json!(1)), None);

        let list = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Array_of_Item",
            "type": "array",
            "items": {"$ref": "#/$defs/Item"},
            "$defs": {"Item": {"type": "object", "properties": {"next": {"$ref": "#"}}}},
        });
        let wrapped = output_schema(&list);
        assert_eq!(
            wrapped,
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$defs": {"Item": {"type": "object", "properties": {"next": {"$ref": "#/properties/result"}}}},
                "type": "object",
                "properties": {"result": {
                    "title": "Array_of_Item",
                    "type": "array",
                    "items": {"$ref": "#/$defs/Item"},
                }},
                "required": ["result"],
                WRAPPED_KEY: "result",
            })
        );
        assert_eq!(unwrap_output_schema(wrapped.clone()), (list, true));
        assert_eq!(
            structured_content(&json!({"type": "array"}), &json!([1, 2])),
            Some(json!({"result": [1, 2]}))
        );
        assert_eq!(unwrap_structured(json!({"result": [1, 2]})), json!([1, 2]));
        // Without our marker (the Python SDK's wrapper), nothing is taken out.
        let theirs = json!({"type": "object", "properties": {"result": {"type": "integer"}}});
        assert_eq!(unwrap_output_schema(theirs.clone()), (theirs, false));
    }

    #[test]
    fn the_wrapped_schema_validates_what_the_schema_did() {
        let tree = json!({
            "type": "array",
            "items": {"anyOf": [{"type": "integer"}, {"$ref": "#"}]},
            "default": [{"$ref": "#"}],
        });
        let wrapped = output_schema(&tree);
        assert_eq!(
            wrapped["properties"]["result"]["default"],
            json!([{"$ref": "#"}])
        );
        let validator = jsonschema::validator_for(&wrapped).unwrap();
        assert!(validator.is_valid(&json!({"result": [1, [2, [3]]]})));
        assert!(!validator.is_valid(&json!({"result": [1, ["x"]]})));
        assert!(!validator.is_valid(&json!([1])));
        assert_eq!(unwrap_output_schema(wrapped).0, tree);
    }

    #[test]
    fn a_file_is_an_embedded_resource_whose_uri_carries_its_name() {
        for name in [
            "q3.pdf",
            "q3 report (final).pdf",
            "été.csv",
            "100%.txt",
            "a:b",
        ] {
            let uri = file_uri(name);
            let encoded = uri.strip_prefix("attachment:").unwrap();
            assert!(
                encoded
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)),
                "{uri}"
            );
            assert_eq!(file_name(&uri).as_deref(), Some(name), "{uri}");
        }
        assert_eq!(file_uri("q3 report.pdf"), "attachment:q3%20report.pdf");
        for other in [
            "https://e.com/a.pdf",
            "attachment:",
            "attachment:%zz",
            "attachment:%C3",
        ] {
            assert_eq!(file_name(other), None, "{other}");
        }
        let file = Block::from(File::new("q3.csv", b"a,b\n".to_vec()));
        assert_eq!(
            content_block(&file),
            json!({"type": "resource", "resource": {
                "uri": "attachment:q3.csv", "mimeType": "text/csv", "blob": "YSxiCg=="
            }})
        );
        let image = Block::from(Image::png(b"abc".to_vec()));
        assert_eq!(content_block(&image), wire::to_value(&image));
    }
}
