//! Benchmarks of the engine: every policy test of the bundled examples (the bar of
//! `placid test` is under 50 ms for all of them), and synthetic replays on the synthetic
//! cluster (`placid_engine::synthetic`) at growing job counts, to show how the run grows.

use criterion::{Criterion, criterion_group, criterion_main};
use placid_engine::{Neutral, policy_test, simulate, synthetic};
use placid_lang::model::Model;
use std::hint::black_box;

#[path = "../tests/support/mod.rs"]
mod support;
use support::{example, load};

fn synthetic_model(nodes: usize) -> Model {
    load(&synthetic::inventory(nodes), synthetic::POLICY)
}

fn policy_tests(c: &mut Criterion) {
    let models: Vec<Model> = ["cluster", "vit-sweep", "migration"].into_iter().map(example).collect();
    let count: usize = models.iter().map(|model| model.tests.len()).sum();
    assert!(count >= 20, "only {count} example tests found");
    c.bench_function(&format!("placid test: the {count} tests of the examples"), |b| {
        b.iter(|| {
            for model in &models {
                for test in &model.tests {
                    black_box(policy_test::run(model, test, Neutral));
                }
            }
        })
    });
}

fn replays(c: &mut Criterion) {
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    // The last is the bar of issue 14 (under 30 s); ten samples of it take about five
    // minutes: `cargo run --release -p placid-engine --example scale -- 10000 1000000` runs it
    // once.
    for (nodes, jobs) in [(1_000, 10_000), (1_000, 100_000), (10_000, 100_000), (10_000, 1_000_000)] {
        let model = synthetic_model(nodes);
        // Arrivals about as fast as the cluster drains them, so the queue stays busy.
        let gap = (2 * 3600 * 4 / (nodes as u64 * synthetic::GPUS_PER_NODE as u64 / 4)).max(1);
        let trace = synthetic::jobs(&model, jobs, gap, 42);
        group.bench_function(format!("{jobs} jobs on {nodes} nodes"), |b| {
            b.iter(|| black_box(simulate(&model, Neutral, trace.clone()).len()))
        });
    }
    group.finish();
}

criterion_group!(benches, policy_tests, replays);
criterion_main!(benches);
