//! File helpers the tools share: atomic replacement, per-file locks, new-file naming.

use std::collections::HashMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use tokio::io::AsyncWriteExt;
use tokio::sync::OwnedMutexGuard;

/// Holds the in-process lock of `path` until dropped.
///
/// Every registry in the process shares these locks, so two registries built over the same
/// files (as tests and the CLI do) still take turns on a read-modify-write.
pub(crate) async fn lock(path: &Path) -> OwnedMutexGuard<()> {
    static LOCKS: OnceLock<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> = OnceLock::new();
    let mutex = {
        let mut locks = LOCKS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Arc::clone(locks.entry(path.to_path_buf()).or_default())
    };
    mutex.lock_owned().await
}

/// Replaces `path` with `bytes` so that readers see the old or the new content, never a mix:
/// write a fresh temporary file beside it (its own name, so concurrent writers never share
/// one), flush it to disk, rename it over the target, flush the folder. `path` itself is
/// replaced (a symbolic link there is replaced, not followed). For files several processes
/// change, use [`tool_registry::store::JsonFile`], which also locks.
pub(crate) async fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let (path, bytes) = (path.to_path_buf(), bytes.to_vec());
    tokio::task::spawn_blocking(move || {
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
        tmp.write_all(&bytes)?;
        tmp.as_file().sync_all()?;
        tmp.persist(&path).map_err(|e| e.error)?;
        // Only Unix can open a folder to flush it; the rename has happened either way.
        #[cfg(unix)]
        if let Ok(dir) = std::fs::File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    })
    .await
    .map_err(io::Error::other)?
}

/// Creates a new file `dir/<stem>.md` (or `<stem>-2.md`, `<stem>-3.md`, ... when taken) with
/// `content` and returns its path. Never replaces an existing file.
pub(crate) async fn create_new_markdown(
    dir: &Path,
    stem: &str,
    content: &str,
) -> io::Result<PathBuf> {
    tokio::fs::create_dir_all(dir).await?;
    for n in 1..=1000u32 {
        let name = if n == 1 {
            format!("{stem}.md")
        } else {
            format!("{stem}-{n}.md")
        };
        let path = dir.join(name);
        match tokio::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
            .await
        {
            Ok(mut file) => {
                file.write_all(content.as_bytes()).await?;
                file.flush().await?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("too many files named {stem}-N.md"),
    ))
}

/// Now, as RFC 3339 in UTC to the second: `2026-03-31T09:15:00Z`.
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// A modification time as RFC 3339, when the platform has one.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    humantime::format_rfc3339_seconds(time).to_string()
}

/// A file-name-safe form of `text`: lowercase ASCII letters and digits joined by `-`, at most
/// `max` characters, `untitled` when nothing is left.
pub(crate) fn slug(text: &str, max: usize) -> String {
    let mut out = String::new();
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let extra = usize::from(!out.is_empty()) + word.len();
        if out.len() + extra > max {
            if out.is_empty() {
                out.push_str(&word[..max].to_ascii_lowercase());
            }
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    if out.is_empty() {
        "untitled".to_owned()
    } else {
        out
    }
}

/// A string as one YAML front-matter scalar: always double-quoted, with JSON escapes (a JSON
/// string is a valid YAML double-quoted scalar).
pub(crate) fn yaml_str(text: &str) -> String {
    serde_json::Value::String(text.to_owned()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_short_lowercase_and_never_empty() {
        assert_eq!(slug("Rust 2024: What's new?", 60), "rust-2024-what-s-new");
        assert_eq!(slug("a b c d", 3), "a-b");
        assert_eq!(slug("abcdefgh", 4), "abcd");
        assert_eq!(slug("¿¡!", 10), "untitled");
        assert_eq!(slug("../../etc/passwd", 60), "etc-passwd");
    }

    #[test]
    fn yaml_strings_are_quoted_and_escaped() {
        assert_eq!(yaml_str("a \"b\"\nc"), r#""a \"b\"\nc""#);
    }

    #[tokio::test]
    async fn atomic_write_replaces_and_new_markdown_never_does() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("sub/file.json");
        write_atomic(&target, b"one").await.unwrap();
        write_atomic(&target, b"two").await.unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "two");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");

        let first = create_new_markdown(dir.path(), "note", "a").await.unwrap();
        let second = create_new_markdown(dir.path(), "note", "b").await.unwrap();
        assert_eq!(first.file_name().unwrap(), "note.md");
        assert_eq!(second.file_name().unwrap(), "note-2.md");
        assert_eq!(std::fs::read_to_string(first).unwrap(), "a");
    }
}
