//! Best-fit written as a placid score (policy-examples/openb/best-fit.kdl) and run through its
//! Wasm plugin chooses exactly as the simulator's built-in best-fit: on random small clusters
//! pod by pod, and on the openb default trace (read from ../shared/traces, which fails loudly
//! under CI=true when missing and otherwise says that it did not run).

use placid_openb::metric::{self, Inflation, SeedRun, Seeds};
use placid_openb::place::{BestFit, Placement};
use placid_openb::wasm::WasmScore;
use placid_openb::{GpuSpec, Milli, Node, Pod, Trace};
use placid_scoring::Loaded;
use proptest::prelude::*;

mod support;
use support::{openb_best_fit, openb_default_trace};

/// Each seed's pods, failed pods and allocation at the marks.
fn outcome_figures(trace: &Trace, placement: &mut Placement<'_>, seeds: &Seeds) -> Vec<SeedRun> {
    metric::run(trace, placement, seeds, Inflation::parse("1.3").expect("inflation")).expect("the run").runs
}

/// Loaded once: compiling the module for every case would dominate the property test.
static PLUGIN: std::sync::LazyLock<Loaded> = std::sync::LazyLock::new(openb_best_fit);

#[test]
fn wasm_best_fit_gives_the_built_in_figures_on_the_default_trace() {
    let Some(trace) = openb_default_trace() else {
        println!("did not run: the openb trace is not in ../shared/traces/openb");
        return;
    };
    let loaded = openb_best_fit();
    let mut wasm = WasmScore::new(&loaded.plugin).expect("a worker");
    // Two seeds keep the unoptimised test build quick; the benchmark runs the Wasm path too.
    let seeds = Seeds::parse("42-43").expect("seeds");
    let built_in = outcome_figures(&trace, &mut Placement::Scored(&mut BestFit), &seeds);
    let through_wasm = outcome_figures(&trace, &mut Placement::Scored(&mut wasm), &seeds);
    assert_eq!(through_wasm, built_in);
}

fn cluster() -> impl Strategy<Value = Trace> {
    let node = (1u64..=16, 0u32..=8, 0u8..2).prop_map(|(cores, gpus, model)| Node {
        name: "n".into(),
        cpu_milli: cores * 8000,
        memory_mib: 1 << 20,
        gpus,
        model,
    });
    let pod = (0u64..=64_000, 0u32..=3, 1u32..=1000, 0u8..3).prop_map(|(cpu, kind, milli, spec)| {
        let (gpus, gpu_milli) = match kind {
            0 => (0, 0),
            1 => (1, milli),
            2 => (1, 1000),
            _ => (2, 1000),
        };
        let spec = match spec {
            0 => GpuSpec::ANY,
            model => GpuSpec::NONE.with(usize::from(model - 1)),
        };
        Pod { name: "p".into(), cpu_milli: cpu, memory_mib: 1, gpus, gpu_milli: Milli(gpu_milli), spec }
    });
    (proptest::collection::vec(node, 1..12), proptest::collection::vec(pod, 1..60)).prop_map(|(nodes, pods)| Trace {
        nodes,
        pods,
        models: vec!["A".into(), "B".into()],
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn wasm_and_built_in_best_fit_choose_the_same_nodes(trace in cluster(), seed in any::<u64>()) {
        let mut wasm = WasmScore::new(&PLUGIN.plugin).expect("a worker");
        let mut built_in = BestFit;
        let choices = |placement: &mut Placement<'_>| {
            let mut rng = <rand_pcg::Pcg64 as rand::SeedableRng>::seed_from_u64(seed);
            let mut cluster = placid_openb::place::Cluster::new(&trace);
            let mut scratch = placid_openb::place::Scratch::default();
            trace.pods.iter().map(|pod| cluster.place(pod, placement, &mut rng, &mut scratch).expect("no failure")).collect::<Vec<_>>()
        };
        prop_assert_eq!(choices(&mut Placement::Scored(&mut wasm)), choices(&mut Placement::Scored(&mut built_in)));
    }
}
