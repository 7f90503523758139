//! Every broken variant of every example fails with its expected code, and its rendered
//! diagnostics (source line, column, labels, help) match a snapshot.
//!
//! A variant is `policy-examples/<example>/broken/<E0xx-name>/`: files that replace the same
//! paths of the example. The directory name starts with the code the variant must produce.

use std::path::{Path, PathBuf};

use placid_tests::{build, copy_tree, example, examples};

fn variants(example_dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(example_dir.join("broken"))
        .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).filter(|path| path.is_dir()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn every_broken_variant_reports_its_code_at_the_expected_place() {
    let mut checked = 0;
    for name in examples() {
        let example_dir = example(&name);
        for variant in variants(&example_dir) {
            let case = variant.file_name().expect("variant dir name").to_string_lossy().into_owned();
            let expected_code = format!("placid::{}", &case[..4]);
            let project = tempfile::tempdir().expect("temp dir");
            copy_tree(&example_dir, project.path(), &["broken"]);
            copy_tree(&variant, project.path(), &[]);
            let build = build(project.path());
            let codes: Vec<String> = build.diagnostics.iter().map(|diagnostic| diagnostic.code.id()).collect();
            let Some(expected) = build.diagnostics.iter().find(|diagnostic| diagnostic.code.id() == expected_code) else {
                panic!("{name}/{case}: expected {expected_code}, got {codes:?}");
            };
            if expected.severity == placid_lang::diag::Severity::Error {
                assert!(build.artifacts.is_empty(), "{name}/{case}: a failed build must produce no artifacts");
            }
            let rendered = placid_driver::render::text(&build.sources, &build.diagnostics, false);
            insta::assert_snapshot!(format!("{name}__{case}"), rendered);
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} broken variants found");
}

#[test]
fn every_example_checks_clean() {
    for name in examples() {
        let build = build(&example(&name));
        let rendered = placid_driver::render::text(&build.sources, &build.diagnostics, false);
        assert!(!build.diagnostics.has_errors(), "example {name}:\n{rendered}");
    }
}
