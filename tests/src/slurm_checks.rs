//! Behaviour checks of the accounting profile (QOS tiers, associations, budgets) shared by the
//! live tests of every release: slurm_live.rs runs them on the host's Slurm 22.05 and
//! slurm_trixie.rs on Slurm 24.11 in the trixie root, so both releases are held to one
//! definition of "obeys the policy". Each takes a started [`Cluster`] of [`test_model`]'s
//! output with accounting on; each job check cancels its jobs before it returns.
//!
//! [`test_model`]: crate::slurm::test_model

use std::collections::BTreeSet;
use std::time::Duration;

use placid_lang::model::Model;

use crate::slurm::{Cluster, wait_until};

/// accounts.sh ran twice: both runs succeeded, and the second added nothing. Then root may
/// submit as every team (user associations are site data, not policy).
pub fn accounts_sh_is_idempotent(cluster: &Cluster) {
    assert_eq!(cluster.accounts_runs.len(), 2, "accounts.sh must run twice");
    for (run, output) in cluster.accounts_runs.iter().enumerate() {
        assert!(output.status.success(), "accounts.sh run {} failed: {}", run + 1, String::from_utf8_lossy(&output.stderr));
    }
    let second = String::from_utf8_lossy(&cluster.accounts_runs[1].stdout).into_owned();
    assert!(!second.contains("Adding"), "the second accounts.sh run added something:\n{second}");
    cluster.add_root_user(&["vision".to_owned(), "speech".to_owned(), "res".to_owned()]);
}

/// slurmctld's log has no `error:`/`fatal:` line beyond the benign ones; `when` names the phase.
pub fn log_is_clean(cluster: &Cluster, when: &str) {
    let errors = cluster.unexpected_log_errors();
    assert!(errors.is_empty(), "slurmctld logged errors {when}:\n{}", errors.join("\n"));
}

/// Nodes, pools (partitions), QOS, associations and gres.conf Links read back as the policy
/// says. The topology is release-specific (tree or block), so each test checks it itself.
pub fn policy_reads_back(cluster: &Cluster, model: &Model) {
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
    // P0 reserves in nvl-a and runs nowhere else (and never on spot capacity).
    assert_eq!(partition.get("AllowQos").map(String::as_str), Some("p1,p2"));
    assert_eq!(cluster.show("partition", "nvl-a").get("AllowQos").map(String::as_str), Some("p0,p1,p2"));
    assert_eq!(partition.get("TRESBillingWeights").map(String::as_str), Some("CPU=0,Mem=0,GRES/gpu=420"));
    // Pools spanning GPU prices are one partition per price, so each job bills its nodes' price.
    let partitions = cluster.stdout("sinfo", &["-h", "-o", "%R"]);
    let partitions: BTreeSet<&str> = partitions.lines().collect();
    let expected = ["nvl-a", "nvl-b", "nvlink_310", "nvlink_420", "x86-spot", "x86_70", "x86_190", "mixed_70", "mixed_190", "mixed_420"];
    assert_eq!(partitions, expected.into_iter().collect(), "one partition per pool and price");
    assert_eq!(model.pools.len(), 6);

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
    // x86-01: GPUs 0-1 on NUMA node (and socket) 0 of 2, GPUs 2-3 on 1, of 48 cores. The
    // riscv64 nodes' two NUMA nodes share one socket, which Cores= cannot split (gres.rs).
    let cores = cluster.run("slurmd", &["-f", &cluster.inner("etc/slurm.conf").display().to_string(), "-N", "x86-01", "-G"]);
    let cores = String::from_utf8_lossy(&cores.stdout).into_owned() + &String::from_utf8_lossy(&cores.stderr);
    assert!(cores.contains("Cores=0-23") && cores.contains("Cores=24-47"), "gres.conf Cores not read back:\n{cores}");
}

/// job_submit.lua refuses a tier the team may not use.
pub fn team_tiers_are_enforced(cluster: &Cluster) {
    let refused = cluster.sbatch(&["-A", "res", "--qos=p0", "-p", "x86", "--gpus=1", "--wrap", "true"]);
    let message = refused.expect_err("research may not use P0");
    assert!(message.contains("team res may not use tier p0"), "{message}");
}

/// P0 preempts P1, which receives its checkpoint signal (USR1) and is requeued, and P2,
/// which is cancelled and not requeued. `tier` gives the submit options that put a job in a
/// tier on the nodes of domain nvl-a (P0's reserved pool): `--qos` with accounting, the tier's
/// partition and a domain constraint without. P1 and P2 fill its 4 nodes, so P0's 12 GPUs
/// (its whole reservation) need both of them preempted.
pub fn p0_preempts_p1_with_checkpoint_signal_and_cancels_p2(cluster: &Cluster, tier: &dyn Fn(&str) -> Vec<String>) {
    let marker = cluster.path("jobs/p1-got-usr1");
    let p1_script = format!("trap 'touch {}' USR1; while true; do sleep 1; done", cluster.inner("jobs/p1-got-usr1").display());
    let submit = |account: &str, tier_name: &str, nodes: &str, extra: &[&str]| {
        // A run time of minutes: with `safe` enforcement a job's cost at its limit must fit the
        // team's budget, and a tier's multi-day maximum would not.
        let mut args: Vec<String> =
            vec!["-A".into(), account.into(), "-N".into(), nodes.into(), "--gpus-per-node=4".into(), "-t".into(), "10".into()];
        args.extend(tier(tier_name));
        args.extend(extra.iter().map(|arg| (*arg).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        cluster.sbatch(&args).unwrap_or_else(|error| panic!("{tier_name} job: {error}"))
    };
    let p2 = submit("speech", "p2", "2", &["--wrap", "sleep 600"]);
    let p1 = submit("vision", "p1", "2", &["--signal=B:USR1@60", "--wrap", &p1_script]);
    assert_eq!(cluster.wait_job(&p2, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    assert_eq!(cluster.wait_job(&p1, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    assert_eq!(cluster.show("job", &p1).get("Requeue").map(String::as_str), Some("1"), "lua makes P1 requeueable");

    let p0 = submit("vision", "p0", "3", &["--wrap", "sleep 600"]);
    assert_eq!(cluster.wait_job(&p0, &["RUNNING"], Duration::from_secs(90)), "RUNNING", "P0 must preempt its way in");
    assert!(wait_until(Duration::from_secs(10), || marker.exists()), "P1 did not get its checkpoint signal");
    let p1_job = cluster.show("job", &p1);
    assert!(p1_job.get("Restarts").is_some_and(|restarts| restarts != "0"), "P1 was not requeued: {p1_job:?}");
    let p2_state = cluster.wait_job(&p2, &["PREEMPTED", "CANCELLED"], Duration::from_secs(10));
    assert!(p2_state == "PREEMPTED" || p2_state == "CANCELLED", "P2 was not cancelled: {p2_state}");
    assert_eq!(cluster.show("job", &p2).get("Restarts").map(String::as_str), Some("0"), "P2 must not be requeued");
    cluster.cancel_all();
}

/// [`p0_preempts_p1_with_checkpoint_signal_and_cancels_p2`]'s tier options with accounting:
/// the tier's QOS in partition nvl-a.
pub fn qos_on_nvl_a(tier: &str) -> Vec<String> {
    vec![format!("--qos={tier}"), "-p".into(), "nvl-a".into()]
}

/// P0 holds at most its reservation, as on Kubernetes: 12 GPUs of nvl-a run, a 13th-16th
/// pends on the QOS's GPU cap although nvl-a has a free node, and P0 is refused outside nvl-a
/// (nvl-b, and the spot pool).
pub fn p0_cannot_exceed_its_reservation(cluster: &Cluster) {
    let p0 = |nodes: &str, partition: &str| {
        cluster.sbatch(&["-A", "vision", "--qos=p0", "-p", partition, "-N", nodes, "--gpus-per-node=4", "-t", "10", "--wrap", "sleep 600"])
    };
    let within = p0("3", "nvl-a").expect("12 GPUs of P0 on nvl-a");
    assert_eq!(cluster.wait_job(&within, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let beyond = p0("1", "nvl-a").expect("a further P0 job is queued");
    // slurmctld gives a pending job its reason at its next scheduling pass, which on a loaded
    // machine can come seconds after the submission: wait for one, up to half a minute.
    let started = std::time::Instant::now();
    let mut job = cluster.show("job", &beyond);
    while job.get("Reason").is_none_or(|reason| reason == "None") && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(500));
        job = cluster.show("job", &beyond);
    }
    assert_eq!(job.get("JobState").map(String::as_str), Some("PENDING"), "P0 ran past its reservation: {job:?}");
    assert!(job.get("Reason").is_some_and(|reason| reason.starts_with("QOSGrp")), "{job:?}");
    for partition in ["nvl-b", "x86-spot"] {
        let refused = p0("1", partition).expect_err("P0 is refused outside its reserved pool");
        assert!(refused.contains(&format!("tier p0 may not run in partition {partition}")), "{refused}");
    }
    cluster.cancel_all();
}

/// A team past its daily budget is held: its next job pends with `AssocGrpBillingMinutes`.
pub fn team_over_budget_is_held(cluster: &Cluster) {
    // research: (usd)0.25 a day = 1500 billing-minutes; on-demand x86 GPUs bill 190 a minute,
    // so one 1-GPU 5-minute job (950) fits and a second one would exceed the budget.
    let args = ["-A", "res", "--qos=p2", "-p", "x86_190", "--gpus-per-node=1", "-t", "5", "--wrap", "sleep 600"];
    let first = cluster.sbatch(&args).expect("first research job");
    assert_eq!(cluster.wait_job(&first, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
    let second = cluster.sbatch(&args).expect("second research job is queued");
    std::thread::sleep(Duration::from_secs(3));
    let job = cluster.show("job", &second);
    assert_eq!(job.get("JobState").map(String::as_str), Some("PENDING"), "{job:?}");
    assert_eq!(job.get("Reason").map(String::as_str), Some("AssocGrpBillingMinutes"), "{job:?}");
    cluster.cancel_all();
}

/// The site's own `SchedulerParameters` and `SlurmctldParameters` (the harness's site file
/// sets them, then merges site-requirements.conf in) survive the include next to the
/// policy's items, and the policy's job_submit.lua is loaded.
pub fn site_settings_survive_the_include(cluster: &Cluster) {
    let config = cluster.stdout("scontrol", &["show", "config"]);
    let value = |key: &str| {
        config
            .lines()
            .find_map(|line| line.split_once('=').filter(|(name, _)| name.trim() == key).map(|(_, value)| value.trim().to_owned()))
    };
    for (key, site_items) in crate::slurm::SITE_OWN_SETTINGS {
        let effective = value(key).unwrap_or_else(|| panic!("{key} is not set:\n{config}"));
        let items: BTreeSet<&str> = effective.split(',').collect();
        for item in site_items.split(',') {
            assert!(items.contains(item), "the site's {key} item {item} was lost: {effective}");
        }
    }
    let scheduler = value("SchedulerParameters").unwrap_or_default();
    assert!(scheduler.split(',').any(|item| item == "bf_continue"), "the policy's SchedulerParameters are missing: {scheduler}");
    let ctld = value("SlurmctldParameters").unwrap_or_default();
    assert!(ctld.contains("preempt_send_user_signal"), "the policy's SlurmctldParameters are missing: {ctld}");
    assert_eq!(value("JobSubmitPlugins").as_deref(), Some("lua"), "{config}");
    assert!(value("SelectTypeParameters").is_some_and(|value| value.contains("CR_CORE_MEMORY")), "{config}");
}

/// A stage's run time is its job's limit: the generated `time="26h"` stage (prod-finetune)
/// is accepted with `TimeLimit=1-02:00:00`; a stage with an expected and a maximum time
/// (vit-train's train, on a backfill tier) gets both; a job naming no time gets its tier's
/// maximum, and one asking more than the tier's maximum is refused. Jobs are held, so they
/// take no nodes.
pub fn run_times_are_the_limits(cluster: &Cluster, generated: &std::path::Path) {
    let script = |plan: &str, stage: &str| {
        std::fs::read_to_string(generated.join(format!("plans/{plan}/{stage}.sbatch"))).expect("the plan's sbatch script")
    };
    let finetune =
        cluster.sbatch_script("finetune.sbatch", &script("prod-finetune", "finetune"), &["--hold"]).expect("finetune is accepted");
    let job = cluster.show("job", &finetune);
    assert_eq!(job.get("TimeLimit").map(String::as_str), Some("1-02:00:00"), "{job:?}");
    let train = cluster.sbatch_script("train.sbatch", &script("vit-train", "train"), &["--hold"]).expect("train is accepted");
    let job = cluster.show("job", &train);
    assert_eq!(job.get("TimeLimit").map(String::as_str), Some("1-06:00:00"), "{job:?}");
    assert_eq!(job.get("TimeMin").map(String::as_str), Some("20:00:00"), "{job:?}");

    let untimed = cluster.sbatch(&["--hold", "-A", "vision", "--qos=p2", "-p", "x86", "--gpus=1", "--wrap", "true"]).expect("p2 job");
    let job = cluster.show("job", &untimed);
    assert_eq!(job.get("TimeLimit").map(String::as_str), Some("12:00:00"), "a job without a run time gets P2's maximum: {job:?}");
    let refused = cluster.sbatch(&["--hold", "-A", "vision", "--qos=p2", "-p", "x86", "--gpus=1", "-t", "13:00:00", "--wrap", "true"]);
    let message = refused.expect_err("a P2 job over P2's 12h maximum is refused");
    assert!(message.contains("QOS"), "{message}");
    cluster.cancel_all();
}

/// A job in the `mixed` pool (x86 spot at 70, x86 on-demand at 190 and NVLink nodes at 420
/// cents a GPU-hour) is billed at the price of the node it runs on, as accounting records it
/// (`sacct` AllocTRES `billing=`, per minute; a 1-GPU job's billing is the node's price).
pub fn mixed_pool_jobs_are_billed_at_their_nodes_price(cluster: &Cluster) {
    for (node, price) in [("x86-03", "70"), ("x86-01", "190"), ("rv-b-01", "420")] {
        let job = cluster
            .sbatch(&["-A", "speech", "--qos=p2", "-p", "mixed", "-w", node, "--gpus=1", "-t", "10", "--wrap", "sleep 600"])
            .unwrap_or_else(|error| panic!("a mixed-pool job on {node}: {error}"));
        assert_eq!(cluster.wait_job(&job, &["RUNNING"], Duration::from_secs(30)), "RUNNING");
        let expected = format!("billing={price}");
        let mut recorded = String::new();
        let billed = wait_until(Duration::from_secs(15), || {
            recorded = cluster.stdout("sacct", &["-n", "-P", "-X", "-j", &job, "-o", "AllocTRES"]);
            recorded.split(',').any(|tres| tres.trim() == expected)
        });
        assert!(billed, "the job on {node} is not billed {expected}: sacct AllocTRES {recorded:?}");
    }
    cluster.cancel_all();
    // A job of a class that prefers NVLink tries the pool's partitions with NVLink nodes first
    // (the engine ranks NVLink nodes first for it), then the others cheapest first.
    let held = cluster
        .sbatch(&["-A", "speech", "--qos=p2", "-p", "mixed", "--constraint=class_data-parallel", "--hold", "--gpus=1", "--wrap", "true"])
        .expect("a held data-parallel job");
    let partitions = cluster.show("job", &held).get("Partition").cloned().unwrap_or_default();
    assert_eq!(partitions, "mixed_420,mixed_70,mixed_190", "job_submit.lua's partition order for class data-parallel");
    cluster.cancel_all();
}

/// Plan asr-sweep (Pattern C, as [`crate::slurm::test_model`] shrinks it: 4 sweep trials,
/// top 2 by `val-wer`, 2 finalists) finishes although one sweep trial is cancelled while it
/// runs, as a preempted P2 trial is: the generated submit.sh starts the sweep, its promotion
/// step (`afterany`) ranks the trials that reported, and the finalists run the two best. The
/// stages run the command the policy declares (`placid-trainer ...`), found on the `PATH`;
/// here that is a stand-in whose trial 1 runs until it is cancelled.
pub fn plan_finishes_when_a_trial_is_cancelled(cluster: &Cluster, generated: &std::path::Path) {
    let plan = copy_plan(cluster, generated, "asr-sweep");
    // Sweep trial i reports val-wer 0.(9-i); trial 1 runs until it is cancelled. A finalist
    // reports the sweep trial it was given.
    let command = "#!/bin/sh\ntask=${SLURM_ARRAY_TASK_ID:-0}\ncase $SLURM_JOB_NAME in\n\
        *.sweep) if [ \"$task\" = 1 ]; then sleep 300; fi; echo \"val-wer 0.$((9 - task))\" > \"$PLACID_RESULT_FILE\" ;;\n\
        *.finalists) echo \"$PLACID_PROMOTED_TRIAL\" > \"$PLACID_RESULT_FILE\" ;;\nesac\n";
    let path = install_trainer(cluster, "jobs/stand-in", command);
    let output = cluster.run_with_env("sh", &[&cluster.inner("jobs/asr-sweep/submit.sh").display().to_string()], &[("PATH", &path)]);
    let printed = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "submit.sh failed: {printed}{}", String::from_utf8_lossy(&output.stderr));
    let sweep = printed.lines().find_map(|line| line.strip_prefix("sweep: job ")).expect("submit.sh prints the sweep job").to_owned();
    let cancelled = format!("{sweep}_1");
    assert_eq!(cluster.wait_job(&cancelled, &["RUNNING"], Duration::from_secs(30)), "RUNNING", "sweep trial 1 runs");
    assert!(cluster.run("scancel", &[&cancelled]).status.success());

    let results = plan.join("results");
    let finished = wait_until(Duration::from_secs(90), || (0..2).all(|task| results.join(format!("finalists/{task}.result")).exists()));
    let promoted = std::fs::read_to_string(results.join("sweep.promoted")).unwrap_or_default();
    assert!(finished, "the finalists did not run after a cancelled trial; promoted: {promoted:?}\n{}", cluster.stdout("squeue", &[]));
    let winners: Vec<&str> = promoted.lines().filter_map(|line| line.split_whitespace().next()).collect();
    assert_eq!(winners, ["3", "2"], "the two lowest val-wer among the trials that reported: {promoted}");
    for (task, winner) in winners.iter().enumerate() {
        let ran = std::fs::read_to_string(results.join(format!("finalists/{task}.result"))).unwrap_or_default();
        assert_eq!(ran.trim(), *winner, "finalist {task} ran another trial");
    }
    cluster.cancel_all();
    let _ = std::fs::remove_dir_all(&plan);
}

/// The plans of the cluster example run real work to the end with the shipped trainer
/// (`policy-examples/workloads/placid-trainer`, docs/stages.md): Pattern C (asr-sweep: 4 sweep
/// trials ranked by `val-wer`, 2 finalists) and Pattern B (prod-finetune, P0), side by side.
/// In the middle of the sweep a P1 job lands on a node its trials run on and preempts them:
/// each gets `USR1`, checkpoints, is requeued when its window ends, resumes at the step of its
/// last checkpoint and finishes; then the promotion ranks the sweep's real results and the
/// finalists continue the two best trials.
///
/// The engine, given the same submissions and the trials' reported results, predicts the same
/// run ([`PredictedPlanRun`]): as many sweep trials preempted, each requeued and finished,
/// nothing else preempted, the same winners, the finalists after the whole sweep.
///
/// The cluster runs `model` ([`plans_for_live`]'s), whose Slurm artifacts are in `generated`.
pub fn plans_run_real_work_through_a_preemption(cluster: &Cluster, generated: &std::path::Path, model: &Model) {
    let sweep_plan = copy_plan(cluster, generated, "asr-sweep");
    let finetune_plan = copy_plan(cluster, generated, "prod-finetune");
    let trainer = std::fs::read_to_string(crate::workspace_root().join("policy-examples/workloads/placid-trainer")).expect("the trainer");
    let path = install_trainer(cluster, "jobs/trainer", &trainer);
    let submit = |plan: &str| {
        let script = cluster.inner(&format!("jobs/{plan}/submit.sh")).display().to_string();
        let output = cluster.run_with_env("sh", &[&script], &[("PATH", &path)]);
        let printed = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "{plan}'s submit.sh failed: {printed}{}", String::from_utf8_lossy(&output.stderr));
        printed
    };
    let job_of = |printed: &str, stage: &str| {
        let prefix = format!("{stage}: job ");
        printed
            .lines()
            .find_map(|line| line.strip_prefix(prefix.as_str()))
            .unwrap_or_else(|| panic!("no {stage} job in {printed}"))
            .to_owned()
    };
    let submitted = std::time::Instant::now();
    let printed = submit("asr-sweep");
    let (sweep, finalists) = (job_of(&printed, "sweep"), job_of(&printed, "finalists"));
    let finetune = job_of(&submit("prod-finetune"), "finetune");
    let results = sweep_plan.join("results");
    let trial = |task: usize| format!("{sweep}_{task}");
    let state = |job: &str| cluster.show("job", job).get("JobState").cloned().unwrap_or_default();
    let running = wait_until(Duration::from_secs(120), || (0..4).all(|task| state(&trial(task)) == "RUNNING"));
    assert!(running, "the sweep's trials did not all run:\n{}", cluster.stdout("squeue", &[]));
    let placed: Vec<String> = (0..4).map(|task| cluster.show("job", &trial(task)).get("NodeList").cloned().unwrap_or_default()).collect();
    // A few steps in: the middle of the sweep. A P1 job takes three whole nodes of nvl-b,
    // where the sweep's trials run (their class prefers NVLink), two per node on two nodes: it
    // must preempt the two trials of one of them.
    std::thread::sleep(Duration::from_secs(5));
    let preemptor_at = submitted.elapsed().as_secs();
    let preemptor = cluster
        .sbatch(&["-A", PREEMPTOR_TEAM, "--qos=p1", "-p", PREEMPTOR_POOL, "-N", "3", "--gpus-per-node=4", "-t", "5", "--wrap", "sleep 15"])
        .expect("the P1 job");
    assert_eq!(cluster.wait_job(&preemptor, &["RUNNING"], Duration::from_secs(60)), "RUNNING", "P1 preempts its way in");
    let node = cluster.show("job", &preemptor).get("NodeList").cloned().unwrap_or_default();

    let plans_done = || {
        (0..2).all(|task| results.join(format!("finalists/{task}.result")).exists())
            && finetune_plan.join("results/finetune/0.result").exists()
    };
    assert!(
        wait_until(Duration::from_secs(420), plans_done),
        "the plans did not finish:\n{}\n{}",
        cluster.stdout("squeue", &[]),
        history_of(&results)
    );
    for job in [finetune.clone(), format!("{finalists}_0"), format!("{finalists}_1")] {
        assert_eq!(cluster.wait_job(&job, &["COMPLETED"], Duration::from_secs(30)), "COMPLETED", "{job} ran to its end");
    }
    for task in 0..4 {
        assert_eq!(state(&trial(task)), "COMPLETED", "sweep trial {task} ran to its end:\n{}", history_of(&results));
    }

    // Each preempted trial was requeued, and resumed at its last checkpoint.
    let preempted: Vec<usize> =
        (0..4).filter(|task| cluster.show("job", &trial(*task)).get("Restarts").is_some_and(|restarts| restarts != "0")).collect();
    assert!(!preempted.is_empty(), "the P1 job preempted no sweep trial on {node}:\n{}", history_of(&results));
    let preempted_count = preempted.len();
    assert_eq!(cluster.show("job", &finetune).get("Restarts").map(String::as_str), Some("0"), "the P0 finetune was preempted");
    for task in preempted {
        let history = std::fs::read_to_string(results.join(format!("sweep/checkpoints/{task}/history"))).unwrap_or_default();
        resumed_where_it_saved(&history);
    }

    // The finalists ran the best sweep trials, as the sweep's own results rank them.
    let mut reported: Vec<(f64, usize)> = (0..4)
        .filter_map(|trial| {
            let text = std::fs::read_to_string(results.join(format!("sweep/{trial}.result"))).ok()?;
            let value = text.lines().find_map(|line| line.strip_prefix("val-wer "))?.trim().parse().ok()?;
            Some((value, trial))
        })
        .collect();
    assert_eq!(reported.len(), 4, "every sweep trial reported: {reported:?}");
    reported.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let best: Vec<String> = reported.iter().take(2).map(|(_, trial)| trial.to_string()).collect();
    let promoted = std::fs::read_to_string(results.join("sweep.promoted")).unwrap_or_default();
    let winners: Vec<&str> = promoted.lines().filter_map(|line| line.split_whitespace().next()).collect();
    assert_eq!(winners, best, "promoted {promoted:?}, sweep results {reported:?}");
    // Finalist i continued winner i's hyperparameter.
    let learning_rate = |file: String| {
        let text = std::fs::read_to_string(results.join(&file)).unwrap_or_default();
        text.lines().find_map(|line| line.strip_prefix("learning-rate ")).map(str::to_owned)
    };
    for (task, winner) in winners.iter().enumerate() {
        let continued = learning_rate(format!("finalists/{task}.result"));
        assert!(continued.is_some(), "finalist {task} reported no learning rate");
        assert_eq!(continued, learning_rate(format!("sweep/{winner}.result")), "finalist {task} did not continue trial {winner}");
    }

    // The engine predicts the same run, given the same submissions and the trials' results.
    let metrics: Vec<f64> = {
        let mut by_trial = reported.clone();
        by_trial.sort_by_key(|(_, trial)| *trial);
        by_trial.into_iter().map(|(value, _)| value).collect()
    };
    let predicted = PredictedPlanRun::of(model, preemptor_at, &metrics);
    assert_eq!(predicted.placed, placed, "the engine places the sweep's trials on other nodes than Slurm did");
    assert_eq!(predicted.preempted.len(), preempted_count, "the engine preempts other sweep trials than Slurm did: {predicted:?}");
    assert!(predicted.others_preempted.is_empty(), "the engine preempts jobs outside the sweep: {predicted:?}");
    assert!(predicted.preempted.iter().all(|trial| predicted.requeued.contains(trial)), "the engine requeues every victim: {predicted:?}");
    assert!(predicted.unfinished.is_empty(), "the engine leaves jobs unfinished: {predicted:?}");
    let predicted_winners: Vec<String> = predicted.promoted.iter().map(u32::to_string).collect();
    assert_eq!(predicted_winners, best, "the engine promotes other trials: {predicted:?}");
    assert!(predicted.finalists_after_sweep, "the engine starts a finalist before the sweep ends: {predicted:?}");
    // Slurm ran the finalists after the whole sweep too (scontrol's times are ISO 8601, so
    // they order as strings).
    let time = |job: &str, field: &str| cluster.show("job", job).get(field).cloned().unwrap_or_default();
    let sweep_end = (0..4).map(|task| time(&trial(task), "EndTime")).max().unwrap_or_default();
    for task in 0..2 {
        let start = time(&format!("{finalists}_{task}"), "StartTime");
        assert!(start >= sweep_end, "finalist {task} started at {start}, before the sweep ended at {sweep_end}");
    }
    cluster.cancel_all();
    for plan in [sweep_plan, finetune_plan] {
        let _ = std::fs::remove_dir_all(plan);
    }
}

/// [`plans_run_real_work_through_a_preemption`]'s model, from [`crate::slurm::test_model`]'s:
/// seconds of work per stage of asr-sweep and prod-finetune (the trainer's `--steps` and
/// `--step-seconds`), minutes of run time (for the live budgets), and P2 requeued when
/// preempted. In the cluster example only P2 is ever preempted under placid's semantics
/// (P0's reserved GPUs are fenced, so P0 never needs to preempt), and P2 cancels; requeue is
/// what a checkpointing stage is for, so the live run turns it on.
pub fn plans_for_live(model: &mut Model) {
    for tier in &mut model.tiers {
        if let placid_lang::model::Preemption::Window { mode, .. } = &mut tier.preemption.value {
            *mode = placid_lang::model::PreemptMode::Requeue;
        }
    }
    let steps = |stage: &str| match stage {
        "sweep" => "30",
        _ => "6",
    };
    for plan in model.plans.iter_mut().filter(|plan| matches!(plan.name.as_str(), "asr-sweep" | "prod-finetune")) {
        for stage in &mut plan.stages {
            let name = stage.name.as_str().to_owned();
            let command = stage.launch.command.as_mut().expect("the example's stages name their command");
            for (index, flag) in command.value.clone().iter().enumerate() {
                match flag.as_str() {
                    "--steps" => command.value[index + 1] = steps(&name).to_owned(),
                    "--step-seconds" => command.value[index + 1] = "1".to_owned(),
                    _ => {}
                }
            }
            stage.time = None;
            stage.max_time = Some(placid_lang::span::Spanned::new(placid_lang::units::Duration { seconds: 900 }, stage.span));
        }
    }
}

/// The pool of the P1 job that preempts sweep trials in [`plans_run_real_work_through_a_preemption`].
const PREEMPTOR_POOL: &str = "nvl-b";

/// The team of that P1 job: the sweep's own, so that the preemption is one team's higher tier
/// over its lower one. Another team's P1 job would be held for quota in the engine (and by
/// Kueue): its queue and the sweep's share the nvl-b cell, whose cohort the two together
/// would exceed, and a queue that must borrow does not reclaim; Slurm, without team quotas,
/// would preempt (docs/semantics.md, Divergences: quota per cell).
const PREEMPTOR_TEAM: &str = "speech";

/// What the engine predicts for [`plans_run_real_work_through_a_preemption`]'s run: both
/// plans submitted at 0, each stage running as long as its command's `--steps` times
/// `--step-seconds`, the sweep's trials reporting `metrics`, and the P1 job (12 GPUs of
/// [`PREEMPTOR_POOL`] for 15 s) submitted at `preemptor_at`.
#[derive(Debug)]
pub struct PredictedPlanRun {
    /// The node each sweep trial first started on.
    pub placed: Vec<String>,
    /// The sweep trials preempted.
    pub preempted: Vec<u32>,
    /// The sweep trials requeued after their preemption.
    pub requeued: Vec<u32>,
    /// Jobs outside the sweep that were preempted, by stage name.
    pub others_preempted: Vec<String>,
    /// Jobs that never finished (rejected, cancelled or still queued), by stage name.
    pub unfinished: Vec<String>,
    /// The promoted sweep trials, best first.
    pub promoted: Vec<u32>,
    /// Whether every finalist started after the last sweep trial ended.
    pub finalists_after_sweep: bool,
}

impl PredictedPlanRun {
    pub fn of(model: &Model, preemptor_at: u64, metrics: &[f64]) -> PredictedPlanRun {
        use placid_engine::{EventKind, Job, Neutral, Simulation};
        use placid_lang::model::{PlanId, PoolId, TeamId, TierId};

        let plan_named = |name: &str| PlanId::from_index(model.plans.iter().position(|plan| plan.name.as_str() == name).expect("the plan"));
        let (sweep_plan, finetune_plan) = (plan_named("asr-sweep"), plan_named("prod-finetune"));
        let seconds = |plan: PlanId, stage: usize| {
            let command = &model.plan(plan).stages[stage].launch.command.as_ref().expect("a command").value;
            let flag = |name: &str| command.iter().position(|arg| arg == name).and_then(|at| command.get(at + 1)?.parse::<u64>().ok());
            flag("--steps").unwrap_or(0) * flag("--step-seconds").unwrap_or(1)
        };
        let mut simulation = Simulation::new(model, Neutral);
        let metric = |stage: usize, trial: u32| (stage == 0).then(|| metrics.get(trial as usize).copied()).flatten();
        let sweep = placid_engine::plan::submit(&mut simulation, model, sweep_plan, 0, &|stage, _| seconds(sweep_plan, stage), &metric);
        let finetune =
            placid_engine::plan::submit(&mut simulation, model, finetune_plan, 0, &|stage, _| seconds(finetune_plan, stage), &|_, _| None);
        let named = |names: &[String], name: &str| names.iter().position(|candidate| candidate == name).expect("named in the model");
        let teams: Vec<String> = model.teams.iter().map(|team| team.name.as_str().to_owned()).collect();
        let tiers: Vec<String> = model.tiers.iter().map(|tier| tier.name.as_str().to_owned()).collect();
        let pools: Vec<String> = model.pools.iter().map(|pool| pool.name.as_str().to_owned()).collect();
        let mut preemptor = Job::new(TeamId::from_index(named(&teams, PREEMPTOR_TEAM)), TierId::from_index(named(&tiers, "P1")), 12);
        preemptor.pool = Some(PoolId::from_index(named(&pools, PREEMPTOR_POOL)));
        preemptor.submit = preemptor_at;
        preemptor.run = 15;
        preemptor.limit = Some(300);
        simulation.submit(preemptor);
        let mut events = Vec::new();
        simulation.run(&mut |event| events.push(event.clone()));

        let stage_of = |job| {
            let stage = simulation.job(job).and_then(|job| job.stage)?;
            Some((stage, model.plan(stage.plan).stages[stage.stage].name.as_str().to_owned()))
        };
        let trial_of = |job| sweep[0].iter().position(|trial| *trial == job).map(|trial| trial as u32);
        let of_kind = |wanted: fn(&EventKind) -> bool| events.iter().filter(move |event| wanted(&event.kind)).map(|event| event.job);
        let preempted_jobs: Vec<_> = of_kind(|kind| matches!(kind, EventKind::Preempted { .. })).collect();
        let finished: BTreeSet<_> = of_kind(|kind| *kind == EventKind::Finished).collect();
        let all: Vec<_> = sweep.iter().chain(&finetune).flatten().copied().collect();
        let sweep_end = sweep[0]
            .iter()
            .filter_map(|job| events.iter().rfind(|event| event.job == *job && event.kind == EventKind::Finished))
            .map(|event| event.time)
            .max();
        let finalists_start = sweep[1]
            .iter()
            .filter_map(|job| events.iter().find(|event| event.job == *job && matches!(event.kind, EventKind::Started(_))))
            .map(|event| event.time)
            .min();
        let placed = sweep[0]
            .iter()
            .map(|job| {
                events.iter().find_map(|event| match &event.kind {
                    EventKind::Started(placement) if event.job == *job => {
                        placement.nodes.first().map(|share| model.node(share.node).name.as_str().to_owned())
                    }
                    _ => None,
                })
            })
            .map(Option::unwrap_or_default)
            .collect();
        PredictedPlanRun {
            placed,
            preempted: preempted_jobs.iter().filter_map(|job| trial_of(*job)).collect(),
            requeued: of_kind(|kind| *kind == EventKind::Requeued).filter_map(trial_of).collect(),
            others_preempted: preempted_jobs
                .iter()
                .filter(|job| trial_of(**job).is_none())
                .map(|job| stage_of(*job).map_or_else(|| "the P1 job".to_owned(), |(_, name)| name))
                .collect(),
            unfinished: all.iter().filter(|job| !finished.contains(job)).filter_map(|job| stage_of(*job).map(|(_, name)| name)).collect(),
            promoted: of_kind(|kind| *kind == EventKind::Promoted).filter_map(trial_of).collect(),
            finalists_after_sweep: matches!((sweep_end, finalists_start), (Some(end), Some(start)) if start >= end),
        }
    }
}

/// A requeued trial's checkpoint history: a checkpoint at `USR1`, then a resume at the step of
/// the last checkpoint before it (not 0), and the trial's end.
fn resumed_where_it_saved(history: &str) {
    let lines: Vec<&str> = history.lines().collect();
    let signalled = lines.iter().position(|line| line.ends_with(" USR1")).unwrap_or_else(|| panic!("no USR1 checkpoint:\n{history}"));
    let resumed = lines.iter().position(|line| line.starts_with("resumed ")).unwrap_or_else(|| panic!("never resumed:\n{history}"));
    assert!(signalled < resumed, "the checkpoint at USR1 comes before the resume:\n{history}");
    let saved = lines[..resumed].iter().rev().find_map(|line| line.strip_prefix("checkpoint ")).and_then(|rest| rest.split(' ').next());
    let resumed_at = lines[resumed].strip_prefix("resumed ");
    assert!(saved.is_some() && saved == resumed_at, "resumed at {resumed_at:?}, last saved {saved:?}:\n{history}");
    assert_ne!(resumed_at, Some("0"), "a resume from scratch is no resume:\n{history}");
    assert!(lines.last().is_some_and(|line| line.ends_with(" done")), "the preempted trial did not finish:\n{history}");
}

/// Copies plan `plan`'s scripts from `generated` to `jobs/<plan>`, where the cluster reads them.
fn copy_plan(cluster: &Cluster, generated: &std::path::Path, plan: &str) -> std::path::PathBuf {
    let directory = cluster.path(&format!("jobs/{plan}"));
    let _ = std::fs::remove_dir_all(&directory);
    std::fs::create_dir_all(&directory).expect("plan dir");
    for entry in std::fs::read_dir(generated.join(format!("plans/{plan}"))).expect("the plan's scripts") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), directory.join(entry.file_name())).expect("copy a plan script");
    }
    directory
}

/// Installs `text` as `placid-trainer` in `dir` (relative to the cluster) and returns the
/// `PATH` that finds it first, as a submitter's would.
fn install_trainer(cluster: &Cluster, dir: &str, text: &str) -> String {
    std::fs::create_dir_all(cluster.path(dir)).expect("trainer dir");
    let program = format!("{dir}/placid-trainer");
    std::fs::write(cluster.path(&program), text).expect("write the trainer");
    assert!(cluster.run("chmod", &["755", &cluster.inner(&program).display().to_string()]).status.success());
    cluster.path_with(&cluster.inner(dir))
}

/// Every trial's checkpoint history under `results`, for a failure's message.
fn history_of(results: &std::path::Path) -> String {
    let mut text = String::new();
    for stage in ["sweep", "finalists"] {
        for trial in 0..4 {
            if let Ok(history) = std::fs::read_to_string(results.join(format!("{stage}/checkpoints/{trial}/history"))) {
                text.push_str(&format!("{stage} {trial}:\n{history}"));
            }
        }
    }
    text
}

/// The policy's admin account `ops` passes job_submit.lua with a job no team could submit (no
/// tier at all), while another account that is not a team is refused. Both accounts are site
/// data, made here like the users.
pub fn admin_accounts_pass_job_submit_lua(cluster: &Cluster) {
    for account in ["ops", "stray"] {
        let output = cluster.run("sacctmgr", &["-i", "add", "account", account, "parent=root"]);
        assert!(output.status.success(), "adding account {account}: {}", String::from_utf8_lossy(&output.stdout));
        let output = cluster.run("sacctmgr", &["-i", "add", "user", "root", &format!("account={account}")]);
        assert!(output.status.success(), "adding root to {account}: {}", String::from_utf8_lossy(&output.stdout));
    }
    let admin = cluster.sbatch(&["--hold", "-A", "ops", "-p", "x86_190", "-t", "10", "--wrap", "true"]);
    let admin = admin.unwrap_or_else(|error| panic!("the admin account's job was refused: {error}"));
    assert_eq!(cluster.show("job", &admin).get("Account").map(String::as_str), Some("ops"));
    let stray = cluster.sbatch(&["--hold", "-A", "stray", "-p", "x86_190", "-t", "10", "--wrap", "true"]).expect_err("stray is no team");
    assert!(stray.contains("placid:"), "{stray}");
    cluster.cancel_all();
}
