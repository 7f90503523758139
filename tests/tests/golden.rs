//! Golden tests: every artifact of every example, byte for byte, against
//! `tests/golden/<example>/`. Run with `INSTA_UPDATE=always` to rewrite the expected files after a
//! deliberate change, then review the diff.

use placid_tests::{build_clean, examples, golden, workspace_root};

#[test]
fn every_artifact_of_every_example_matches_its_golden_file() {
    let mut failures = Vec::new();
    for name in examples() {
        let build = build_clean(&name);
        let files = build.artifacts.iter().map(|artifact| (artifact.path.as_str(), artifact.bytes.as_slice()));
        failures.extend(golden::compare(&workspace_root().join("tests").join("golden").join(&name), &name, files));
    }
    assert!(failures.is_empty(), "golden mismatches (rerun with INSTA_UPDATE=always after reviewing):\n{}", failures.join("\n"));
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
