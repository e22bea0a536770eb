//! The checks every result passes before it leaves the registry, failed results too: how many
//! blocks it holds, their sizes (every text field of a block counted), MIME types and their
//! parameters, MIME types against bytes, link schemes (behind schemes that wrap them too).

use super::{Block, ResourceBody};

/// Why a result's blocks were refused: which block, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The block's index in the result.
    pub index: usize,
    /// What is wrong.
    pub message: String,
}

/// The bounds on what a tool returns: how many blocks a result holds, one block's bytes and the
/// whole result's. Set with
/// [`RegistryBuilder::content_limits`](crate::RegistryBuilder::content_limits).
///
/// A block's bytes are everything it carries: its data or text, and every text field besides
/// (a file's name, a link's URI, name, title and description, MIME types), so no part of a
/// block passes the bounds uncounted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ContentLimits {
    /// The most bytes one block may carry (its decoded bytes or its text, and its text fields).
    /// Default 10 MiB.
    pub max_block_bytes: usize,
    /// The most bytes the blocks of one result may carry together. Default 20 MiB.
    pub max_result_bytes: usize,
    /// The most blocks one result may hold. Default 1,000.
    ///
    /// A model reads a result's blocks one after the other, and a client shows each; a
    /// thousand is already more than either does anything useful with (a tool that finds more
    /// returns a page of them and a way to ask for the next). The bound is also what keeps an
    /// answer read from outside cheap before its bytes are counted: a block read into MCP's
    /// types costs about 1.4 KB whatever it holds, so the 500,000 empty links that fit in a
    /// 24 MB line would cost 700 MB to read, where a thousand cost about 1.4 MB. Answers from
    /// HTTP modules and from MCP servers on stdio are read up to the bound and no further.
    pub max_blocks: usize,
}

/// How many blocks a result may hold unless the registry says otherwise.
const DEFAULT_MAX_BLOCKS: usize = 1000;

impl ContentLimits {
    /// 10 MiB a block, 20 MiB a result, 1,000 blocks a result.
    pub const DEFAULT: Self = Self {
        max_block_bytes: 10 << 20,
        max_result_bytes: 20 << 20,
        max_blocks: DEFAULT_MAX_BLOCKS,
    };

    /// Limits of `max_block_bytes` a block and `max_result_bytes` a result, and the default
    /// number of blocks, 1,000 (change it with [`with_max_blocks`](Self::with_max_blocks)).
    pub const fn new(max_block_bytes: usize, max_result_bytes: usize) -> Self {
        Self {
            max_block_bytes,
            max_result_bytes,
            max_blocks: DEFAULT_MAX_BLOCKS,
        }
    }

    /// The same limits with at most `max_blocks` blocks a result.
    #[must_use]
    pub const fn with_max_blocks(mut self, max_blocks: usize) -> Self {
        self.max_blocks = max_blocks;
        self
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

/// Checks `blocks` against `limits`; the refusal names the first block that fails (for too
/// many blocks, the first one past the bound).
pub fn check_blocks(blocks: &[Block], limits: &ContentLimits) -> Result<(), Refused> {
    if blocks.len() > limits.max_blocks {
        return Err(too_many_blocks(Some(blocks.len()), limits.max_blocks));
    }
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

/// The refusal of a result that holds more than `max` blocks: `count` of them when it is known
/// (a reader that stops at the first block past the bound knows no more). It names the first
/// block past the bound.
pub fn too_many_blocks(count: Option<usize>, max: usize) -> Refused {
    let holds = match count {
        Some(count) => format!("{count} blocks, more than"),
        None => "more blocks than".to_owned(),
    };
    Refused {
        index: max,
        message: format!(
            "the result holds {holds} the limit of {max} blocks a result; return fewer (a page of them, and a way to ask for the next)"
        ),
    }
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

/// `type/subtype` with the characters RFC 6838 allows, then any parameters, each
/// `; name=value` with the name an RFC 2045 token and the value a token or a quoted string;
/// spaces only around the parts, and no control character anywhere (a MIME type reaches
/// headers: `image/png; a=\r\nX-Evil: 1` would write one of its own).
fn check_mime(mime: &str) -> Result<(), String> {
    if mime.len() <= 255 && MimeReader(mime.as_bytes()).read() {
        return Ok(());
    }
    Err(format!(
        "{:?} is not a MIME type (`type/subtype`, such as `image/png`, and parameters as `; name=value`)",
        truncated(mime)
    ))
}

/// What remains to read of a MIME type.
struct MimeReader<'a>(&'a [u8]);

impl MimeReader<'_> {
    /// Whether the whole text is one MIME type.
    fn read(mut self) -> bool {
        // RFC 6838, section 4.2: restricted names of at most 127 characters.
        let restricted = |b: u8| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b);
        self.spaces();
        if !(self.run(restricted, 127) && self.byte(b'/') && self.run(restricted, 127)) {
            return false;
        }
        self.spaces();
        while !self.0.is_empty() {
            if !self.byte(b';') {
                return false;
            }
            self.spaces();
            if !(self.run(is_token, usize::MAX) && self.byte(b'=')) {
                return false;
            }
            let value = match self.0.first() {
                Some(b'"') => self.quoted(),
                _ => self.run(is_token, usize::MAX),
            };
            if !value {
                return false;
            }
            self.spaces();
        }
        true
    }

    /// Skips spaces (not tabs, nor any other control character).
    fn spaces(&mut self) {
        let start = self.0.iter().take_while(|&&b| b == b' ').count();
        self.0 = &self.0[start..];
    }

    /// Takes `expected`, if it comes next.
    fn byte(&mut self, expected: u8) -> bool {
        match self.0.split_first() {
            Some((&b, rest)) if b == expected => {
                self.0 = rest;
                true
            }
            _ => false,
        }
    }

    /// Takes one to `max` bytes that pass `allowed`.
    fn run(&mut self, allowed: impl Fn(u8) -> bool, max: usize) -> bool {
        let len = self.0.iter().take_while(|&&b| allowed(b)).count();
        self.0 = &self.0[len..];
        (1..=max).contains(&len)
    }

    /// Takes a quoted string (RFC 2045, RFC 822): printable ASCII and spaces between quotes, a
    /// backslash quoting the character after it.
    fn quoted(&mut self) -> bool {
        let printable = |b: u8| b == b' ' || b.is_ascii_graphic();
        let mut at = 1;
        while let Some(&b) = self.0.get(at) {
            match b {
                b'"' => {
                    self.0 = &self.0[at + 1..];
                    return true;
                }
                b'\\' if self.0.get(at + 1).is_some_and(|&next| printable(next)) => at += 2,
                b if printable(b) && b != b'\\' => at += 1,
                _ => return false,
            }
        }
        false
    }
}

/// A character of an RFC 2045 token: printable ASCII but for its special characters.
fn is_token(b: u8) -> bool {
    b.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?=".contains(&b)
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
    let Some(first) = scheme_of(uri) else {
        return Err(format!(
            "{:?} is not an absolute URI (`https://...`, or a scheme of the server's own)",
            truncated(uri)
        ));
    };
    // A scheme may wrap another URI (`jar:file:...`, `view-source:file:...`,
    // `filesystem:file:...`), and a client follows the inner one: every scheme of the chain
    // is looked at, not only the first.
    let mut chain = Some(first);
    while let Some((scheme, rest)) = chain {
        if REFUSED_SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "a link may not use the `{scheme}:` scheme (found in {:?}); give an `https://` URI or one of the server's own resources",
                truncated(uri)
            ));
        }
        chain = scheme_of(rest);
    }
    Ok(())
}

/// The scheme `text` starts with (RFC 3986: a letter, then letters, digits, `+`, `-` and `.`,
/// up to a `:`), and what follows its `:`.
fn scheme_of(text: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = text.split_once(':')?;
    let valid = scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    valid.then_some((scheme, rest))
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
    use crate::media::{File, Image, ResourceLink};

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
        // 116 bytes of data and the 9 of `image/png`.
        let big = refusal(Image::png([PNG, &[0; 100]].concat()), &limits);
        assert!(
            big.starts_with("blocks[0]: the image block holds 125 bytes"),
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

    #[test]
    fn mime_parameters_are_tokens_or_quoted_strings_without_control_characters() {
        let image = |mime: &str| Block::from(Image::new(mime, PNG));
        for good in [
            "image/png",
            "image/png; a=b",
            "image/png;a=b",
            "image/png ; a=b ;c=\"d e\"",
            "image/png; name=\"a \\\"quoted\\\" name\"",
            "image/svg+xml; charset=utf-8",
        ] {
            assert_eq!(
                check_blocks(&[image(good)], &ContentLimits::DEFAULT),
                Ok(()),
                "{good}"
            );
        }
        for bad in [
            "image/png; a=\r\nX-Evil: 1",
            "image/png\r\n",
            "image/png;",
            "image/png; a",
            "image/png; a=",
            "image/png; =b",
            "image/png; a=b c",
            "image/png; a=\"b",
            "image/png; a=\"\u{1}\"",
            "image/png;\ta=b",
            "image/png; a=b\u{7f}",
            "image/png; a=é",
            "image/png; a/b=c",
        ] {
            let message = refusal(image(bad), &ContentLimits::DEFAULT);
            assert!(message.contains("not a MIME type"), "{bad:?}: {message}");
        }
    }

    #[test]
    fn a_refused_scheme_is_found_behind_schemes_that_wrap_it() {
        for uri in [
            "jar:file:///home/u/a.jar!/x",
            "view-source:file:///etc/passwd",
            "filesystem:file:///temporary/x",
            "view-source:jar:file:///a.jar!/x",
            "VIEW-SOURCE:JavaScript:alert(1)",
            "a:b.c:d+e:data:text/html,x",
        ] {
            let message = refusal(ResourceLink::new(uri, "x"), &ContentLimits::DEFAULT);
            assert!(message.contains("may not use the"), "{uri}: {message}");
        }
        for uri in [
            "jar:https://example.com/a.jar!/x",
            "view-source:https://example.com/",
            "urn:isbn:0451450523",
            "https://example.com/a:file:b",
            "kb://notes/1",
        ] {
            let link = Block::from(ResourceLink::new(uri, "x"));
            assert_eq!(
                check_blocks(&[link], &ContentLimits::DEFAULT),
                Ok(()),
                "{uri}"
            );
        }
    }

    #[test]
    fn every_text_field_of_a_block_counts_against_the_limits() {
        let limits = ContentLimits::new(64, 100);
        let described = ResourceLink::new("kb://a", "a").with_description("d".repeat(60));
        let message = refusal(described, &limits);
        assert!(message.contains("holds 67 bytes"), "{message}");
        let mut titled = ResourceLink::new("kb://a", "a");
        titled.title = Some("t".repeat(60));
        assert!(refusal(titled, &limits).contains("holds 67 bytes"));
        // Each fits alone; together they are over the result's bound.
        let half = |uri: &str| {
            let mut link = ResourceLink::new(uri, "a").with_mime_type("text/plain");
            link.title = Some("t".repeat(20));
            Block::from(link.with_description("d".repeat(20)))
        };
        let links = [half("kb://a"), half("kb://b")];
        assert_eq!(check_blocks(&links[..1], &limits), Ok(()));
        assert_eq!(check_blocks(&links, &limits).map_err(|r| r.index), Err(1));
        let named = File::new("n".repeat(60), b"abcde".to_vec());
        assert!(refusal(named, &limits).contains("the file block holds"));
    }

    #[test]
    fn a_result_holds_at_most_max_blocks_blocks() {
        let blocks = vec![Block::text(""); 1001];
        let refused = check_blocks(&blocks, &ContentLimits::DEFAULT).unwrap_err();
        assert_eq!(refused.index, 1000);
        assert!(
            refused.message.starts_with(
                "the result holds 1001 blocks, more than the limit of 1000 blocks a result"
            ),
            "{}",
            refused.message
        );
        assert_eq!(
            check_blocks(&blocks[..1000], &ContentLimits::DEFAULT),
            Ok(())
        );
        let three = ContentLimits::DEFAULT.with_max_blocks(3);
        assert_eq!(check_blocks(&blocks[..3], &three), Ok(()));
        assert_eq!(
            check_blocks(&blocks[..4], &three).map_err(|r| r.index),
            Err(3)
        );
        assert_eq!(ContentLimits::new(1, 2).max_blocks, 1000);
    }
}
