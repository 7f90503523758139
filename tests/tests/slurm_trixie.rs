//! Live tests against a real Slurm 24.11: Debian 13 trixie's packages in the debootstrap'ed
//! root that .ci/run makes (`$PLACID_TRIXIE_ROOT`, with slurmdbd and MariaDB), run by
//! [`placid_tests::slurm::Cluster`] under chroot. The cluster example is emitted for 24.11 twice:
//! with accounting on, it must pass the same behaviour checks as on 22.05
//! ([`placid_tests::slurm_checks`]: accounts.sh idempotent, QOS and associations read back, team
//! tiers enforced, QOS preemption with checkpoint signal, requeue and cancel, budgets held);
//! with accounting off, tiers are partitions (`preempt/partition_prio`) and a higher tier
//! preempts lower ones the same way. Both also show the block topology reads back one block
//! per NVLink domain and that model-parallel and `--segment` jobs each run inside one block.
//! A broken topology.conf is rejected, so the harness can fail.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use placid_lang::model::{Model, SlurmVersion};
use placid_tests::slurm::{
    Cluster, Options, StartError, cap_p0_for_live, should_run, tags_route_jobs_to_their_tier, test_model, tier_over_budget_is_held,
    trixie_root, write_slurm,
};
use placid_tests::slurm_checks as checks;

/// The test model for Slurm 24.11 with accounting on or off.
fn model_24_11(accounting: bool) -> Model {
    let mut model = test_model();
    let Some(settings) = model.project.slurm.as_mut() else { panic!("the cluster example enables Slurm") };
    settings.version = SlurmVersion { major: 24, minor: 11 };
    settings.accounting = accounting;
    model
}

fn start(policy: &std::path::Path, accounting: bool, slurmds: bool) -> Result<Cluster, StartError> {
    Cluster::start(policy, &Options { accounting, slurmds, root: Some(trixie_root()) })
}

/// Emits `model` into `generated`, starts it on 24.11 with every slurmd, and checks the
/// release and a clean log.
fn start_cluster(model: &Model, generated: &tempfile::TempDir) -> Cluster {
    let accounting = model.project.slurm.as_ref().is_some_and(|settings| settings.accounting);
    write_slurm(model, generated.path());
    let cluster = match start(generated.path(), accounting, true) {
        Ok(cluster) => cluster,
        Err(StartError::Rejected(output)) => panic!("Slurm 24.11 rejected the generated configuration:\n{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed: {message}"),
    };
    assert_eq!(cluster.nodes.len(), model.nodes.len());
    let version = cluster.stdout("scontrol", &["--version"]);
    assert!(version.starts_with("slurm-wlm 24.11") || version.starts_with("slurm 24.11"), "not Slurm 24.11: {version}");
    cluster
}

/// The same checks as slurm_live.rs's 22.05 test, on 24.11, with MariaDB and slurmdbd 24.11
/// running in the root too.
#[test]
fn slurm_24_11_with_accounting_accepts_and_obeys_the_cluster_policy() {
    if !should_run("slurm_24_11_with_accounting_accepts_and_obeys_the_cluster_policy", true, Some(&trixie_root())) {
        return;
    }
    let mut model = model_24_11(true);
    cap_p0_for_live(&mut model);
    let generated = tempfile::tempdir().expect("tempdir");
    let cluster = start_cluster(&model, &generated);
    checks::accounts_sh_is_idempotent(&cluster);
    checks::log_is_clean(&cluster, "on start");

    checks::site_settings_survive_the_include(&cluster);
    checks::run_times_are_the_limits(&cluster, generated.path());
    checks::policy_reads_back(&cluster, &model);
    let blocks = block_topology_reads_back(&cluster);
    // Tiers are QOS here. The x86 block's nodes have two prices, so they are two partitions
    // (x86_70, x86_190) and no job spans the block: one segment job, on the NVLink block the
    // class job left free.
    model_parallel_jobs_stay_in_one_nvlink_block(&cluster, &blocks, &["--qos=p1", "-p", "nvlink"], &["--qos=p1", "-p", "nvlink"], 1);
    checks::team_tiers_are_enforced(&cluster);
    checks::admin_accounts_pass_job_submit_lua(&cluster);
    checks::p0_preempts_p1_with_checkpoint_signal_and_cancels_p2(&cluster, &checks::qos_on_nvl_a);
    checks::p0_cannot_exceed_its_reservation(&cluster);
    checks::mixed_pool_jobs_are_billed_at_their_nodes_price(&cluster);
    checks::plan_finishes_when_a_trial_is_cancelled(&cluster, generated.path());
    checks::team_over_budget_is_held(&cluster);
    tier_over_budget_is_held(&cluster);
    tags_route_jobs_to_their_tier(&cluster);

    checks::log_is_clean(&cluster, "while running jobs");
}

#[test]
fn slurm_24_11_without_accounting_accepts_and_obeys_the_cluster_policy() {
    if !should_run("slurm_24_11_without_accounting_accepts_and_obeys_the_cluster_policy", false, Some(&trixie_root())) {
        return;
    }
    let generated = tempfile::tempdir().expect("tempdir");
    let cluster = start_cluster(&model_24_11(false), &generated);
    checks::log_is_clean(&cluster, "on start");

    let blocks = block_topology_reads_back(&cluster);
    let partition = cluster.show("partition", "p0");
    assert_eq!(partition.get("PreemptMode").map(String::as_str), Some("OFF"), "{partition:?}");
    model_parallel_jobs_stay_in_one_nvlink_block(&cluster, &blocks, &["-p", "p1"], &["-p", "p1"], 2);
    checks::p0_preempts_p1_with_checkpoint_signal_and_cancels_p2(&cluster, &partition_on_nvl_a);

    checks::log_is_clean(&cluster, "while running jobs");
}

/// Block name -> its nodes, as `scontrol show topology` reads them back (base blocks only).
fn blocks(cluster: &Cluster) -> BTreeMap<String, BTreeSet<String>> {
    let topology = cluster.stdout("scontrol", &["show", "topology"]);
    topology
        .lines()
        .filter_map(|line| {
            let fields: BTreeMap<&str, &str> = line.split_whitespace().filter_map(|pair| pair.split_once('=')).collect();
            Some((fields.get("BlockName")?.to_string(), hostnames(cluster, fields.get("Nodes")?)))
        })
        .collect()
}

fn hostnames(cluster: &Cluster, list: &str) -> BTreeSet<String> {
    cluster.stdout("scontrol", &["show", "hostnames", list]).lines().map(str::to_owned).collect()
}

fn block_topology_reads_back(cluster: &Cluster) -> BTreeMap<String, BTreeSet<String>> {
    let config = cluster.stdout("scontrol", &["show", "config"]);
    assert!(config.lines().any(|line| line.starts_with("TopologyPlugin") && line.ends_with("topology/block")), "{config}");
    let topology = cluster.stdout("scontrol", &["show", "topology"]);
    let blocks = blocks(cluster);
    let expected = [("nvlink_nvl-a", "rv-a-[01-04]"), ("nvlink_nvl-b", "rv-b-[01-04]"), ("nonvlink_1", "x86-[01-04]")];
    let expected: BTreeMap<String, BTreeSet<String>> =
        expected.iter().map(|(name, nodes)| ((*name).to_owned(), hostnames(cluster, nodes))).collect();
    assert_eq!(blocks, expected, "base blocks:\n{topology}");
    // Every base block counts its 4 nodes (with base 1, 24.11 counted a 4-node block as 1).
    assert_eq!(topology.lines().filter(|line| line.starts_with("BlockName=") && line.ends_with(" BlockSize=4")).count(), 3, "{topology}");
    assert!(topology.contains("BlockSize=8"), "no aggregated block of 8:\n{topology}");
    blocks
}

/// The job's nodes, which must be exactly one block's; returns that block's name.
fn block_of_job(cluster: &Cluster, job: &str, blocks: &BTreeMap<String, BTreeSet<String>>) -> String {
    let list = cluster.stdout("squeue", &["-h", "-j", job, "-o", "%N"]);
    let nodes = hostnames(cluster, list.trim());
    let block = blocks.iter().find(|(_, members)| **members == nodes).map(|(name, _)| name.clone());
    block.unwrap_or_else(|| panic!("job {job} on {} is not exactly one block of {blocks:?}", list.trim()))
}

/// `tier` and `segment_tier` are the P1 tier's submit options (a QOS or a partition) for the
/// class job and for the `segment_jobs` segment jobs.
fn model_parallel_jobs_stay_in_one_nvlink_block(
    cluster: &Cluster,
    blocks: &BTreeMap<String, BTreeSet<String>>,
    tier: &[&str],
    segment_tier: &[&str],
    segment_jobs: usize,
) {
    // The class constraint job_submit.lua turns into [nvlink_nvl-a|nvlink_nvl-b]&lanes_6 (the
    // class asks for 6 NVLink lanes).
    let class = ["-A", "vision", "-N", "4", "--gpus-per-node=4", "-C", "class_model-parallel", "-t", "10", "--wrap", "sleep 300"];
    let first = cluster.sbatch(&[tier, &class[..]].concat()).expect("a 16-GPU model-parallel job is accepted");
    assert_eq!(cluster.wait_job(&first, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let job = cluster.show("job", &first);
    assert_eq!(job.get("Features").map(String::as_str), Some("[nvlink_nvl-a|nvlink_nvl-b]&lanes_6"), "lua constraint: {job:?}");
    let mut used = BTreeSet::from([block_of_job(cluster, &first, blocks)]);
    assert!(used.iter().all(|block| block.starts_with("nvlink_")), "the class job is not in an NVLink block: {used:?}");

    // The block plugin alone: each whole-node segment of 4 takes one free block, never a split.
    // Minutes, not P1's two-day maximum: 24.11 gives an --exclusive job every GPU of its nodes,
    // and `safe` enforcement charges the team's budget for the whole limit up front.
    let segment = ["-A", "vision", "-N", "4", "--segment=4", "--exclusive", "-t", "10", "--wrap", "sleep 300"];
    for _ in 0..segment_jobs {
        let job = cluster.sbatch(&[segment_tier, &segment[..]].concat()).expect("a 4-node --segment=4 job is accepted");
        assert_eq!(cluster.wait_job(&job, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
        let block = block_of_job(cluster, &job, blocks);
        assert!(used.insert(block.clone()), "--segment=4 shares block {block} with an earlier job");
    }
    cluster.cancel_all();
}

/// Tier options without accounting for [`checks::p0_preempts_p1_with_checkpoint_signal_and_cancels_p2`]:
/// the tier's partition spans its pools' nodes, so a constraint keeps the jobs on domain nvl-a.
fn partition_on_nvl_a(tier: &str) -> Vec<String> {
    vec!["-p".into(), tier.into(), "-C".into(), "nvlink_nvl-a".into()]
}

/// The cluster example's Pattern C and Pattern B plans run the shipped trainer to their end on
/// Slurm 24.11, through a preemption that requeues sweep trials which resume from their
/// checkpoints ([`checks::plans_run_real_work_through_a_preemption`]).
#[test]
fn slurm_24_11_runs_plans_to_their_end_through_a_preemption() {
    if !should_run("slurm_24_11_runs_plans_to_their_end_through_a_preemption", true, Some(&trixie_root())) {
        return;
    }
    let mut model = model_24_11(true);
    cap_p0_for_live(&mut model);
    checks::plans_for_live(&mut model);
    let generated = tempfile::tempdir().expect("tempdir");
    let cluster = start_cluster(&model, &generated);
    checks::accounts_sh_is_idempotent(&cluster);
    checks::plans_run_real_work_through_a_preemption(&cluster, generated.path(), &model);
    checks::log_is_clean(&cluster, "while running the plans");
}

/// `BlockLevels` is the 23.11 block syntax that 24.05 removed: 24.11 must refuse it, which
/// shows a configuration the real Slurm rejects fails this harness.
#[test]
fn slurm_24_11_rejects_a_broken_topology() {
    if !should_run("slurm_24_11_rejects_a_broken_topology", false, Some(&trixie_root())) {
        return;
    }
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(&model_24_11(false), generated.path());
    let topology = generated.path().join("topology.conf");
    let text = std::fs::read_to_string(&topology).expect("24.11 emits topology.conf");
    let broken: String =
        text.lines().map(|line| if line.starts_with("BlockSizes=") { "BlockLevels=0-1" } else { line }).collect::<Vec<_>>().join("\n");
    std::fs::write(&topology, broken + "\n").expect("write topology.conf");
    match start(generated.path(), false, false) {
        Err(StartError::Rejected(output)) => assert!(output.contains("BlockLevels"), "{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed instead of slurmctld: {message}"),
        Ok(_) => panic!("Slurm 24.11 accepted BlockLevels"),
    }
}
