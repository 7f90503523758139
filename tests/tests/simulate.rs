//! The bundled traces replay through the engine on their examples: every job of the cluster's
//! day ends, production (P0) waiting little, and on the vit-sweep the staged plan spends fewer NVLink GPU-hours than flat
//! allocation and reaches its finals no later (docs/simulate.md, "The vit-sweep scenario").

use placid_engine::Neutral;
use placid_lang::span::FileId;
use placid_simulate::measure::Report;
use placid_simulate::{replay, trace};

fn replay_example(example: &str, trace_file: &str) -> Report {
    let build = placid_tests::build_clean(example);
    let path = placid_tests::example(example).join("traces").join(trace_file);
    let text = std::fs::read_to_string(&path).expect("the example trace");
    let jobs = trace::read(&build.model, FileId(u32::MAX - 1), &text).unwrap_or_else(|errors| panic!("{path:?} does not read: {errors:?}"));
    replay::replay(&build.model, Neutral, &jobs, &mut |_| {})
}

#[test]
fn the_cluster_day_runs_every_job_within_budget() {
    let report = replay_example("cluster", "day.csv");
    assert_eq!((report.finished, report.unfinished), (report.jobs, 0), "{:?}", report.rejected);
    assert!(report.cost.values().all(|cost| cost.days_over_budget == 0), "{:?}", report.cost);
    // P0 runs only on its reserved domain and P2 never waits for NVLink.
    assert!(report.wait_by_tier["P2"].p50 < report.wait_by_tier["P1"].p50);
    // The trace asks P0 for what a production tier needs, so production waits little.
    let p0 = report.wait_by_tier["P0"];
    assert!(p0.p50 == 0 && p0.p95 < 3600, "P0 waits {p0:?}");
}

#[test]
fn the_staged_sweep_spends_fewer_nvlink_hours_than_flat_allocation() {
    let staged = replay_example("vit-sweep", "staged.csv");
    let flat = replay_example("vit-sweep", "flat.csv");
    for report in [&staged, &flat] {
        assert_eq!((report.finished, report.unfinished), (1608, 0));
    }
    // The same trials run for the same time, so the GPU-hours match; only where they run moves.
    assert!((staged.gpu_hours - flat.gpu_hours).abs() < 1e-6);
    assert!((flat.nvlink_gpu_hours - flat.gpu_hours).abs() < 1e-6, "flat runs everything on NVLink");
    let saved = 1.0 - staged.nvlink_gpu_hours / flat.nvlink_gpu_hours;
    // 1,280 one-GPU trials of about 2 h leave the NVLink domains: about 2,540 of 20,000 hours.
    assert!((0.10..0.16).contains(&saved), "NVLink GPU-hours saved: {saved:.3}");
    assert!(staged.makespan_seconds <= flat.makespan_seconds);
    assert!(staged.wait_by_tier["sweep-low"].p95 < flat.wait_by_tier["sweep-low"].p95);
    assert!(staged.cost["vision"].spent < flat.cost["vision"].spent);
}

/// Kueue Workloads as `kubectl get workloads -A -o json` lists them (shaped as Kueue's
/// `v1beta1` API writes them: pod sets, admission, conditions with their times) read as a
/// trace of the cluster example: namespaces map to teams and queues to tiers through the
/// Kubernetes target's layout, a Workload evicted and requeued is one job, and what never ran
/// or is no team's is counted, not replayed.
#[test]
fn kueue_workloads_read_as_a_trace() {
    let build = placid_tests::build_clean("cluster");
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/kueue/workloads.json");
    let text = std::fs::read_to_string(&path).expect("the fixture");
    let history = trace::kueue::read(&build.model, FileId(u32::MAX - 1), &text).unwrap_or_else(|errors| panic!("{errors:?}"));
    let jobs: Vec<String> = history
        .jobs
        .iter()
        .map(|job| {
            let (team, tier) = (build.model.team(job.team).name.as_str(), build.model.tier(job.tier).name.as_str());
            format!("{} {team} {tier} submit={} run={} gpus={}", job.name, job.submit, job.run, job.gpus)
        })
        .collect();
    assert_eq!(
        jobs,
        ["vision/job-finetune-7c2d4 vision P0 submit=0 run=7200 gpus=8", "speech-ml/job-sweep-a1b2c speech P2 submit=600 run=1800 gpus=1"]
    );
    assert_eq!(history.requeued, 1);
    let left_out: Vec<(&str, usize)> = history.left_out.iter().map(|(reason, count)| (reason.as_str(), *count)).collect();
    assert_eq!(left_out, [("namespace `default` is no team's", 1), ("still pending", 1)]);
    let report = replay::replay(&build.model, Neutral, &history.jobs, &mut |_| {});
    assert_eq!(report.finished, 2, "{:?}", report.not_finished);
}
