//! The file manager while a symbolic link is swapped in and out of the sandbox in a loop: no
//! call reads, lists, writes or deletes anything outside the root, whatever the timing.
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use serde_json::json;
use tool_registry::{Ctx, Registry, ToolArgs, ToolError, ToolResult};
use tool_registry_tools::Config;

/// Text that only the file outside the root holds.
const SECRET: &str = "outside-secret-5e1f";
/// A name that only the folder outside the root holds.
const OUTSIDE_ONLY: &str = "outside-only.txt";
/// How many times each tool is called.
const ROUNDS: usize = 300;

/// Exchanges two paths atomically, over and over, until stopped; returns how many swaps it made.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<u64>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut swaps = 0;
            while !flag.load(Ordering::Relaxed) {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .expect("renameat2(RENAME_EXCHANGE)");
                swaps += 1;
            }
            swaps
        });
        Self { stop, thread }
    }

    fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().expect("the swapping thread ends")
    }
}

/// Every file under `dir` with its content, relative, sorted.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let content = std::fs::read_to_string(entry.path()).unwrap();
            (entry.file_name().to_string_lossy().into_owned(), content)
        })
        .collect();
    files.sort();
    files
}

/// The start of a long result, for a readable failure.
fn cut(text: &str) -> &str {
    text.get(..120).unwrap_or(text)
}

async fn call(
    registry: &Registry,
    name: &str,
    args: serde_json::Value,
) -> Result<ToolResult, ToolError> {
    let ctx = Ctx::new().with_user("tester");
    match registry.call(name, ToolArgs::Value(args), &ctx).await {
        Err(ToolError::NeedsApproval { token, .. }) => registry.approve(&token, &ctx).await,
        other => other,
    }
}

#[tokio::test]
async fn a_link_swapped_in_a_loop_never_lets_a_call_out_of_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config::under(dir.path());
    let root = config.sandbox_root.clone();
    let outside = dir.path().join("outside");
    let stage = dir.path().join("stage");
    for folder in [&root.join("d"), &outside, &stage] {
        std::fs::create_dir_all(folder).unwrap();
    }
    std::fs::write(outside.join("secret.txt"), SECRET).unwrap();
    std::fs::write(outside.join(OUTSIDE_ONLY), "").unwrap();
    std::fs::write(root.join("d/secret.txt"), "inside").unwrap();
    for i in 0..ROUNDS {
        std::fs::write(outside.join(format!("victim-{i}.txt")), "outside").unwrap();
        std::fs::write(root.join(format!("d/victim-{i}.txt")), "inside").unwrap();
    }
    // `root/d` is a real folder inside the root half of the time and a link to `outside` the
    // other half: the swap exchanges it with `stage/d`.
    std::os::unix::fs::symlink(&outside, stage.join("d")).unwrap();
    let outside_before = snapshot(&outside);

    let registry = Registry::builder()
        .state(config.clone())
        .build()
        .expect("the reference tools build");
    let swapper = Swapper::start(root.join("d"), stage.join("d"));

    let mut leaks = Vec::new();
    let mut inside_reads = 0;
    for i in 0..ROUNDS {
        if let Ok(result) = call(
            &registry,
            "file_manager.read",
            json!({"path": "d/secret.txt"}),
        )
        .await
        {
            let text = result.content.to_string();
            if text.contains(SECRET) {
                leaks.push(format!("read {i}: {}", cut(&text)));
            } else if result.success {
                inside_reads += 1;
            }
        }
        if let Ok(result) = call(&registry, "file_manager.list", json!({"dir": "d"})).await {
            let text = result.content.to_string();
            if text.contains(OUTSIDE_ONLY) {
                leaks.push(format!("list {i}: {}", cut(&text)));
            }
        }
        let _ = call(
            &registry,
            "file_manager.create_document",
            json!({"path": format!("d/new-{i}.txt"), "content": "created"}),
        )
        .await;
        let _ = call(
            &registry,
            "file_manager.create_document",
            json!({"path": format!("d/victim-{i}.txt"), "content": "replaced", "overwrite": true}),
        )
        .await;
        let _ = call(
            &registry,
            "file_manager.delete_file",
            json!({"path": format!("d/victim-{i}.txt")}),
        )
        .await;
    }
    let swaps = swapper.stop();

    assert!(swaps > 100, "the link was swapped only {swaps} times");
    assert!(inside_reads > 0, "no read reached the real folder");
    let outside_after = snapshot(&outside);
    let created: Vec<_> = outside_after
        .iter()
        .filter(|file| !outside_before.contains(file))
        .collect();
    let lost: Vec<_> = outside_before
        .iter()
        .filter(|file| !outside_after.contains(file))
        .collect();
    assert!(
        leaks.is_empty() && created.is_empty() && lost.is_empty(),
        "calls reached outside the root: {} reads or listings saw it, {} files were created \
         or changed there, {} were deleted or changed there; first leaks: {:?}",
        leaks.len(),
        created.len(),
        lost.len(),
        &leaks[..leaks.len().min(3)]
    );
}
