//! A result's blocks as `toolreg call` prints them: text as it is, binary blocks (images, audio,
//! files, binary resources) never as bytes or base64 on a terminal, but by kind, MIME type and
//! size, and with `--save DIR` written to files in `DIR` whose paths are printed instead.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use tool_registry_core::ToolResult;
use tool_registry_core::content::{Block, ResourceBody};

/// How many names `save` tries for one block before it gives up.
const MAX_NAME_TRIES: usize = 1000;

/// `result` as JSON to print: its blocks as described above, each binary one saved in `save`
/// when given. A block that cannot be saved says why in its `error`.
pub(super) fn printable(result: &ToolResult, save: Option<&Path>) -> Value {
    let mut value = serde_json::to_value(ToolResult {
        blocks: tool_registry_core::content::Blocks::new(),
        ..result.clone()
    })
    .unwrap_or_default();
    if result.blocks.is_empty() {
        return value;
    }
    let blocks = result
        .blocks
        .iter()
        .enumerate()
        .map(|(index, block)| shown(index, block, save))
        .collect();
    if let Value::Object(map) = &mut value {
        map.insert("blocks".into(), Value::Array(blocks));
    }
    value
}

/// One block to print.
fn shown(index: usize, block: &Block, save: Option<&Path>) -> Value {
    let (bytes, name): (&[u8], String) = match block {
        Block::Image(image) => (
            image.data(),
            format!("block-{index}.{}", extension(image.mime_type())),
        ),
        Block::Audio(audio) => (
            audio.data(),
            format!("block-{index}.{}", extension(audio.mime_type())),
        ),
        Block::File(file) => (file.data(), file.name().to_owned()),
        Block::Resource(resource) => match &resource.body {
            ResourceBody::Blob(data) => {
                let mime = resource.mime_type.as_deref().unwrap_or_default();
                (data, format!("block-{index}.{}", extension(mime)))
            }
            ResourceBody::Text(_) => return tool_registry_core::content::wire::to_value(block),
        },
        _ => return tool_registry_core::content::wire::to_value(block),
    };
    let mut shown = Map::new();
    shown.insert("type".into(), block.kind().as_str().into());
    if let Block::File(file) = block {
        shown.insert("name".into(), file.name().into());
    }
    if let Block::Resource(resource) = block {
        shown.insert("uri".into(), resource.uri.clone().into());
    }
    if let Some(mime) = block.mime_type() {
        shown.insert("mimeType".into(), mime.into());
    }
    shown.insert("bytes".into(), bytes.len().into());
    match save {
        None => {
            shown.insert("saved".into(), json!(null));
            shown.insert(
                "hint".into(),
                "binary: pass --save DIR to write it to a file".into(),
            );
        }
        Some(dir) => match save_in(dir, &name, bytes) {
            Ok(path) => {
                shown.insert("saved".into(), path.display().to_string().into());
            }
            Err(error) => {
                shown.insert("saved".into(), json!(null));
                shown.insert(
                    "error".into(),
                    format!("cannot save it in {}: {error}", dir.display()).into(),
                );
            }
        },
    }
    Value::Object(shown)
}

/// Writes `bytes` to a new file in `dir` named `name`, or `stem-1.ext`, `stem-2.ext`, ... when
/// that is taken. The file is created new (never an existing file or a link followed), only
/// the name's last component counts, and `dir` is created when missing.
fn save_in(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let name = Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.starts_with('.'))
        .unwrap_or("block");
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem, Some(extension)),
        _ => (name, None),
    };
    for attempt in 0..MAX_NAME_TRIES {
        let candidate = match (attempt, extension) {
            (0, _) => name.to_owned(),
            (n, Some(extension)) => format!("{stem}-{n}.{extension}"),
            (n, None) => format!("{stem}-{n}"),
        };
        let path = dir.join(candidate);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                file.write_all(bytes)?;
                return Ok(path);
            }
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
    Err(std::io::Error::other(format!(
        "{MAX_NAME_TRIES} files named like {name} are there already"
    )))
}

/// A file extension for a MIME type.
fn extension(mime: &str) -> &'static str {
    match mime.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" => "mp3",
        "audio/ogg" => "ogg",
        "application/pdf" => "pdf",
        "text/plain" => "txt",
        "text/csv" => "csv",
        "application/json" => "json",
        _ => "bin",
    }
}
