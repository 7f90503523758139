//! No policy makes `placid build` panic, however odd its numbers: the bundled examples with
//! one number, or every number of a file at once, replaced by an extreme (0, 1, the edges of
//! u32, i64 and u64, negatives, huge decimals), two values swapped or a line deleted go
//! through loading, every checker pass and every target, and come back as diagnostics or a
//! complete build. Tests build with overflow checks (the root Cargo.toml), so a sum that
//! wraps panics here. `lang/tests/no_panic.rs` covers loading alone with arbitrary bytes;
//! this covers the arithmetic of the checker and the emitters.

use placid_driver::build::{Selection, compile};
use placid_lang::source::MemoryWorld;
use placid_tests::{example, examples};
use proptest::prelude::*;

/// Every `.kdl` and `.json` file of example `name` (broken variants left out), by path
/// relative to its root.
fn files(name: &str) -> Vec<(String, String)> {
    let root = example(name);
    let mut files = Vec::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display())).filter_map(Result::ok)
        {
            let path = entry.path();
            if path.is_dir() {
                if entry.file_name() != "broken" {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|extension| extension == "kdl" || extension == "json")
                && let Ok(relative) = path.strip_prefix(&root)
            {
                let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
                files.push((relative.to_string_lossy().replace('\\', "/"), text));
            }
        }
    }
    files.sort();
    files
}

/// Builds example `name` with `path` replaced by `text`.
fn build_with(name: &str, path: &str, text: &str) {
    let mut world = MemoryWorld::new();
    for (relative, original) in files(name) {
        world.insert(&relative, if relative == path { text.to_owned() } else { original });
    }
    let build = compile(&world, &Selection { only: Vec::new() });
    if !build.diagnostics.has_errors() {
        assert!(build.artifacts.iter().any(|artifact| artifact.path == "manifest.json"), "a clean build without a manifest");
    }
}

/// The byte ranges of the runs of ASCII digits in `text`.
fn numbers(text: &str) -> Vec<(usize, usize)> {
    let mut runs = Vec::new();
    let mut start = None;
    for (index, byte) in text.bytes().chain(std::iter::once(b' ')).enumerate() {
        match (byte.is_ascii_digit(), start) {
            (true, None) => start = Some(index),
            (false, Some(begin)) => {
                runs.push((begin, index));
                start = None;
            }
            _ => {}
        }
    }
    runs
}

const EXTREMES: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "63",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "1000000000000000",
    "99999999999999999.99",
    "0.000000000000000000001",
    "-1",
];

/// `text` with every run of digits replaced by `extreme`: every numeric field of a file at
/// its limit together, which is what makes sums overflow (two budgets, many reservations).
fn every_number_replaced(text: &str, extreme: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end) in numbers(text) {
        out.push_str(&text[last..start]);
        out.push_str(extreme);
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn an_extreme_number_anywhere_never_panics(which_example in 0usize..8, which_file in 0usize..16, which_number in 0usize..2000, extreme in 0usize..EXTREMES.len()) {
        let names = examples();
        let name = &names[which_example % names.len()];
        let files = files(name);
        let (path, text) = &files[which_file % files.len()];
        let runs = numbers(text);
        prop_assume!(!runs.is_empty());
        let (start, end) = runs[which_number % runs.len()];
        let mutated = format!("{}{}{}", &text[..start], EXTREMES[extreme], &text[end..]);
        build_with(name, path, &mutated);
    }

    #[test]
    fn swapping_two_values_never_panics(which_example in 0usize..8, which_file in 0usize..16, first in 0usize..2000, second in 0usize..2000) {
        let names = examples();
        let name = &names[which_example % names.len()];
        let files = files(name);
        let (path, text) = &files[which_file % files.len()];
        let mut tokens: Vec<&str> = text.split(' ').collect();
        let count = tokens.len();
        tokens.swap(first % count, second % count);
        build_with(name, path, &tokens.join(" "));
    }

    #[test]
    fn deleting_a_line_never_panics(which_example in 0usize..8, which_file in 0usize..16, line in 0usize..2000) {
        let names = examples();
        let name = &names[which_example % names.len()];
        let files = files(name);
        let (path, text) = &files[which_file % files.len()];
        let lines: Vec<&str> = text.lines().collect();
        let skip = line % lines.len().max(1);
        let kept: Vec<&str> = lines.iter().enumerate().filter(|(index, _)| *index != skip).map(|(_, line)| *line).collect();
        build_with(name, path, &kept.join("\n"));
    }
}

#[test]
fn every_number_of_a_file_at_an_extreme_never_panics() {
    for name in examples() {
        for (path, text) in files(&name) {
            for extreme in EXTREMES {
                build_with(&name, &path, &every_number_replaced(&text, extreme));
            }
        }
    }
}

#[test]
fn every_unmodified_example_builds_clean_in_this_harness() {
    // Without this, a harness that stopped every build at loading would pass the properties.
    for name in examples() {
        let mut world = MemoryWorld::new();
        for (relative, text) in files(&name) {
            world.insert(&relative, text);
        }
        let build = compile(&world, &Selection { only: Vec::new() });
        assert!(!build.diagnostics.has_errors(), "{name} does not build from memory: {:?}", build.diagnostics);
        assert!(build.artifacts.len() > 10, "{name} emitted only {} files", build.artifacts.len());
    }
}

#[test]
fn the_number_finder_finds_every_run() {
    assert_eq!(numbers("gpus=16 share 40\nx"), [(5, 7), (14, 16)]);
    assert_eq!(numbers("12"), [(0, 2)]);
    assert_eq!(numbers("none"), []);
    assert_eq!(every_number_replaced("gpus=16 share 4", "0"), "gpus=0 share 0");
}
