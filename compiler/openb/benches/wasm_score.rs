//! The openb default trace, one seed, placed by best-fit through the Wasm plugin of
//! policy-examples/openb/best-fit.kdl, against the simulator's built-in best-fit in the same
//! process. Issue 14's bar: the Wasm path within 3x of the built-in. Without ../shared/traces
//! the benchmark says so and measures nothing.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use placid_openb::metric::{self, Inflation};
use placid_openb::place::{BestFit, Placement};
use placid_openb::wasm::WasmScore;

#[path = "../tests/support/mod.rs"]
mod support;
use support::{openb_best_fit, openb_default_trace};

fn openb(c: &mut Criterion) {
    let Some(trace) = openb_default_trace() else {
        println!("did not run: the openb trace is not in ../shared/traces/openb");
        return;
    };
    let inflation = Inflation::parse("1.3").unwrap_or(Inflation::NONE);
    let loaded = openb_best_fit();
    let mut wasm = WasmScore::new(&loaded.plugin).unwrap_or_else(|error| panic!("{}", error.message));
    c.bench_function("openb default trace, one seed, best-fit built in", |b| {
        b.iter(|| metric::run_seed(black_box(&trace), &mut Placement::Scored(&mut BestFit), 42, inflation))
    });
    c.bench_function("openb default trace, one seed, best-fit through Wasm", |b| {
        b.iter(|| metric::run_seed(black_box(&trace), &mut Placement::Scored(&mut wasm), 42, inflation))
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = openb
}
criterion_main!(benches);
