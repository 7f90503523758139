//! No input makes placid panic: arbitrary bytes as any file of a project, and mutations of the
//! bundled example (deleted lines, swapped values, truncation) always come back as a model
//! plus diagnostics.

use std::path::Path;

use placid_lang::diag::Code;
use placid_lang::lower::{InventoryFormat, read_inventory_file};
use placid_lang::source::MemoryWorld;
use placid_lang::span::FileId;
use proptest::prelude::*;

/// The cluster example's files, keyed by path relative to its root.
fn example_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy-examples/cluster");
    let mut files = Vec::new();
    for dir in ["", "policy", "inventory"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_some_and(|extension| extension == "kdl") {
                let relative = if dir.is_empty() {
                    entry.file_name().to_string_lossy().into_owned()
                } else {
                    format!("{dir}/{}", entry.file_name().to_string_lossy())
                };
                files.push((relative, std::fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    files.sort();
    assert!(files.len() >= 5, "the cluster example was not found");
    files
}

fn load_with(replace: &str, text: String) -> placid_lang::Compilation {
    let mut world = MemoryWorld::new();
    for (path, original) in example_files() {
        world.insert(&path, if path == replace { text.clone() } else { original });
    }
    placid_lang::load(&world)
}

#[test]
fn the_unmodified_example_lowers_without_errors() {
    let compilation = load_with("", String::new());
    assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
    assert_eq!(compilation.model.nodes.len(), 12);
}

fn has_code(diagnostics: &placid_lang::diag::Diagnostics, code: Code) -> bool {
    diagnostics.iter().any(|diagnostic| diagnostic.code == code)
}

#[test]
fn deep_nesting_is_an_error_in_every_parse_path() {
    // 6 KB of `a {` 2000 deep overflowed the parser's stack (an abort) in every command.
    let deep = format!("{}{}", "a {".repeat(2000), "}".repeat(2000));
    assert!(has_code(&load_with("policy/tiers.kdl", deep.clone()).diagnostics, Code::NestingTooDeep));
    assert!(has_code(&load_with("inventory/nvl-a.kdl", deep.clone()).diagnostics, Code::NestingTooDeep));
    let formatted = placid_lang::format::format(FileId(0), &deep);
    assert!(formatted.is_err_and(|diagnostics| has_code(&diagnostics, Code::NestingTooDeep)));
    let (_, read) = read_inventory_file(FileId(0), &deep, InventoryFormat::Kdl);
    assert!(has_code(&read, Code::NestingTooDeep));
    // The JSON form needs no scan: its schema nests a few levels, unknown fields are refused
    // before their values are read, and serde_json stops at 128 levels anyway.
    for json in ["[".repeat(100_000), format!("{{\"nodes\": [{}", "[".repeat(100_000))] {
        let (_, read) = read_inventory_file(FileId(0), &json, InventoryFormat::Json);
        assert!(read.has_errors());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_in_any_file_never_panic(file in 0usize..64, bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let files = example_files();
        let (path, _) = &files[file % files.len()];
        let _ = load_with(path, String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn kdl_shaped_text_never_panics(text in "[a-z\"=(){}#;0-9. \n/*-]{0,300}") {
        let _ = load_with("policy/tiers.kdl", text.clone());
        let _ = load_with("placid.kdl", text);
    }

    #[test]
    fn deleting_a_line_never_panics(file in 0usize..64, line in 0usize..200) {
        let files = example_files();
        let (path, text) = &files[file % files.len()];
        let lines: Vec<&str> = text.lines().collect();
        let kept: Vec<&str> = lines.iter().enumerate().filter(|(index, _)| *index != line % lines.len().max(1)).map(|(_, line)| *line).collect();
        let _ = load_with(path, kept.join("\n"));
    }

    #[test]
    fn truncating_a_file_never_panics(file in 0usize..64, cut in 0usize..4000) {
        let files = example_files();
        let (path, text) = &files[file % files.len()];
        let mut end = cut.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let _ = load_with(path, text[..end].to_owned());
    }

    #[test]
    fn swapping_two_values_never_panics(file in 0usize..64, first in 0usize..400, second in 0usize..400) {
        let files = example_files();
        let (path, text) = &files[file % files.len()];
        let mut tokens: Vec<String> = text.split(' ').map(str::to_owned).collect();
        let count = tokens.len();
        tokens.swap(first % count, second % count);
        let _ = load_with(path, tokens.join(" "));
    }

    #[test]
    fn unit_parsers_never_panic(text in "\\PC{0,24}") {
        let _ = placid_lang::units::Duration::parse(&text);
        let _ = placid_lang::units::Bytes::parse(&text);
        let _ = placid_lang::units::Bandwidth::parse(&text);
        let _ = placid_lang::units::Percent::parse(&text);
        let _ = placid_lang::units::Money::parse(placid_lang::units::Currency::Usd, &text);
        let _ = placid_lang::name::Name::new(&text);
    }

    #[test]
    fn durations_round_trip(seconds in 0u64..10_000_000) {
        let duration = placid_lang::units::Duration { seconds };
        prop_assert_eq!(placid_lang::units::Duration::parse(&duration.to_string()), Ok(duration));
    }

    #[test]
    fn formatting_is_idempotent(file in 0usize..64) {
        let files = example_files();
        let (_, text) = &files[file % files.len()];
        let once = placid_lang::format::format(FileId(0), text).expect("example formats");
        let twice = placid_lang::format::format(FileId(0), &once).expect("formatted text formats");
        prop_assert_eq!(&once, &twice);
    }
}
