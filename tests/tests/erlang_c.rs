//! A queueing anchor for the engine: an M/M/c workload (Poisson arrivals, exponential run
//! times, c identical GPUs, one tier, one-GPU jobs) replayed through the engine waits, on
//! average, what Erlang's C formula says it must, at several loads (docs/simulate.md,
//! "Queueing anchor: Erlang C").

use placid_engine::Neutral;
use placid_lang::model::Model;
use placid_lang::source::MemoryWorld;
use placid_lang::span::FileId;
use placid_simulate::{replay, trace};
use proptest::prelude::Rng as _;
use proptest::test_runner::{RngAlgorithm, TestRng};

/// GPUs of the one node.
const SERVERS: u32 = 8;
/// Mean run time, in seconds: long, so that whole-second times round off little.
const MEAN_RUN: f64 = 3600.0;
/// Jobs per load: enough for the mean wait to settle within a few percent.
const JOBS: usize = 300_000;

/// One node of [`SERVERS`] GPUs, one team, one tier that never preempts.
fn model() -> Model {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"mmc\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
    let gpus: String = (0..SERVERS).map(|index| format!("    gpu {index} model=\"H200\"\n")).collect();
    world.insert("nodes.kdl", format!("node \"n1\" arch=\"x86_64\" {{\n{gpus}}}\n"));
    world.insert(
        "policy.kdl",
        "pool \"all\" { select arch=\"x86_64\" }\n\
         tier \"P1\" { priority 500; preemption \"never\"; }\n\
         cost-center \"cc\"\n\
         team \"t\" { share 100; cost-center \"cc\"; tiers \"P1\"; }\n",
    );
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
    compilation.model
}

/// Erlang C: the mean wait in queue of M/M/c with arrival rate `lambda` and service rate `mu`.
fn erlang_c_wait(servers: u32, lambda: f64, mu: f64) -> f64 {
    let offered = lambda / mu;
    let rho = offered / f64::from(servers);
    let mut term = 1.0;
    let mut sum = 0.0;
    for k in 0..servers {
        if k > 0 {
            term *= offered / f64::from(k);
        }
        sum += term;
    }
    let last = term * offered / f64::from(servers) / (1.0 - rho);
    let waiting = last / (sum + last);
    waiting / (f64::from(servers) * mu - lambda)
}

/// An exponential draw of mean `mean` from `rng`.
fn exponential(rng: &mut TestRng, mean: f64) -> f64 {
    // 53 random bits as a uniform in (0, 1]: never 0, so the logarithm is finite.
    let uniform = ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64;
    -uniform.ln() * mean
}

/// The M/M/c trace at utilisation `rho`, in whole seconds.
fn trace_text(rho: f64, rng: &mut TestRng) -> String {
    let mean_gap = MEAN_RUN / (rho * f64::from(SERVERS));
    let mut text = String::from("job,submit,team,tier,gpus,run\n");
    let mut now = 0.0;
    for index in 0..JOBS {
        now += exponential(rng, mean_gap);
        let run = exponential(rng, MEAN_RUN).round().max(1.0);
        text.push_str(&format!("j{index},{},t,P1,1,{run}\n", now.round()));
    }
    text
}

#[test]
fn the_engine_waits_what_erlang_c_predicts() {
    let model = model();
    let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut lines = Vec::new();
    for rho in [0.5, 0.7, 0.85] {
        let text = trace_text(rho, &mut rng);
        let jobs = trace::read(&model, FileId(0), &text).unwrap_or_else(|errors| panic!("{errors:?}"));
        let report = replay::replay(&model, Neutral, &jobs, &mut |_| {});
        assert_eq!(report.finished, JOBS);
        let waits: Vec<u64> = report.outcomes.iter().zip(&jobs).filter_map(|(outcome, job)| Some(outcome.start? - job.submit)).collect();
        // The first tenth is the warm-up from an empty cluster.
        let steady = &waits[JOBS / 10..];
        let measured = steady.iter().sum::<u64>() as f64 / steady.len() as f64;
        let lambda = rho * f64::from(SERVERS) / MEAN_RUN;
        let predicted = erlang_c_wait(SERVERS, lambda, 1.0 / MEAN_RUN);
        let error = (measured - predicted) / predicted;
        lines.push(format!("rho {rho}: measured {measured:.0} s, Erlang C {predicted:.0} s, {:+.1} %", error * 100.0));
        assert!(error.abs() < 0.06, "{}", lines.join("\n"));
    }
    println!("{}", lines.join("\n"));
}
