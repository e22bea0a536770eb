//! Every fuzz target's corpus and findings, replayed on the stable toolchain: each input of
//! `fuzz/corpus/TARGET/` and `fuzz/regressions/TARGET/` goes through the target's own check
//! (`fuzz/checks/`, included here by its path), so a finding once fixed stays fixed and the
//! corpus keeps its properties. No `cargo fuzz`, nightly or sanitizer is needed: a replay is
//! one run of each input. `scripts/fuzz` grows the corpus and turns a finding into an input
//! of `fuzz/regressions/`, which fails here until it is fixed.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

#[path = "../../fuzz/checks/mod.rs"]
mod checks;

/// The inputs of one target, sorted: its corpus, then its findings.
fn inputs(target: &str) -> (Vec<PathBuf>, usize) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut corpus = files(&fuzz.join("corpus").join(target));
    let in_corpus = corpus.len();
    corpus.extend(files(&fuzz.join("regressions").join(target)));
    (corpus, in_corpus)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_file() && path.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    files.sort();
    files
}

/// Runs `target`'s check on every input; fails naming each input whose property broke.
fn replay(target: &str) {
    let check = checks::TARGETS
        .iter()
        .find(|(name, _)| *name == target)
        .map(|(_, check)| *check)
        .expect("a target of checks::TARGETS");
    let (inputs, in_corpus) = inputs(target);
    assert!(
        in_corpus > 0,
        "fuzz/corpus/{target}/ is empty: run `scripts/fuzz 60 {target}` to grow it, and commit it"
    );
    let failed: Vec<String> = inputs
        .iter()
        .filter(|path| {
            let data = std::fs::read(path).expect("an input reads");
            catch_unwind(AssertUnwindSafe(|| check(&data))).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(
        failed.is_empty(),
        "{} of {} inputs of `{target}` break its property (the panics are printed above):\n{}\n\
         replay one with `cargo +nightly fuzz run -O {target} FILE -- -runs=0`",
        failed.len(),
        inputs.len(),
        failed.join("\n")
    );
}

macro_rules! replays {
    ($($target:ident),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                replay(stringify!($target));
            }
        )*

        #[test]
        fn every_target_is_replayed() {
            let replayed = [$(stringify!($target)),*];
            let targets: Vec<&str> = checks::TARGETS.iter().map(|(name, _)| *name).collect();
            assert_eq!(targets, replayed);
        }
    };
}

replays!(
    tags, text, stream, call, spec, mcp, mcp_http, module, gateway, blocks, json
);
