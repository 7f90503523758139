//! `placid inventory merge`: the example's inventory files merge cleanly and stably; a node
//! described twice and inconsistent domains or chassis are errors, and nothing is written.

use std::path::{Path, PathBuf};
use std::process::Command;

use placid_driver::merge::{merge, read_inventories};
use placid_lang::diag::{Code, Diagnostics};
use placid_lang::source::Sources;

fn example_inventory() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster/inventory");
    placid_driver::merge::inventory_files_in(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
}

fn merged(paths: &[PathBuf]) -> (placid_lang::model::Model, Diagnostics) {
    let mut sources = Sources::new();
    let (files, mut diagnostics) = read_inventories(&mut sources, paths);
    let (model, merged) = merge(files);
    diagnostics.extend(merged);
    (model, diagnostics)
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|error| panic!("{error}"));
    path
}

fn codes(diagnostics: &Diagnostics) -> Vec<Code> {
    diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
}

const GPU_NODE: &str = "cpu harts=8\n    gpu 0 model=\"H200\" mig=\"disabled\"\n}\n";

#[test]
fn the_example_inventory_merges_and_merging_the_result_changes_nothing() {
    let (model, diagnostics) = merged(&example_inventory());
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(model.nodes.len(), 12);
    let once = placid_lang::print::inventory_kdl(&model);
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let path = write(dir.path(), "merged.kdl", &once);
    let (again, diagnostics) = merged(&[path]);
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    assert_eq!(placid_lang::print::inventory_kdl(&again), once);
    assert_eq!(again.domains.len(), model.domains.len());
}

#[test]
fn a_node_in_two_files_is_reported_with_both_places() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let first = write(dir.path(), "a.kdl", &format!("node \"n1\" arch=\"x86_64\" {{\n    {GPU_NODE}"));
    let second = write(dir.path(), "b.kdl", &format!("node \"n1\" arch=\"x86_64\" {{\n    {GPU_NODE}"));
    let (_, diagnostics) = merged(&[first, second]);
    assert_eq!(codes(&diagnostics), [Code::DuplicateInventoryNode]);
    let diagnostic = diagnostics.iter().next().unwrap_or_else(|| unreachable!());
    assert_ne!(diagnostic.primary.span.file, diagnostic.secondary[0].span.file, "points into both files");
}

#[test]
fn inconsistent_domains_and_chassis_are_errors() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let text = [
        "node \"a\" arch=\"riscv64\" chassis=\"c1\" nvlink-domain=\"nvl-a\" {\n    cpu harts=8\n    gpu 0 model=\"H200\"\n}\n",
        "node \"b\" arch=\"riscv64\" chassis=\"c1\" nvlink-domain=\"nvl-b\" {\n    cpu harts=8\n    gpu 0 model=\"H200\"\n}\n",
        "node \"c\" arch=\"riscv64\" nvlink-domain=\"nvl-a\" {\n    cpu harts=8\n    gpu 0 model=\"B200\"\n}\n",
        "node \"d\" arch=\"riscv64\" nvlink-domain=\"nvl-a\" {\n    cpu harts=8\n}\n",
    ]
    .concat();
    let path = write(dir.path(), "nodes.kdl", &text);
    let (_, diagnostics) = merged(&[path]);
    let messages: Vec<&str> = diagnostics.iter().map(|diagnostic| diagnostic.message.as_str()).collect();
    assert_eq!(codes(&diagnostics), [Code::InconsistentDomain; 3], "{messages:?}");
    assert!(messages.iter().any(|message| message.contains("chassis `c1`")), "{messages:?}");
    assert!(messages.iter().any(|message| message.contains("mixes GPU models")), "{messages:?}");
    assert!(messages.iter().any(|message| message.contains("has no GPU")), "{messages:?}");
}

#[test]
fn the_command_writes_only_clean_merges() {
    let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("{error}"));
    let out = dir.path().join("cluster.json");
    let status = Command::new(env!("CARGO_BIN_EXE_placid"))
        .args(["inventory", "merge"])
        .args(example_inventory())
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|error| panic!("{error}"));
    assert!(status.success());
    let json = std::fs::read_to_string(&out).unwrap_or_else(|error| panic!("{error}"));
    let nodes = placid_lang::lower::read_inventory_json(&json).unwrap_or_else(|error| panic!("{error:?}"));
    assert_eq!(nodes.len(), 12);

    let duplicate = write(dir.path(), "dup.kdl", &format!("node \"x86-01\" arch=\"x86_64\" {{\n    {GPU_NODE}"));
    let refused = dir.path().join("refused.kdl");
    let output = Command::new(env!("CARGO_BIN_EXE_placid"))
        .args(["inventory", "merge", "--format", "json"])
        .args(example_inventory())
        .arg(&duplicate)
        .arg("-o")
        .arg(&refused)
        .output()
        .unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stdout).contains("placid::E070"));
    assert!(!refused.exists());
}
