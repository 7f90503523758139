//! Live tests against a real Slurm 22.05 (Debian 12's packages) started on this host by
//! [`placid_tests::slurm::Cluster`]: the generated configuration of the cluster example is
//! accepted with a clean log, reads back as the policy says, and the scheduler obeys it
//! (NVLink placement, preemption with checkpoint signal and requeue, cancel, budgets).
//! A broken configuration is rejected, so the harness can fail.
//!
//! The model is [`test_model`]: the example with windows of seconds and a tiny research budget,
//! plus [`cap_p0_for_live`]'s small P0 budget in the accounting test.

use std::collections::BTreeSet;
use std::time::Duration;

use placid_lang::model::SlurmVersion;
use placid_tests::slurm::{
    Cluster, Options, StartError, cap_p0_for_live, should_run, tags_route_jobs_to_their_tier, test_model, tier_over_budget_is_held,
    write_slurm,
};
use placid_tests::slurm_checks as checks;

/// Starts the policy in `generated` on 22.05 with accounting and every slurmd.
fn start_with_accounting(generated: &std::path::Path) -> Cluster {
    let options = Options { accounting: true, slurmds: true, root: None };
    match Cluster::start(generated, &options) {
        Ok(cluster) => cluster,
        Err(StartError::Rejected(output)) => panic!("Slurm 22.05 rejected the generated configuration:\n{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed: {message}"),
    }
}

#[test]
fn slurm_22_05_accepts_and_obeys_the_cluster_policy() {
    if !should_run("slurm_22_05_accepts_and_obeys_the_cluster_policy", true, None) {
        return;
    }
    let mut model = test_model();
    cap_p0_for_live(&mut model);
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(&model, generated.path());
    let cluster = start_with_accounting(generated.path());

    checks::accounts_sh_is_idempotent(&cluster);
    checks::log_is_clean(&cluster, "on start");

    checks::site_settings_survive_the_include(&cluster);
    checks::run_times_are_the_limits(&cluster, generated.path());
    checks::policy_reads_back(&cluster, &model);
    tree_topology_reads_back(&cluster);
    model_parallel_job_stays_in_one_nvlink_domain(&cluster);
    checks::team_tiers_are_enforced(&cluster);
    checks::admin_accounts_pass_job_submit_lua(&cluster);
    checks::p0_preempts_p1_with_checkpoint_signal_and_cancels_p2(&cluster, &checks::qos_on_nvl_a);
    checks::p0_cannot_exceed_its_reservation(&cluster);
    checks::mixed_pool_jobs_are_billed_at_their_nodes_price(&cluster);
    checks::plan_finishes_when_a_trial_is_cancelled(&cluster, generated.path());
    checks::team_over_budget_is_held(&cluster);
    tier_over_budget_is_held(&cluster);
    tags_route_jobs_to_their_tier(&cluster);
    history_replays_as_a_trace(&cluster, &model);

    checks::log_is_clean(&cluster, "while running jobs");
}

/// The accounting history of every job above, as `sacct --parsable2` prints it, reads back as
/// a placid trace: accounts and QOS map to the policy's teams and tiers, the jobs P0 preempted
/// are in it with the time they ran, and the trace replays through the engine.
fn history_replays_as_a_trace(cluster: &Cluster, model: &placid_lang::model::Model) {
    let format = format!("--format={},Comment", placid_simulate::trace::sacct::FIELDS.join(","));
    let text = cluster.stdout("sacct", &["--allusers", "--duplicates", "--parsable2", "--starttime=now-1days", &format]);
    let history = placid_simulate::trace::sacct::read(model, placid_lang::span::FileId(0), &text)
        .unwrap_or_else(|errors| panic!("sacct's output does not read: {errors:?}\n{text}"));
    assert!(history.jobs.len() >= 5, "{history:?}\n{text}");
    let tiers: BTreeSet<&str> = history.jobs.iter().map(|job| model.tier(job.tier).name.as_str()).collect();
    assert!(tiers.contains("P0") && tiers.contains("P1"), "{tiers:?}\n{text}");
    let preempted: Vec<&str> = text
        .lines()
        .filter(|line| line.split('|').nth(5) == Some("PREEMPTED"))
        .filter_map(|line| line.split('|').next())
        .filter(|id| !id.contains('.'))
        .collect();
    assert!(!preempted.is_empty(), "the P0 job preempted others:\n{text}");
    for id in preempted {
        let job = history.jobs.iter().find(|job| job.name == id).unwrap_or_else(|| panic!("preempted job {id} is in the trace"));
        assert!(job.run > 0, "job {id} ran until its preemption: {job:?}");
    }
    assert!(history.jobs.windows(2).all(|pair| pair[0].submit <= pair[1].submit), "submitted in time order");
    let report = placid_simulate::replay::replay(model, placid_engine::Neutral, &history.jobs, &mut |_| {});
    assert_eq!(report.jobs, history.jobs.len());
    assert_eq!(report.finished + report.cancelled + report.unfinished + report.rejected.values().sum::<usize>(), report.jobs);
}

/// The cluster example's Pattern C and Pattern B plans run the shipped trainer to their end on
/// Slurm 22.05, through a preemption that requeues sweep trials which resume from their
/// checkpoints ([`checks::plans_run_real_work_through_a_preemption`]).
#[test]
fn slurm_22_05_runs_plans_to_their_end_through_a_preemption() {
    if !should_run("slurm_22_05_runs_plans_to_their_end_through_a_preemption", true, None) {
        return;
    }
    let mut model = test_model();
    cap_p0_for_live(&mut model);
    checks::plans_for_live(&mut model);
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(&model, generated.path());
    let cluster = start_with_accounting(generated.path());
    checks::accounts_sh_is_idempotent(&cluster);
    checks::plans_run_real_work_through_a_preemption(&cluster, generated.path(), &model);
    checks::log_is_clean(&cluster, "while running the plans");
}

/// The engine side of [`slurm_22_05_runs_plans_to_their_end_through_a_preemption`], without
/// Slurm: the sweep's trials (class data-parallel, which prefers NVLink) fill two nodes of
/// nvl-b rather than the cheaper spot nodes of their pool; a P1 job taking three whole nodes
/// there five seconds into the sweep preempts the two trials of one of them, which are requeued
/// and finish; the plans end, the best two trials are promoted and the finalists start after
/// the sweep.
#[test]
fn the_engine_predicts_the_live_plan_run() {
    let mut model = test_model();
    cap_p0_for_live(&mut model);
    checks::plans_for_live(&mut model);
    let predicted = checks::PredictedPlanRun::of(&model, 5, &[0.4, 0.2, 0.3, 0.1]);
    assert_eq!(predicted.placed, ["rv-b-01", "rv-b-01", "rv-b-02", "rv-b-02"], "{predicted:?}");
    assert_eq!(predicted.preempted.len(), 2, "{predicted:?}");
    let sorted = |trials: &[u32]| trials.iter().copied().collect::<BTreeSet<u32>>();
    assert_eq!(sorted(&predicted.requeued), sorted(&predicted.preempted), "{predicted:?}");
    assert!(predicted.others_preempted.is_empty() && predicted.unfinished.is_empty(), "{predicted:?}");
    assert_eq!(predicted.promoted, [3, 1], "{predicted:?}");
    assert!(predicted.finalists_after_sweep, "{predicted:?}");
}

/// 22.05 has no block topology: each NVLink domain is a leaf switch under its rack.
fn tree_topology_reads_back(cluster: &Cluster) {
    let topology = cluster.stdout("scontrol", &["show", "topology"]);
    assert!(topology.contains("SwitchName=nvlink_nvl-a Level=0") && topology.contains("Nodes=rv-a-[01-04]"), "{topology}");
    assert!(topology.contains("SwitchName=rack_r1 Level=1"), "{topology}");
    assert!(topology.contains("SwitchName=cluster Level=2"), "{topology}");
}

fn node_domain(cluster: &Cluster, node: &str) -> String {
    let features = cluster.show("node", node).get("AvailableFeatures").cloned().unwrap_or_default();
    features.split(',').find(|feature| feature.starts_with("nvlink_")).unwrap_or("none").to_owned()
}

fn model_parallel_job_stays_in_one_nvlink_domain(cluster: &Cluster) {
    let common =
        ["-A", "vision", "--qos=p1", "-p", "nvlink", "--gpus-per-node=4", "-C", "class_model-parallel", "-t", "10", "--wrap", "sleep 300"];
    let fits = cluster.sbatch(&[&["-N", "4"][..], &common[..]].concat()).expect("a 16-GPU model-parallel job is accepted");
    assert_eq!(cluster.wait_job(&fits, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let job = cluster.show("job", &fits);
    assert!(job.get("Features").is_some_and(|features| features == "[nvlink_nvl-a|nvlink_nvl-b]&lanes_6"), "lua constraint: {job:?}");
    let nodes = cluster.stdout("squeue", &["-h", "-j", &fits, "-o", "%N"]);
    let nodes = cluster.stdout("scontrol", &["show", "hostnames", nodes.trim()]);
    let domains: BTreeSet<String> = nodes.lines().map(|node| node_domain(cluster, node)).collect();
    assert_eq!(domains.len(), 1, "a model-parallel job spans NVLink domains: {nodes}");

    // No single domain has 20 GPUs, so Slurm 22.05 refuses the job at submission (observed:
    // "Requested node configuration is not available") rather than spread it over two domains.
    let refused = cluster.sbatch(&[&["-N", "5"][..], &common[..]].concat()).expect_err("a 20-GPU model-parallel job is refused");
    assert!(refused.contains("Requested node configuration is not available"), "{refused}");
    cluster.cancel_all();
}

/// The same policy without accounting (tiers as partitions) is accepted, and the 24.05
/// output, whose `topology/block` does not exist in 22.05, is rejected: a config Slurm
/// refuses makes the harness fail.
#[test]
fn slurm_22_05_accepts_the_partition_profile_and_rejects_a_newer_release_config() {
    if !should_run("slurm_22_05_accepts_the_partition_profile_and_rejects_a_newer_release_config", false, None) {
        return;
    }
    let mut model = test_model();
    if let Some(settings) = model.project.slurm.as_mut() {
        settings.accounting = false;
    }
    let accepted = tempfile::tempdir().expect("tempdir");
    write_slurm(&model, accepted.path());
    let options = Options { accounting: false, slurmds: false, root: None };
    match Cluster::start(accepted.path(), &options) {
        Ok(cluster) => {
            let errors = cluster.unexpected_log_errors();
            assert!(errors.is_empty(), "slurmctld logged errors:\n{}", errors.join("\n"));
            let partition = cluster.show("partition", "p0");
            assert_eq!(partition.get("PreemptMode").map(String::as_str), Some("OFF"));
        }
        Err(error) => panic!("the partition profile was not accepted: {error:?}"),
    }

    if let Some(settings) = model.project.slurm.as_mut() {
        settings.version = SlurmVersion { major: 24, minor: 5 };
    }
    let rejected = tempfile::tempdir().expect("tempdir");
    write_slurm(&model, rejected.path());
    match Cluster::start(rejected.path(), &options) {
        Err(StartError::Rejected(output)) => assert!(output.contains("fatal"), "{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed instead of slurmctld: {message}"),
        Ok(_) => panic!("Slurm 22.05 accepted a topology/block configuration"),
    }
}
