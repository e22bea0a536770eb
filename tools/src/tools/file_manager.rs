//! `file_manager.*`: documents in one sandboxed folder.
//!
//! Every access goes through the directory handle of a [`Sandbox`] on
//! [`Config::sandbox_root`], so no call reads, writes, lists or deletes anything outside it, even
//! while the folders inside are being changed. The handle's calls block, so each tool runs its
//! file work on Tokio's blocking pool.

use std::io::{self, Read as _};
use std::path::{Component, Path};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::json;
use tool_registry::{Ctx, State, ToolError, ToolResult, tool};

use crate::Config;
use crate::config::slash_path;
use crate::error::{failed, invalid, io_failed};
use crate::sandbox::{Resolved, Sandbox, SandboxError, is_escape};

/// The largest document `file_manager.create_document` writes.
pub const MAX_WRITE_BYTES: usize = 1024 * 1024;
/// The most `file_manager.read` returns in one call.
pub const MAX_READ_BYTES: u64 = 1024 * 1024;
/// The most entries `file_manager.list` returns.
pub const MAX_LIST_ENTRIES: usize = 1000;
/// The longest `file_manager.wait_for` waits, in seconds.
pub const MAX_WAIT_SECONDS: u64 = 300;
/// How often `file_manager.wait_for` looks.
const WAIT_STEP: Duration = Duration::from_millis(500);

/// Create a text document in the sandboxed file area.
///
/// Folders on the way are created. An existing file is left alone unless `overwrite` is true.
/// Paths are relative to the sandbox root; absolute paths and `..` above the root are refused.
#[tool(
    name = "file_manager.create_document",
    version = "1.0.0",
    category = "files",
    tags(files, write),
    tier = "high",
    cost = "free",
    permission = "guest",
    open_world = false
)]
pub async fn create_document(
    #[arg(desc = "Where to write, relative to the sandbox root, e.g. \"notes/todo.md\"")]
    path: String,
    #[arg(desc = "The full text of the document")] content: String,
    #[arg(desc = "Replace the file if it already exists", default = false)] overwrite: bool,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    let size = content.len();
    if size > MAX_WRITE_BYTES {
        return Err(invalid(
            "content",
            format!("the document has {size} bytes; the limit is {MAX_WRITE_BYTES}"),
        ));
    }
    let (shown, created) = in_sandbox(&config, move |sandbox| {
        let target = resolve_path(sandbox, &path)?;
        let bytes = content.as_bytes();
        let created = match sandbox.create_new(&target, bytes) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if is_dir(sandbox, &target) {
                    return Err(invalid(
                        "path",
                        format!("{:?} is a folder; name a file inside it", target.shown),
                    ));
                }
                if !overwrite {
                    return Err(invalid(
                        "path",
                        format!(
                            "{:?} already exists; pass \"overwrite\": true to replace it, or pick another path",
                            target.shown
                        ),
                    ));
                }
                sandbox
                    .replace(&target, bytes)
                    .map_err(|e| access_failed(&target, "write", &e))?;
                false
            }
            Err(e) => return Err(access_failed(&target, "write", &e)),
        };
        Ok((target.shown, created))
    })
    .await?;

    let effect = if created { "created" } else { "updated" };
    Ok(
        ToolResult::ok(json!({ "path": shown, "bytes": size, "created": created }))
            .with_side_effect(format!("{effect}:{shown}")),
    )
}

/// What `file_manager.read` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReadOutput {
    /// The path as resolved, relative to the sandbox root.
    pub path: String,
    /// The text read.
    pub content: String,
    /// The size of the whole file in bytes.
    pub size: u64,
    /// Whether `content` stops before the end of the file.
    pub truncated: bool,
}

/// Read a text file from the sandboxed file area.
///
/// Returns at most `max_bytes` bytes (at most 1 MiB) of UTF-8 text and says whether the file
/// goes on.
#[tool(
    name = "file_manager.read",
    aliases("file_manager.read_file"),
    version = "1.0.0",
    category = "files",
    tags(files, read),
    tier = "high",
    cost = "free",
    permission = "guest",
    read_only,
    idempotent,
    open_world = false
)]
pub async fn read(
    #[arg(desc = "The file to read, relative to the sandbox root")] path: String,
    #[arg(desc = "The most bytes to return, up to 1048576", default = 65536)] max_bytes: u64,
    config: State<Config>,
) -> Result<ReadOutput, ToolError> {
    if max_bytes == 0 || max_bytes > MAX_READ_BYTES {
        return Err(invalid(
            "max_bytes",
            format!("must be from 1 to {MAX_READ_BYTES}; got {max_bytes}"),
        ));
    }
    in_sandbox(&config, move |sandbox| {
        let target = resolve_path(sandbox, &path)?;
        // Opened without waiting and then checked, on the open file itself: a FIFO or a device
        // is refused before anything is read from it.
        let file = sandbox
            .open_read(&target)
            .map_err(|e| access_failed(&target, "read", &e))?;
        let meta = file
            .metadata()
            .map_err(|e| io_failed("read", &target.shown, &e))?;
        if meta.is_dir() {
            return Err(invalid(
                "path",
                format!(
                    "{:?} is a folder; use file_manager.list to see what it holds",
                    target.shown
                ),
            ));
        }
        if !meta.is_file() {
            return Err(invalid(
                "path",
                format!("{:?} is not a regular file", target.shown),
            ));
        }
        let mut bytes = Vec::new();
        file.take(max_bytes)
            .read_to_end(&mut bytes)
            .map_err(|e| io_failed("read", &target.shown, &e))?;
        let truncated = meta.len() > bytes.len() as u64;
        let content = match String::from_utf8(bytes) {
            Ok(text) => text,
            // A cut through the middle of the last character is fine: drop that character.
            Err(e) if truncated && e.utf8_error().error_len().is_none() => {
                let valid = e.utf8_error().valid_up_to();
                let mut bytes = e.into_bytes();
                bytes.truncate(valid);
                String::from_utf8(bytes).unwrap_or_default()
            }
            Err(_) => {
                return Err(failed(format!(
                    "{:?} is not a UTF-8 text file",
                    target.shown
                )));
            }
        };
        Ok(ReadOutput {
            path: target.shown,
            content,
            size: meta.len(),
            truncated,
        })
    })
    .await
}

/// One entry of a folder listing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ListEntry {
    /// The file or folder name.
    pub name: String,
    /// Its path relative to the sandbox root, usable in the other `file_manager` tools.
    pub path: String,
    /// `file`, `dir` or `symlink`.
    pub kind: &'static str,
    /// The size in bytes, for files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

/// What `file_manager.list` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ListOutput {
    /// The folder listed, relative to the sandbox root (`.` for the root).
    pub dir: String,
    /// Its entries, sorted by name.
    pub entries: Vec<ListEntry>,
    /// Whether entries were left out: more than 1000, or the listing cut to `max_result_bytes`.
    pub truncated: bool,
}

/// List the files and folders in the sandboxed file area.
///
/// Lists one folder (the root when `dir` is left out), sorted by name. Symbolic links are shown
/// as such and not followed.
#[tool(
    max_result_bytes = 16384,
    name = "file_manager.list",
    aliases("file_manager.list_files"),
    version = "1.0.0",
    category = "files",
    tags(files, read),
    tier = "high",
    cost = "free",
    permission = "guest",
    read_only,
    idempotent,
    open_world = false
)]
pub async fn list(
    #[arg(desc = "The folder to list, relative to the sandbox root; the root when left out")]
    dir: Option<String>,
    config: State<Config>,
) -> Result<ListOutput, ToolError> {
    in_sandbox(&config, move |sandbox| {
        let target = sandbox
            .resolve(dir.as_deref().unwrap_or(""))
            .map_err(|e| invalid("dir", e))?;
        let reader = sandbox
            .dir()
            .read_dir(&target.relative)
            .map_err(|e| match e.kind() {
                _ if is_escape(&e) => invalid(
                    "dir",
                    SandboxError::LinkEscapes {
                        path: target.shown.clone(),
                    },
                ),
                io::ErrorKind::NotFound => {
                    invalid("dir", format!("there is no folder {:?}", target.shown))
                }
                io::ErrorKind::NotADirectory => {
                    invalid("dir", format!("{:?} is a file, not a folder", target.shown))
                }
                _ => io_failed("list", &target.shown, &e),
            })?;
        let mut entries = Vec::new();
        let mut truncated = false;
        for entry in reader {
            let entry = entry.map_err(|e| io_failed("list", &target.shown, &e))?;
            if entries.len() == MAX_LIST_ENTRIES {
                truncated = true;
                break;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            // Neither call follows a symbolic link; an error means the entry was removed while
            // we listed.
            let Ok(file_type) = entry.file_type() else {
                continue;
            };
            let (kind, size) = if file_type.is_symlink() {
                ("symlink", None)
            } else if file_type.is_dir() {
                ("dir", None)
            } else {
                let Ok(meta) = entry.metadata() else {
                    continue;
                };
                ("file", Some(meta.len()))
            };
            let path = if target.shown == "." {
                name.clone()
            } else {
                format!("{}/{name}", target.shown)
            };
            entries.push(ListEntry {
                name,
                path,
                kind,
                size,
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(ListOutput {
            dir: target.shown,
            entries,
            truncated,
        })
    })
    .await
}

/// What `file_manager.wait_for` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct WaitOutput {
    /// The file waited for, relative to the sandbox root.
    pub path: String,
    /// Whether it appeared before the time ran out.
    pub appeared: bool,
    /// Its size in bytes when it appeared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// How long the wait took, in seconds.
    pub waited_seconds: u64,
}

/// Wait until a file appears in the sandboxed file area.
///
/// For a file another program writes (an export, a build's output): looks every half second
/// for up to `timeout_seconds`, reports progress each second while it waits, and says whether
/// the file appeared and how large it is. Stopping the call stops the wait. A client that
/// follows tasks gets a task for a wait longer than a second.
#[tool(
    name = "file_manager.wait_for",
    version = "1.0.0",
    category = "files",
    tags(files, read),
    tier = "medium",
    cost = "free",
    permission = "guest",
    read_only,
    idempotent,
    open_world = false,
    timeout = "6m",
    task = "optional"
)]
pub async fn wait_for(
    #[arg(desc = "The file to wait for, relative to the sandbox root")] path: String,
    #[arg(desc = "How long to wait, from 1 to 300 seconds", default = 60)] timeout_seconds: u64,
    ctx: &Ctx,
    config: State<Config>,
) -> Result<WaitOutput, ToolError> {
    if !(1..=MAX_WAIT_SECONDS).contains(&timeout_seconds) {
        return Err(invalid(
            "timeout_seconds",
            format!("must be from 1 to {MAX_WAIT_SECONDS}; got {timeout_seconds}"),
        ));
    }
    let started = Instant::now();
    let deadline = started + Duration::from_secs(timeout_seconds);
    let mut reported = 0;
    loop {
        let wanted = path.clone();
        let (shown, size) = in_sandbox(&config, move |sandbox| {
            let target = resolve_path(sandbox, &wanted)?;
            let size = match sandbox.dir().metadata(&target.relative) {
                Ok(meta) if meta.is_file() => Some(meta.len()),
                Ok(_) => {
                    return Err(invalid(
                        "path",
                        format!("{:?} is not a regular file", target.shown),
                    ));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => None,
                Err(e) => return Err(access_failed(&target, "look at", &e)),
            };
            Ok((target.shown, size))
        })
        .await?;
        let waited = started.elapsed().as_secs();
        if size.is_some() || Instant::now() >= deadline {
            return Ok(WaitOutput {
                path: shown,
                appeared: size.is_some(),
                size,
                waited_seconds: waited,
            });
        }
        if waited > reported {
            reported = waited;
            ctx.progress(format!(
                "waited {waited} of {timeout_seconds} s for {shown:?}"
            ));
        }
        tokio::time::sleep(WAIT_STEP.min(deadline - Instant::now())).await;
    }
}

/// Delete one file from the sandboxed file area.
///
/// Folders are not deleted. A path through a symbolic link inside the sandbox deletes the file
/// it points at. Deleting a file under `tmp/` runs at once; anything else waits for a person's
/// approval.
#[tool(
    name = "file_manager.delete_file",
    version = "1.0.0",
    category = "files",
    tags(files, write),
    tier = "medium",
    cost = "free",
    permission = "user",
    destructive,
    idempotent = false,
    open_world = false,
    confirm_if = outside_tmp
)]
pub async fn delete_file(
    #[arg(desc = "The file to delete, relative to the sandbox root")] path: String,
    config: State<Config>,
) -> Result<ToolResult, ToolError> {
    let unconfirmed = !outside_tmp(&path);
    let shown = in_sandbox(&config, move |sandbox| {
        let target = resolve_path(sandbox, &path)?;
        // A path under `tmp/` runs without approval: it must also end there, not through a
        // link to a file elsewhere.
        if unconfirmed && !under_tmp(&target.relative) {
            return Err(invalid(
                "path",
                format!(
                    "{path:?} leads to {:?}, outside `tmp/`; delete it by that path, which asks for approval",
                    slash_path(&target.relative)
                ),
            ));
        }
        match sandbox.dir().remove_file(&target.relative) {
            Ok(()) => Ok(target.shown),
            Err(e) if !is_escape(&e) && is_dir(sandbox, &target) => Err(invalid(
                "path",
                format!("{:?} is a folder; only files can be deleted", target.shown),
            )),
            Err(e) => Err(access_failed(&target, "delete", &e)),
        }
    })
    .await?;
    Ok(ToolResult::ok(json!({ "path": shown, "deleted": true }))
        .with_side_effect(format!("deleted:{shown}")))
}

/// What `file_manager.clear_folder` returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ClearOutput {
    /// The folder cleared, relative to the sandbox root.
    pub dir: String,
    /// The files deleted, by name, in the order they were deleted.
    pub deleted: Vec<String>,
    /// What was left: sub-folders and links, by name.
    pub kept: Vec<String>,
}

/// Delete every file directly inside one folder of the sandboxed file area.
///
/// Sub-folders (and what they hold) and links are left alone. Always asks for a person's
/// approval first, and runs as a task: a client that follows MCP's tasks gets a handle at once,
/// answers the question through the task, and polls it to its end.
#[tool(
    name = "file_manager.clear_folder",
    version = "1.0.0",
    category = "files",
    tags(files, write),
    tier = "low",
    cost = "free",
    permission = "user",
    destructive,
    idempotent,
    open_world = false,
    requires_confirmation,
    task = "required"
)]
pub async fn clear_folder(
    #[arg(desc = "The folder to clear, relative to the sandbox root")] dir: String,
    ctx: &Ctx,
    config: State<Config>,
) -> Result<ClearOutput, ToolError> {
    let progress = ctx.clone();
    in_sandbox(&config, move |sandbox| {
        let target = resolve_path(sandbox, &dir)?;
        let reader = sandbox
            .dir()
            .read_dir(&target.relative)
            .map_err(|e| match e.kind() {
                io::ErrorKind::NotADirectory => {
                    invalid("dir", format!("{:?} is a file, not a folder", target.shown))
                }
                _ => access_failed(&target, "clear", &e),
            })?;
        let mut names = Vec::new();
        for entry in reader {
            let entry = entry.map_err(|e| io_failed("clear", &target.shown, &e))?;
            // Neither call follows a symbolic link.
            let is_file = entry.file_type().is_ok_and(|kind| kind.is_file());
            names.push((entry.file_name().to_string_lossy().into_owned(), is_file));
        }
        names.sort();
        let (mut deleted, mut kept) = (Vec::new(), Vec::new());
        for (name, is_file) in names {
            if !is_file {
                kept.push(name);
                continue;
            }
            match sandbox.dir().remove_file(target.relative.join(&name)) {
                Ok(()) => {
                    progress.progress(format!("deleted {name}"));
                    deleted.push(name);
                }
                // Removed by someone else meanwhile: nothing left to delete.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_failed("delete", &name, &e)),
            }
        }
        Ok(ClearOutput {
            dir: target.shown,
            deleted,
            kept,
        })
    })
    .await
}

/// Whether deleting `path` needs a person's approval: `delete_file`'s `confirm_if`. Only a
/// file under the sandbox's `tmp/` folder, written without `..`, goes without; a path that
/// leaves `tmp/` through a link is refused by the tool itself.
pub fn outside_tmp(path: &str) -> bool {
    !under_tmp(Path::new(path))
}

/// Whether `path` names something inside `tmp/` (not `tmp` itself), without `..` or a root.
fn under_tmp(path: &Path) -> bool {
    let mut parts = path.components().filter(|part| *part != Component::CurDir);
    parts.next() == Some(Component::Normal(std::ffi::OsStr::new("tmp")))
        && parts.clone().next().is_some()
        && parts.all(|part| matches!(part, Component::Normal(_)))
}

/// Runs `work` on Tokio's blocking pool with the sandbox of `config`.
async fn in_sandbox<T: Send + 'static>(
    config: &Config,
    work: impl FnOnce(&Sandbox) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let root = config.sandbox_root.clone();
    tokio::task::spawn_blocking(move || work(&open_sandbox(&root)?))
        .await
        .map_err(|e| failed(format!("the file operation stopped: {e}")))?
}

fn open_sandbox(root: &Path) -> Result<Sandbox, ToolError> {
    Sandbox::open(root).map_err(|e| {
        failed(format!(
            "the sandbox folder is unavailable: {}",
            crate::error::io_reason(&e)
        ))
    })
}

/// Resolves the `path` argument of a tool.
fn resolve_path(sandbox: &Sandbox, path: &str) -> Result<Resolved, ToolError> {
    if path.trim().is_empty() {
        return Err(invalid(
            "path",
            "is empty; give a file path relative to the sandbox root",
        ));
    }
    sandbox.resolve(path).map_err(|e| invalid("path", e))
}

/// Whether `target` is a folder now; `false` when that cannot be told.
fn is_dir(sandbox: &Sandbox, target: &Resolved) -> bool {
    sandbox
        .dir()
        .metadata(&target.relative)
        .is_ok_and(|meta| meta.is_dir())
}

/// An error from the sandbox's handle on `path`, phrased for the model.
fn access_failed(target: &Resolved, what: &str, error: &io::Error) -> ToolError {
    if is_escape(error) {
        // The path changed after it was resolved: a link out of the root took the place of a
        // folder or file.
        invalid("path", SandboxError::from_io(&target.shown, error))
    } else if error.kind() == io::ErrorKind::NotFound {
        invalid(
            "path",
            format!(
                "there is no file {:?}; use file_manager.list to see what exists",
                target.shown
            ),
        )
    } else {
        io_failed(what, &target.shown, error)
    }
}
