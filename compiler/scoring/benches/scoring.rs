//! Benchmarks of Wasm batch scoring at cluster scale, reported against a baseline measured in
//! the same process: 10,000 nodes, native evaluator vs Wasm batch (with and without copying
//! rows in) vs one Wasm call per node.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use placid_scoring::{Codes, inventory_rows};
use placid_targets::wasm::Program;
use placid_targets::wasm::native::Evaluator;

#[path = "../tests/support/mod.rs"]
mod support;
use support::{example, scaled};

/// Params: gpus, comm_gbps, comm, nvlink_required, rack (interned like the rows).
fn params(codes: &mut Codes) -> Vec<f64> {
    use placid_lang::expr::{Category, Interner};
    vec![4.0, 400.0, 2.0, 1.0, codes.code(Category::Rack, "r1")]
}

fn batch(criterion: &mut Criterion) {
    let loaded = example();
    let model = scaled(&loaded.model, 10_000);
    let mut codes = Codes::default();
    let rows = inventory_rows(&model, &loaded.plugin, &mut codes);
    let params = params(&mut codes);
    let score = model.scores.iter().find(|score| score.name.as_str() == "cost-aware").unwrap_or_else(|| panic!("no score"));
    let program = Program::new(score).unwrap_or_else(|diagnostics| panic!("{diagnostics:?}"));
    let evaluator = Evaluator::new(&program);
    let mut worker = loaded.plugin.worker().unwrap_or_else(|error| panic!("{error}"));
    let stride = loaded.plugin.meta().row_stride as usize;

    // A benchmark of an error path would look fast: check first that both sides score every
    // node, bit for bit alike.
    let mut outcomes = Vec::new();
    evaluator.evaluate_batch(&params, &rows, &mut outcomes);
    let wasm = worker.score(&params, &rows).unwrap_or_else(|error| panic!("the plugin fails: {error}"));
    assert_eq!(outcomes.len(), model.nodes.len());
    assert_eq!(wasm.scores.len(), model.nodes.len());
    for (index, (native, wasm)) in outcomes.iter().zip(&wasm.scores).enumerate() {
        assert_eq!(native.score.to_bits(), wasm.to_bits(), "node {index}: native {} wasm {wasm}", native.score);
    }
    let feasible = outcomes.iter().filter(|outcome| outcome.failed == 0).count();
    println!("{} nodes scored, {feasible} feasible, native and Wasm agree", outcomes.len());

    let mut group = criterion.benchmark_group("score 10000 nodes");
    group.bench_function("native evaluator", |bench| {
        bench.iter(|| evaluator.evaluate_batch(black_box(&params), black_box(&rows), &mut outcomes))
    });
    group.bench_function("wasm batch, copying rows in and scores out", |bench| {
        bench.iter(|| worker.score(black_box(&params), black_box(&rows)).unwrap_or_default())
    });
    let staged = worker.stage(&params, &rows).unwrap_or_else(|error| panic!("{error}"));
    group.bench_function("wasm batch, rows already in memory", |bench| bench.iter(|| worker.run(black_box(&staged)).unwrap_or_default()));
    group.bench_function("wasm, one call per node", |bench| {
        bench.iter(|| {
            for index in 0..staged.count() {
                black_box(worker.run(&staged.single(index, stride)).unwrap_or_default());
            }
        })
    });
    group.finish();
}

criterion_group!(benches, batch);
criterion_main!(benches);
