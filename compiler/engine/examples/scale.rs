//! The engine at scale: replays synthetic traces on the synthetic cluster once each and
//! prints the wall time, so the growth in jobs (the bar is linear, and 1,000,000 jobs on
//! 10,000 nodes in under 30 s) can be read off one run. A criterion benchmark would repeat a
//! 30-second run ten times; this measures each size once.
//!
//! `cargo run --release -p placid-engine --example scale -- NODES JOBS...`

use std::time::Instant;

use placid_engine::{Neutral, simulate, synthetic};
use placid_lang::model::Model;

#[path = "../tests/support/mod.rs"]
mod support;

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|arg| arg.replace('_', "").parse().ok()).collect();
    let [nodes, counts @ ..] = args.as_slice() else {
        eprintln!("usage: scale NODES JOBS...");
        std::process::exit(2);
    };
    let model: Model = support::load(&synthetic::inventory(*nodes), synthetic::POLICY);
    // Arrivals about as fast as the cluster drains them, as in the criterion benchmark.
    let gap = (2 * 3600 * 4 / (*nodes as u64 * synthetic::GPUS_PER_NODE as u64 / 4)).max(1);
    for &jobs in counts {
        let trace = synthetic::jobs(&model, jobs, gap, 42);
        let start = Instant::now();
        let events = simulate(&model, Neutral, trace).len();
        let seconds = start.elapsed().as_secs_f64();
        println!("{jobs} jobs on {nodes} nodes: {seconds:.2} s, {:.1} µs a job, {events} events", seconds * 1e6 / jobs as f64);
    }
}
