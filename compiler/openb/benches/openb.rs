//! The openb reproduction's speed bar (issue 14): the default trace, one seed, best-fit, in
//! under 100 ms. Random placement is measured beside it as the floor of the feasibility scan.
//! The trace is read from ../shared/traces; without it the benchmark says so and measures
//! nothing.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use placid_lang::source::{RelPath, Sources};
use placid_openb::Trace;
use placid_openb::metric::{self, Inflation};
use placid_openb::place::{BestFit, Placement};
use placid_openb::read::{self, TraceFile};

fn default_trace() -> Option<Trace> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/openb");
    let nodes = std::fs::read(dir.join("openb_node_list_gpu_node.csv")).ok()?;
    let pods = std::fs::read(dir.join("openb_pod_list_default.csv")).ok()?;
    let path = |name: &str| RelPath::new(name).ok();
    let (trace, _) = read::read(
        &mut Sources::new(),
        TraceFile { path: path("nodes.csv")?, bytes: &nodes },
        TraceFile { path: path("pods.csv")?, bytes: &pods },
    );
    trace
}

fn openb(c: &mut Criterion) {
    let Some(trace) = default_trace() else {
        println!("did not run: the openb trace is not in ../shared/traces/openb");
        return;
    };
    let inflation = Inflation::parse("1.3").unwrap_or(Inflation::NONE);
    c.bench_function("openb default trace, one seed, best-fit", |b| {
        b.iter(|| metric::run_seed(black_box(&trace), &mut Placement::Scored(&mut BestFit), 42, inflation))
    });
    c.bench_function("openb default trace, one seed, random", |b| {
        b.iter(|| metric::run_seed(black_box(&trace), &mut Placement::Random, 42, inflation))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = openb
}
criterion_main!(benches);
