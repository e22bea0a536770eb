//! File helpers the tools share: per-file locks, new-file naming.

use std::collections::HashMap;
use std::hash::{BuildHasher as _, RandomState};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use std::sync::atomic::{AtomicU64, Ordering};
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

/// Creates a new file `dir/<stem>.md` with `content` and returns its path. When that name is
/// taken, the file is `<stem>-<suffix>.md` with a random suffix of six letters and digits, so
/// a file costs two attempts however many share its stem. Never replaces an existing file.
pub(crate) async fn create_new_markdown(
    dir: &Path,
    stem: &str,
    content: &str,
) -> io::Result<PathBuf> {
    let (dir, stem, content) = (dir.to_path_buf(), stem.to_owned(), content.to_owned());
    tokio::task::spawn_blocking(move || {
        create_new_named(&dir, &stem, "md", content.as_bytes(), open_new)
    })
    .await
    .map_err(io::Error::other)?
}

/// How many names [`create_new_named`] tries before giving up. Past the first, each is taken
/// with a probability of about (files with that stem) / 36⁶.
const NAME_ATTEMPTS: usize = 16;

/// Writes `bytes` to a new file `dir/<stem>.<ext>`, or `dir/<stem>-<suffix>.<ext>` when taken,
/// creating `dir` if needed. `open` creates one file and must fail with
/// [`io::ErrorKind::AlreadyExists`] when the name is taken.
fn create_new_named(
    dir: &Path,
    stem: &str,
    ext: &str,
    bytes: &[u8],
    mut open: impl FnMut(&Path) -> io::Result<std::fs::File>,
) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    for attempt in 0..NAME_ATTEMPTS {
        let name = if attempt == 0 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-{}.{ext}", random_suffix())
        };
        let path = dir.join(name);
        match open(&path) {
            Ok(mut file) => {
                file.write_all(bytes)?;
                file.flush()?;
                return Ok(path);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free name for {stem}.{ext} after {NAME_ATTEMPTS} attempts"),
    ))
}

fn open_new(path: &Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

/// Six lowercase letters and digits, different at each call.
fn random_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    // `RandomState` is seeded from the OS, differently in every process and thread.
    let mut bits = RandomState::new().hash_one((
        COUNTER.fetch_add(1, Ordering::Relaxed),
        nanos,
        std::process::id(),
    ));
    let mut suffix = String::with_capacity(6);
    for _ in 0..6 {
        let digit = u32::try_from(bits % 36).unwrap_or(0);
        suffix.extend(char::from_digit(digit, 36));
        bits /= 36;
    }
    suffix
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
    async fn new_markdown_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let first = create_new_markdown(dir.path(), "note", "a").await.unwrap();
        let second = create_new_markdown(dir.path(), "note", "b").await.unwrap();
        assert_eq!(first.file_name().unwrap(), "note.md");
        assert_ne!(second, first);
        assert_eq!(std::fs::read_to_string(first).unwrap(), "a");
        assert_eq!(std::fs::read_to_string(second).unwrap(), "b");
    }

    #[tokio::test]
    async fn fifteen_hundred_notes_with_one_stem_all_get_their_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut names = std::collections::HashSet::new();
        for i in 0..1500 {
            let path = create_new_markdown(dir.path(), "2026-03-31-same-title", &i.to_string())
                .await
                .unwrap_or_else(|e| panic!("note {i}: {e}"));
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            assert!(
                name.starts_with("2026-03-31-same-title") && name.ends_with(".md"),
                "{name}"
            );
            assert_eq!(std::fs::read_to_string(&path).unwrap(), i.to_string());
            names.insert(name);
        }
        assert_eq!(names.len(), 1500);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1500);
    }

    #[test]
    fn naming_costs_at_most_two_attempts_per_note() {
        let dir = tempfile::tempdir().unwrap();
        let mut attempts = 0;
        let mut counting = |path: &Path| {
            attempts += 1;
            open_new(path)
        };
        for _ in 0..1500 {
            create_new_named(dir.path(), "same", "md", b"x", &mut counting).unwrap();
        }
        // The first note takes one attempt, every later one two, barring a one-in-a-million
        // clash of random suffixes.
        assert!(
            attempts <= 2 * 1500 + 10,
            "{attempts} attempts for 1500 notes"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1500);
    }

    #[test]
    fn suffixes_are_six_lowercase_letters_and_digits() {
        let suffixes: std::collections::HashSet<String> =
            (0..100).map(|_| random_suffix()).collect();
        assert_eq!(suffixes.len(), 100);
        for suffix in &suffixes {
            assert_eq!(suffix.len(), 6);
            assert!(
                suffix
                    .chars()
                    .all(|c| c.is_ascii_digit() || c.is_ascii_lowercase()),
                "{suffix}"
            );
        }
    }
}
