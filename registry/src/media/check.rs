//! The checks every result passes before it leaves the registry: sizes, MIME types against
//! bytes, link schemes.

use super::{Block, ResourceBody};

/// Why a result's blocks were refused: which block, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    /// The block's index in the result.
    pub(crate) index: usize,
    /// What is wrong.
    pub(crate) message: String,
}

/// The bounds on what a tool returns: one block's bytes and the whole result's. Set with
/// [`RegistryBuilder::content_limits`](crate::RegistryBuilder::content_limits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContentLimits {
    /// The most bytes one block may carry (its decoded bytes, or its text). Default 10 MiB.
    pub max_block_bytes: usize,
    /// The most bytes the blocks of one result may carry together. Default 20 MiB.
    pub max_result_bytes: usize,
}

impl ContentLimits {
    /// 10 MiB a block, 20 MiB a result.
    pub const DEFAULT: Self = Self {
        max_block_bytes: 10 << 20,
        max_result_bytes: 20 << 20,
    };

    /// Limits of `max_block_bytes` a block and `max_result_bytes` a result.
    pub const fn new(max_block_bytes: usize, max_result_bytes: usize) -> Self {
        Self {
            max_block_bytes,
            max_result_bytes,
        }
    }
}

impl Default for ContentLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// URI schemes a link or an embedded resource may not use: a client that follows them would
/// read the local disk or run code.
const REFUSED_SCHEMES: &[&str] = &["file", "javascript", "vbscript", "data", "blob"];

/// The longest URI a link may have.
const MAX_URI_BYTES: usize = 8 << 10;

/// Checks `blocks` against `limits`; the refusal names the first block that fails.
pub(crate) fn check_blocks(blocks: &[Block], limits: &ContentLimits) -> Result<(), Refused> {
    let mut total = 0usize;
    for (index, block) in blocks.iter().enumerate() {
        let refuse = |message: String| Refused { index, message };
        let len = block.len();
        if len > limits.max_block_bytes {
            return Err(refuse(format!(
                "the {} block holds {len} bytes, more than the limit of {} bytes a block",
                block.kind(),
                limits.max_block_bytes
            )));
        }
        total = total.saturating_add(len);
        if total > limits.max_result_bytes {
            return Err(refuse(format!(
                "the result's blocks come to more than the limit of {} bytes a result",
                limits.max_result_bytes
            )));
        }
        check_block(block).map_err(refuse)?;
    }
    Ok(())
}

/// One block's MIME type, bytes and URI.
fn check_block(block: &Block) -> Result<(), String> {
    match block {
        Block::Text(_) => Ok(()),
        Block::Image(image) => check_media("image", &image.mime_type, &image.data),
        Block::Audio(audio) => check_media("audio", &audio.mime_type, &audio.data),
        Block::File(file) => {
            if file.name.is_empty() || file.name.contains(['/', '\\', '\0']) || file.name == ".." {
                return Err(format!(
                    "the file name {:?} must be a plain name, without a directory",
                    file.name
                ));
            }
            check_mime(&file.mime_type)?;
            check_bytes(&file.mime_type, &file.data)
        }
        Block::ResourceLink(link) => {
            check_uri(&link.uri)?;
            if let Some(mime) = &link.mime_type {
                check_mime(mime)?;
            }
            Ok(())
        }
        Block::Resource(resource) => {
            check_uri(&resource.uri)?;
            if let Some(mime) = &resource.mime_type {
                check_mime(mime)?;
                if let ResourceBody::Blob(data) = &resource.body {
                    check_bytes(mime, data)?;
                }
            }
            Ok(())
        }
    }
}

/// An image or audio clip: the MIME type is of that top-level type and matches the bytes.
fn check_media(top: &str, mime: &str, data: &[u8]) -> Result<(), String> {
    check_mime(mime)?;
    if mime.split('/').next() != Some(top) {
        return Err(format!(
            "an {top} block needs an `{top}/...` MIME type, not `{mime}`"
        ));
    }
    check_bytes(mime, data)
}

/// `type/subtype` with the characters RFC 6838 allows, and parameters after a `;`.
fn check_mime(mime: &str) -> Result<(), String> {
    let essence = mime.split(';').next().unwrap_or_default().trim();
    let valid_token = |token: &str| {
        !token.is_empty()
            && token.len() <= 127
            && token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    match essence.split_once('/') {
        Some((kind, subtype)) if valid_token(kind) && valid_token(subtype) && mime.len() <= 255 => {
            Ok(())
        }
        _ => Err(format!(
            "{:?} is not a MIME type (`type/subtype`, such as `image/png`)",
            truncated(mime)
        )),
    }
}

/// The bytes start as the MIME type says, for the types whose signature is cheap to read.
fn check_bytes(mime: &str, data: &[u8]) -> Result<(), String> {
    let essence = mime
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let starts = |magic: &[u8]| data.starts_with(magic);
    let riff = |form: &[u8]| data.len() >= 12 && starts(b"RIFF") && &data[8..12] == form;
    let fits = match essence.as_str() {
        "image/png" => starts(b"\x89PNG\r\n\x1a\n"),
        "image/jpeg" | "image/jpg" => starts(b"\xff\xd8\xff"),
        "image/gif" => starts(b"GIF87a") || starts(b"GIF89a"),
        "image/webp" => riff(b"WEBP"),
        "image/bmp" => starts(b"BM"),
        "audio/wav" | "audio/x-wav" | "audio/wave" => riff(b"WAVE"),
        "audio/mpeg" | "audio/mp3" => {
            starts(b"ID3") || (data.len() >= 2 && data[0] == 0xff && data[1] & 0xe0 == 0xe0)
        }
        "audio/ogg" => starts(b"OggS"),
        "audio/flac" => starts(b"fLaC"),
        "application/pdf" => starts(b"%PDF-"),
        "application/zip" => starts(b"PK\x03\x04") || starts(b"PK\x05\x06"),
        _ => true,
    };
    if fits {
        Ok(())
    } else {
        Err(format!(
            "the bytes are not {essence}: they do not start with its signature"
        ))
    }
}

/// A URI with a scheme, no spaces or control characters, of a scheme a client may follow.
fn check_uri(uri: &str) -> Result<(), String> {
    if uri.len() > MAX_URI_BYTES {
        return Err(format!(
            "a URI of {} bytes is longer than {MAX_URI_BYTES}",
            uri.len()
        ));
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the URI {:?} holds spaces or control characters",
            truncated(uri)
        ));
    }
    let scheme = uri
        .split_once(':')
        .map(|(scheme, _)| scheme)
        .filter(|scheme| {
            scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b))
        });
    let Some(scheme) = scheme else {
        return Err(format!(
            "{:?} is not an absolute URI (`https://...`, or a scheme of the server's own)",
            truncated(uri)
        ));
    };
    if REFUSED_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
        return Err(format!(
            "a link may not use the `{scheme}:` scheme; give an `https://` URI or one of the server's own resources"
        ));
    }
    Ok(())
}

/// At most 80 characters of `text`, for an error message.
fn truncated(text: &str) -> &str {
    match text.char_indices().nth(80) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::media::{Image, ResourceLink};

    fn refusal(block: impl Into<Block>, limits: &ContentLimits) -> String {
        match check_blocks(&[block.into()], limits) {
            Err(Refused { index, message }) => format!("blocks[{index}]: {message}"),
            Ok(()) => panic!("expected a refusal"),
        }
    }

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";

    #[test]
    fn good_blocks_pass() {
        let limits = ContentLimits::DEFAULT;
        for block in [
            Block::from(Image::png(PNG)),
            Block::from(ResourceLink::new("https://example.com/a", "a")),
            Block::from(ResourceLink::new("kb://notes/1", "note")),
            Block::text("hello"),
        ] {
            assert_eq!(check_blocks(&[block], &limits), Ok(()));
        }
    }

    #[test]
    fn hostile_blocks_are_refused_with_the_block_named() {
        let limits = ContentLimits::new(64, 100);
        let big = refusal(Image::png([PNG, &[0; 100]].concat()), &limits);
        assert!(
            big.starts_with("blocks[0]: the image block holds 116 bytes"),
            "{big}"
        );
        let not_png = refusal(Image::png(b"GIF89a...".to_vec()), &limits);
        assert!(not_png.contains("not image/png"), "{not_png}");
        let not_image = refusal(Image::new("text/html", PNG), &limits);
        assert!(not_image.contains("`image/...`"), "{not_image}");
        let bad_mime = refusal(Image::new("image/png\r\nX-Evil: 1", PNG), &limits);
        assert!(bad_mime.contains("not a MIME type"), "{bad_mime}");
        for uri in [
            "file:///etc/passwd",
            "JavaScript:alert(1)",
            "data:text/html,x",
            "/etc/passwd",
            "https://a b",
        ] {
            let message = refusal(ResourceLink::new(uri, "x"), &ContentLimits::DEFAULT);
            assert!(message.starts_with("blocks[0]:"), "{uri}: {message}");
        }
        let total = [Block::text("a".repeat(60)), Block::text("b".repeat(60))];
        assert_eq!(check_blocks(&total, &limits).map_err(|r| r.index), Err(1));
    }
}
