//! Adding a tool is adding a file: a crate whose tools are found by `tool_files!` is built,
//! a file is dropped into its tools folder, and the next `cargo build` lists the new tool with
//! no other edit.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Copies the fixture crate to `dir`, pointing its dependency at this workspace's registry.
fn copy_fixture(dir: &Path) {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tool_files");
    for file in [
        "build.rs",
        "src/main.rs",
        "src/tools.rs",
        "src/tools/hello.rs",
        "src/tools/_shared.rs",
    ] {
        let to = dir.join(file);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(fixture.join(file), &to).unwrap();
    }
    let registry = workspace().join("registry").canonicalize().unwrap();
    let manifest = std::fs::read_to_string(fixture.join("Cargo.toml.in"))
        .unwrap()
        .replace(
            "@REGISTRY@",
            &registry.display().to_string().replace('\\', "/"),
        );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    // The workspace's lock file pins the same versions, so nothing is fetched.
    std::fs::copy(workspace().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

/// `cargo build` of the copy, then the names its `list` prints.
fn build_and_list(dir: &Path, target: &Path) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(&cargo)
        .args(["build", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .output()
        .expect("cargo runs");
    assert!(
        built.status.success(),
        "the fixture did not build:\n{}",
        String::from_utf8_lossy(&built.stderr)
    );
    let listed = Command::new(target.join("debug/tool-files-fixture"))
        .arg("list")
        .output()
        .expect("the fixture runs");
    assert!(listed.status.success(), "{listed:?}");
    String::from_utf8_lossy(&listed.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect()
}

#[test]
fn a_file_dropped_into_the_tools_folder_is_a_tool_at_the_next_build() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path());
    // Kept between runs, beside this workspace's own build, so dependencies build once.
    let target = workspace().join("target/tests/tool-files");

    assert_eq!(build_and_list(dir.path(), &target), ["hello.greet"]);

    std::fs::write(
        dir.path().join("src/tools/farewell.rs"),
        "use tool_registry::tool;\n\n/// Say goodbye.\n#[tool(name = \"farewell.wave\")]\nfn wave(name: String) -> String {\n    format!(\"bye, {name}\")\n}\n",
    )
    .unwrap();
    assert_eq!(
        build_and_list(dir.path(), &target),
        ["farewell.wave", "hello.greet"]
    );

    std::fs::remove_file(dir.path().join("src/tools/farewell.rs")).unwrap();
    assert_eq!(build_and_list(dir.path(), &target), ["hello.greet"]);
}
