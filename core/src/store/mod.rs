//! JSON files that several processes read and change: the approvals file, the rate-limit file,
//! an application's own state (the reference tools keep their schedule this way).
//!
//! Every change is one locked read-modify-write ([`JsonFile::update`]):
//!
//! - an OS advisory lock (`flock` on Unix, `LockFileEx` on Windows) on a lock file beside the
//!   data file, `<name>.lock`; the data file itself is replaced on every write, so a lock on it
//!   would be lost with it. Writers in other processes and other threads wait their turn.
//! - the new content goes to a fresh temporary file in the same folder, is flushed to disk, and
//!   is renamed over the data file (then the folder is flushed where the platform allows): a
//!   reader sees the old or the new content, never a mix, so reads ([`JsonFile::read`]) need no
//!   lock.
//! - a symbolic link is followed to its final target, which gets the data; the link stays.
//! - a read-only data file is refused with [`StoreError::ReadOnly`] and left as it is.
//! - only a regular file is read (a link to one is fine): a FIFO, a device or a folder is refused
//!   with [`StoreError::NotRegular`] at once instead of waiting for a writer that never comes or
//!   reading forever, and a file larger than [`MAX_FILE_BYTES`] with [`StoreError::TooLarge`].
//!   The file is opened without blocking and its type and size are read from the open handle,
//!   so a file swapped in between a check and the read cannot slip through.
//! - nothing is written when a change leaves the content as it was.
//!
//! Keys the document type does not know survive a rewrite when the type keeps them (a
//! `#[serde(flatten)]` map, as every store of this crate does).
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tool_registry::store::{JsonFile, StoreError};
//!
//! #[derive(Default, Serialize, Deserialize)]
//! struct Counter {
//!     #[serde(default)]
//!     count: u64,
//!     #[serde(flatten)]
//!     other: serde_json::Map<String, serde_json::Value>,
//! }
//!
//! let dir = tempfile::tempdir()?;
//! let file = JsonFile::new(dir.path().join("counter.json"), "counter file");
//! let now = file.update(|c: &mut Counter| {
//!     c.count += 1;
//!     Ok::<_, StoreError>(c.count)
//! })?;
//! assert_eq!(now, 1);
//! assert_eq!(file.read::<Counter>()?.count, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// How many symbolic links are followed before giving up (the Linux limit).
const MAX_LINKS: usize = 40;

/// The largest shared file read: 64 MiB, far above what pending approvals, rate-limit counts
/// or a schedule amount to, and small enough to read into memory.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Why a shared file could not be read or changed. Every message names the file and says what
/// to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The file system refused an operation.
    #[error("cannot {action} the {what} {}: {source}", path.display())]
    Io {
        /// What the file is for (`schedule file`, `approvals file`).
        what: &'static str,
        /// What was being done: `read`, `lock`, `write`.
        action: &'static str,
        /// The file (or its lock file, or its folder).
        path: PathBuf,
        /// The error.
        #[source]
        source: io::Error,
    },
    /// The data file is read-only; it was not changed.
    #[error(
        "the {what} {} is read-only, so it was left unchanged; make it writable (`chmod u+w`) or use another file",
        path.display()
    )]
    ReadOnly {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// The path names something other than a regular file (a FIFO, a device, a folder, a
    /// socket); nothing was read from it.
    #[error(
        "the {what} {} is {found}, not a regular file, so it was not read; point it at a regular file (a symbolic link to one is fine)",
        path.display()
    )]
    NotRegular {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What it is instead: `a FIFO`, `a character device`, `a folder`, ...
        found: &'static str,
    },
    /// The file is larger than the bound for its kind ([`MAX_FILE_BYTES`] for a data file);
    /// nothing past the bound was read.
    #[error(
        "the {what} {} is larger than {limit} bytes, the most that is read; move it away (a new one is started) or point to another file",
        path.display()
    )]
    TooLarge {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The bound, in bytes.
        limit: u64,
    },
    /// The file is not what it should be (not JSON, or JSON of another shape).
    #[error(
        "the {what} {} is not a valid {what} ({detail}); fix it by hand, or move it away and a new one is started",
        path.display()
    )]
    Corrupt {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong, with its line and column.
        detail: String,
    },
    /// A store that is a service (Redis) could not be reached or did not answer in time;
    /// nothing was read or changed.
    #[error("the {what} is unavailable: {reason}")]
    Unavailable {
        /// What the store is for (`Redis manifest cache`).
        what: &'static str,
        /// What went wrong (never the store's credentials).
        reason: String,
    },
}

/// One JSON document in a file, shared by processes. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct JsonFile {
    path: PathBuf,
    what: &'static str,
    /// A file created by this store is readable and writable by its owner only (0600).
    private: bool,
}

impl JsonFile {
    /// The document in `path`; `what` names it in error messages (`"schedule file"`). Nothing
    /// is touched until the first read or change: a missing file reads as the document's
    /// `Default`, and the first change creates it (and its folders).
    pub fn new(path: impl Into<PathBuf>, what: &'static str) -> Self {
        Self {
            path: path.into(),
            what,
            private: false,
        }
    }

    /// The file, when this store creates it, gets mode 0600 (owner only) instead of the usual
    /// 0666 less the umask; an existing file keeps its mode.
    pub fn private(mut self) -> Self {
        self.private = true;
        self
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file is for, as error messages name it.
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// Reads the document without a lock (writes replace the file whole, so a read sees one
    /// complete version). A missing or empty file is `T::default()`.
    pub fn read<T: DeserializeOwned + Default>(&self) -> Result<T, StoreError> {
        let target = self.target()?;
        let bytes = self.read_bytes(&target)?;
        self.parse(&target, bytes.as_deref())
    }

    /// Changes the document under the lock: reads it, hands it to `change`, and writes it back
    /// if `change` returned `Ok` and the content differs. An `Err` from `change` leaves the file
    /// as it was.
    pub fn update<T, R, E>(&self, change: impl FnOnce(&mut T) -> Result<R, E>) -> Result<R, E>
    where
        T: Serialize + DeserializeOwned + Default,
        E: From<StoreError>,
    {
        let target = self.target()?;
        let dir = parent(&target).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|e| self.io("create the folder of", &dir, e))?;
        let _lock = self.lock(&target)?;
        let before = self.read_bytes(&target)?;
        let mut doc: T = self.parse(&target, before.as_deref())?;
        let out = change(&mut doc)?;
        let corrupt = |e: serde_json::Error| StoreError::Corrupt {
            what: self.what,
            path: target.clone(),
            detail: format!("the new content cannot be written as JSON: {e}"),
        };
        let after = serde_json::to_value(&doc).map_err(corrupt)?;
        // Compared as JSON values: the same content in other spacing or key order is unchanged.
        let before: Option<serde_json::Value> =
            before.and_then(|bytes| serde_json::from_slice(&bytes).ok());
        if before.as_ref() != Some(&after) {
            let mut bytes = serde_json::to_vec_pretty(&after).map_err(corrupt)?;
            bytes.push(b'\n');
            self.replace(&target, &dir, &bytes)?;
        }
        Ok(out)
    }

    /// The file the data lives in: the path with every symbolic link followed, even to a target
    /// that does not exist yet.
    fn target(&self) -> Result<PathBuf, StoreError> {
        let mut path = self.path.clone();
        for _ in 0..MAX_LINKS {
            match std::fs::symlink_metadata(&path) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let link =
                        std::fs::read_link(&path).map_err(|e| self.io("follow", &path, e))?;
                    path = parent(&path).join(link);
                }
                Ok(_) => return Ok(path),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(path),
                Err(e) => return Err(self.io("inspect", &path, e)),
            }
        }
        Err(self.io(
            "follow",
            &self.path,
            io::Error::other(format!("more than {MAX_LINKS} symbolic links")),
        ))
    }

    /// Takes the exclusive lock of `target`'s lock file; it is released when the file closes.
    fn lock(&self, target: &Path) -> Result<File, StoreError> {
        let mut name = target.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let path = target.with_file_name(name);
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        nonblocking(&mut options);
        let file = options
            .open(&path)
            .map_err(|e| self.io("create the lock file of", &path, e))?;
        let meta = file.metadata().map_err(|e| self.io("inspect", &path, e))?;
        if let Some(found) = not_regular(&meta) {
            return Err(StoreError::NotRegular {
                what: "lock file",
                path,
                found,
            });
        }
        // `File::lock` (std) has the same name; the crate's trait is named to be explicit.
        fs4::FileExt::lock(&file).map_err(|e| self.io("lock", &path, e))?;
        Ok(file)
    }

    fn read_bytes(&self, target: &Path) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(read_regular(target, self.what, MAX_FILE_BYTES)?.map(|(bytes, _)| bytes))
    }

    fn parse<T: DeserializeOwned + Default>(
        &self,
        target: &Path,
        bytes: Option<&[u8]>,
    ) -> Result<T, StoreError> {
        match bytes {
            Some(bytes) if !bytes.trim_ascii().is_empty() => {
                serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
                    what: self.what,
                    path: target.to_path_buf(),
                    detail: e.to_string(),
                })
            }
            _ => Ok(T::default()),
        }
    }

    /// Writes `bytes` to a fresh temporary file in `dir`, flushes it, and renames it over
    /// `target`. The new file keeps the old one's permissions.
    fn replace(&self, target: &Path, dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let permissions = match std::fs::metadata(target) {
            Ok(meta) if meta.permissions().readonly() => {
                return Err(StoreError::ReadOnly {
                    what: self.what,
                    path: target.to_path_buf(),
                });
            }
            Ok(meta) => Some(meta.permissions()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(self.io("inspect", target, e)),
        };
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(target.file_name().unwrap_or_default());
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        #[cfg(unix)]
        if permissions.is_none() && !self.private {
            // A new file gets the usual mode (0666 less the umask), not the temporary
            // file's private 0600 (which a private store keeps).
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let mut tmp = builder
            .tempfile_in(dir)
            .map_err(|e| self.io("create a temporary file in", dir, e))?;
        let written = (|| {
            tmp.write_all(bytes)?;
            if let Some(permissions) = permissions {
                tmp.as_file().set_permissions(permissions)?;
            }
            tmp.as_file().sync_all()
        })();
        written.map_err(|e| self.io("write", tmp.path(), e))?;
        tmp.persist(target)
            .map_err(|e| self.io("write", target, e.error))?;
        sync_dir(dir);
        Ok(())
    }

    fn io(&self, action: &'static str, path: &Path, source: io::Error) -> StoreError {
        StoreError::Io {
            what: self.what,
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Reads the regular file at `path` (links followed), at most `limit` bytes of it, with the
/// metadata of the handle it was read from; `None` when there is no file. A FIFO, a device or
/// anything else that is not a regular file is refused before a byte is read: it is opened
/// without blocking (a FIFO with no writer would block the open on Unix), and its type and size
/// are read from the open handle, not from the path. What it holds past `limit` is never read,
/// even when it grows after its size was read.
pub(crate) fn read_regular(
    path: &Path,
    what: &'static str,
    limit: u64,
) -> Result<Option<(Vec<u8>, std::fs::Metadata)>, StoreError> {
    use std::io::Read;

    let io = |action, source| StoreError::Io {
        what,
        action,
        path: path.to_path_buf(),
        source,
    };
    let mut options = OpenOptions::new();
    options.read(true);
    nonblocking(&mut options);
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io("read", e)),
    };
    let meta = file.metadata().map_err(|e| io("inspect", e))?;
    if let Some(found) = not_regular(&meta) {
        return Err(StoreError::NotRegular {
            what,
            path: path.to_path_buf(),
            found,
        });
    }
    let too_large = || StoreError::TooLarge {
        what,
        path: path.to_path_buf(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io("read", e))?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(Some((bytes, meta)))
}

/// Opens without waiting: a FIFO opens at once whether or not a writer is there, so its type
/// can be read from the handle and refused. (Reads of a regular file are unaffected.)
fn nonblocking(options: &mut OpenOptions) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // The flag's bits fit an `i32`: it is a C `int` flag.
        options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
    }
    #[cfg(not(unix))]
    let _ = options;
}

/// What `meta` describes when it is not a regular file, as an error message names it.
fn not_regular(meta: &std::fs::Metadata) -> Option<&'static str> {
    let kind = meta.file_type();
    if kind.is_file() {
        return None;
    }
    if kind.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return Some("a FIFO");
        }
        if kind.is_char_device() {
            return Some("a character device");
        }
        if kind.is_block_device() {
            return Some("a block device");
        }
        if kind.is_socket() {
            return Some("a socket");
        }
    }
    Some("a special file")
}

/// The folder of `path` (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Flushes a folder so that a rename in it survives a crash. Only Unix can open a folder for
/// this; a file system that cannot flush folders (some network ones) is left as it is, since the
/// rename itself already happened.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
pub(crate) mod tests;
