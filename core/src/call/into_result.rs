//! What a tool may return, and [`Content`]: a structured value with blocks.

use serde::Serialize;
use serde_json::Value;

use crate::call::{ToolError, ToolResult};
use crate::media::{Audio, Block, BlockKind, File, Image, Resource, ResourceLink};

/// A value a tool may return: anything `Serialize` (the structured value, as JSON), one media
/// type ([`Image`], [`Audio`], [`File`], [`ResourceLink`], [`Resource`], [`Block`]), or a
/// [`Content`] for a value with several blocks. `Result<T, E>` of any of these, with
/// `E: Display`, is the same with an error.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a `#[tool]` function",
    label = "this return type does not implement `serde::Serialize`",
    note = "return a type that derives `serde::Serialize`, a `String`, `()`, `Result<T, E>` with `E: Display`, `ToolResult`, or media from `tool_registry::content` (`Image`, `File`, `Content` for several blocks)"
)]
pub trait IntoToolResult {
    /// The structured part, whose JSON Schema is the tool's output schema when it has one;
    /// [`NoValue`] for a result of blocks only.
    type Value;

    /// The kinds of blocks a tool returning this type gives besides its value, for the
    /// catalog: empty for a plain value, [`BlockKind::ALL`] when any may come.
    const KINDS: &'static [BlockKind];

    /// The result.
    fn into_tool_result(self) -> Result<ToolResult, ToolError>;
}

/// The structured value of a result, as JSON.
fn json<T: Serialize>(value: T) -> Result<Value, ToolError> {
    serde_json::to_value(value)
        .map_err(|e| ToolError::handler("", format!("the tool's output is not JSON: {e}")))
}

impl<T: Serialize> IntoToolResult for T {
    type Value = T;
    const KINDS: &'static [BlockKind] = &[];

    #[inline]
    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        json(self).map(ToolResult::ok)
    }
}

macro_rules! media {
    ($($ty:ident => $kind:ident),*) => {$(
        impl IntoToolResult for $ty {
            type Value = NoValue;
            const KINDS: &'static [BlockKind] = &[BlockKind::$kind];

            fn into_tool_result(self) -> Result<ToolResult, ToolError> {
                Ok(ToolResult::from_blocks(vec![self.into()]))
            }
        }
    )*};
}
media!(Image => Image, Audio => Audio, File => File, ResourceLink => ResourceLink, Resource => Resource);

impl IntoToolResult for Block {
    type Value = NoValue;
    const KINDS: &'static [BlockKind] = BlockKind::ALL;

    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        Ok(ToolResult::from_blocks(vec![self]))
    }
}

/// The structured part of a result that has none: a [`Content`] made with [`Content::new`].
/// It has no JSON Schema, so such a tool declares no output schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoValue;

/// What may be the structured part of a [`Content`]: any `Serialize` type, or [`NoValue`].
pub trait Structured {
    /// The value as JSON; `Null` for [`NoValue`].
    fn into_json(self) -> Result<Value, ToolError>;
}

impl<T: Serialize> Structured for T {
    fn into_json(self) -> Result<Value, ToolError> {
        json(self)
    }
}

impl Structured for NoValue {
    fn into_json(self) -> Result<Value, ToolError> {
        Ok(Value::Null)
    }
}

/// A result of a structured value and blocks, built in the order the model should read them.
///
/// ```
/// use tool_registry::content::{Content, Image, ResourceLink};
///
/// #[derive(serde::Serialize)]
/// struct Chart { points: usize }
///
/// let content = Content::value(Chart { points: 12 })
///     .text("The chart, drawn:")
///     .image(Image::png(b"\x89PNG\r\n\x1a\n...".to_vec()))
///     .link(ResourceLink::new("https://example.com/data.csv", "data.csv"));
/// let blocks = Content::new().text("only blocks");
/// # let _ = (content, blocks);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[must_use]
pub struct Content<T = NoValue> {
    value: T,
    blocks: Vec<Block>,
}

impl Content {
    /// A result of blocks only, with no structured value.
    pub fn new() -> Self {
        Self {
            value: NoValue,
            blocks: Vec::new(),
        }
    }
}

impl Default for Content {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Content<T> {
    /// A result whose structured value is `value` (the model reads it first, as JSON text;
    /// its JSON Schema, when `T` has one, is the tool's output schema).
    pub fn value(value: T) -> Self {
        Self {
            value,
            blocks: Vec::new(),
        }
    }

    /// Adds a block of any kind.
    pub fn block(mut self, block: impl Into<Block>) -> Self {
        self.blocks.push(block.into());
        self
    }

    /// Adds a text block.
    pub fn text(self, text: impl Into<String>) -> Self {
        self.block(Block::Text(text.into()))
    }

    /// Adds an image.
    pub fn image(self, image: Image) -> Self {
        self.block(image)
    }

    /// Adds an audio clip.
    pub fn audio(self, audio: Audio) -> Self {
        self.block(audio)
    }

    /// Adds a file.
    pub fn file(self, file: File) -> Self {
        self.block(file)
    }

    /// Adds a link to a resource.
    pub fn link(self, link: ResourceLink) -> Self {
        self.block(link)
    }

    /// Adds an embedded resource.
    pub fn resource(self, resource: Resource) -> Self {
        self.block(resource)
    }

    /// Adds every block of `blocks`.
    pub fn blocks(mut self, blocks: impl IntoIterator<Item = Block>) -> Self {
        self.blocks.extend(blocks);
        self
    }
}

impl<T: Structured> IntoToolResult for Content<T> {
    type Value = T;
    const KINDS: &'static [BlockKind] = BlockKind::ALL;

    fn into_tool_result(self) -> Result<ToolResult, ToolError> {
        let mut result = ToolResult::ok(self.value.into_json()?);
        result.blocks = self.blocks.into();
        Ok(result)
    }
}
