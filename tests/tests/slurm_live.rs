//! Live tests against a real Slurm 22.05 (Debian 12's packages) started on this host by
//! [`placid_tests::slurm::Cluster`]: the generated configuration of the cluster example is
//! accepted with a clean log, reads back as the policy says, and the scheduler obeys it
//! (NVLink placement, preemption with checkpoint signal and requeue, cancel, budgets).
//! A broken configuration is rejected, so the harness can fail.
//!
//! The model is [`test_model`]: the example with windows of seconds and a tiny research budget.

use std::collections::BTreeSet;
use std::time::Duration;

use placid_lang::model::{Model, SlurmVersion};
use placid_tests::slurm::{Cluster, Options, StartError, should_run, test_model, wait_until, write_slurm};

fn port_base(offset: u16) -> u16 {
    // Distinct per process, so two test runs on one host do not share ports.
    20_000 + u16::try_from(std::process::id() % 400).unwrap_or(0) * 100 + offset
}

#[test]
fn slurm_22_05_accepts_and_obeys_the_cluster_policy() {
    if !should_run("slurm_22_05_accepts_and_obeys_the_cluster_policy", true, None) {
        return;
    }
    let model = test_model();
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(&model, generated.path());
    let options = Options { accounting: true, slurmds: true, port_base: port_base(0), root: None };
    let cluster = match Cluster::start(generated.path(), &options) {
        Ok(cluster) => cluster,
        Err(StartError::Rejected(output)) => panic!("Slurm 22.05 rejected the generated configuration:\n{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed: {message}"),
    };

    // accounts.sh: both runs succeed, and the second changes nothing.
    for (run, output) in cluster.accounts_runs.iter().enumerate() {
        assert!(output.status.success(), "accounts.sh run {} failed: {}", run + 1, String::from_utf8_lossy(&output.stderr));
    }
    let second = String::from_utf8_lossy(&cluster.accounts_runs[1].stdout).into_owned();
    assert!(!second.contains("Adding"), "the second accounts.sh run added something:\n{second}");
    cluster.add_root_user(&["vision".to_owned(), "speech".to_owned(), "res".to_owned()]);

    let errors = cluster.unexpected_log_errors();
    assert!(errors.is_empty(), "slurmctld logged errors on start:\n{}", errors.join("\n"));

    reads_back_as_the_policy_says(&cluster, &model);
    model_parallel_job_stays_in_one_nvlink_domain(&cluster);
    team_tiers_are_enforced(&cluster);
    p0_preempts_p1_with_checkpoint_signal_and_cancels_p2(&cluster);
    team_over_budget_is_held(&cluster);

    let errors = cluster.unexpected_log_errors();
    assert!(errors.is_empty(), "slurmctld logged errors while running jobs:\n{}", errors.join("\n"));
}

fn reads_back_as_the_policy_says(cluster: &Cluster, model: &Model) {
    assert_eq!(cluster.nodes.len(), model.nodes.len());
    let node = cluster.show("node", "rv-a-01");
    assert_eq!(node.get("Gres").map(String::as_str), Some("gpu:H200:4"));
    assert_eq!(node.get("Weight").map(String::as_str), Some("310"));
    let features: BTreeSet<&str> = node.get("AvailableFeatures").map(|list| list.split(',').collect()).unwrap_or_default();
    for expected in ["riscv64", "nvlink_nvl-a", "rack_r1", "chassis_c1", "capacity_reserved"] {
        assert!(features.contains(expected), "rv-a-01 lacks feature {expected}: {features:?}");
    }
    let spot = cluster.show("node", "x86-03");
    assert_eq!(spot.get("Weight").map(String::as_str), Some("70"), "spot nodes are cheapest, so they fill first");

    let partition = cluster.show("partition", "nvl-b");
    assert_eq!(partition.get("Nodes").map(String::as_str), Some("rv-b-[01-04]"));
    assert_eq!(partition.get("AllowQos").map(String::as_str), Some("p0,p1,p2"));
    assert_eq!(partition.get("TRESBillingWeights").map(String::as_str), Some("CPU=0,Mem=0,GRES/gpu=420"));
    let partitions = cluster.stdout("sinfo", &["-h", "-o", "%R"]);
    let partitions: BTreeSet<&str> = partitions.lines().collect();
    assert_eq!(partitions, model.pools.iter().map(|pool| pool.name.as_str()).collect());

    let topology = cluster.stdout("scontrol", &["show", "topology"]);
    assert!(topology.contains("SwitchName=nvlink_nvl-a Level=0") && topology.contains("Nodes=rv-a-[01-04]"), "{topology}");
    assert!(topology.contains("SwitchName=rack_r1 Level=1"), "{topology}");
    assert!(topology.contains("SwitchName=cluster Level=2"), "{topology}");

    let qos = cluster.stdout("sacctmgr", &["-n", "-P", "show", "qos", "format=name,priority,preempt,preemptmode,gracetime"]);
    let qos: BTreeSet<&str> = qos.lines().collect();
    for row in ["p0|1000|p1,p2|cluster|00:00:00", "p1|500|p2|requeue|00:00:10", "p2|100||cancel|00:00:05"] {
        assert!(qos.contains(row), "QOS row {row} missing from {qos:?}");
    }
    assert!(
        !qos.iter().any(|row| row.split('|').nth(2).is_some_and(|preempt| preempt.split(',').any(|name| name == "p0"))),
        "p0 is preemptible: {qos:?}"
    );

    let associations =
        cluster.stdout("sacctmgr", &["-n", "-P", "show", "assoc", "format=account,user,parentname,fairshare,grptresmins,qos,defaultqos"]);
    let associations: BTreeSet<&str> = associations.lines().collect();
    for row in [
        "prod-ml||root|70|billing=72000000|normal|",
        "vision||prod-ml|40|billing=36000000|p0,p1,p2|p2",
        "speech||prod-ml|30|billing=18000000|p1,p2|p2",
        "res||research|30|billing=1500|p2|p2",
    ] {
        assert!(associations.contains(row), "association {row} missing from {associations:?}");
    }

    let links = cluster.run("slurmd", &["-f", &cluster.inner("etc/slurm.conf").display().to_string(), "-N", "rv-a-01", "-G"]);
    let links = String::from_utf8_lossy(&links.stdout).into_owned() + &String::from_utf8_lossy(&links.stderr);
    assert!(links.contains("Links=-1,6,6,6"), "gres.conf Links not read back:\n{links}");
}

fn node_domain(cluster: &Cluster, node: &str) -> String {
    let features = cluster.show("node", node).get("AvailableFeatures").cloned().unwrap_or_default();
    features.split(',').find(|feature| feature.starts_with("nvlink_")).unwrap_or("none").to_owned()
}

fn model_parallel_job_stays_in_one_nvlink_domain(cluster: &Cluster) {
    let common = ["-A", "vision", "--qos=p1", "-p", "nvlink", "--gpus-per-node=4", "-C", "class_model-parallel", "--wrap", "sleep 300"];
    let fits = cluster.sbatch(&[&["-N", "4"][..], &common[..]].concat()).expect("a 16-GPU model-parallel job is accepted");
    assert_eq!(cluster.wait_job(&fits, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let job = cluster.show("job", &fits);
    assert!(job.get("Features").is_some_and(|features| features == "[nvlink_nvl-a|nvlink_nvl-b]"), "lua constraint: {job:?}");
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

fn team_tiers_are_enforced(cluster: &Cluster) {
    let refused = cluster.sbatch(&["-A", "res", "--qos=p0", "-p", "x86", "--gpus=1", "--wrap", "true"]);
    let message = refused.expect_err("research may not use P0");
    assert!(message.contains("team res may not use tier p0"), "{message}");
}

fn p0_preempts_p1_with_checkpoint_signal_and_cancels_p2(cluster: &Cluster) {
    let marker = cluster.path("jobs/p1-got-usr1");
    let p1_script = format!("trap 'touch {}' USR1; while true; do sleep 1; done", cluster.inner("jobs/p1-got-usr1").display());
    let p2 = cluster
        .sbatch(&["-A", "speech", "--qos=p2", "-p", "nvl-b", "-N", "2", "--gpus-per-node=4", "--wrap", "sleep 600"])
        .expect("p2 job");
    let p1 = cluster
        .sbatch(&["-A", "vision", "--qos=p1", "-p", "nvl-b", "-N", "2", "--gpus-per-node=4", "--signal=B:USR1@60", "--wrap", &p1_script])
        .expect("p1 job");
    assert_eq!(cluster.wait_job(&p2, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    assert_eq!(cluster.wait_job(&p1, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    assert_eq!(cluster.show("job", &p1).get("Requeue").map(String::as_str), Some("1"), "lua makes P1 requeueable");

    let p0 = cluster
        .sbatch(&["-A", "vision", "--qos=p0", "-p", "nvl-b", "-N", "4", "--gpus-per-node=4", "--wrap", "sleep 600"])
        .expect("p0 job");
    assert_eq!(cluster.wait_job(&p0, &["RUNNING"], Duration::from_secs(60)), "RUNNING", "P0 must preempt its way in");
    assert!(wait_until(Duration::from_secs(10), || marker.exists()), "P1 did not get its checkpoint signal");
    let p1_job = cluster.show("job", &p1);
    assert!(p1_job.get("Restarts").is_some_and(|restarts| restarts != "0"), "P1 was not requeued: {p1_job:?}");
    assert!(matches!(p1_job.get("JobState").map(String::as_str), Some("PENDING" | "REQUEUED")), "{p1_job:?}");
    let p2_state = cluster.wait_job(&p2, &["PREEMPTED", "CANCELLED"], Duration::from_secs(10));
    assert!(p2_state == "PREEMPTED" || p2_state == "CANCELLED", "P2 was not cancelled: {p2_state}");
    assert_eq!(cluster.show("job", &p2).get("Restarts").map(String::as_str), Some("0"), "P2 must not be requeued");
    cluster.cancel_all();
}

fn team_over_budget_is_held(cluster: &Cluster) {
    // research: (usd)0.25 a day = 1500 billing-minutes; x86 GPUs bill 190 a minute, so one
    // 1-GPU 5-minute job (950) fits and a second one would exceed the budget.
    let args = ["-A", "res", "--qos=p2", "-p", "x86", "--gpus-per-node=1", "-t", "5", "--wrap", "sleep 600"];
    let first = cluster.sbatch(&args).expect("first research job");
    assert_eq!(cluster.wait_job(&first, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let second = cluster.sbatch(&args).expect("second research job is queued");
    std::thread::sleep(Duration::from_secs(3));
    let job = cluster.show("job", &second);
    assert_eq!(job.get("JobState").map(String::as_str), Some("PENDING"), "{job:?}");
    assert_eq!(job.get("Reason").map(String::as_str), Some("AssocGrpBillingMinutes"), "{job:?}");
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
    let options = Options { accounting: false, slurmds: false, port_base: port_base(50), root: None };
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
    match Cluster::start(rejected.path(), &Options { port_base: port_base(75), ..options }) {
        Err(StartError::Rejected(output)) => assert!(output.contains("fatal"), "{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed instead of slurmctld: {message}"),
        Ok(_) => panic!("Slurm 22.05 accepted a topology/block configuration"),
    }
}
