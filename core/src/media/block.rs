//! One content block and the media types it holds.

use std::fmt;
use std::ops::Deref;

use bytes::Bytes;

/// One block of a tool's result, in the order the tool gave them.
///
/// Each media type converts into a block with `From`, so a list is written as
/// `vec![Image::png(png).into(), ResourceLink::new(uri, name).into()]`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Block {
    /// Text for the model.
    Text(String),
    /// An image: PNG, JPEG, GIF, WebP, ...
    Image(Image),
    /// An audio clip: WAV, MP3, ...
    Audio(Audio),
    /// A file with a name: a PDF, a CSV, a document.
    File(File),
    /// A link to a resource the client may fetch or read; the bytes are not in the result.
    ResourceLink(ResourceLink),
    /// A resource embedded in the result: its URI and its text or bytes.
    Resource(Resource),
}

impl Block {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(text.into())
    }

    /// What kind of block this is.
    pub fn kind(&self) -> BlockKind {
        match self {
            Self::Text(_) => BlockKind::Text,
            Self::Image(_) => BlockKind::Image,
            Self::Audio(_) => BlockKind::Audio,
            Self::File(_) => BlockKind::File,
            Self::ResourceLink(_) => BlockKind::ResourceLink,
            Self::Resource(_) => BlockKind::Resource,
        }
    }

    /// The MIME type of the block, where it has one (`text/plain` for text).
    pub fn mime_type(&self) -> Option<&str> {
        match self {
            Self::Text(_) => Some("text/plain"),
            Self::Image(image) => Some(image.mime_type()),
            Self::Audio(audio) => Some(audio.mime_type()),
            Self::File(file) => Some(file.mime_type()),
            Self::ResourceLink(link) => link.mime_type.as_deref(),
            Self::Resource(resource) => resource.mime_type.as_deref(),
        }
    }

    /// The bytes the block carries, text counted as UTF-8: its data or text, and every text
    /// field besides (a file's name, a link's URI, name, title and description, an embedded
    /// resource's URI, MIME types), so that what [`ContentLimits`](super::ContentLimits)
    /// bounds is all of it.
    pub fn len(&self) -> usize {
        let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
        match self {
            Self::Text(text) => text.len(),
            Self::Image(image) => image.data.len() + image.mime_type.len(),
            Self::Audio(audio) => audio.data.len() + audio.mime_type.len(),
            Self::File(file) => file.data.len() + file.name.len() + file.mime_type.len(),
            Self::ResourceLink(link) => {
                link.uri.len()
                    + link.name.len()
                    + optional(&link.title)
                    + optional(&link.description)
                    + optional(&link.mime_type)
            }
            Self::Resource(resource) => {
                resource.uri.len() + optional(&resource.mime_type) + resource.body.len()
            }
        }
    }

    /// Whether the block carries no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The blocks of a result, in order: a list of [`Block`]s that takes the room of one pointer in
/// a result that has none, so that the common result (a value, no blocks) stays as small as it
/// was. It reads as a slice (`result.blocks.iter()`, `result.blocks[0]`, `.is_empty()`).
#[derive(Clone, Default, PartialEq, Eq)]
// One pointer, not a `Vec`'s three words: the extra allocation is paid only by results that
// have blocks, and every result without them is moved through the pipeline 16 bytes smaller.
#[allow(clippy::box_collection)]
pub struct Blocks(Option<Box<Vec<Block>>>);

impl Blocks {
    /// No blocks.
    pub const fn new() -> Self {
        Self(None)
    }

    /// Adds a block after the others.
    pub fn push(&mut self, block: Block) {
        self.0.get_or_insert_with(Box::default).push(block);
    }

    /// The blocks as a vector, to change them in place.
    pub fn as_mut_vec(&mut self) -> &mut Vec<Block> {
        self.0.get_or_insert_with(Box::default)
    }

    /// The blocks, as a vector.
    pub fn into_vec(self) -> Vec<Block> {
        self.0.map(|blocks| *blocks).unwrap_or_default()
    }
}

impl Deref for Blocks {
    type Target = [Block];

    fn deref(&self) -> &[Block] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }
}

impl fmt::Debug for Blocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl From<Vec<Block>> for Blocks {
    fn from(blocks: Vec<Block>) -> Self {
        Self((!blocks.is_empty()).then(|| Box::new(blocks)))
    }
}

impl FromIterator<Block> for Blocks {
    fn from_iter<I: IntoIterator<Item = Block>>(blocks: I) -> Self {
        Self::from(blocks.into_iter().collect::<Vec<_>>())
    }
}

impl Extend<Block> for Blocks {
    fn extend<I: IntoIterator<Item = Block>>(&mut self, blocks: I) {
        self.as_mut_vec().extend(blocks);
    }
}

impl IntoIterator for Blocks {
    type Item = Block;
    type IntoIter = std::vec::IntoIter<Block>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_vec().into_iter()
    }
}

impl<'a> IntoIterator for &'a Blocks {
    type Item = &'a Block;
    type IntoIter = std::slice::Iter<'a, Block>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<const N: usize> PartialEq<[Block; N]> for Blocks {
    fn eq(&self, other: &[Block; N]) -> bool {
        **self == other[..]
    }
}

impl PartialEq<[Block]> for Blocks {
    fn eq(&self, other: &[Block]) -> bool {
        **self == *other
    }
}

impl PartialEq<Vec<Block>> for Blocks {
    fn eq(&self, other: &Vec<Block>) -> bool {
        **self == other[..]
    }
}

/// The kinds of [`Block`], as the catalog and the wire name them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BlockKind {
    /// [`Block::Text`].
    Text,
    /// [`Block::Image`].
    Image,
    /// [`Block::Audio`].
    Audio,
    /// [`Block::File`].
    File,
    /// [`Block::ResourceLink`].
    ResourceLink,
    /// [`Block::Resource`].
    Resource,
}

impl BlockKind {
    /// Every kind, in the order above.
    pub const ALL: &'static [BlockKind] = &[
        Self::Text,
        Self::Image,
        Self::Audio,
        Self::File,
        Self::ResourceLink,
        Self::Resource,
    ];

    /// The kind's name on the wire: `text`, `image`, `audio`, `file`, `resource_link`,
    /// `resource` (MCP's names, and `file`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Image => "image",
            Self::Audio => "audio",
            Self::File => "file",
            Self::ResourceLink => "resource_link",
            Self::Resource => "resource",
        }
    }
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A medium of one top-level MIME type (`image/...`, `audio/...`): the type and the bytes, shared,
/// never copied, when the result is cloned; one named constructor per common subtype.
macro_rules! medium {
    ($(#[$doc:meta])* $name:ident, $top:literal, $($(#[$cdoc:meta])* $ctor:ident => $mime:literal),+) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub struct $name {
            pub(crate) mime_type: String,
            pub(crate) data: Bytes,
        }

        impl $name {
            #[doc = concat!("A ", $top, " of MIME type `mime_type` (`", $top, "/...`); checked against its bytes when the result leaves the registry.")]
            pub fn new(mime_type: impl Into<String>, data: impl Into<Bytes>) -> Self {
                Self {
                    mime_type: mime_type.into(),
                    data: data.into(),
                }
            }

            $(
                $(#[$cdoc])*
                pub fn $ctor(data: impl Into<Bytes>) -> Self {
                    Self::new($mime, data)
                }
            )+

            /// The MIME type.
            pub fn mime_type(&self) -> &str {
                &self.mime_type
            }

            /// The bytes.
            pub fn data(&self) -> &Bytes {
                &self.data
            }
        }
    };
}

medium!(
    /// An image and its MIME type.
    Image, "image",
    /// A PNG image.
    png => "image/png",
    /// A JPEG image.
    jpeg => "image/jpeg",
    /// A WebP image.
    webp => "image/webp"
);

medium!(
    /// An audio clip and its MIME type.
    Audio, "audio",
    /// A WAV clip.
    wav => "audio/wav",
    /// An MP3 clip.
    mp3 => "audio/mpeg"
);

/// A file: a name, a MIME type and the bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub(crate) name: String,
    pub(crate) mime_type: String,
    pub(crate) data: Bytes,
}

impl File {
    /// A file named `name`, its MIME type taken from the name's extension (`q3.pdf` is
    /// `application/pdf`; an unknown extension is `application/octet-stream`).
    pub fn new(name: impl Into<String>, data: impl Into<Bytes>) -> Self {
        let name = name.into();
        let mime_type = mime_of_name(&name).to_owned();
        Self {
            name,
            mime_type,
            data: data.into(),
        }
    }

    /// The same file with another MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = mime_type.into();
        self
    }

    /// The file's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The MIME type.
    pub fn mime_type(&self) -> &str {
        &self.mime_type
    }

    /// The bytes.
    pub fn data(&self) -> &Bytes {
        &self.data
    }
}

/// A link to a resource: its URI and name, and what the client may want to know before it
/// fetches it. MCP's `resource_link`; it reads from MCP's JSON shape (`mimeType`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct ResourceLink {
    /// Where the resource is (`https://...`, or a scheme of the server's own such as `kb://`).
    pub uri: String,
    /// A short name.
    pub name: String,
    /// A title for people.
    #[serde(default)]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default)]
    pub description: Option<String>,
    /// Its MIME type, when known.
    #[serde(default, rename = "mimeType")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default)]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to `uri` named `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// The same link with a description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same link with a MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The same link with a size in bytes.
    #[must_use]
    pub fn with_size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }
}

/// A resource embedded in a result: MCP's `resource` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resource {
    /// The resource's URI.
    pub uri: String,
    /// Its MIME type, when known.
    pub mime_type: Option<String>,
    /// Its text or bytes.
    pub body: ResourceBody,
}

impl Resource {
    /// A text resource.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            uri: uri.into(),
            mime_type: Some("text/plain".into()),
            body: ResourceBody::Text(text.into()),
        }
    }

    /// A binary resource of MIME type `mime_type`.
    pub fn blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        data: impl Into<Bytes>,
    ) -> Self {
        Self {
            uri: uri.into(),
            mime_type: Some(mime_type.into()),
            body: ResourceBody::Blob(data.into()),
        }
    }

    /// The same resource with another MIME type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// What an embedded [`Resource`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceBody {
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Bytes),
}

impl ResourceBody {
    /// The number of bytes.
    pub fn len(&self) -> usize {
        match self {
            Self::Text(text) => text.len(),
            Self::Blob(data) => data.len(),
        }
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

macro_rules! into_block {
    ($($ty:ident),*) => {$(
        impl From<$ty> for Block {
            fn from(value: $ty) -> Self {
                Self::$ty(value)
            }
        }
    )*};
}
into_block!(Image, Audio, File, ResourceLink, Resource);

impl From<String> for Block {
    fn from(text: String) -> Self {
        Self::Text(text)
    }
}

impl From<&str> for Block {
    fn from(text: &str) -> Self {
        Self::Text(text.to_owned())
    }
}

/// The MIME type of a file named `name`, from its extension.
pub(crate) fn mime_of_name(name: &str) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("pdf") => "application/pdf",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("wav") => "audio/wav",
        Some("mp3") => "audio/mpeg",
        Some("ogg") => "audio/ogg",
        Some("txt") => "text/plain",
        Some("md") => "text/markdown",
        Some("csv") => "text/csv",
        Some("html" | "htm") => "text/html",
        Some("json") => "application/json",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}
