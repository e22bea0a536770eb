//! The store's tests: concurrent writers, corrupt and hostile files, links, permissions.

use super::*;

use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Default, Serialize, Deserialize)]
struct Doc {
    #[serde(default)]
    items: Vec<u32>,
    #[serde(flatten)]
    other: Map<String, Value>,
}

fn push(file: &JsonFile, n: u32) -> Result<(), StoreError> {
    file.update(|doc: &mut Doc| {
        doc.items.push(n);
        Ok(())
    })
}

#[test]
fn threads_never_lose_an_update() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/doc.json");
    std::thread::scope(|s| {
        for n in 0..16 {
            let file = JsonFile::new(&path, "test file");
            s.spawn(move || push(&file, n).unwrap());
        }
    });
    let mut items = JsonFile::new(&path, "test file")
        .read::<Doc>()
        .unwrap()
        .items;
    items.sort_unstable();
    assert_eq!(items, (0..16).collect::<Vec<_>>());
    let names: Vec<_> = std::fs::read_dir(dir.path().join("sub"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        2,
        "the data and its lock file, no leftovers: {names:?}"
    );
}

#[test]
fn unknown_keys_survive_and_an_unchanged_document_is_not_written() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.json");
    std::fs::write(&path, r#"{"items": [1], "note": {"kept": true}}"#).unwrap();
    let file = JsonFile::new(&path, "test file");
    file.update(|_: &mut Doc| Ok::<_, StoreError>(())).unwrap();
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        r#"{"items": [1], "note": {"kept": true}}"#,
        "nothing changed, nothing written"
    );
    push(&file, 2).unwrap();
    let written: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(written, json!({"items": [1, 2], "note": {"kept": true}}));
}

#[test]
fn a_failed_change_writes_nothing_and_a_corrupt_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.json");
    let file = JsonFile::new(&path, "test file");
    let refused: Result<(), StoreError> = file.update(|doc: &mut Doc| {
        doc.items.push(1);
        Err(StoreError::ReadOnly {
            what: "test file",
            path: PathBuf::new(),
        })
    });
    assert!(refused.is_err());
    assert!(!path.exists());

    std::fs::write(&path, "{\"items\": [1,").unwrap();
    let error = push(&file, 2).unwrap_err().to_string();
    assert!(
        error.contains("test file") && error.contains("doc.json") && error.contains("move it away"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"items\": [1,");
}

#[cfg(unix)]
#[test]
fn writes_go_through_a_symlink_and_keep_permissions() {
    use std::os::unix::fs::PermissionsExt;

    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real/doc.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, "{}").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real/doc.json", &link).unwrap();
    push(&JsonFile::new(&link, "test file"), 7).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let doc: Doc = JsonFile::new(&real, "test file").read().unwrap();
    assert_eq!(doc.items, [7]);
    let mode = std::fs::metadata(&real).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(
        real.with_file_name("doc.json.lock").exists(),
        "the lock sits beside the target, shared with users of the real path"
    );
}

#[test]
fn a_read_only_file_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("doc.json");
    std::fs::write(&path, "{\"items\": []}").unwrap();
    let mut permissions = std::fs::metadata(&path).unwrap().permissions();
    permissions.set_readonly(true);
    std::fs::set_permissions(&path, permissions).unwrap();
    let error = push(&JsonFile::new(&path, "test file"), 1).unwrap_err();
    assert!(matches!(error, StoreError::ReadOnly { .. }), "{error}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"items\": []}");
}

/// Runs `f` on a thread and waits at most ten seconds for it: a regression that blocks
/// fails the test instead of hanging it.
#[cfg(unix)]
pub(crate) fn within<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(std::time::Duration::from_secs(10))
        .expect("answered within ten seconds, without blocking")
}

#[cfg(unix)]
pub(crate) fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

#[cfg(unix)]
#[test]
fn a_fifo_or_a_device_is_refused_at_once_and_a_link_to_a_file_still_works() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    mkfifo(&fifo);
    let zero = dir.path().join("zero.json");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    // The message names the file the data would be read from: the link's target.
    for (path, found, named) in [
        (fifo.clone(), "a FIFO", fifo),
        (zero, "a character device", PathBuf::from("/dev/zero")),
    ] {
        let file = JsonFile::new(&path, "test file");
        let (read, changed) = within(move || (file.read::<Doc>().map(|_| ()), push(&file, 1)));
        for error in [read.unwrap_err(), changed.unwrap_err()] {
            assert!(
                matches!(&error, StoreError::NotRegular { found: f, .. } if *f == found),
                "{error}"
            );
            let message = error.to_string();
            assert!(
                message.contains(&named.display().to_string())
                    && message.contains("not a regular file"),
                "{message}"
            );
        }
    }
    // A folder too.
    let error = JsonFile::new(dir.path(), "test file")
        .read::<Doc>()
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::NotRegular {
                found: "a folder",
                ..
            }
        ),
        "{error}"
    );

    // A lock file that is a FIFO.
    let data = dir.path().join("locked.json");
    mkfifo(&dir.path().join("locked.json.lock"));
    let file = JsonFile::new(&data, "test file");
    let error = within(move || push(&file, 1)).unwrap_err();
    assert!(matches!(error, StoreError::NotRegular { .. }), "{error}");

    // A link to a regular file is followed as before.
    std::fs::write(dir.path().join("real.json"), "{\"items\": [3]}").unwrap();
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink("real.json", &link).unwrap();
    let doc: Doc = JsonFile::new(&link, "test file").read().unwrap();
    assert_eq!(doc.items, [3]);
}

#[test]
fn a_file_larger_than_the_bound_is_refused_unread() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.json");
    // Sparse: the size is there, the bytes are not.
    let file = File::create(&path).unwrap();
    file.set_len(MAX_FILE_BYTES + 1).unwrap();
    drop(file);
    let store = JsonFile::new(&path, "test file");
    for error in [
        store.read::<Doc>().map(|_| ()).unwrap_err(),
        push(&store, 1).unwrap_err(),
    ] {
        assert!(
            matches!(
                error,
                StoreError::TooLarge {
                    limit: MAX_FILE_BYTES,
                    ..
                }
            ),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains("big.json") && message.contains("67108864"),
            "{message}"
        );
    }
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        MAX_FILE_BYTES + 1,
        "left alone"
    );
}
