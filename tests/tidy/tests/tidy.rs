//! The hygiene the code review relies on, enforced: every Rust file opens with a `//!` header
//! saying what it holds; library code has no `unwrap`, `expect` or `dbg!` (a panic there is a
//! crash of `placid` on some input); and only the checker makes a `Checked` model.

use placid_tidy::{library_code, root, rust_files};

fn read(path: &std::path::Path) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn every_rust_file_opens_with_a_module_header() {
    let missing: Vec<_> = rust_files()
        .into_iter()
        .filter(|path| !read(path).lines().find(|line| !line.trim().is_empty()).is_some_and(|line| line.starts_with("//!")))
        .collect();
    assert!(missing.is_empty(), "files without a `//!` header saying what they hold: {missing:#?}");
}

#[test]
fn library_code_never_unwraps() {
    let mut found = Vec::new();
    for path in rust_files() {
        let text = read(&path);
        for (number, line) in library_code(&path, &text).lines().enumerate() {
            let code = line.split("//").next().unwrap_or_default();
            if [".unwrap()", ".expect(\"", "dbg!("].iter().any(|needle| code.contains(needle)) {
                found.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "unwrap, expect or dbg! in library code (return a diagnostic instead):\n{}", found.join("\n"));
}

#[test]
fn only_the_checker_makes_a_checked_model() {
    let makers: Vec<_> = rust_files()
        .into_iter()
        .filter(|path| ["compiler/check/src", "lang/src/checked.rs", "tests/tidy"].iter().all(|allowed| !path.starts_with(allowed)))
        .filter(|path| read(path).contains("Checked::from_checker("))
        .collect();
    assert!(makers.is_empty(), "`Checked::from_checker` is the checker's alone: {makers:#?}");
}

/// The rules above must be able to fail: each one, run on a bad sample, finds it.
#[test]
fn the_rules_catch_a_bad_sample() {
    let sample = "fn f() { x.unwrap(); self.expect(y); }\n#[cfg(test)]\nmod tests { fn g() { y.unwrap(); } }\n";
    let library = library_code(std::path::Path::new("lang/src/x.rs"), sample);
    assert!(library.contains(".unwrap()") && !library.contains("y.unwrap"));
    assert_eq!(library_code(std::path::Path::new("lang/tests/x.rs"), sample), "");
}

/// The children of every module refer to each other without a circle, in every crate: a
/// folder's files can then be read in one order, and a shared type lives in the module that
/// owns it. References to the parent itself (`super::Type` from `mod.rs`) are not edges.
#[test]
fn no_module_refers_to_its_siblings_in_a_circle() {
    use std::collections::BTreeMap;

    use placid_tidy::modules::{circle, module_of, sibling_edges};

    let mut crates: BTreeMap<String, BTreeMap<Vec<String>, String>> = BTreeMap::new();
    for path in rust_files() {
        let text = path.to_string_lossy().into_owned();
        let Some((krate, inside)) = text.split_once("/src/") else { continue };
        if krate.starts_with("fuzz") {
            continue;
        }
        let code = read(&path);
        let library = library_code(&path, &code).to_owned();
        crates.entry(krate.to_owned()).or_default().entry(module_of(std::path::Path::new(inside))).or_default().push_str(&library);
    }
    let mut circles = Vec::new();
    for (krate, files) in &crates {
        for (parent, edges) in sibling_edges(files) {
            if let Some(found) = circle(&edges) {
                circles.push(format!("{krate}: in `{}`: {}", parent.join("::"), found.join(" -> ")));
            }
        }
    }
    assert!(circles.is_empty(), "modules that refer to each other in a circle:\n{}", circles.join("\n"));
}

#[test]
fn the_module_graph_sees_a_circle() {
    use std::collections::BTreeMap;

    use placid_tidy::modules::{circle, sibling_edges};

    let files: BTreeMap<Vec<String>, String> = [
        (vec![], "mod a; mod b;".to_owned()),
        (vec!["a".to_owned()], "use super::b::{Thing, other::Deep};".to_owned()),
        (vec!["b".to_owned()], "fn f() { crate::a::g(); }".to_owned()),
        (vec!["b".to_owned(), "other".to_owned()], "use super::super::Root;".to_owned()),
    ]
    .into_iter()
    .collect();
    let edges = sibling_edges(&files);
    let root = edges.get(&Vec::new()).cloned().unwrap_or_default();
    assert_eq!(circle(&root).map(|found| found.len()), Some(3), "{root:?}");
}

/// Every code of the registry that is not retired is raised by some library code outside the
/// registry, and some test looks for it (by `Code::Variant` in test code, or by its `E0NN` in a
/// test's file, a snapshot's name or a broken example's folder): a documented code that
/// nothing raises promises a check that does not exist.
#[test]
fn every_registry_code_is_raised_and_tested() {
    use placid_tidy::registry::entries;
    let registry = "lang/src/codes.rs";
    let codes = entries(&read(std::path::Path::new(registry)));
    assert!(codes.len() > 100, "the registry reader found only {} codes in {registry}", codes.len());
    let mut library = String::new();
    let mut tests = String::new();
    for path in rust_files().into_iter().filter(|path| !path.ends_with(registry) && !path.starts_with("tests/tidy")) {
        let text = read(&path);
        let code = library_code(&path, &text);
        library.push_str(code);
        tests.push_str(&text[code.len()..]);
    }
    for dir in
        ["tests/tests/snapshots", "policy-examples/cluster/broken", "policy-examples/migration/broken", "policy-examples/vit-sweep/broken"]
    {
        for entry in std::fs::read_dir(root().join(dir)).into_iter().flatten().flatten() {
            tests.push_str(&entry.file_name().to_string_lossy());
            tests.push('\n');
        }
    }
    // Policy tests name a rejection by its code's name (`expect "rejected" reason="exceeds-budget"`).
    for path in placid_tidy::files_with_extension(&["policy-examples", "tests/conformance"], "kdl") {
        tests.push_str(&read(&path));
    }
    let mut unraised = Vec::new();
    let mut untested = Vec::new();
    for code in codes.iter().filter(|code| !code.retired) {
        let reference = format!("Code::{}", code.variant);
        let mentions =
            |text: &str| text.match_indices(&reference).any(|(at, _)| !text[at + reference.len()..].starts_with(char::is_alphanumeric));
        if !mentions(&library) {
            unraised.push(format!("{} ({})", code.id(), code.variant));
        }
        if !mentions(&tests) && !tests.contains(&code.id()) && !tests.contains(&format!("\"{}\"", code.name)) {
            untested.push(format!("{} ({})", code.id(), code.variant));
        }
    }
    assert!(unraised.is_empty(), "codes in the registry that no library code raises (raise them, or retire them): {unraised:?}");
    assert!(untested.is_empty(), "codes that no test looks for: {untested:?}");
}

/// Every relative link in the Markdown docs names a file of the repository, and an anchor names
/// a heading of the file it points into.
#[test]
fn docs_links_resolve() {
    use placid_tidy::links::{anchors, is_external, targets};
    let root = root();
    let mut broken = Vec::new();
    for path in placid_tidy::markdown_files() {
        let text = read(&path);
        for target in targets(&text).into_iter().filter(|target| !is_external(target)) {
            let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let linked = if file.is_empty() { path.clone() } else { path.parent().unwrap_or(&path).join(file) };
            let Ok(resolved) = root.join(&linked).canonicalize() else {
                broken.push(format!("{}: {target}: no such file", path.display()));
                continue;
            };
            if !anchor.is_empty() && resolved.extension().is_some_and(|ext| ext == "md") {
                let heading_text = std::fs::read_to_string(&resolved).unwrap_or_default();
                if !anchors(&heading_text).iter().any(|known| known == anchor) {
                    broken.push(format!("{}: {target}: no heading with that anchor", path.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "links in the docs that lead nowhere:\n{}", broken.join("\n"));
}

#[test]
fn the_docs_rules_read_links_codes_and_anchors() {
    use placid_tidy::links::{anchors, targets};
    let markdown =
        "# Adding a setting\n\nSee [the tier](tier.md#tiers-and-teams) and `[not](code)`.\n```\n[no](fenced)\n```\n## Adding a setting\n";
    assert_eq!(targets(markdown), vec!["tier.md#tiers-and-teams"]);
    assert_eq!(anchors(markdown), vec!["adding-a-setting", "adding-a-setting-1"]);
    let registry = "    DomainTooSmall = 23, \"domain-too-small\", \"a stage fits nowhere\",\n    Old = 86, \"old\", \"retired: gone\",\n";
    let entries = placid_tidy::registry::entries(registry);
    assert_eq!(
        entries.iter().map(|entry| (entry.id(), entry.retired)).collect::<Vec<_>>(),
        vec![("E023".to_owned(), false), ("E086".to_owned(), true)]
    );
}
