//! Golden directories: generated files compared byte for byte with the files under a
//! directory, or written there under the project's one update switch, insta's
//! `INSTA_UPDATE=always` (then review the diff; docs/contributing.md).

use std::collections::BTreeSet;
use std::path::Path;

/// Compares `files` (path relative to `golden`, content) with the directory `golden`, or
/// rewrites the directory under `INSTA_UPDATE=always`. Returns one line per mismatch, each starting
/// with `label`: a differing, missing or stale file.
pub fn compare<'a>(golden: &Path, label: &str, files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<String> {
    let update = updating();
    if update {
        let _ = std::fs::remove_dir_all(golden);
    }
    let mut failures = Vec::new();
    let mut produced = BTreeSet::new();
    for (relative, bytes) in files {
        produced.insert(relative.to_owned());
        let path = golden.join(relative);
        if update {
            let parent = path.parent().unwrap_or(golden);
            std::fs::create_dir_all(parent).unwrap_or_else(|error| panic!("cannot create {}: {error}", parent.display()));
            std::fs::write(&path, bytes).unwrap_or_else(|error| panic!("cannot write {}: {error}", path.display()));
            continue;
        }
        match std::fs::read(&path) {
            Ok(expected) if expected == bytes => {}
            Ok(_) => failures.push(format!("{label}/{relative}: differs from its golden file")),
            Err(_) => failures.push(format!("{label}/{relative}: no golden file")),
        }
    }
    for stale in files_under(golden).difference(&produced) {
        failures.push(format!("{label}/{stale}: golden file for an artifact that is no longer produced"));
    }
    failures
}

/// Whether this run rewrites golden files: the same switch that makes insta accept its
/// snapshots, so one variable updates every kind of golden output at once.
pub fn updating() -> bool {
    std::env::var("INSTA_UPDATE").is_ok_and(|value| value == "always")
}

fn files_under(root: &Path) -> BTreeSet<String> {
    let mut files = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(relative) = path.strip_prefix(root) {
                files.insert(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    files
}
