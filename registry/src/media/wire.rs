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
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

/// Bytes written as base64.
struct Base64<'a>(&'a [u8]);

impl Serialize for Base64<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&encode(self.0))
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Out<'a> {
    Text {
        text: &'a str,
    },
    Image {
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
        data: Base64<'a>,
    },
    Audio {
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
        data: Base64<'a>,
    },
    File {
        name: &'a str,
        #[serde(rename = "mimeType")]
        mime_type: &'a str,
        data: Base64<'a>,
    },
    ResourceLink {
        uri: &'a str,
        name: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<&'a str>,
        #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
        mime_type: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
    },
    Resource {
        resource: OutResource<'a>,
    },
}

#[derive(Serialize)]
struct OutResource<'a> {
    uri: &'a str,
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    mime_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blob: Option<Base64<'a>>,
}

fn out(block: &Block) -> Out<'_> {
    match block {
        Block::Text(text) => Out::Text { text },
        Block::Image(image) => Out::Image {
            mime_type: &image.mime_type,
            data: Base64(&image.data),
        },
        Block::Audio(audio) => Out::Audio {
            mime_type: &audio.mime_type,
            data: Base64(&audio.data),
        },
        Block::File(file) => Out::File {
            name: &file.name,
            mime_type: &file.mime_type,
            data: Base64(&file.data),
        },
        Block::ResourceLink(link) => Out::ResourceLink {
            uri: &link.uri,
            name: &link.name,
            title: link.title.as_deref(),
            description: link.description.as_deref(),
            mime_type: link.mime_type.as_deref(),
            size: link.size,
        },
        Block::Resource(resource) => {
            let (text, blob) = match &resource.body {
                ResourceBody::Text(text) => (Some(text.as_str()), None),
                ResourceBody::Blob(data) => (None, Some(Base64(data))),
            };
            Out::Resource {
                resource: OutResource {
                    uri: &resource.uri,
                    mime_type: resource.mime_type.as_deref(),
                    text,
                    blob,
                },
            }
        }
    }
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

/// One block as JSON, in the shape above.
#[cfg(any(feature = "cli", feature = "http", feature = "mcp"))]
pub(crate) fn to_value(block: &Block) -> serde_json::Value {
    serde_json::to_value(out(block)).unwrap_or_default()
}

/// One block read from JSON in the shape above (base64 checked).
#[cfg(any(feature = "http", feature = "mcp"))]
pub(crate) fn from_value(value: serde_json::Value) -> Result<Block, String> {
    let wire = In::deserialize(value).map_err(|e| e.to_string())?;
    block_of(wire)
}

/// `#[serde(with = "wire")]` for [`Blocks`].
pub(crate) fn serialize<S: Serializer>(blocks: &[Block], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(blocks.iter().map(out))
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
