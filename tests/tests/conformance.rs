//! The engine against a real Slurm: every scenario of [`placid_tests::conformance`] is
//! predicted by the engine and run on a live slurmctld (22.05 on the host, 24.11 in the trixie
//! root), and what each job became must agree, or match a divergence docs/semantics.md states.

use std::fmt::Write as _;

use placid_lang::model::{Model, SlurmVersion};
use placid_tests::conformance::{self, Scenario, Seen, observe, predict};
use placid_tests::slurm::{Cluster, Options, StartError, should_run, trixie_root, write_slurm};

/// The two live runs take turns: on a small CI machine, two dozen daemons at once would
/// stretch the scenarios' timing.
static ONE_CLUSTER_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn run_all(model: &Model, options: &Options, release: &str) {
    let _turn = ONE_CLUSTER_AT_A_TIME.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let generated = tempfile::tempdir().expect("tempdir");
    write_slurm(model, generated.path());
    let cluster = match Cluster::start(generated.path(), options) {
        Ok(cluster) => cluster,
        Err(StartError::Rejected(output)) => panic!("Slurm {release} rejected the conformance configuration:\n{output}"),
        Err(StartError::Harness(message)) => panic!("the harness failed: {message}"),
    };
    cluster.add_root_user(&["vision".to_owned(), "speech".to_owned(), "res".to_owned()]);
    let mut report = String::new();
    let mut mismatches = 0;
    let suite = std::time::Instant::now();
    for scenario in conformance::scenarios() {
        let engine = predict(model, &scenario);
        // Each scenario's wall time, to see what a new one adds to a live run.
        let started = std::time::Instant::now();
        let slurm = observe(&cluster, generated.path(), model, &scenario);
        let seconds = started.elapsed().as_secs();
        let agrees = scenario.accepts(release, &engine, &slurm);
        let _ = writeln!(
            report,
            "{} {} ({seconds} s)\n    engine {engine:?}\n    slurm  {slurm:?}",
            if agrees { "ok  " } else { "FAIL" },
            scenario.name
        );
        mismatches += usize::from(!agrees);
    }
    eprintln!("conformance on Slurm {release} ({} s of scenarios):\n{report}", suite.elapsed().as_secs());
    assert_eq!(mismatches, 0, "the engine and Slurm {release} disagree:\n{report}");
}

/// The engine's side alone, wherever the tests run: each scenario's prediction is the one
/// docs/semantics.md lists.
#[test]
fn the_engine_predicts_the_documented_outcomes() {
    let model = conformance::model();
    let predictions: Vec<(&str, Vec<Seen>)> =
        conformance::scenarios().iter().map(|scenario: &Scenario| (scenario.name, predict(&model, scenario))).collect();
    insta::assert_debug_snapshot!(predictions);
}

/// No scenario races slurmctld's scheduling delay: a job of a higher tier that arrived with a
/// lower one still unscheduled could start first on Slurm and not in the engine.
#[test]
fn higher_tiers_arrive_after_the_scheduling_delay() {
    let model = conformance::model();
    let too_close: Vec<String> = conformance::scenarios()
        .iter()
        .flat_map(|scenario| conformance::arrivals_too_close(&model, scenario).into_iter().map(|pair| format!("{}: {pair}", scenario.name)))
        .collect();
    assert!(too_close.is_empty(), "arrivals within {} s of a lower tier:\n{}", conformance::SCHEDULING_DELAY, too_close.join("\n"));
}

#[test]
fn the_engine_agrees_with_slurm_22_05() {
    if !should_run("the_engine_agrees_with_slurm_22_05", true, None) {
        return;
    }
    run_all(&conformance::model(), &Options { accounting: true, slurmds: true, root: None }, "22.05");
}

#[test]
fn the_engine_agrees_with_slurm_24_11() {
    let root = trixie_root();
    if !should_run("the_engine_agrees_with_slurm_24_11", true, Some(&root)) {
        return;
    }
    let mut model = conformance::model();
    if let Some(settings) = model.project.slurm.as_mut() {
        settings.version = SlurmVersion { major: 24, minor: 11 };
    }
    run_all(&model, &Options { accounting: true, slurmds: true, root: Some(root) }, "24.11");
}
