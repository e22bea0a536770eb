//! What an answer says of itself before it is read, and the errors that stand for one not
//! read: its id from its first bytes ([`answer_id_of`]), the blocks of its `result.content`
//! counted without building them ([`blocks_over`]), and the errors a client's transport gives
//! the request of an answer too long, of too many blocks, or unreadable, each marked in its
//! `data` ([`TOO_LONG`], [`TOO_MANY_BLOCKS`], [`UNREADABLE`]). Both transports of a mounted
//! server (stdio, streamable HTTP) and the server's own HTTP layer read answers with these.

use rmcp::model::{ErrorCode, ErrorData, RequestId};
use serde_json::Value;

/// The key in the `data` of the error a client's transport gives for an answer too long to
/// read; its value is the bound in bytes.
pub(super) const TOO_LONG: &str = "tool-registry/answerTooLong";

/// The key in the `data` of the error a client's transport gives for an answer of more blocks
/// than the registry reads; its value is the bound.
pub(super) const TOO_MANY_BLOCKS: &str = "tool-registry/answerTooManyBlocks";

/// The key in the `data` of the error a client's transport gives for an answer that does not
/// read as a message (nested deeper than 128 levels, or not of MCP's shape).
pub(super) const UNREADABLE: &str = "tool-registry/answerUnreadable";

/// Whether an error's `data` says the client's transport refused to read the answer (too
/// long, too many blocks, unreadable): the mounted tool answered what it may not.
pub(super) fn refused_answer(data: Option<&Value>) -> bool {
    data.is_some_and(|data| {
        [TOO_LONG, TOO_MANY_BLOCKS, UNREADABLE]
            .iter()
            .any(|key| data.get(key).is_some())
    })
}

/// The error that stands for an answer longer than `max` bytes, marked [`TOO_LONG`].
pub(super) fn too_long_answer(max: usize) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the answer is longer than {max} bytes, the most read of one message; it was skipped"
        ),
        Some(serde_json::json!({ TOO_LONG: max })),
    )
}

/// The error that stands for an answer of more than `max` blocks, marked [`TOO_MANY_BLOCKS`].
pub(super) fn too_many_blocks_answer(max: usize) -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "the answer holds more than {max} content blocks, the most a result may hold; it was not read"
        ),
        Some(serde_json::json!({ TOO_MANY_BLOCKS: max })),
    )
}

/// The error that stands for an answer that does not read as a message, marked
/// [`UNREADABLE`]. Says why in words of its own: serde's would quote the line.
pub(super) fn unreadable_answer(error: &serde_json::Error) -> ErrorData {
    let why = match error.classify() {
        serde_json::error::Category::Syntax | serde_json::error::Category::Eof => {
            "it is not JSON, or nests deeper than 128 levels"
        }
        _ => "it is not an MCP answer",
    };
    ErrorData::new(
        ErrorCode::PARSE_ERROR,
        format!("the answer cannot be read: {why}"),
        Some(serde_json::json!({ UNREADABLE: true })),
    )
}

/// The id of the JSON-RPC answer `line` when its `result.content` holds more than `max`
/// elements (see [`blocks_over`]).
pub(super) fn over_blocks(line: &[u8], max: usize) -> Option<RequestId> {
    blocks_over(line, max).flatten()
}

/// `Some` when the JSON-RPC answer `line` holds more than `max` elements in its
/// `result.content`, with its id when one was read. The elements are counted, never built:
/// each is skipped as serde's `IgnoredAny`, and so is every other member. A line too short to
/// hold that many is not looked at; a line cut short (the first bytes of a longer answer) is
/// counted as far as it goes.
pub(super) fn blocks_over(line: &[u8], max: usize) -> Option<Option<RequestId>> {
    use serde::de::{
        DeserializeSeed, Deserializer as _, IgnoredAny, MapAccess, SeqAccess, Visitor,
    };
    use std::fmt;

    /// What the scan found. Once the answer is known to be over and its id is read, the scan
    /// stops (with an error of its own): the rest need not be looked at.
    #[derive(Default)]
    struct Found {
        id: Option<RequestId>,
        over: bool,
    }

    /// The message: its `id`, and its `result`.
    struct Scan<'a>(&'a mut Found, usize);
    /// The `result`: its `content`.
    struct ResultMember<'a>(&'a mut Found, usize);
    /// The `content`: counted.
    struct ContentMember<'a>(&'a mut Found, usize);

    fn stop<E: serde::de::Error>() -> E {
        E::custom("over the bound")
    }

    impl<'de> Visitor<'de> for Scan<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON-RPC message")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "id" => self.0.id = Some(map.next_value()?),
                    "result" => map.next_value_seed(ResultMember(&mut *self.0, self.1))?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                if self.0.over && self.0.id.is_some() {
                    return Err(stop());
                }
            }
            Ok(())
        }
    }

    impl<'de> DeserializeSeed<'de> for ResultMember<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }

    impl<'de> Visitor<'de> for ResultMember<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a result")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "content" => map.next_value_seed(ContentMember(&mut *self.0, self.1))?,
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(())
        }
    }

    impl<'de> DeserializeSeed<'de> for ContentMember<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_seq(self)
        }
    }

    impl<'de> Visitor<'de> for ContentMember<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("content blocks")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            let mut count = 0usize;
            while seq.next_element::<IgnoredAny>()?.is_some() {
                count += 1;
                if count > self.1 {
                    self.0.over = true;
                    // With the id read, nothing after this block matters.
                    if self.0.id.is_some() {
                        return Err(stop());
                    }
                }
            }
            Ok(())
        }
    }

    // An array of more than `max` elements takes at least two bytes each.
    if line.len() <= max.saturating_mul(2) {
        return None;
    }
    let mut found = Found::default();
    let mut deserializer = serde_json::Deserializer::from_slice(line);
    let _ = deserializer.deserialize_map(Scan(&mut found, max));
    found.over.then_some(found.id)
}

/// The `id` member of the JSON-RPC object whose first bytes are `head`, when they hold it
/// whole.
pub(super) fn id_of(head: &[u8]) -> Option<RequestId> {
    head_of(head).0
}

/// The `id` of the JSON-RPC answer (a result or an error) whose first bytes are `head`, when
/// they hold it whole before the answer itself: the answer a client sent too long to read.
pub(super) fn answer_id_of(head: &[u8]) -> Option<RequestId> {
    match head_of(head) {
        (Some(id), Some(Member::Answer)) => Some(id),
        _ => None,
    }
}

/// The member that tells what a JSON-RPC message is.
#[derive(Clone, Copy, PartialEq)]
enum Member {
    /// `method`: a request or a notification.
    Method,
    /// `result` or `error`: an answer.
    Answer,
}

/// The `id` of the JSON-RPC object whose first bytes are `head`, and the member that told what
/// it is, as far as the bytes go: members are read until the first `method`, `result` or
/// `error` (whose value may be cut) once `id` is read.
fn head_of(head: &[u8]) -> (Option<RequestId>, Option<Member>) {
    use serde::de::{Deserializer as _, IgnoredAny, MapAccess, Visitor};

    /// Reads members until both are known, then stops: the rest of the line is not there.
    struct Head<'a>(&'a mut Option<RequestId>, &'a mut Option<Member>);

    impl<'de> Visitor<'de> for Head<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC message")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match key.as_ref() {
                    "id" => *self.0 = Some(map.next_value()?),
                    "method" => *self.1 = Some(Member::Method),
                    "result" | "error" => *self.1 = Some(Member::Answer),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                }
                if self.0.is_some() && self.1.is_some() || *self.1 == Some(Member::Answer) {
                    // Stops the walk here, where the line may be cut.
                    return Err(serde::de::Error::custom("found"));
                }
                if *self.1 == Some(Member::Method) {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(())
        }
    }

    let (mut id, mut member) = (None, None);
    let mut deserializer = serde_json::Deserializer::from_slice(head);
    let _ = deserializer.deserialize_map(Head(&mut id, &mut member));
    (id, member)
}
