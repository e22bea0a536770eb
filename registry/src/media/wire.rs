//! Blocks as JSON, binary as standard base64: what HTTP modules send, what `toolreg` prints,
//! how a serialized [`ToolResult`](crate::ToolResult) carries its blocks. The shapes are MCP's
//! content blocks, plus `file`:
//!
//! ```json
//! {"type": "text", "text": "..."}
//! {"type": "image", "mimeType": "image/png", "data": "<base64>"}
//! {"type": "audio", "mimeType": "audio/wav", "data": "<base64>"}
//! {"type": "file", "name": "q3.pdf", "mimeType": "application/pdf", "data": "<base64>"}
//! {"type": "resource_link", "uri": "https://...", "name": "...", "title"?, "description"?, "mimeType"?, "size"?}
//! {"type": "resource", "resource": {"uri": "...", "mimeType"?, "text" | "blob": "<base64>"}}
//! ```

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use bytes::Bytes;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serializer};
use serde_json::{Map, Value};

use super::{Audio, Block, Blocks, File, Image, Resource, ResourceBody, ResourceLink};

/// `data` as standard base64.
pub(crate) fn encode(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Standard base64 (padding required, no whitespace) as bytes.
pub(crate) fn decode(text: &str) -> Result<Bytes, String> {
    STANDARD
        .decode(text)
        .map(Bytes::from)
        .map_err(|e| format!("invalid base64: {e}"))
}

/// One block as JSON, in the shape above. Built by hand rather than through `Serialize`: the
/// base64 text is made once and moved into the value, where `serde_json::to_value` would copy
/// every string it is given, so that an image costs its base64 once.
pub(crate) fn to_value(block: &Block) -> Value {
    let mut object = Map::new();
    let kind = block.kind().as_str();
    object.insert("type".into(), kind.into());
    match block {
        Block::Text(text) => {
            object.insert("text".into(), text.as_str().into());
        }
        Block::Image(Image { mime_type, data }) | Block::Audio(Audio { mime_type, data }) => {
            object.insert("mimeType".into(), mime_type.as_str().into());
            object.insert("data".into(), encode(data).into());
        }
        Block::File(file) => {
            object.insert("name".into(), file.name.as_str().into());
            object.insert("mimeType".into(), file.mime_type.as_str().into());
            object.insert("data".into(), encode(&file.data).into());
        }
        Block::ResourceLink(link) => {
            object.insert("uri".into(), link.uri.as_str().into());
            object.insert("name".into(), link.name.as_str().into());
            let optional = [
                ("title", link.title.as_deref()),
                ("description", link.description.as_deref()),
                ("mimeType", link.mime_type.as_deref()),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    object.insert(key.into(), value.into());
                }
            }
            if let Some(size) = link.size {
                object.insert("size".into(), size.into());
            }
        }
        Block::Resource(resource) => {
            let mut inner = Map::new();
            inner.insert("uri".into(), resource.uri.as_str().into());
            if let Some(mime_type) = &resource.mime_type {
                inner.insert("mimeType".into(), mime_type.as_str().into());
            }
            match &resource.body {
                ResourceBody::Text(text) => inner.insert("text".into(), text.as_str().into()),
                ResourceBody::Blob(data) => inner.insert("blob".into(), encode(data).into()),
            };
            object.insert("resource".into(), Value::Object(inner));
        }
    }
    Value::Object(object)
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum In {
    Text {
        text: String,
    },
    Image {
        #[serde(rename = "mimeType")]
        mime_type: String,
        data: String,
    },
    Audio {
        #[serde(rename = "mimeType")]
        mime_type: String,
        data: String,
    },
    File {
        name: String,
        #[serde(rename = "mimeType")]
        mime_type: String,
        data: String,
    },
    ResourceLink(ResourceLink),
    Resource {
        resource: InResource,
    },
}

#[derive(Deserialize)]
struct InResource {
    uri: String,
    #[serde(rename = "mimeType", default)]
    mime_type: Option<String>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    blob: Option<String>,
}

fn block_of(wire: In) -> Result<Block, String> {
    Ok(match wire {
        In::Text { text } => Block::Text(text),
        In::Image { mime_type, data } => Block::Image(Image {
            mime_type,
            data: decode(&data)?,
        }),
        In::Audio { mime_type, data } => Block::Audio(Audio {
            mime_type,
            data: decode(&data)?,
        }),
        In::File {
            name,
            mime_type,
            data,
        } => Block::File(File {
            name,
            mime_type,
            data: decode(&data)?,
        }),
        In::ResourceLink(link) => Block::ResourceLink(link),
        In::Resource { resource } => {
            let body = match (resource.text, resource.blob) {
                (Some(text), None) => ResourceBody::Text(text),
                (None, Some(blob)) => ResourceBody::Blob(decode(&blob)?),
                _ => return Err("an embedded resource holds one of `text` or `blob`".into()),
            };
            Block::Resource(Resource {
                uri: resource.uri,
                mime_type: resource.mime_type,
                body,
            })
        }
    })
}

/// One block read from JSON in the shape above (base64 checked).
#[cfg(any(feature = "http", feature = "mcp"))]
pub(crate) fn from_value(value: Value) -> Result<Block, String> {
    let wire = In::deserialize(value).map_err(|e| e.to_string())?;
    block_of(wire)
}

/// `#[serde(with = "wire")]` for [`Blocks`].
pub(crate) fn serialize<S: Serializer>(blocks: &[Block], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(blocks.iter().map(to_value))
}

/// `#[serde(with = "wire")]` for [`Blocks`].
pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Blocks, D::Error> {
    let wire = Vec::<In>::deserialize(deserializer)?;
    wire.into_iter()
        .enumerate()
        .map(|(index, block)| {
            block_of(block).map_err(|e| D::Error::custom(format!("blocks[{index}]: {e}")))
        })
        .collect()
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use super::*;

    #[test]
    fn every_kind_goes_through_json_and_back() {
        let blocks = vec![
            Block::text("t"),
            Block::from(Image::png(b"\x89PNG\r\n\x1a\n".to_vec())),
            Block::from(Audio::wav(b"RIFF\0\0\0\0WAVE".to_vec())),
            Block::from(File::new("q3.pdf", b"%PDF-1.7".to_vec())),
            Block::from(ResourceLink::new("https://e.com/x", "x").with_size(3)),
            Block::from(Resource::text("kb://a", "body")),
            Block::from(Resource::blob("kb://b", "image/png", b"\x89PNG".to_vec())),
        ];
        for block in blocks {
            let value = to_value(&block);
            assert_eq!(from_value(value.clone()), Ok(block), "{value}");
        }
        let image = to_value(&Block::from(Image::png(b"abc".to_vec())));
        assert_eq!(
            image,
            serde_json::json!({"type": "image", "mimeType": "image/png", "data": "YWJj"})
        );
    }

    #[test]
    fn bad_base64_and_unknown_kinds_are_errors() {
        let bad =
            serde_json::json!({"type": "image", "mimeType": "image/png", "data": "not base64!"});
        assert!(from_value(bad).unwrap_err().contains("invalid base64"));
        let unknown = serde_json::json!({"type": "hologram"});
        assert!(from_value(unknown).is_err());
        let both = serde_json::json!({"type": "resource", "resource": {"uri": "a:b", "text": "x", "blob": "eA=="}});
        assert!(from_value(both).is_err());
    }
}
