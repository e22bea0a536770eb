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
use serde::de::{Error as _, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serializer};
use serde_json::{Map, Value};

use super::check::{Refused, too_many_blocks};
use super::{
    Audio, Block, Blocks, ContentLimits, File, Image, Resource, ResourceBody, ResourceLink,
};

/// `data` as standard base64.
pub fn encode(data: &[u8]) -> String {
    STANDARD.encode(data)
}

/// Standard base64 (padding required, no whitespace) as bytes.
pub fn decode(text: &str) -> Result<Bytes, String> {
    STANDARD
        .decode(text)
        .map(Bytes::from)
        .map_err(|e| format!("invalid base64: {e}"))
}

/// One block as JSON, in the shape above. Built by hand rather than through `Serialize`: the
/// base64 text is made once and moved into the value, where `serde_json::to_value` would copy
/// every string it is given, so that an image costs its base64 once.
pub fn to_value(block: &Block) -> Value {
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

/// `#[serde(with = "wire")]` for [`Blocks`].
pub fn serialize<S: Serializer>(blocks: &[Block], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(blocks.iter().map(to_value))
}

/// `#[serde(with = "wire")]` for [`Blocks`]: at most as many blocks as the reading allows
/// ([`bounded`]; the default [`ContentLimits`]' otherwise), each read and built one at a time,
/// and the first past the bound an error before it is read: 300,000 blocks never become
/// 300,000 [`Block`]s, nor a list of values first.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Blocks, D::Error> {
    deserializer.deserialize_seq(ReadBlocks {
        max: BOUND.with(|bound| bound.get().max_blocks),
    })
}

/// The bound the blocks of the result being read keep to, and the block refused, if one was.
#[derive(Clone, Copy)]
struct Bound {
    max_blocks: usize,
}

thread_local! {
    // A derived `Deserialize` (a `ToolResult`'s, a task's) has no place for a seed: the bound
    // a reader knows travels to `deserialize` here, for the length of one synchronous read,
    // and the block refused travels back the same way.
    static BOUND: std::cell::Cell<Bound> = const {
        std::cell::Cell::new(Bound { max_blocks: ContentLimits::DEFAULT.max_blocks })
    };
    static REFUSED: std::cell::RefCell<Option<Refused>> = const { std::cell::RefCell::new(None) };
}

/// Runs `read` (one synchronous read of JSON that may hold [`ToolResult`](crate::ToolResult)s)
/// with `limits.max_blocks` as the bound on each result's blocks; with the error, which block
/// the read refused and why, when it refused one (too many, a kind this version does not
/// know, base64 that is not).
pub fn bounded<T, E>(
    limits: &ContentLimits,
    read: impl FnOnce() -> Result<T, E>,
) -> Result<T, (E, Option<Refused>)> {
    /// Puts the bound that was back, however `read` ends (a panic included).
    struct Restore(Bound);
    impl Drop for Restore {
        fn drop(&mut self) {
            BOUND.with(|bound| bound.set(self.0));
        }
    }
    let bound = Bound {
        max_blocks: limits.max_blocks,
    };
    let _restore = Restore(BOUND.with(|cell| cell.replace(bound)));
    REFUSED.with(|refused| refused.borrow_mut().take());
    read().map_err(|error| (error, REFUSED.with(|refused| refused.borrow_mut().take())))
}

/// Counts the blocks of an answer's JSON as its bytes arrive, before any is read: the elements
/// of the array at a path of member names from the top-level object (`["blocks"]` for a tool
/// result, `["result", "content"]` for an MCP answer; a member whose name is escaped may be the
/// one named, and is taken as it). A reader that feeds it each piece of an answer stops at the
/// first block past the bound, having held only what came before it; whatever the bytes are,
/// it never fails, and bytes that are no JSON are left to the parser to refuse.
#[derive(Debug)]
pub struct CountBlocks {
    /// The member names that lead to the array, from the top-level object.
    path: &'static [&'static [u8]],
    max: usize,
    count: usize,
    /// How many objects and arrays are open.
    depth: usize,
    /// How many members of `path` the open containers follow: the objects at depths 1 to
    /// `matched + 1` are on the path.
    matched: usize,
    in_string: bool,
    escaped: bool,
    /// In the innermost object on the path, the next string is a member's name.
    name_next: bool,
    /// Reading a member name of the innermost object on the path.
    name: Option<Name>,
    /// The member just named is (or may be) `path[matched]`: its value comes next.
    member_named: bool,
    /// Inside the array counted, and whether an element starts next.
    counting: bool,
    element_next: bool,
}

/// A member name as [`CountBlocks`] reads it: its first bytes, and whether it held more, or an
/// escape.
#[derive(Debug, Default)]
struct Name {
    bytes: [u8; Name::KEPT],
    len: usize,
    long: bool,
    escaped: bool,
}

impl Name {
    /// The longest name of a path.
    const KEPT: usize = 16;

    /// Whether the name is (or, escaped, may be) `member`.
    fn is(&self, member: &[u8]) -> bool {
        self.escaped || (!self.long && &self.bytes[..self.len] == member)
    }
}

impl CountBlocks {
    /// The path of a tool result's blocks.
    pub const RESULT: &'static [&'static [u8]] = &[b"blocks"];
    /// The path of an MCP answer's content blocks.
    pub const MCP_ANSWER: &'static [&'static [u8]] = &[b"result", b"content"];

    /// A counter of the array at `path` (no name longer than 16 bytes) that stops past `max`
    /// elements.
    pub fn new(path: &'static [&'static [u8]], max: usize) -> Self {
        debug_assert!(!path.is_empty() && path.iter().all(|name| name.len() <= Name::KEPT));
        Self {
            path,
            max,
            count: 0,
            depth: 0,
            matched: 0,
            in_string: false,
            escaped: false,
            name_next: false,
            name: None,
            member_named: false,
            counting: false,
            element_next: false,
        }
    }

    /// Whether more blocks than the bound have been seen.
    pub fn over(&self) -> bool {
        self.count > self.max
    }

    /// Counts on through `bytes`, the next piece of the answer; `false` once the blocks are
    /// more than the bound (the rest need not be read).
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        for &byte in bytes {
            if self.in_string {
                self.string_byte(byte);
                continue;
            }
            match byte {
                b'"' => {
                    if self.name_next {
                        self.name_next = false;
                        self.name = Some(Name::default());
                    } else {
                        self.value_starts(byte);
                    }
                    self.in_string = true;
                }
                b'{' | b'[' => {
                    self.value_starts(byte);
                    self.depth = self.depth.saturating_add(1);
                    self.name_next = byte == b'{' && self.depth == self.matched + 1;
                }
                b'}' | b']' => {
                    if self.counting && self.depth == self.path.len() + 1 {
                        self.counting = false;
                    } else if self.depth == self.matched + 1 && self.matched > 0 {
                        self.matched -= 1;
                    }
                    self.depth = self.depth.saturating_sub(1);
                }
                b',' => {
                    self.name_next = self.depth == self.matched + 1;
                    self.element_next = self.counting && self.depth == self.path.len() + 1;
                }
                b':' | b' ' | b'\t' | b'\n' | b'\r' => {}
                // A number, `true`, `false`, `null`: only its first byte starts a value.
                _ => self.value_starts(byte),
            }
            if self.over() {
                return false;
            }
        }
        true
    }

    /// One byte inside a string: a member name's bytes are kept as far as [`Name::KEPT`].
    fn string_byte(&mut self, byte: u8) {
        if self.escaped {
            self.escaped = false;
            return;
        }
        match (byte, &mut self.name) {
            (b'"', name) => {
                self.in_string = false;
                if let Some(name) = name.take() {
                    self.member_named = name.is(self.path[self.matched]);
                }
            }
            (b'\\', name) => {
                self.escaped = true;
                if let Some(name) = name {
                    name.escaped = true;
                }
            }
            (byte, Some(name)) => match name.bytes.get_mut(name.len) {
                Some(slot) => {
                    *slot = byte;
                    name.len += 1;
                }
                None => name.long = true,
            },
            (_, None) => {}
        }
    }

    /// A value starts (`first` is its first byte), before the depth counts it: one more block
    /// when it is an element of the array counted; the next step along the path when it is
    /// the value of the member named.
    fn value_starts(&mut self, first: u8) {
        if self.counting && self.element_next && self.depth == self.path.len() + 1 {
            self.element_next = false;
            self.count += 1;
        }
        if self.member_named && self.depth == self.matched + 1 {
            self.member_named = false;
            let last = self.matched + 1 == self.path.len();
            match (first, last) {
                (b'[', true) => (self.counting, self.element_next) = (true, true),
                (b'{', false) => self.matched += 1,
                _ => {}
            }
        }
    }
}

/// The blocks of one result, read one at a time up to `max`.
struct ReadBlocks {
    max: usize,
}

impl<'de> Visitor<'de> for ReadBlocks {
    type Value = Blocks;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a list of content blocks")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Blocks, A::Error> {
        let refuse = |refused: Refused| {
            let message = format!("blocks[{}]: {}", refused.index, refused.message);
            REFUSED.with(|cell| *cell.borrow_mut() = Some(refused));
            A::Error::custom(message)
        };
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(self.max));
        loop {
            // One past the bound is an error before it is read: what it and the rest hold is
            // never looked at.
            if blocks.len() == self.max {
                return match seq.next_element::<IgnoredAny>()? {
                    Some(_) => Err(refuse(too_many_blocks(None, self.max))),
                    None => Ok(blocks.into()),
                };
            }
            let index = blocks.len();
            let wire = match seq.next_element::<In>() {
                Ok(Some(wire)) => wire,
                Ok(None) => return Ok(blocks.into()),
                Err(error) => {
                    let message = error.to_string();
                    return Err(refuse(Refused { index, message }));
                }
            };
            let block = block_of(wire).map_err(|message| refuse(Refused { index, message }))?;
            blocks.push(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block read from JSON in the shape above (base64 checked).
    fn from_value(value: Value) -> Result<Block, String> {
        let wire = In::deserialize(value).map_err(|e| e.to_string())?;
        block_of(wire)
    }

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

    /// A result of `count` links as JSON.
    fn links(count: usize) -> String {
        let link = r#"{"type":"resource_link","uri":"a:1","name":"x"}"#;
        format!(
            r#"{{"success":true,"blocks":[{}]}}"#,
            vec![link; count].join(",")
        )
    }

    #[test]
    fn blocks_are_read_up_to_the_bound_and_the_first_past_it_is_refused_unread() {
        let read = |json: &str, limits: &ContentLimits| {
            bounded(limits, || {
                serde_json::from_str::<crate::call::ToolResult>(json)
            })
        };
        let three = ContentLimits::DEFAULT.with_max_blocks(3);
        assert_eq!(read(&links(3), &three).unwrap().blocks.len(), 3);
        let (error, refused) = read(&links(4), &three).unwrap_err();
        let refused = refused.expect("the block refused");
        assert_eq!(refused.index, 3);
        assert!(
            refused.message.contains("limit of 3 blocks"),
            "{}",
            refused.message
        );
        assert!(error.to_string().starts_with("blocks[3]: "), "{error}");
        // The one past the bound is not read: it may be anything.
        let past = links(3).replace("]}", r#","not a block"]}"#);
        assert_eq!(read(&past, &three).unwrap_err().1.unwrap().index, 3);

        // Without a bound of its own, a read keeps to the default; the bound set is put back.
        assert_eq!(
            read(&links(1000), &ContentLimits::DEFAULT)
                .unwrap()
                .blocks
                .len(),
            1000
        );
        let unbounded = serde_json::from_str::<crate::call::ToolResult>(&links(1001));
        assert!(unbounded.is_err());
        let bad = r#"{"success":true,"blocks":[{"type":"text","text":"a"},{"type":"hologram"}]}"#;
        let (_, refused) = read(bad, &three).unwrap_err();
        let refused = refused.unwrap();
        assert_eq!(refused.index, 1);
        assert!(refused.message.contains("hologram"), "{}", refused.message);
        // An error that is not a block's leaves no refusal behind.
        let (_, refused) = read(r#"{"blocks":[]}"#, &three).unwrap_err();
        assert_eq!(refused, None);
    }

    #[test]
    fn blocks_are_counted_as_the_bytes_arrive_whatever_the_pieces() {
        // How many blocks `json` holds for the counter, fed in pieces of `step` bytes, and
        // whether it stopped early.
        let count = |json: &str, max: usize, step: usize| {
            let mut counter = CountBlocks::new(CountBlocks::RESULT, max);
            let stopped = !json
                .as_bytes()
                .chunks(step)
                .all(|piece| counter.feed(piece));
            (counter.count, stopped)
        };
        let blocks = r#"[{"type":"text","text":"a, b]"},{"type":"text","text":"\"[x]\""}, 1, "s", [2, 3], null]"#;
        for step in [1, 2, 3, 7, 1000] {
            let result = format!(
                r#"{{"success":true,"content":{{"blocks":[1,2,3,4,5,6,7]}},"blocks":{blocks},"side_effects":["a","b","c","d","e","f","g"]}}"#
            );
            assert_eq!(count(&result, 10, step), (6, false), "{step}");
            assert_eq!(count(&result, 5, step), (6, true), "{step}");
            // Only the top-level member named `blocks`, or one whose name is escaped.
            let escaped = result.replace(r#""blocks":["#, r#""bl\u006fcks":["#);
            assert_eq!(count(&escaped, 10, step), (6, false), "{step}");
            let other = result.replace(r#""blocks":["#, r#""blocksx":["#);
            assert_eq!(count(&other, 10, step), (0, false), "{step}");
            assert_eq!(count(r#"{"blocks":[]}"#, 0, step), (0, false));
            assert_eq!(count(r#"{"blocks":[{}]}"#, 0, step), (1, true));
        }
        // What is no JSON is no trouble.
        assert!(!count("]]]}}}\"\\", 1, 1).1);
        assert_eq!(count(&links(5000), 1000, 4096), (1001, true));
    }

    #[test]
    fn an_mcp_answers_content_is_counted_and_nothing_else() {
        let count = |json: &str, step: usize| {
            let mut counter = CountBlocks::new(CountBlocks::MCP_ANSWER, 3);
            let stopped = !json
                .as_bytes()
                .chunks(step)
                .all(|piece| counter.feed(piece));
            (counter.count, stopped)
        };
        for step in [1, 2, 5, 1000] {
            let answer = r#"{"jsonrpc":"2.0","id":1,"content":[1,2,3,4],"result":{"structuredContent":{"content":[1,2,3,4]},"content":[{"type":"text","text":"],["},"s",[1,2],{"content":[9,9,9,9]}],"isError":false},"x":{"result":{"content":[1,2,3,4]}}}"#;
            assert_eq!(count(answer, step), (4, true), "{step}");
            let fewer = answer.replace(r#",{"content":[9,9,9,9]}]"#, "]");
            assert_eq!(count(&fewer, step), (3, false), "{step}");
            // The content of a result member that is not an object, or of an error, is none.
            assert_eq!(
                count(r#"{"result":[{"content":[1,2,3,4]}]}"#, step),
                (0, false)
            );
            assert_eq!(
                count(r#"{"error":{"content":[1,2,3,4]}}"#, step),
                (0, false)
            );
        }
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
