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

/// A Kueue history is read item by item into the fields a replay uses: fields placid does not
/// read are skipped whatever they hold (a label map of others, an array of a million values),
/// a `null` reads as a missing field, a Workload whose read field has the wrong type and an
/// item that is no Workload are counted and left out (each with its reason), a GPU count may
/// be a number, the class label is found among others, and a list past the job limit is
/// refused.
#[test]
fn a_kueue_history_skips_what_it_does_not_read_and_counts_what_it_cannot() {
    let build = placid_tests::build_clean("cluster");
    let read = |items: Vec<serde_json::Value>| {
        let text = serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": items }).to_string();
        trace::kueue::read(&build.model, FileId(u32::MAX - 1), &text)
    };
    let mut padded = workload("padded", "vision", "p1", (1, 2), &["nvl-b"], "nvl-b", [0, 0, 60]);
    padded["spec"]["junk"] = serde_json::json!(vec![0; 1_000_000]);
    padded["spec"]["podSets"][0]["template"]["metadata"] =
        serde_json::json!({ "labels": { "app": "x", "placid.dev/class": "model-parallel", "z\"q": "y" } });
    padded["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = serde_json::json!(2);
    let mut wrong = workload("wrong", "vision", "p1", (1, 2), &["nvl-b"], "nvl-b", [0, 0, 60]);
    wrong["spec"]["podSets"][0]["count"] = serde_json::json!("two");
    // A `null` reads as a missing field, as it did when the list was read as a JSON tree.
    let mut nulls = workload("nulls", "vision", "p1", (1, 2), &["nvl-b"], "nvl-b", [0, 0, 60]);
    nulls["spec"]["podSets"][0]["template"]["spec"]["affinity"] = serde_json::Value::Null;
    nulls["spec"]["podSets"][0]["template"]["metadata"] = serde_json::json!({ "labels": null, "creationTimestamp": null });
    nulls["status"]["admission"] = serde_json::Value::Null;
    let other = serde_json::json!({ "kind": "Pod", "spec": { "podSets": "none" } });
    let history = read(vec![padded, wrong, serde_json::json!(0), nulls, other]).unwrap_or_else(|errors| panic!("{errors:?}"));
    let jobs: Vec<(String, u32, Option<&str>)> = history
        .jobs
        .iter()
        .map(|job| (job.name.clone(), job.gpus, job.class.map(|class| build.model.class(class).name.as_str())))
        .collect();
    assert_eq!(jobs, [("vision/padded".to_owned(), 2, Some("model-parallel")), ("vision/nulls".to_owned(), 2, None)]);
    let left_out: Vec<(&str, usize)> = history.left_out.iter().map(|(reason, count)| (reason.as_str(), *count)).collect();
    assert_eq!(left_out, [("a Workload field placid reads is not of its Kubernetes type", 1), ("not a Workload", 2)]);

    let too_many = format!("{{\"items\":[{}0]}}", "0,".repeat(placid_simulate::trace::MAX_JOBS));
    let errors = trace::kueue::read(&build.model, FileId(u32::MAX - 1), &too_many).expect_err("past the job limit");
    assert!(format!("{errors:?}").contains("more than 1000000 Workloads"), "{errors:?}");
}

/// One Workload as Kueue writes it for a placid stage's pods: `count` pods of `per_pod` GPUs of
/// team namespace `namespace`, queue `queue`, pods that require the cells `cells` (as placid's
/// templates do for their pool), created, admitted on `flavor` and finished at the given
/// seconds after 2026-05-01T12:00:00Z.
fn workload(
    name: &str,
    namespace: &str,
    queue: &str,
    (count, per_pod): (u32, u32),
    cells: &[&str],
    flavor: &str,
    times: [i64; 3],
) -> serde_json::Value {
    // Within the day, so the time is the hour, minute and second past noon.
    let at = |seconds: i64| format!("2026-05-01T{:02}:{:02}:{:02}Z", 12 + seconds / 3600, seconds / 60 % 60, seconds % 60);
    let [created, admitted, finished] = times;
    let condition = |kind: &str, seconds: i64| serde_json::json!({ "type": kind, "status": "True", "reason": kind, "message": "", "lastTransitionTime": at(seconds) });
    serde_json::json!({
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "Workload",
        "metadata": { "name": name, "namespace": namespace, "creationTimestamp": at(created) },
        "spec": {
            "queueName": queue,
            "podSets": [{
                "name": "main",
                "count": count,
                "template": { "spec": {
                    "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": { "nodeSelectorTerms": [
                        { "matchExpressions": [{ "key": "placid.dev/cell", "operator": "In", "values": cells }] }
                    ] } } },
                    "containers": [{ "name": "trainer", "image": "r.example/train:1", "resources": { "requests": { "nvidia.com/gpu": per_pod.to_string() } } }]
                } }
            }]
        },
        "status": {
            "admission": { "clusterQueue": namespace, "podSetAssignments": [{ "name": "main", "count": count, "flavors": { "nvidia.com/gpu": flavor } }] },
            "conditions": [condition("QuotaReserved", admitted), condition("Admitted", admitted), condition("Finished", finished)]
        }
    })
}

/// A Kueue history recorded under the cluster example's policy replays with its start order
/// and waits: three 8-GPU `P1` workloads of `vision` in pool `nvl-b` (16 GPUs, one cell, all of
/// which `vision` may hold by borrowing), the third admitted when the first finishes. The pool
/// is read from the cells the pods require; without it the engine would start the third at
/// once on the x86 nodes, and the recorded wait would not be reproduced.
#[test]
fn a_kueue_history_replays_with_its_start_order_and_waits() {
    let build = placid_tests::build_clean("cluster");
    let hour = 3600;
    let items = vec![
        workload("first", "vision", "p1", (2, 4), &["nvl-b"], "nvl-b", [0, 0, hour]),
        workload("second", "vision", "p1", (2, 4), &["nvl-b"], "nvl-b", [60, 60, 60 + hour]),
        workload("third", "vision", "p1", (2, 4), &["nvl-b"], "nvl-b", [120, hour, 2 * hour]),
    ];
    let text = serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": items }).to_string();
    let history = trace::kueue::read(&build.model, FileId(u32::MAX - 1), &text).unwrap_or_else(|errors| panic!("{errors:?}"));
    let nvl_b = build.model.pools.iter().position(|pool| pool.name.as_str() == "nvl-b").map(placid_lang::model::PoolId::from_index);
    assert!(history.jobs.iter().all(|job| job.pool == nvl_b), "the pool is read from the required cells");
    let report = replay::replay(&build.model, Neutral, &history.jobs, &mut |_| {});
    let waits: Vec<(String, Option<u64>)> = history
        .jobs
        .iter()
        .zip(&report.outcomes)
        .map(|(job, outcome)| (job.name.clone(), outcome.start.map(|start| start - job.submit)))
        .collect();
    assert_eq!(
        waits,
        [("vision/first".to_owned(), Some(0)), ("vision/second".to_owned(), Some(0)), ("vision/third".to_owned(), Some(hour as u64 - 120))]
    );
}
