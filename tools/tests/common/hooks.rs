//! The sandbox the hook tests read, delete and list in, and what every front end must answer
//! for its long listing.

use std::path::Path;

use serde_json::Value;

/// `file_manager.list`'s `max_result_bytes`.
pub const LIST_LIMIT: usize = 16384;

/// How many files `many/` holds: their listing is several times [`LIST_LIMIT`].
pub const MANY: usize = 600;

/// A fake API key, as `RedactSecrets` finds them: `sk-` and 30 letters.
pub fn fake_key() -> String {
    format!("sk-{}", "abcdefghij".repeat(3))
}

/// Fills `root/sandbox`: `notes/secret.txt` holding [`fake_key`] between other text,
/// `tmp/x.txt`, `notes/y.txt`, and `many/` with [`MANY`] files with long names.
pub fn sandbox(root: &Path) {
    let sandbox = root.join("sandbox");
    for dir in ["notes", "tmp", "many"] {
        std::fs::create_dir_all(sandbox.join(dir)).unwrap();
    }
    std::fs::write(
        sandbox.join("notes/secret.txt"),
        format!("OPENAI_API_KEY={}\nkeep this line\n", fake_key()),
    )
    .unwrap();
    std::fs::write(sandbox.join("tmp/x.txt"), "scratch").unwrap();
    std::fs::write(sandbox.join("notes/y.txt"), "keep until approved").unwrap();
    for i in 0..MANY {
        let name = format!("a-rather-long-file-name-for-the-listing-to-be-cut-{i:04}.txt");
        std::fs::write(sandbox.join("many").join(name), "").unwrap();
    }
}

/// Checks what a front end answered for `file_manager.list` of `many`: `structured`, the
/// listing as a value (valid JSON by construction: it was parsed), and `texts`, every text the
/// model reads (the listing as JSON text, then the note). At most [`LIST_LIMIT`] bytes in all,
/// the note last; the listing keeps every key, and whole entries from the start, and says it
/// was cut (`"truncated": true`).
pub fn check_cut_listing(structured: &Value, texts: &[&str]) {
    let bytes: usize = texts.iter().map(|text| text.len()).sum();
    assert!(bytes <= LIST_LIMIT, "{bytes} bytes of text: {texts:?}");
    let note = texts.last().expect("a text");
    assert!(
        note.starts_with("[cut: the full result was"),
        "the note comes last: {note}"
    );
    assert!(note.contains(&format!("limit of {LIST_LIMIT}")), "{note}");
    assert_eq!(structured["dir"], "many", "{structured}");
    // The listing says it is not whole: entries were cut to fit.
    assert_eq!(structured["truncated"], true, "{structured}");
    let entries = structured["entries"].as_array().expect("entries");
    assert!(
        entries.len() > 10 && entries.len() < MANY,
        "{} entries",
        entries.len()
    );
    // The last entry may be one cut to fit; every one before it is whole.
    for entry in &entries[..entries.len() - 1] {
        let name = entry["name"].as_str().unwrap();
        assert_eq!(entry["path"], format!("many/{name}"), "{entry}");
        assert_eq!(entry["kind"], "file", "{entry}");
    }
    let last = entries.last().unwrap();
    for key in ["name", "path", "kind"] {
        assert!(last[key].is_string(), "{key} in {last}");
    }
}
