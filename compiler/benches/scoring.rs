//! Benchmarks of the scoring hot paths at cluster scale, each reported against a baseline
//! measured in the same process:
//! - 10,000 nodes: native evaluator vs Wasm batch (with and without copying rows in) vs one
//!   Wasm call per node;
//! - the extender's prioritize latency for 5,000 nodes (`nodeCacheCapable`), over HTTP on
//!   loopback with a keep-alive connection, with p50/p99 printed.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use placid_compiler::cli::Output;
use placid_compiler::extender::client::Client;
use placid_compiler::extender::{Extender, Settings, router};
use placid_compiler::render::Format;
use placid_compiler::scoring::{self, Codes, Loaded, inventory_rows};
use placid_lang::model::Model;
use placid_lang::name::Name;
use placid_targets::wasm::Program;
use placid_targets::wasm::native::Evaluator;

fn example() -> Loaded {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../policy-examples/cluster");
    scoring::load(&mut Output::stdio(), &dir, Some("cost-aware"), Format::Text)
        .unwrap_or_else(|exit| panic!("cannot load the example: {exit:?}"))
}

/// The example model with its nodes repeated to `count` (names `n00000`...).
fn scaled(model: &Model, count: usize) -> Model {
    let mut scaled = model.clone();
    scaled.nodes = (0..count)
        .map(|index| {
            let mut node = model.nodes[index % model.nodes.len()].clone();
            node.name = Name::new(&format!("n{index:05}")).unwrap_or_else(|reason| panic!("{reason}"));
            node
        })
        .collect();
    scaled
}

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

fn extender_latency(criterion: &mut Criterion) {
    let loaded = example();
    let model = scaled(&loaded.model, 5_000);
    let settings = Settings::DEFAULT;
    let extender = Arc::new(Extender::new(loaded.plugin, &model, settings));
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap_or_else(|error| panic!("{error}"));
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap_or_else(|error| panic!("{error}"));
    let address = listener.local_addr().unwrap_or_else(|error| panic!("{error}"));
    runtime.spawn(async move { axum::serve(listener, router(extender, settings)).await });
    let names: Vec<String> = model.nodes.iter().map(|node| node.name.to_string()).collect();
    let body = serde_json::json!({
        "Pod": {"metadata": {"name": "p", "labels": {"placid.dev/comm": "high", "placid.dev/comm-gbps": "400", "placid.dev/rack": "r1", "placid.dev/nvlink-required": "true"}},
                "spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": "4"}}}]}},
        "Nodes": null,
        "NodeNames": names,
    })
    .to_string();
    let mut client = Client::connect(address).unwrap_or_else(|error| panic!("{error}"));
    let mut latencies: Vec<Duration> = (0..2_000)
        .map(|_| {
            let started = Instant::now();
            let reply = client.post("/prioritize", body.as_bytes()).unwrap_or_else(|error| panic!("{error}"));
            assert_eq!(reply.status, 200);
            started.elapsed()
        })
        .collect();
    latencies.sort();
    let percentile = |p: usize| latencies[(latencies.len() * p / 100).min(latencies.len() - 1)];
    println!(
        "extender prioritize, 5000 nodes, 2000 requests: p50 {:?}, p99 {:?}, max {:?}",
        percentile(50),
        percentile(99),
        latencies[latencies.len() - 1]
    );
    let mut group = criterion.benchmark_group("extender");
    group.bench_function("prioritize 5000 nodes over HTTP", |bench| {
        bench.iter(|| client.post("/prioritize", body.as_bytes()).map(|reply| reply.status).unwrap_or(0))
    });
    group.finish();
}

criterion_group!(benches, batch, extender_latency);
criterion_main!(benches);
