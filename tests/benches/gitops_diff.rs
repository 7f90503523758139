//! `cargo bench -p placid-tests --bench gitops_diff`: `placid diff` between two commits of the
//! synthetic 10,000-node, 200-team project against one `placid build` of the same project, in
//! the same process. A diff reads both revisions from git objects, compiles each and compares
//! them, so about 2x a build is the floor; the bar is 2.2x. Then the same with a head
//! commit adding 20,000 one-line policy files, where a diff once inflated a directory's whole
//! tree for every file it read (quadratic: over 60 s).

use std::path::Path;
use std::time::Instant;

use placid_driver::build::{Selection, compile};
use placid_driver::world::FsWorld;
use placid_gitops::{DiffRequest, Revision, compare, diff};
use placid_lang::lower::InventoryFormat;
use placid_tests::git::Repo;
use placid_tests::synthetic::{Size, median, write_project};

const ROUNDS: usize = 5;
/// One-line policy files the second measurement's head commit adds.
const MANY_FILES: usize = 20_000;

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{} lacks {from}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).expect("write");
}

fn main() {
    if std::env::args().any(|arg| arg == "--list") {
        return;
    }
    let temp = tempfile::tempdir().expect("temp dir");
    let root = temp.path();
    let repo = Repo::init(root);
    let size = Size { nodes: 10_000, teams: 200, plans: 50 };
    write_project(root, size, InventoryFormat::Json).expect("write synthetic project");
    repo.commit_all("base");
    // A realistic change: one team's share and one node moving to a chassis of its own (a
    // node moving NVLink domain would take GPUs from its pool's plans, which the checker
    // refuses).
    edit(&root.join("policy/policy.kdl"), "team \"team-000\" { share 10", "team \"team-000\" { share 30");
    edit(&root.join("inventory/nodes.json"), "\"c0000\"", "\"c9999\"");
    repo.commit_all("head");

    let world = FsWorld::new(root).expect("open project");
    let selection = Selection { only: Vec::new() };
    let request = DiffRequest {
        dir: root.to_path_buf(),
        base: Revision::Commit("HEAD~1".into()),
        head: Revision::Commit("HEAD".into()),
        trace: None,
    };
    let report = diff(&request).expect("diff");
    assert!(report.head.compiled() && report.base.compiled(), "synthetic revisions must compile: {:?}", report.head.diagnostics);
    let changed = report.model.as_ref().map_or(0, |model| model.elements.len());

    let mut builds = Vec::new();
    let mut diffs = Vec::new();
    let mut compares = Vec::new();
    for _ in 0..ROUNDS {
        let start = Instant::now();
        let built = compile(&world, &selection);
        builds.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(diff(&request).expect("diff"));
        diffs.push(start.elapsed());
        // The comparison alone, of two builds already made: what the diff adds to reading.
        let start = Instant::now();
        std::hint::black_box(compare("base", &built, "head", &built));
        compares.push(start.elapsed());
    }
    let (build, diff_time, compare_time) = (median(builds), median(diffs), median(compares));
    println!("synthetic project: {} nodes, {} teams, {} plans; {changed} changed elements", size.nodes, size.teams, size.plans);
    println!("build (working tree), median of {ROUNDS}: {:>8.1} ms", build.as_secs_f64() * 1e3);
    println!("diff (two commits),   median of {ROUNDS}: {:>8.1} ms", diff_time.as_secs_f64() * 1e3);
    println!("compare alone,        median of {ROUNDS}: {:>8.1} ms", compare_time.as_secs_f64() * 1e3);
    println!("ratio diff/build: {:.2} (goal <= 2.20)", diff_time.as_secs_f64() / build.as_secs_f64());

    for file in 0..MANY_FILES {
        std::fs::write(root.join(format!("policy/note-{file:05}.kdl")), format!("// note {file}\n")).expect("write");
    }
    repo.commit_all("many files");
    let world = FsWorld::new(root).expect("open project");
    let (mut builds, mut diffs) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        let start = Instant::now();
        std::hint::black_box(compile(&world, &selection));
        builds.push(start.elapsed());
        let start = Instant::now();
        std::hint::black_box(diff(&request).expect("diff"));
        diffs.push(start.elapsed());
    }
    let (build, diff_time) = (median(builds), median(diffs));
    println!("with {MANY_FILES} more policy files in the head commit:");
    println!("build (working tree), median of {ROUNDS}: {:>8.1} ms", build.as_secs_f64() * 1e3);
    println!("diff (two commits),   median of {ROUNDS}: {:>8.1} ms", diff_time.as_secs_f64() * 1e3);
    println!("ratio diff/build: {:.2}", diff_time.as_secs_f64() / build.as_secs_f64());
}
