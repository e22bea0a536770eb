//! How each provider carries a result's blocks: one [`Rules`] per provider (how it writes text,
//! what it does with each medium), and the parts of a result written by them. The table of what
//! each provider gets is in `results.rs`, whose messages are built from these parts.

use serde_json::{Value, json};

use crate::call::ToolResult;
use crate::media::wire::encode;
use crate::media::{Block, ResourceBody, ResourceLink};

/// What the model reads: the content, or for a failure with nothing in it the message.
pub(super) fn answer_value(result: &ToolResult) -> Value {
    match (&result.content, &result.message) {
        (Value::Null, Some(message)) => Value::String(message.clone()),
        (content, _) => content.clone(),
    }
}

/// [`answer_value`] as text: a string as it is, anything else as compact JSON.
pub(super) fn text_of(result: &ToolResult) -> String {
    match (&result.content, &result.message) {
        (Value::Null, Some(message)) => message.clone(),
        (Value::String(text), _) => text.clone(),
        // Written by serde, not through `Display`'s formatter; a `Value` always serializes.
        (content, _) => serde_json::to_string(content).unwrap_or_default(),
    }
}

pub(super) fn parts_or_text(result: &ToolResult, rules: &Rules, text: String) -> Value {
    match parts(result, rules) {
        Some(parts) => Value::Array(parts.here),
        None => Value::String(text),
    }
}

/// How one provider carries what a result holds. One table row a provider, below.
pub(super) struct Rules {
    /// A text part.
    text: fn(&str) -> Value,
    /// The part of some bytes, or why they cannot go.
    media: fn(&Media<'_>) -> Carry,
    /// What the provider's results are called, to say they carry no resource links: no
    /// provider's model fetches the resources a tool links to.
    results: &'static str,
    /// Whether the structured value leads the parts; Gemini keeps it in `response` instead.
    value: bool,
}

impl Rules {
    const fn new(
        text: fn(&str) -> Value,
        media: fn(&Media<'_>) -> Carry,
        results: &'static str,
    ) -> Self {
        Self {
            text,
            media,
            results,
            value: true,
        }
    }
}

pub(super) const CHAT: Rules =
    Rules::new(text_part, chat_media, "OpenAI Chat Completions messages");
pub(super) const RESPONSES: Rules = Rules::new(
    responses_text,
    responses_media,
    "OpenAI function call outputs",
);
pub(super) const ANTHROPIC: Rules =
    Rules::new(text_part, anthropic_media, "Anthropic tool results");
pub(super) const GEMINI: Rules = Rules {
    value: false,
    ..Rules::new(gemini_text, gemini_media, "Gemini function responses")
};

/// What a provider does with some bytes.
pub(super) enum Carry {
    /// These parts, in the result's place.
    Here(Vec<Value>),
    /// This part in a `user` message after the result, announced in the result's place (Chat
    /// Completions, whose `tool` message takes text only).
    After(Value),
    /// Nothing but a text, in the result's place, that says what was left out and this reason.
    Refused(&'static str),
}

/// The parts of a result message, and of the `user` message after it.
#[derive(Default)]
pub(super) struct Parts {
    pub(super) here: Vec<Value>,
    pub(super) after: Vec<Value>,
}

/// `result`'s value (where `rules` puts it among the parts) and blocks as `rules`' parts, in
/// order; `None` for a result without blocks, or one whose blocks come to nothing (empty text).
pub(super) fn parts(result: &ToolResult, rules: &Rules) -> Option<Parts> {
    if result.blocks.is_empty() {
        return None;
    }
    let text = rules.text;
    let mut parts = Parts::default();
    if rules.value && !answer_value(result).is_null() {
        parts.here.push(text(&text_of(result)));
    }
    for block in &result.blocks {
        match Piece::of(block) {
            Piece::Text("") => {}
            Piece::Text(said) => parts.here.push(text(said)),
            Piece::Link(link) => {
                let why = format!("{} carry no resource links", rules.results);
                parts.here.push(text(&note(&link_text(link), &why)));
            }
            Piece::Media(media) => match (rules.media)(&media) {
                Carry::Here(more) => parts.here.extend(more),
                Carry::After(part) => {
                    let after = "in the user message after this result";
                    parts.here.push(text(&note(&media.describe(), after)));
                    parts.after.push(part);
                }
                Carry::Refused(why) => parts.here.push(text(&note(&media.describe(), why))),
            },
        }
    }
    (!parts.here.is_empty()).then_some(parts)
}

/// One block as the providers see it.
pub(super) enum Piece<'a> {
    Text(&'a str),
    Link(&'a ResourceLink),
    Media(Media<'a>),
}

impl<'a> Piece<'a> {
    fn of(block: &'a Block) -> Self {
        match block {
            Block::Text(text) => Self::Text(text),
            Block::Image(image) => Self::Media(Media::new(image.mime_type(), image.data(), None)),
            Block::Audio(audio) => Self::Media(Media::new(audio.mime_type(), audio.data(), None)),
            Block::File(file) => {
                Self::Media(Media::new(file.mime_type(), file.data(), Some(file.name())))
            }
            Block::ResourceLink(link) => Self::Link(link),
            Block::Resource(resource) => {
                let (mime, data) = match &resource.body {
                    ResourceBody::Text(text) => ("text/plain", text.as_bytes()),
                    ResourceBody::Blob(data) => ("application/octet-stream", &data[..]),
                };
                let mime = resource.mime_type.as_deref().unwrap_or(mime);
                Self::Media(Media::new(mime, data, Some(&resource.uri)))
            }
        }
    }
}

/// Bytes of a result, whichever block brought them: an image, a clip, a file, an embedded
/// resource.
pub(super) struct Media<'a> {
    kind: Kind<'a>,
    /// The MIME type without parameters, in lower case, common aliases resolved.
    mime: String,
    data: &'a [u8],
    /// The file's name, or the embedded resource's URI.
    name: Option<&'a str>,
    /// A name for a provider's `filename` field: the file's, or the last segment of the
    /// resource's URI when it has an extension.
    file: Option<&'a str>,
}

/// What the providers tell apart.
pub(super) enum Kind<'a> {
    Image,
    Audio,
    Pdf,
    /// Text in UTF-8 (`text/*`, JSON, XML), as a string.
    Text(&'a str),
    Other,
}

impl<'a> Media<'a> {
    fn new(mime: &str, data: &'a [u8], name: Option<&'a str>) -> Self {
        let essence = mime.split(';').next().unwrap_or_default().trim();
        let mime = match essence.to_ascii_lowercase().as_str() {
            "image/jpg" => "image/jpeg".to_owned(),
            "audio/x-wav" | "audio/wave" => "audio/wav".to_owned(),
            "audio/mp3" => "audio/mpeg".to_owned(),
            other => other.to_owned(),
        };
        let textual = mime.starts_with("text/")
            || ["application/json", "application/xml"].contains(&mime.as_str())
            || mime.ends_with("+json")
            || mime.ends_with("+xml");
        let kind = if mime.starts_with("image/") {
            Kind::Image
        } else if mime.starts_with("audio/") {
            Kind::Audio
        } else if mime == "application/pdf" {
            Kind::Pdf
        } else if textual {
            std::str::from_utf8(data).map_or(Kind::Other, Kind::Text)
        } else {
            Kind::Other
        };
        let file = name.and_then(|name| {
            let path = name.split(['?', '#']).next().unwrap_or_default();
            let last = path.rsplit(['/', ':']).next().unwrap_or_default();
            (last.contains('.') && !last.starts_with('.')).then_some(last)
        });
        Self {
            kind,
            mime,
            data,
            name,
            file,
        }
    }

    /// `q3.pdf (application/pdf, 1234 bytes)`, or `image/png, 1234 bytes` without a name.
    fn describe(&self) -> String {
        let (mime, len) = (&self.mime, self.data.len());
        match self.name {
            Some(name) => format!("{name} ({mime}, {len} bytes)"),
            None => format!("{mime}, {len} bytes"),
        }
    }

    /// The bytes as standard base64.
    fn base64(&self) -> String {
        encode(self.data)
    }

    /// `data:<mime>;base64,<bytes>`.
    fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.mime, self.base64())
    }

    /// The text of a text file, after a line that names it.
    fn headed(&self, text: &str) -> String {
        format!("[{}]\n{text}", self.describe())
    }
}

/// `[what: why]`: what a provider was not given, and why; or where it went.
pub(super) fn note(what: &str, why: &str) -> String {
    format!("[{what}: {why}]")
}

/// `resource link kb://q3 (q3 archive, application/pdf, 512 bytes): what it is`.
pub(super) fn link_text(link: &ResourceLink) -> String {
    let mut about = vec![link.name.clone()];
    about.extend(link.title.as_ref().map(|title| format!("{title:?}")));
    about.extend(link.mime_type.clone());
    about.extend(link.size.map(|size| format!("{size} bytes")));
    let mut text = format!("resource link {} ({})", link.uri, about.join(", "));
    if let Some(description) = &link.description {
        text.push_str(": ");
        text.push_str(description);
    }
    text
}

/// `value` with `key` set to `name` when there is one.
pub(super) fn named(mut value: Value, key: &str, name: Option<&str>) -> Value {
    if let (Some(object), Some(name)) = (value.as_object_mut(), name) {
        object.insert(key.into(), name.into());
    }
    value
}

/// `part` after a text that names it, for a named file where the part has no field for a
/// name.
pub(super) fn labelled(text: fn(&str) -> Value, media: &Media<'_>, part: Value) -> Vec<Value> {
    match media.name {
        Some(_) => vec![text(&format!("[{}]", media.describe())), part],
        None => vec![part],
    }
}

/// The image types OpenAI and Anthropic both take.
pub(super) const WEB_IMAGES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];

/// The image types Gemini takes in a function response.
pub(super) const GEMINI_IMAGES: [&str; 3] = ["image/png", "image/jpeg", "image/webp"];

/// The office documents and spreadsheets OpenAI's file inputs read, besides PDF and text.
pub(super) fn is_office(mime: &str) -> bool {
    mime.starts_with("application/vnd.openxmlformats-officedocument.")
        || mime.starts_with("application/vnd.oasis.opendocument.")
        || [
            "application/msword",
            "application/rtf",
            "application/vnd.ms-excel",
            "application/vnd.ms-powerpoint",
        ]
        .contains(&mime)
}

/// A text part of Chat Completions and Anthropic, which write it alike.
pub(super) fn text_part(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// Images, WAV and MP3 clips and PDFs follow in a `user` message; text files go in the `tool`
/// message, as OpenAI advises for text in Chat Completions.
pub(super) fn chat_media(media: &Media<'_>) -> Carry {
    match (&media.kind, media.mime.as_str()) {
        (Kind::Image, mime) if WEB_IMAGES.contains(&mime) => Carry::After(json!({
            "type": "image_url",
            "image_url": { "url": media.data_url() },
        })),
        (Kind::Image, _) => Carry::Refused("OpenAI takes PNG, JPEG, GIF and WebP images"),
        (Kind::Audio, "audio/wav" | "audio/mpeg") => {
            let format = if media.mime == "audio/wav" {
                "wav"
            } else {
                "mp3"
            };
            Carry::After(json!({
                "type": "input_audio",
                "input_audio": { "data": media.base64(), "format": format },
            }))
        }
        (Kind::Audio, _) => Carry::Refused("OpenAI Chat Completions takes WAV and MP3 audio"),
        (Kind::Pdf, _) => {
            let file = named(
                json!({ "file_data": media.data_url() }),
                "filename",
                media.file,
            );
            Carry::After(json!({ "type": "file", "file": file }))
        }
        (Kind::Text(text), _) => Carry::Here(vec![text_part(&media.headed(text))]),
        (Kind::Other, _) => Carry::Refused("OpenAI Chat Completions takes PDF files only"),
    }
}

pub(super) fn responses_text(text: &str) -> Value {
    json!({ "type": "input_text", "text": text })
}

/// Images as `input_image`; PDFs, office documents and text files as `input_file`; text
/// without a file name (an embedded resource's) as text.
pub(super) fn responses_media(media: &Media<'_>) -> Carry {
    let file = || {
        let file = json!({ "type": "input_file", "file_data": media.data_url() });
        Carry::Here(vec![named(file, "filename", media.file)])
    };
    match (&media.kind, media.mime.as_str()) {
        (Kind::Image, mime) if WEB_IMAGES.contains(&mime) => {
            let image = json!({ "type": "input_image", "image_url": media.data_url() });
            Carry::Here(labelled(responses_text, media, image))
        }
        (Kind::Image, _) => Carry::Refused("OpenAI takes PNG, JPEG, GIF and WebP images"),
        (Kind::Audio, _) => Carry::Refused("OpenAI function call outputs carry no audio"),
        (Kind::Text(text), _) if media.file.is_none() => {
            Carry::Here(vec![responses_text(&media.headed(text))])
        }
        (Kind::Pdf | Kind::Text(_), _) => file(),
        (Kind::Other, mime) if is_office(mime) => file(),
        (Kind::Other, _) => {
            Carry::Refused("OpenAI file inputs are PDF, text, office documents and spreadsheets")
        }
    }
}

/// Images as `image`, PDFs and text files as `document` (base64 PDF, or plain text) titled
/// with their names.
pub(super) fn anthropic_media(media: &Media<'_>) -> Carry {
    let document = |source: Value| {
        let document = json!({ "type": "document", "source": source });
        Carry::Here(vec![named(document, "title", media.name)])
    };
    match (&media.kind, media.mime.as_str()) {
        (Kind::Image, mime) if WEB_IMAGES.contains(&mime) => {
            let image = json!({
                "type": "image",
                "source": { "type": "base64", "media_type": mime, "data": media.base64() },
            });
            Carry::Here(labelled(text_part, media, image))
        }
        (Kind::Image, _) => Carry::Refused("Anthropic takes JPEG, PNG, GIF and WebP images"),
        (Kind::Audio, _) => Carry::Refused("Anthropic tool results carry no audio"),
        (Kind::Pdf, _) => document(json!({
            "type": "base64", "media_type": "application/pdf", "data": media.base64(),
        })),
        (Kind::Text(text), _) => document(json!({
            "type": "text", "media_type": "text/plain", "data": text,
        })),
        (Kind::Other, _) => Carry::Refused("Anthropic documents are PDF or plain text"),
    }
}

/// Text as a `text/plain` part: a function response's parts hold media only.
pub(super) fn gemini_text(text: &str) -> Value {
    gemini_inline("text/plain", text.as_bytes(), None)
}

/// Images (PNG, JPEG, WebP), PDFs and text files (as `text/plain`) as inline data, named.
pub(super) fn gemini_media(media: &Media<'_>) -> Carry {
    let inline = |mime| Carry::Here(vec![gemini_inline(mime, media.data, media.name)]);
    match (&media.kind, media.mime.as_str()) {
        (Kind::Image, mime) if GEMINI_IMAGES.contains(&mime) => inline(mime),
        (Kind::Image, _) => Carry::Refused("Gemini takes PNG, JPEG and WebP images"),
        (Kind::Audio, _) => Carry::Refused("Gemini function responses carry no audio"),
        (Kind::Pdf, _) => inline("application/pdf"),
        (Kind::Text(_), _) => inline("text/plain"),
        (Kind::Other, _) => Carry::Refused("Gemini function responses take PDF and plain text"),
    }
}

/// A `FunctionResponsePart` of inline data.
pub(super) fn gemini_inline(mime: &str, data: &[u8], name: Option<&str>) -> Value {
    let blob = json!({ "mimeType": mime, "data": encode(data) });
    json!({ "inlineData": named(blob, "displayName", name) })
}
