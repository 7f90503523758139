//! Golden tests: every artifact of every example, byte for byte, against
//! `tests/golden/<example>/`. Run with `UPDATE_GOLDEN=1` to rewrite the expected files after a
//! deliberate change, then review the diff.

use std::collections::BTreeSet;
use std::path::Path;

use placid_tests::{build_clean, examples, workspace_root};

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

#[test]
fn every_artifact_of_every_example_matches_its_golden_file() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for name in examples() {
        let build = build_clean(&name);
        let golden = workspace_root().join("tests").join("golden").join(&name);
        if update {
            let _ = std::fs::remove_dir_all(&golden);
        }
        let mut produced = BTreeSet::new();
        for artifact in &build.artifacts {
            produced.insert(artifact.path.clone());
            let path = golden.join(&artifact.path);
            if update {
                std::fs::create_dir_all(path.parent().expect("golden files live in a directory")).expect("create golden dir");
                std::fs::write(&path, &artifact.bytes).expect("write golden file");
                continue;
            }
            match std::fs::read(&path) {
                Ok(expected) if expected == artifact.bytes => {}
                Ok(_) => failures.push(format!("{name}/{}: differs from its golden file", artifact.path)),
                Err(_) => failures.push(format!("{name}/{}: no golden file", artifact.path)),
            }
        }
        for stale in files_under(&golden).difference(&produced) {
            failures.push(format!("{name}/{stale}: golden file for an artifact that is no longer produced"));
        }
    }
    assert!(failures.is_empty(), "golden mismatches (rerun with UPDATE_GOLDEN=1 after reviewing):\n{}", failures.join("\n"));
}

#[test]
fn two_builds_of_the_same_input_are_byte_identical() {
    for name in examples() {
        let first = build_clean(&name).artifacts;
        let second = build_clean(&name).artifacts;
        assert_eq!(first, second, "example {name} builds differently twice");
        assert!(first.iter().any(|artifact| artifact.path == "manifest.json"), "example {name} has no manifest");
    }
}
