//! Issue 18's playbooks against a real Slurm 22.05 (the harness of slurm_live.rs), each run
//! twice to show the second run changes nothing more:
//!
//! - NVLink domain failure: the domain's nodes drained, its jobs requeued; the job that does
//!   not need NVLink is pointed at the pools without the domain, the one that does keeps its
//!   NVLink partitions.
//! - Excessive preemptions: the tier leaves the spot partitions' `AllowQos`, its pending jobs
//!   leave them (or are held), and only the job whose batch script asks for the checkpoint
//!   signal gets `USR1`.
//! - Topology mismatch: the node drained, its NVLink job requeued, a pending job without
//!   NVLink needs moved to the PCIe partitions with the reason in its `Comment`.

use std::time::Duration;

use placid_lang::model::Model;
use placid_targets::playbooks::{self, DOMAIN_FAILURE_DIR};
use placid_tests::slurm::{Cluster, Options, StartError, should_run, test_model, wait_until, write_slurm};

/// The cluster example's live model, its Slurm files and the playbook `path`, on a cluster
/// of its own.
struct Live {
    cluster: Cluster,
    /// One cluster at a time: three starting at once on two cores time out now and then.
    _alone: std::sync::MutexGuard<'static, ()>,
    script: String,
    _generated: tempfile::TempDir,
}

fn start(model: &Model, path: &str) -> Live {
    start_with(model, path, &[])
}

/// [`start`], writing the playbooks `others` too, beside the first.
fn start_with(model: &Model, path: &str, others: &[&str]) -> Live {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed while holding it leaves it poisoned; the next still runs.
    let alone = ONE_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(model, generated.path());
    let script = playbooks::emit(model).into_iter().find(|artifact| artifact.path == path).unwrap_or_else(|| panic!("no playbook {path}"));
    let script_path = generated.path().join("playbook.sh");
    std::fs::write(&script_path, &script.bytes).expect("write the playbook");
    for (index, other) in others.iter().enumerate() {
        let artifact =
            playbooks::emit(model).into_iter().find(|artifact| artifact.path == *other).unwrap_or_else(|| panic!("no playbook {other}"));
        std::fs::write(generated.path().join(format!("other-{index}.sh")), &artifact.bytes).expect("write the playbook");
    }
    let options = Options { accounting: true, slurmds: true, root: None };
    let cluster = match Cluster::start(generated.path(), &options) {
        Ok(cluster) => cluster,
        Err(StartError::Rejected(output)) => panic!("Slurm rejected the generated configuration:\n{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed: {message}"),
    };
    cluster.add_root_user(&["vision".to_owned(), "speech".to_owned(), "res".to_owned()]);
    Live { cluster, _alone: alone, script: script_path.to_string_lossy().into_owned(), _generated: generated }
}

impl Live {
    /// Runs the playbook with `args`; panics when it fails. Returns its output.
    fn run(&self, args: &[&str]) -> String {
        self.run_script(&self.script, args)
    }

    /// Runs the `index`-th of [`start_with`]'s other playbooks.
    fn run_other(&self, index: usize, args: &[&str]) -> String {
        let path = std::path::Path::new(&self.script).with_file_name(format!("other-{index}.sh"));
        self.run_script(&path.to_string_lossy(), args)
    }

    fn run_script(&self, script: &str, args: &[&str]) -> String {
        let all: Vec<&str> = std::iter::once(script).chain(args.iter().copied()).collect();
        let output = self.cluster.run_with_env("bash", &all, &[("PLACID_CHECKPOINT_GRACE", "0")]);
        let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        assert!(output.status.success(), "the playbook failed:\n{text}");
        text
    }

    fn field(&self, kind: &str, name: &str, key: &str) -> String {
        self.cluster.show(kind, name).get(key).cloned().unwrap_or_default()
    }
}

/// Submits a model-parallel job (job_submit.lua gives it an `nvlink_*` constraint) of all four
/// GPUs of `node`, in the `nvlink` pool; its id.
fn model_parallel_on(cluster: &Cluster, node: &str) -> String {
    cluster
        .sbatch(&[
            "-A",
            "vision",
            "--qos=p1",
            "-p",
            "nvlink",
            "-w",
            node,
            "--gpus-per-node=4",
            "-C",
            "class_model-parallel",
            "-t",
            "10",
            "--wrap",
            "sleep 300",
        ])
        .unwrap_or_else(|error| panic!("a model-parallel job on {node}: {error}"))
}

#[test]
fn the_domain_failure_playbook_drains_the_domain_and_requeues_its_jobs() {
    let test = "the_domain_failure_playbook_drains_the_domain_and_requeues_its_jobs";
    if !should_run(test, true, None) {
        return;
    }
    let live = start(&test_model(), &format!("{DOMAIN_FAILURE_DIR}/nvl-a.slurm.sh"));
    let cluster = &live.cluster;

    let needs_nvlink = model_parallel_on(cluster, "rv-a-01");
    let movable = cluster
        .sbatch(&["-A", "vision", "--qos=p1", "-p", "nvlink", "-w", "rv-a-02", "--gpus-per-node=1", "-t", "10", "--wrap", "sleep 300"])
        .expect("a job without NVLink needs on nvl-a");
    for job in [&needs_nvlink, &movable] {
        assert_eq!(cluster.wait_job(job, &["RUNNING"], Duration::from_secs(30)), "RUNNING", "job {job} did not start");
    }

    let partition = |job: &str| cluster.show("job", job).get("Partition").cloned().unwrap_or_default();
    let nvlink_partitions = partition(&needs_nvlink);
    let first_out = live.run(&[]);

    for node in ["rv-a-01", "rv-a-02", "rv-a-03", "rv-a-04"] {
        let state = cluster.show("node", node).get("State").cloned().unwrap_or_default();
        assert!(state.contains("DRAIN"), "{node} is not drained: {state}\n{first_out}");
    }
    for node in ["rv-b-01", "rv-b-04"] {
        let state = cluster.show("node", node).get("State").cloned().unwrap_or_default();
        assert!(!state.contains("DRAIN"), "{node} of the other domain was drained: {state}");
    }
    let restarts = |job: &str| cluster.show("job", job).get("Restarts").cloned().unwrap_or_default();
    for job in [&needs_nvlink, &movable] {
        assert!(
            wait_until(Duration::from_secs(20), || restarts(job) == "1"),
            "job {job} was not requeued: {:?}\n{first_out}",
            cluster.show("job", job)
        );
    }
    // A running job shows the partition it runs in, a pending one all it may use.
    let after = partition(&needs_nvlink);
    assert!(
        after.split(',').any(|name| name == nvlink_partitions) && after.split(',').all(|name| name.starts_with("nvlink")),
        "the NVLink job keeps its NVLink partitions: {after}\n{first_out}"
    );
    assert!(first_out.contains(&format!("job {needs_nvlink}: needs NVLink")), "{first_out}");
    let moved = partition(&movable);
    assert!(
        !moved.is_empty() && moved.split(',').all(|partition| !partition.starts_with("nvl-a") && !partition.starts_with("nvlink")),
        "job {movable} went to {moved}\n{first_out}"
    );
    // Nothing of the failed domain runs it again.
    for job in [&needs_nvlink, &movable] {
        let nodes = cluster.show("job", job).get("NodeList").cloned().unwrap_or_default();
        assert!(!nodes.contains("rv-a"), "job {job} runs on the failed domain again: {nodes}");
    }

    live.run(&[]);
    for job in [&needs_nvlink, &movable] {
        assert_eq!(restarts(job), "1", "the second run requeued job {job} again");
    }
    cluster.cancel_all();
}

#[test]
fn the_preemption_playbook_checkpoints_and_keeps_the_tier_off_spot_capacity() {
    let test = "the_preemption_playbook_checkpoints_and_keeps_the_tier_off_spot_capacity";
    if !should_run(test, true, None) {
        return;
    }
    let live = start_with(
        &test_model(),
        "runbooks/playbooks/excessive-preemptions/P1.slurm.sh",
        &["runbooks/playbooks/excessive-preemptions/P2.slurm.sh"],
    );
    let cluster = &live.cluster;
    let marker = cluster.path("jobs/checkpointed");
    let inner_marker = cluster.inner("jobs/checkpointed").display().to_string();
    // A batch script with placid's checkpoint directive and a handler, and one without either.
    let handled =
        format!("#!/bin/bash\n#SBATCH --signal=B:USR1@30\ntrap 'echo saved > {inner_marker}' USR1\nwhile true; do sleep 1; done\n");
    let checkpointing = cluster
        .sbatch_script("handled.sh", &handled, &["-A", "vision", "--qos=p1", "-p", "x86_190", "-w", "x86-01", "--gpus=1", "-t", "10"])
        .expect("a checkpointing job");
    let plain = cluster
        .sbatch(&["-A", "vision", "--qos=p1", "-p", "x86_190", "-w", "x86-02", "--gpus=1", "-t", "10", "--wrap", "sleep 300"])
        .expect("a job without a checkpoint handler");
    for job in [&checkpointing, &plain] {
        assert_eq!(cluster.wait_job(job, &["RUNNING"], Duration::from_secs(30)), "RUNNING", "job {job} did not start");
    }
    let later = ["--begin=now+1hour", "-t", "10", "--gpus=1", "--wrap", "sleep 1"];
    let mixed = cluster.sbatch(&[&["-A", "vision", "--qos=p1", "-p", "x86_190,x86_70"], &later[..]].concat()).expect("a pending job");
    let only_spot = cluster.sbatch(&[&["-A", "vision", "--qos=p1", "-p", "x86-spot"], &later[..]].concat()).expect("a pending spot job");
    let other_tier = cluster.sbatch(&[&["-A", "vision", "--qos=p2", "-p", "x86-spot"], &later[..]].concat()).expect("a pending P2 job");

    let first = live.run(&[]);
    for partition in ["x86-spot", "x86_70", "mixed_70"] {
        assert_eq!(live.field("partition", partition, "AllowQos"), "p2", "{partition}\n{first}");
    }
    assert_eq!(live.field("partition", "x86_190", "AllowQos"), "p1,p2", "a partition without spot nodes changed\n{first}");
    assert_eq!(live.field("job", &mixed, "Partition"), "x86_190", "{first}");
    assert_eq!(live.field("job", &only_spot, "Priority"), "0", "the spot-only job is not held\n{first}");
    assert_eq!(live.field("job", &other_tier, "Partition"), "x86-spot", "another tier's job moved\n{first}");
    assert_ne!(live.field("job", &other_tier, "Priority"), "0", "another tier's job was held\n{first}");
    assert!(wait_until(Duration::from_secs(20), || marker.exists()), "the checkpointing job got no USR1\n{first}");
    assert!(first.contains(&format!("job {plain}: its batch script has no checkpoint signal; left alone")), "{first}");
    for job in [&checkpointing, &plain] {
        assert_eq!(live.field("job", job, "JobState"), "RUNNING", "job {job} did not survive the playbook\n{first}");
    }

    let second = live.run(&[]);
    assert!(!second.contains("off spot") && !second.contains("AllowQos"), "the second run changed more:\n{second}");
    assert_eq!(live.field("partition", "x86-spot", "AllowQos"), "p2");
    assert_eq!(live.field("job", &mixed, "Partition"), "x86_190");

    // P2's playbook after P1's: nothing may use the spot partitions, which stop.
    let p2 = live.run_other(0, &[]);
    for partition in ["x86-spot", "x86_70", "mixed_70"] {
        assert_eq!(live.field("partition", partition, "State"), "INACTIVE", "{partition}\n{p2}");
    }
    // Undone in the other order, every partition is back to slurm.conf's access.
    live.run_other(0, &["--undo"]);
    assert_eq!(live.field("partition", "x86-spot", "State"), "UP");
    assert_eq!(live.field("partition", "x86-spot", "AllowQos"), "p2");
    let undo = live.run(&["--undo"]);
    let sorted = |text: String| {
        let mut list: Vec<String> = text.split(',').map(str::to_owned).collect();
        list.sort();
        list.join(",")
    };
    for partition in ["x86-spot", "x86_70", "mixed_70"] {
        assert_eq!(sorted(live.field("partition", partition, "AllowQos")), "p1,p2", "{partition}\n{undo}");
        assert_eq!(live.field("partition", partition, "State"), "UP", "{partition}");
    }
    assert_ne!(live.field("job", &only_spot, "Priority"), "0", "the held job was not released\n{undo}");
    assert_eq!(live.field("job", &only_spot, "Partition"), "x86-spot");
    cluster.cancel_all();
}

#[test]
fn the_topology_playbook_drains_the_node_and_sends_pending_jobs_to_pcie_hosts() {
    let test = "the_topology_playbook_drains_the_node_and_sends_pending_jobs_to_pcie_hosts";
    if !should_run(test, true, None) {
        return;
    }
    let live = start(&test_model(), "runbooks/playbooks/topology-mismatch.slurm.sh");
    let cluster = &live.cluster;
    let needs_nvlink = model_parallel_on(cluster, "rv-a-01");
    assert_eq!(cluster.wait_job(&needs_nvlink, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let pending = cluster
        .sbatch(&["-A", "vision", "--qos=p1", "-p", "nvlink", "--begin=now+1hour", "--gpus=1", "-t", "10", "--wrap", "sleep 1"])
        .expect("a pending job without NVLink needs");
    let elsewhere = cluster
        .sbatch(&["-A", "vision", "--qos=p1", "-p", "nvl-b", "--begin=now+1hour", "--gpus=1", "-t", "10", "--wrap", "sleep 1"])
        .expect("a pending job on the other domain");

    let refused = cluster.run_with_env("bash", &[&live.script, "no-such-node"], &[]);
    assert_eq!(refused.status.code(), Some(2), "an undeclared node was accepted");
    let first = live.run(&["rv-a-01"]);
    assert!(live.field("node", "rv-a-01", "State").contains("DRAIN"), "{first}");
    assert!(!live.field("node", "rv-a-02", "State").contains("DRAIN"), "a node not named was drained\n{first}");
    assert!(
        wait_until(Duration::from_secs(20), || live.field("job", &needs_nvlink, "Restarts") == "1"),
        "the NVLink job was not requeued\n{first}"
    );
    assert!(live.field("job", &needs_nvlink, "Partition").split(',').all(|name| name.starts_with("nvlink")), "{first}");
    let moved = live.field("job", &pending, "Partition");
    assert_eq!(moved, "x86-spot,x86_70,x86_190", "{first}");
    let comment = cluster.stdout("squeue", &["-h", "-j", &pending, "-o", "%k"]);
    assert!(comment.contains("placid: fell back to PCIe hosts: topology mismatch on rv-a-01"), "{comment}");
    assert_eq!(live.field("job", &elsewhere, "Partition"), "nvl-b", "a job that cannot land on rv-a-01 moved\n{first}");

    let second = live.run(&["rv-a-01"]);
    assert!(!second.contains("fell back"), "the second run moved a job again:\n{second}");
    assert_eq!(live.field("job", &needs_nvlink, "Restarts"), "1", "the second run requeued again");
    cluster.cancel_all();
}
