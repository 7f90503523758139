//! Issue 18's bar for playbooks: the NVLink domain-failure playbook, run against a real Slurm
//! 22.05 (the harness of slurm_live.rs), drains the domain's nodes and requeues its jobs;
//! the job that does not need NVLink is pointed at the pools without the domain, the one that
//! does keeps its NVLink partitions; a second run changes nothing more.

use std::time::Duration;

use placid_targets::playbooks::{self, DOMAIN_FAILURE_DIR};
use placid_tests::slurm::{Cluster, Options, StartError, should_run, test_model, wait_until, write_slurm};

#[test]
fn the_domain_failure_playbook_drains_the_domain_and_requeues_its_jobs() {
    let test = "the_domain_failure_playbook_drains_the_domain_and_requeues_its_jobs";
    if !should_run(test, true, None) {
        return;
    }
    let model = test_model();
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(&model, generated.path());
    let script = playbooks::emit(&model)
        .into_iter()
        .find(|artifact| artifact.path == format!("{DOMAIN_FAILURE_DIR}/nvl-a.slurm.sh"))
        .expect("a domain-failure playbook for nvl-a");
    let script_path = generated.path().join("nvl-a.slurm.sh");
    std::fs::write(&script_path, &script.bytes).expect("write the playbook");
    let script_path = script_path.to_string_lossy().into_owned();

    let port_base = 24_000 + u16::try_from(std::process::id() % 400).unwrap_or(0) * 10;
    let options = Options { accounting: true, slurmds: true, port_base, root: None };
    let cluster = match Cluster::start(generated.path(), &options) {
        Ok(cluster) => cluster,
        Err(StartError::Rejected(output)) => panic!("Slurm rejected the generated configuration:\n{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed: {message}"),
    };
    cluster.add_root_user(&["vision".to_owned(), "speech".to_owned(), "res".to_owned()]);

    let needs_nvlink = cluster
        .sbatch(&[
            "-A",
            "vision",
            "--qos=p1",
            "-p",
            "nvlink",
            "-w",
            "rv-a-01",
            "--gpus-per-node=4",
            "-C",
            "class_model-parallel",
            "-t",
            "10",
            "--wrap",
            "sleep 300",
        ])
        .expect("a model-parallel job on nvl-a");
    let movable = cluster
        .sbatch(&["-A", "vision", "--qos=p1", "-p", "nvlink", "-w", "rv-a-02", "--gpus-per-node=1", "-t", "10", "--wrap", "sleep 300"])
        .expect("a job without NVLink needs on nvl-a");
    for job in [&needs_nvlink, &movable] {
        assert_eq!(cluster.wait_job(job, &["RUNNING"], Duration::from_secs(30)), "RUNNING", "job {job} did not start");
    }

    let partition = |job: &str| cluster.show("job", job).get("Partition").cloned().unwrap_or_default();
    let nvlink_partitions = partition(&needs_nvlink);
    let run = || cluster.run_with_env("bash", &[&script_path], &[("PLACID_CHECKPOINT_GRACE", "0")]);
    let first = run();
    let first_out = format!("{}{}", String::from_utf8_lossy(&first.stdout), String::from_utf8_lossy(&first.stderr));
    assert!(first.status.success(), "the playbook failed:\n{first_out}");

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

    let second = run();
    assert!(second.status.success(), "the second run failed: {}", String::from_utf8_lossy(&second.stderr));
    for job in [&needs_nvlink, &movable] {
        assert_eq!(restarts(job), "1", "the second run requeued job {job} again");
    }
    cluster.cancel_all();
}
