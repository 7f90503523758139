//! Every broken variant of every example fails with its expected code, and its rendered
//! diagnostics (source line, column, labels, help) match a snapshot. Every clean example
//! checks without errors, and warns exactly where its README's table of warnings says why.
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

/// The warnings an example's README documents: the rows `| `E155` | `policy/plans.kdl:4` | ...`
/// of its table, as code and place.
fn documented_warnings(example_dir: &Path) -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(example_dir.join("README.md")).unwrap_or_default();
    let mut found: Vec<(String, String)> = readme
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(|cell| cell.trim().trim_matches('`')).collect();
            // A row: empty, code, place, reason, empty.
            (cells.len() >= 4 && cells[1].starts_with('E') && cells[1][1..].chars().all(|c| c.is_ascii_digit()) && cells[1].len() == 4)
                .then(|| (cells[1].to_owned(), cells[2].to_owned()))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn every_example_warns_exactly_as_its_readme_explains() {
    for name in examples() {
        let example_dir = example(&name);
        let world = placid_driver::world::FsWorld::new(&example_dir).expect("example dir");
        let build =
            placid_driver::build::compile_to(&world, &placid_driver::build::Selection::default(), placid_driver::build::Stage::Validated);
        let mut warned: Vec<(String, String)> = build
            .diagnostics
            .iter()
            .map(|diagnostic| {
                let span = diagnostic.primary.span;
                let path = build.sources.get(span.file).map(|file| file.path.to_string()).unwrap_or_default();
                let line = build.sources.line_col(span.file, span.start).map_or(0, |(line, _)| line);
                (diagnostic.code.id().trim_start_matches("placid::").to_owned(), format!("{path}:{line}"))
            })
            .collect();
        warned.sort();
        assert_eq!(
            warned,
            documented_warnings(&example_dir),
            "example {name}: the warnings of `placid check` and its README's table differ"
        );
    }
}
