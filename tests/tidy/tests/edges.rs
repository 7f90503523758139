//! The crate edges of docs/architecture.md, held against `cargo metadata`: every workspace
//! crate depends on exactly the crates its row names (dev-dependencies separately), and each
//! heavy dependency is linked by exactly the crates its row names. rust-analyzer reviews a new
//! `[dependencies]` line as an architecture change; here it fails this test until the table
//! says so.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use placid_tidy::root;
use serde_json::Value;

/// A table's rows: the first cell, and the cells after it.
type Table = Vec<(String, Vec<BTreeSet<String>>)>;

/// The rows of the Markdown table in `doc` whose header starts with `header`: first cell ->
/// the other cells, each split at commas.
fn table(doc: &str, header: &str) -> Table {
    let mut rows = Table::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with(header) {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        if line.starts_with("|---") {
            continue;
        }
        let cells: Vec<BTreeSet<String>> = line
            .trim_matches('|')
            .split('|')
            .map(|cell| cell.split(',').map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned).collect())
            .collect();
        let key = cells.first().and_then(|cell| cell.iter().next()).cloned().unwrap_or_default();
        rows.push((key, cells[1..].to_vec()));
    }
    assert!(!rows.is_empty(), "no table `{header}` in docs/architecture.md");
    rows
}

struct Package {
    name: String,
    folder: String,
    normal: BTreeSet<String>,
    dev: BTreeSet<String>,
}

fn packages() -> Vec<Package> {
    let output = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--no-deps", "--offline"])
        .current_dir(root())
        .output()
        .unwrap_or_else(|error| panic!("cargo metadata: {error}"));
    assert!(output.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&output.stderr));
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("cargo metadata: {error}"));
    let root = std::fs::canonicalize(root()).unwrap_or_else(|error| panic!("{error}"));
    let list = metadata["packages"].as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|package| {
            let manifest = std::path::PathBuf::from(package["manifest_path"].as_str().unwrap_or_default());
            let folder =
                manifest.parent().and_then(|dir| dir.strip_prefix(&root).ok()).map(|dir| dir.display().to_string()).unwrap_or_default();
            let deps = |kind: Option<&str>| -> BTreeSet<String> {
                package["dependencies"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|dep| dep["kind"].as_str() == kind)
                    .filter_map(|dep| dep["name"].as_str().map(str::to_owned))
                    .collect()
            };
            Package { name: package["name"].as_str().unwrap_or_default().to_owned(), folder, normal: deps(None), dev: deps(Some("dev")) }
        })
        .collect()
}

fn architecture() -> String {
    std::fs::read_to_string(root().join("docs/architecture.md")).unwrap_or_else(|error| panic!("docs/architecture.md: {error}"))
}

#[test]
fn crate_edges_are_the_table_of_docs_architecture() {
    let rows: BTreeMap<String, Vec<BTreeSet<String>>> = table(&architecture(), "| layer | crate |")
        .into_iter()
        .map(|(_, cells)| (cells[0].iter().next().cloned().unwrap_or_default(), cells))
        .collect();
    let packages = packages();
    let workspace: BTreeSet<String> = packages.iter().map(|package| package.name.clone()).collect();
    let mut wrong = Vec::new();
    for package in &packages {
        let Some(row) = rows.get(&package.name) else {
            wrong.push(format!("{} has no row", package.name));
            continue;
        };
        let ours = |deps: &BTreeSet<String>| -> BTreeSet<String> { deps.intersection(&workspace).cloned().collect() };
        let folder = row[1].iter().next().cloned().unwrap_or_default();
        if folder != package.folder {
            wrong.push(format!("{} lives in {}, the table says {folder}", package.name, package.folder));
        }
        if ours(&package.normal) != row[2] {
            wrong.push(format!("{} depends on {:?}, the table says {:?}", package.name, ours(&package.normal), row[2]));
        }
        if ours(&package.dev) != row[3] {
            wrong.push(format!("{}'s tests use {:?}, the table says {:?}", package.name, ours(&package.dev), row[3]));
        }
    }
    for name in rows.keys().filter(|name| !workspace.contains(*name)) {
        wrong.push(format!("the table names {name}, which is no workspace crate"));
    }
    assert!(wrong.is_empty(), "docs/architecture.md's crate edges are not the workspace's:\n{}", wrong.join("\n"));
}

#[test]
fn heavy_dependencies_are_linked_where_the_table_says() {
    let rows = table(&architecture(), "| dependency | linked by |");
    let packages = packages();
    let mut wrong = Vec::new();
    for (dependency, cells) in &rows {
        let linked: BTreeSet<String> =
            packages.iter().filter(|package| package.normal.contains(dependency.as_str())).map(|package| package.name.clone()).collect();
        if linked != cells[0] {
            wrong.push(format!("{dependency} is linked by {linked:?}, the table says {:?}", cells[0]));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The parser must see an edge the table lacks: a table without placid-lang's row fails.
#[test]
fn a_missing_row_is_seen() {
    let doc = "| layer | crate | folder | depends on | tests also use |\n|---|---|---|---|---|\n| 1 | placid-engine | compiler/engine | placid-lang | |\n";
    let rows = table(doc, "| layer | crate |");
    assert_eq!(rows.len(), 1);
    assert!(rows[0].1[2].contains("placid-lang"));
}
