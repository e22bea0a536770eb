//! The one folder the file tools may touch, and every access to it through a directory handle.

use std::ffi::OsStr;
use std::io::{self, Write as _};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions};

use crate::config::slash_path;

/// One folder that user-supplied paths cannot leave.
///
/// The root is opened once as a directory handle, and every access goes through it:
/// [`Sandbox::dir`] resolves each path relative to that handle and never follows a symbolic link
/// out of it (the `cap-std` crate: `openat2(RESOLVE_BENEATH)` on Linux, one component at a time
/// elsewhere). So a link swapped in between a check and a use cannot lead outside, because there
/// is no check separate from the use.
///
/// [`Sandbox::resolve`] turns a model's path into a [`Resolved`] path and explains refusals:
/// absolute paths, `..` that climbs above the root, and symbolic links (anywhere along the path)
/// that lead outside it or point at nothing. Links inside the root keep working when they are
/// relative and stay inside; an absolute link counts as leaving the root even when it points
/// back inside, since its meaning would depend on where the root sits.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = std::env::temp_dir().join(format!("sandbox-doc-{}", std::process::id()));
/// use tool_registry_tools::Sandbox;
///
/// let sandbox = Sandbox::open(&dir)?;
/// let inside = sandbox.resolve("notes/../todo.md")?;
/// assert_eq!(inside.shown, "todo.md");
/// assert!(inside.path.starts_with(sandbox.root()));
///
/// // Reads and writes go through the handle, with the path relative to the root.
/// sandbox.create_new(&inside, b"- milk\n")?;
/// assert_eq!(sandbox.dir().read_to_string(&inside.relative)?, "- milk\n");
///
/// let error = sandbox.resolve("../etc/passwd").unwrap_err();
/// assert_eq!(error.to_string(), r#"path "../etc/passwd" escapes the sandbox root"#);
/// assert!(sandbox.resolve("/etc/passwd").is_err());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    dir: Arc<Dir>,
}

/// A path inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The real path on the host: every part that existed when resolved has its symbolic links
    /// resolved. For messages and logs; access goes through [`Sandbox::dir`] with
    /// [`Resolved::relative`].
    pub path: PathBuf,
    /// The same path relative to the root (`.` for the root itself): what to hand to
    /// [`Sandbox::dir`].
    pub relative: PathBuf,
    /// The path as asked, normalized, with `/` separators; `.` for the root itself.
    pub shown: String,
}

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// `/etc/passwd`, `C:\x`.
    #[error(
        "path {path:?} is absolute; give a path relative to the sandbox root, such as \"notes/todo.md\""
    )]
    Absolute {
        /// The path as given.
        path: String,
    },
    /// `../x`, `a/../../x`.
    #[error("path {path:?} escapes the sandbox root")]
    Escapes {
        /// The path as given.
        path: String,
    },
    /// A symbolic link on the way leads outside the root, or is absolute.
    #[error("path {path:?} escapes the sandbox root through a symbolic link")]
    LinkEscapes {
        /// The path as given.
        path: String,
    },
    /// A symbolic link on the way points at nothing.
    #[error("path {path:?} goes through a broken symbolic link")]
    BrokenLink {
        /// The path as given.
        path: String,
    },
    /// A NUL byte or other text no file system accepts.
    #[error("path {path:?} is not a valid file name")]
    Invalid {
        /// The path as given.
        path: String,
    },
    /// The file system refused to tell.
    #[error("cannot look up path {path:?}: {reason}")]
    Io {
        /// The path as given.
        path: String,
        /// What the file system said.
        reason: String,
    },
}

impl Sandbox {
    /// A sandbox rooted at `root`, which is created if missing, and its directory handle.
    pub fn open(root: &Path) -> io::Result<Self> {
        std::fs::create_dir_all(root)?;
        let root = root.canonicalize()?;
        let dir = Dir::open_ambient_dir(&root, cap_std::ambient_authority())?;
        Ok(Self {
            root,
            dir: Arc::new(dir),
        })
    }

    /// The root, canonical (absolute, no symbolic links), as it was when opened.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The handle on the root. Its methods take paths relative to the root and refuse, with an
    /// error for which [`is_escape`] is true, any path that would leave it, whether by `..` or
    /// through a symbolic link, at the moment of the access.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Resolves a path relative to the root. The empty path and `.` are the root itself.
    ///
    /// `..` is applied to the text of the path, so `a/../b` is `b`, and climbing above the root
    /// is refused. Then the deepest part of the path that exists is canonicalized through the
    /// handle, which refuses symbolic links that lead outside. The parts that do not exist yet
    /// are appended as they are: they contain no `..` and no links.
    ///
    /// The result describes the path at the moment of the call; it may change before it is used,
    /// which is why the use goes through [`Sandbox::dir`] again.
    pub fn resolve(&self, input: &str) -> Result<Resolved, SandboxError> {
        let owned = || input.to_owned();
        if input.contains('\0') {
            return Err(SandboxError::Invalid { path: owned() });
        }
        let mut parts: Vec<&OsStr> = Vec::new();
        for component in Path::new(input).components() {
            match component {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(SandboxError::Absolute { path: owned() });
                }
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(SandboxError::Escapes { path: owned() });
                    }
                }
                Component::Normal(part) => parts.push(part),
            }
        }

        // The deepest existing prefix, found with lstat so that a dangling link counts as
        // existing instead of letting a write go through it.
        let mut existing = PathBuf::new();
        let mut depth = 0;
        for part in &parts {
            let next = existing.join(part);
            match self.dir.symlink_metadata(&next) {
                Ok(_) => {
                    existing = next;
                    depth += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                Err(e) => return Err(SandboxError::from_io(input, &e)),
            }
        }
        let real = if depth == 0 {
            PathBuf::new()
        } else {
            match self.dir.canonicalize(&existing) {
                Ok(real) => real,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(SandboxError::BrokenLink { path: owned() });
                }
                Err(e) => return Err(SandboxError::from_io(input, &e)),
            }
        };
        let mut relative = parts[depth..]
            .iter()
            .fold(real, |path, part| path.join(part));
        if relative.as_os_str().is_empty() {
            relative = PathBuf::from(".");
        }
        let shown = if parts.is_empty() {
            ".".to_owned()
        } else {
            slash_path(&parts.iter().collect::<PathBuf>())
        };
        Ok(Resolved {
            path: self.root.join(&relative).components().collect(),
            relative,
            shown,
        })
    }

    /// A real path under the root, relative to it with `/` separators.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rest) if rest.as_os_str().is_empty() => ".".to_owned(),
            Ok(rest) => slash_path(rest),
            Err(_) => slash_path(path),
        }
    }

    /// Creates the file `at` with `bytes`, and the folders on the way. Fails with
    /// [`io::ErrorKind::AlreadyExists`] when anything, even a dangling link, has that name.
    pub fn create_new(&self, at: &Resolved, bytes: &[u8]) -> io::Result<()> {
        if let Some(folder) = parent(&at.relative) {
            self.create_dir_all(folder)?;
        }
        let mut file = self.dir.open_with(
            &at.relative,
            OpenOptions::new().write(true).create_new(true),
        )?;
        file.write_all(bytes)?;
        file.flush()
    }

    /// Replaces the file `at` with `bytes` so that readers see the old or the new content,
    /// never a mix: a new file beside it, flushed to disk, renamed over it. A symbolic link at
    /// `at` is replaced, not written through.
    pub fn replace(&self, at: &Resolved, bytes: &[u8]) -> io::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let folder = parent(&at.relative).unwrap_or(Path::new(""));
        if !folder.as_os_str().is_empty() {
            self.create_dir_all(folder)?;
        }
        let name = at
            .relative
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = folder.join(format!(
            ".{name}.tmp-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let result = (|| {
            let mut file = self
                .dir
                .open_with(&tmp, OpenOptions::new().write(true).create_new(true))?;
            file.write_all(bytes)?;
            file.sync_all()?;
            drop(file);
            self.dir.rename(&tmp, &self.dir, &at.relative)
        })();
        if result.is_err() {
            let _ = self.dir.remove_file(&tmp);
        }
        result
    }

    /// Creates `folder` and its parents. Something other than a folder in the way (a file, or a
    /// link that leads out of the root) is left for the next access to report precisely.
    fn create_dir_all(&self, folder: &Path) -> io::Result<()> {
        match self.dir.create_dir_all(folder) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(e),
            _ => Ok(()),
        }
    }

    /// Opens `at` for reading without waiting: a FIFO or a device opens at once, so the caller
    /// can look at the file's type and refuse it before reading anything.
    pub fn open_read(&self, at: &Resolved) -> io::Result<std::fs::File> {
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt as _;
            // The flag's bits fit an `i32`: it is a C `int` flag.
            options.custom_flags(rustix::fs::OFlags::NONBLOCK.bits().cast_signed());
        }
        Ok(self.dir.open_with(&at.relative, &options)?.into_std())
    }
}

/// Whether an error from [`Sandbox::dir`] means the path would have left the root.
pub fn is_escape(error: &io::Error) -> bool {
    // `cap-std` reports an escape as `PermissionDenied` without an OS error code; a real
    // permission problem carries the OS's `EACCES`.
    error.kind() == io::ErrorKind::PermissionDenied && error.raw_os_error().is_none()
}

impl SandboxError {
    /// The refusal an I/O error from [`Sandbox::dir`] stands for: [`SandboxError::LinkEscapes`]
    /// when the path would have left the root, [`SandboxError::Io`] otherwise.
    pub fn from_io(input: &str, error: &io::Error) -> Self {
        if is_escape(error) {
            SandboxError::LinkEscapes {
                path: input.to_owned(),
            }
        } else {
            SandboxError::Io {
                path: input.to_owned(),
                reason: crate::error::io_reason(error),
            }
        }
    }
}

/// The folder part of a relative path, when there is one.
fn parent(relative: &Path) -> Option<&Path> {
    relative.parent().filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;

    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        sandbox: Sandbox,
        outside: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.txt"), "secret").unwrap();
        let sandbox = Sandbox::open(&dir.path().join("root")).unwrap();
        std::fs::create_dir_all(sandbox.root().join("docs")).unwrap();
        std::fs::write(sandbox.root().join("docs/a.md"), "a").unwrap();
        Fixture {
            sandbox,
            outside: outside.canonicalize().unwrap(),
            _dir: dir,
        }
    }

    #[test]
    fn plain_and_normalized_paths_stay_under_the_root() {
        let f = fixture();
        let root = f.sandbox.root().to_path_buf();
        for (input, shown, relative) in [
            ("docs/a.md", "docs/a.md", "docs/a.md"),
            ("./docs//a.md", "docs/a.md", "docs/a.md"),
            ("docs/../new/b.md", "new/b.md", "new/b.md"),
            ("x/y/../../docs", "docs", "docs"),
            ("", ".", "."),
            (".", ".", "."),
        ] {
            let path = if relative == "." {
                root.clone()
            } else {
                root.join(relative)
            };
            let resolved = f
                .sandbox
                .resolve(input)
                .unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(
                resolved,
                Resolved {
                    path,
                    relative: PathBuf::from(relative),
                    shown: shown.to_owned()
                },
                "{input}"
            );
        }
    }

    #[test]
    fn climbing_above_the_root_is_refused() {
        let f = fixture();
        for input in [
            "..",
            "../x",
            "docs/../../x",
            "a/b/../../../root/docs",
            "./../outside/secret.txt",
        ] {
            let error = f.sandbox.resolve(input).unwrap_err();
            assert_eq!(
                error,
                SandboxError::Escapes {
                    path: input.to_owned()
                }
            );
            assert_eq!(
                error.to_string(),
                format!("path {input:?} escapes the sandbox root")
            );
        }
    }

    #[test]
    fn absolute_paths_are_refused_even_inside_the_root() {
        let f = fixture();
        let inside = f.sandbox.root().join("docs/a.md");
        for input in ["/etc/passwd", "/", inside.to_str().unwrap()] {
            assert!(
                matches!(f.sandbox.resolve(input), Err(SandboxError::Absolute { .. })),
                "{input}"
            );
        }
        assert!(matches!(
            f.sandbox.resolve("a\0b"),
            Err(SandboxError::Invalid { .. })
        ));
    }

    #[cfg(unix)]
    #[test]
    fn links_leading_outside_are_refused_wherever_they_sit() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        let root = f.sandbox.root();
        symlink(&f.outside, root.join("out_dir")).unwrap();
        symlink(f.outside.join("secret.txt"), root.join("docs/out_file")).unwrap();
        symlink(f.outside.join("missing.txt"), root.join("dangling_out")).unwrap();
        symlink("docs/missing.md", root.join("dangling")).unwrap();
        symlink("../../outside", root.join("docs/relative_out")).unwrap();

        for input in [
            "out_dir",
            "out_dir/secret.txt",
            "out_dir/new/file.md",
            "docs/out_file",
            "docs/relative_out/secret.txt",
            "dangling_out",
        ] {
            assert_eq!(
                f.sandbox.resolve(input),
                Err(SandboxError::LinkEscapes {
                    path: input.to_owned()
                }),
                "{input}"
            );
        }
        assert_eq!(
            f.sandbox.resolve("dangling"),
            Err(SandboxError::BrokenLink {
                path: "dangling".to_owned()
            })
        );
    }

    #[cfg(unix)]
    #[test]
    fn relative_links_inside_the_root_resolve_to_their_target() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        let root = f.sandbox.root();
        symlink("docs", root.join("shortcut")).unwrap();
        symlink("../docs/a.md", root.join("docs/alias.md")).unwrap();
        let resolved = f.sandbox.resolve("shortcut/a.md").unwrap();
        assert_eq!(resolved.path, root.join("docs/a.md"));
        assert_eq!(resolved.relative, Path::new("docs/a.md"));
        assert_eq!(resolved.shown, "shortcut/a.md");
        let new = f.sandbox.resolve("shortcut/sub/new.md").unwrap();
        assert_eq!(new.path, root.join("docs/sub/new.md"));
        assert_eq!(
            f.sandbox.resolve("docs/alias.md").unwrap().relative,
            Path::new("docs/a.md")
        );
    }

    #[cfg(unix)]
    #[test]
    fn absolute_links_are_refused_even_when_they_point_inside() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        let root = f.sandbox.root();
        symlink(root.join("docs"), root.join("absolute")).unwrap();
        assert_eq!(
            f.sandbox.resolve("absolute/a.md"),
            Err(SandboxError::LinkEscapes {
                path: "absolute/a.md".to_owned()
            })
        );
        let error = f.sandbox.dir().read("absolute/a.md").unwrap_err();
        assert!(is_escape(&error), "{error:?}");
    }

    #[test]
    fn files_are_created_once_and_replaced_whole() {
        let f = fixture();
        let new = f.sandbox.resolve("sub/dir/new.md").unwrap();
        f.sandbox.create_new(&new, b"one").unwrap();
        let again = f.sandbox.create_new(&new, b"two").unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::AlreadyExists);
        f.sandbox.replace(&new, b"three").unwrap();
        let mut text = String::new();
        f.sandbox
            .open_read(&new)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "three");
        let names: Vec<_> = std::fs::read_dir(f.sandbox.root().join("sub/dir"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["new.md"], "no temporary file is left behind");
    }

    #[cfg(unix)]
    #[test]
    fn the_handle_refuses_a_link_that_appears_after_resolving() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        let resolved = f.sandbox.resolve("later/secret.txt").unwrap();
        symlink(&f.outside, f.sandbox.root().join("later")).unwrap();
        let error = f.sandbox.open_read(&resolved).unwrap_err();
        assert!(is_escape(&error), "{error:?}");
        let error = f.sandbox.create_new(&resolved, b"x").unwrap_err();
        assert!(is_escape(&error), "{error:?}");
        assert_eq!(
            SandboxError::from_io("later/secret.txt", &error),
            SandboxError::LinkEscapes {
                path: "later/secret.txt".to_owned()
            }
        );
        let error = f.sandbox.dir().remove_file(&resolved.relative).unwrap_err();
        assert!(is_escape(&error), "{error:?}");
        assert!(f.outside.join("secret.txt").exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_root_reached_through_a_link_still_works() {
        use std::os::unix::fs::symlink;
        let f = fixture();
        let link = f.outside.join("root_link");
        symlink(f.sandbox.root(), &link).unwrap();
        let sandbox = Sandbox::open(&link).unwrap();
        assert_eq!(sandbox.root(), f.sandbox.root());
        assert_eq!(
            sandbox.resolve("docs/a.md").unwrap().path,
            f.sandbox.root().join("docs/a.md")
        );
        assert_eq!(
            sandbox.relative(&sandbox.root().join("docs/a.md")),
            "docs/a.md"
        );
        assert_eq!(sandbox.relative(sandbox.root()), ".");
    }
}
