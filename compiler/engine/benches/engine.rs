//! Benchmarks of the engine: every policy test of the bundled examples (the bar of
//! `placid test` is under 50 ms for all of them), synthetic replays on the synthetic
//! cluster (`placid_engine::synthetic`) at growing job counts, to show how the run grows, and
//! saturated replays on the cluster example, whose queue never drains while jobs arrive
//! (docs/limits.md).

use criterion::{Criterion, criterion_group, criterion_main};
use placid_engine::{Job, Neutral, policy_test, simulate, synthetic};
use placid_lang::model::{Model, TeamId};
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

/// `count` jobs on the cluster example, one a second, of 1 to 4 GPUs for an hour each, from
/// every team at each tier it may use but the reserved one, in no pool: the 48 GPUs run about
/// 19 of them at once, so the queue grows by nearly one job a second and every pass looks at
/// its deepest 500 jobs. This is the saturated trace of docs/limits.md.
fn saturated_jobs(model: &Model, count: usize) -> Vec<Job> {
    let mut rng = synthetic::Rng::new(7);
    (0..count)
        .map(|index| {
            let team = TeamId::from_index(rng.below(model.teams.len() as u64) as usize);
            let tiers: Vec<_> =
                model.team(team).tiers.iter().map(|tier| tier.value).filter(|tier| model.tier(*tier).reservations.is_empty()).collect();
            let tier = tiers[rng.below(tiers.len() as u64) as usize];
            let mut job = Job::new(team, tier, 1 + rng.below(4) as u32);
            job.submit = index as u64;
            job
        })
        .collect()
}

fn saturated(c: &mut Criterion) {
    let model = example("cluster");
    let mut group = c.benchmark_group("saturated");
    group.sample_size(10);
    // 50,000 jobs take over a minute a run, too long for ten samples on the shared machine.
    let trace = saturated_jobs(&model, 10_000);
    group.bench_function("10000 jobs on the cluster example", |b| b.iter(|| black_box(simulate(&model, Neutral, trace.clone()).len())));
    group.finish();
}

criterion_group!(benches, policy_tests, replays, saturated);
criterion_main!(benches);
