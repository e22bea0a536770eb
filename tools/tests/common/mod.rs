//! What the `toolreg` tests share.

use std::path::Path;
use std::process::Command;

/// `toolreg args` run in `root`, with no path or store taken from the environment: every
/// `TOOLREG_*` variable of the caller is removed.
pub fn toolreg_command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolreg"));
    command.current_dir(root);
    for var in [
        "TOOLREG_KB",
        "TOOLREG_INBOX",
        "TOOLREG_SANDBOX",
        "TOOLREG_SCHEDULE",
        "TOOLREG_APPROVALS",
        "TOOLREG_LIMITS",
        "TOOLREG_MODULE_CACHE",
        "TOOLREG_MODULE_TOKEN",
        "TOOLREG_SWITCHES",
    ] {
        command.env_remove(var);
    }
    command.args(args);
    command
}

/// A fresh folder with a knowledge base of one note, `kb/caching.md`.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir_all(dir.path().join("kb")).unwrap();
    std::fs::write(
        dir.path().join("kb/caching.md"),
        "# Caching\n\nWe cache manifests for one hour in Redis.\n",
    )
    .unwrap();
    dir
}
