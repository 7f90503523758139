//! `cargo bench -p placid-tests --bench k8s_build`: the Kubernetes figures of the peer
//! benchmark (`bench/peers.py`, which runs Pkl and jrsonnet beside placid's binary) in
//! process, with criterion: at 100 teams × 64 NVLink domains (6,400 flavor entries) and 500 ×
//! 128, the `placid check` compile (every target emitted, nothing hashed), the `--stdout`
//! stream and `build -o` (compile, manifest, the tree written to disk under the target
//! directory, not tmpfs). The shapes come from `bench/shape.py`, the generator the peers' programs
//! come from, so both sides measure the same objects; without python3 the benchmark says so
//! and measures nothing. Also the cluster example with all its targets (the bar: under 10 ms).

use std::path::{Path, PathBuf};
use std::process::Command;

use criterion::{Criterion, criterion_group, criterion_main};
use placid_driver::build::{Selection, Stage, compile, compile_to};
use placid_driver::output::write_atomically;
use placid_driver::world::FsWorld;
use placid_targets::TargetKind;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where the trees are written: beside the build, on the same disk as a user's output.
fn scratch() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| repo_root().join("target"), PathBuf::from);
    target.join("k8s-build-bench")
}

/// The placid project of a shape, from `bench/shape.py`; `None` without python3.
fn shape(teams: usize, domains: usize) -> Option<PathBuf> {
    let dir = scratch().join(format!("{teams}x{domains}"));
    let status =
        Command::new("python3").arg(repo_root().join("bench/shape.py")).args([teams.to_string(), domains.to_string()]).arg(&dir).status();
    match status {
        Ok(status) if status.success() => Some(dir.join("placid")),
        _ => {
            println!("python3 bench/shape.py did not run: the {teams}x{domains} shape is not measured");
            None
        }
    }
}

fn kubernetes() -> Selection {
    Selection { only: vec![TargetKind::Kubernetes] }
}

fn shapes(c: &mut Criterion) {
    for (teams, domains) in [(100, 64), (500, 128)] {
        let Some(project) = shape(teams, domains) else { continue };
        let world = FsWorld::new(&project).expect("open the shape's project");
        let clean = compile(&world, &kubernetes());
        assert!(!clean.diagnostics.has_errors(), "the {teams}x{domains} shape has errors");
        let queues = clean.artifacts.iter().filter(|artifact| artifact.path.starts_with("kubernetes/kueue/clusterqueue.")).count();
        assert_eq!(queues, teams, "one ClusterQueue per team");
        let mut group = c.benchmark_group(format!("kubernetes {teams}x{domains}"));
        group.sample_size(10);
        group.bench_function("check (every target, no manifest)", |b| {
            b.iter(|| compile_to(&world, &Selection::default(), Stage::Validated))
        });
        group.bench_function("--stdout (checked, one stream)", |b| {
            b.iter(|| {
                let build = compile_to(&world, &kubernetes(), Stage::Checked).clean().ok().expect("clean");
                placid_targets::k8s::stream(&build.model).expect("stream")
            })
        });
        let out = scratch().join(format!("{teams}x{domains}-out"));
        group.bench_function("build -o (compile, manifest, write to disk)", |b| {
            b.iter(|| {
                let build = compile(&world, &kubernetes());
                write_atomically(&out, &build.artifacts).expect("write the tree");
            })
        });
        group.finish();
    }
}

fn cluster_example(c: &mut Criterion) {
    let world = FsWorld::new(&repo_root().join("policy-examples/cluster")).expect("open the cluster example");
    let out = scratch().join("cluster-out");
    c.bench_function("cluster example, all targets, build -o", |b| {
        b.iter(|| {
            let build = compile(&world, &Selection::default());
            write_atomically(&out, &build.artifacts).expect("write the tree");
        })
    });
}

criterion_group!(benches, cluster_example, shapes);
criterion_main!(benches);
