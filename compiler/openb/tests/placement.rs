//! The FGD reproduction on the openb default trace (issue 14, section 4): best-fit's mean
//! allocation at 100 % arrived is the published 92.86 % within ±0.5 pp, over seeds 42-51. The
//! trace is read from ../shared/traces (never copied into the repo); without it the test
//! fails under CI=true and otherwise says that it did not run.

use std::path::PathBuf;

use placid_lang::source::{RelPath, Sources};
use placid_openb::Trace;
use placid_openb::metric::{self, Inflation, Outcome, Seeds};
use placid_openb::place::{BestFit, Placement};
use placid_openb::read::{self, TraceFile};

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces/openb")
}

/// The default trace, or `None` (after saying so) when ../shared is absent outside CI.
fn default_trace() -> Option<Trace> {
    let dir = traces();
    let nodes = dir.join("openb_node_list_gpu_node.csv");
    let pods = dir.join("openb_pod_list_default.csv");
    let (Ok(node_bytes), Ok(pod_bytes)) = (std::fs::read(&nodes), std::fs::read(&pods)) else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but the openb trace is missing at {}", dir.display());
        println!("did not run: the openb trace is not at {}", dir.display());
        return None;
    };
    let path = |name: &str| RelPath::new(name).expect("a relative name");
    let mut sources = Sources::new();
    let (trace, diagnostics) = read::read(
        &mut sources,
        TraceFile { path: path("openb_node_list_gpu_node.csv"), bytes: &node_bytes },
        TraceFile { path: path("openb_pod_list_default.csv"), bytes: &pod_bytes },
    );
    assert!(diagnostics.is_empty(), "the default trace reads cleanly: {diagnostics:?}");
    trace
}

fn allocation_at(outcome: &Outcome, mark: u32) -> f64 {
    outcome.allocation.iter().find(|(at, _)| *at == mark).and_then(|(_, mean)| *mean).expect("the run reaches the mark")
}

#[test]
fn the_default_trace_is_the_published_cluster_and_workload() {
    let Some(trace) = default_trace() else { return };
    assert_eq!(trace.nodes.len(), 1213);
    assert_eq!(trace.total_gpu_milli(), 6212 * 1000);
    assert_eq!(trace.pods.len(), 8152);
}

#[test]
fn best_fit_reproduces_the_published_allocation() {
    let Some(trace) = default_trace() else { return };
    let seeds = Seeds::parse("42-51").expect("seeds");
    let inflation = Inflation::parse("1.3").expect("inflation");
    let outcome = metric::run(&trace, &mut Placement::Scored(&mut BestFit), &seeds, inflation).expect("best-fit cannot fail");
    let at_100 = allocation_at(&outcome, 100);
    let at_130 = allocation_at(&outcome, 130);
    println!("best-fit: {at_100:.2} % at 100, {at_130:.2} % at 130 (published 92.86 and 93.08)");
    assert!((at_100 - 92.86).abs() <= 0.5, "best-fit at 100 % arrived: {at_100:.3} %, published 92.86 %");
    assert!((at_130 - 93.08).abs() <= 0.5, "best-fit at 130 % arrived: {at_130:.3} %, published 93.08 %");
    assert!(outcome.runs.iter().all(|run| run.failed > 0), "an inflated workload cannot all fit");
}

/// Every pod list of the FGD simulator's repository (hkust-adsl/kubernetes-scheduler-simulator,
/// `data/csv/`) imports cleanly, and best-fit's allocation at 100 % arrived is the repository's
/// own expected BestFit figure (`experiments/analysis/expected_results/analysis_allo_discrete.csv`,
/// the mean over seeds 42-51) within ±0.25 pp (docs/semantics.md gives the figures: 0.20 pp at
/// most), for each of the 17 lists that have one. The repository is
/// not in ../shared, so this runs only where `PLACID_FGD_REPO` names a checkout of it, and
/// says plainly otherwise.
#[test]
fn every_pod_list_of_the_fgd_repository_imports_and_matches_its_expected_best_fit() {
    let Some(repo) = std::env::var_os("PLACID_FGD_REPO").map(PathBuf::from) else {
        println!("did not run: PLACID_FGD_REPO does not name a checkout of the FGD simulator's repository");
        return;
    };
    let data = repo.join("data/csv");
    let expected = expected_best_fit(&repo.join("experiments/analysis/expected_results/analysis_allo_discrete.csv"));
    let node_bytes = std::fs::read(data.join("openb_node_list_gpu_node.csv")).expect("the repository's node list");
    let mut lists: Vec<String> = std::fs::read_dir(&data)
        .expect("data/csv")
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.starts_with("openb_pod_list_") && name.ends_with(".csv"))
        .collect();
    lists.sort();
    assert_eq!(lists.len(), 23, "the repository's 23 pod lists: {lists:?}");
    let mut compared = 0;
    for list in &lists {
        let pod_bytes = std::fs::read(data.join(list)).expect("a pod list");
        let path = |name: &str| RelPath::new(name).expect("a relative name");
        let mut sources = Sources::new();
        let (trace, diagnostics) = read::read(
            &mut sources,
            TraceFile { path: path("openb_node_list_gpu_node.csv"), bytes: &node_bytes },
            TraceFile { path: path(list), bytes: &pod_bytes },
        );
        assert!(diagnostics.is_empty(), "{list} reads cleanly: {diagnostics:?}");
        let trace = trace.expect("a trace");
        let Some(published) = expected.get(list.trim_end_matches(".csv")) else {
            println!("{list}: imports; the repository publishes no expected figure for it");
            continue;
        };
        let seeds = Seeds::parse("42-51").expect("seeds");
        let inflation = Inflation::parse("1.3").expect("inflation");
        let outcome = metric::run(&trace, &mut Placement::Scored(&mut BestFit), &seeds, inflation).expect("best-fit cannot fail");
        let at_100 = allocation_at(&outcome, 100);
        println!("{list}: best-fit {at_100:.2} % at 100, expected {published:.2} %");
        assert!((at_100 - published).abs() <= 0.25, "{list}: best-fit at 100 % arrived: {at_100:.3} %, expected {published:.3} %");
        compared += 1;
    }
    assert_eq!(compared, 17, "the repository publishes a figure for 17 lists");
}

/// The mean of the BestFit rows' figure at 100 % arrived, per workload, of the repository's
/// expected results (a plain CSV: a header naming the marks, no quoting).
fn expected_best_fit(path: &std::path::Path) -> std::collections::BTreeMap<String, f64> {
    let text = std::fs::read_to_string(path).expect("the repository's expected results");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let column = |name: &str| header.iter().position(|field| *field == name).expect("a column");
    let (workload, policy, at_100) = (column("workload"), column("sc_policy"), column("100"));
    let mut sums: std::collections::BTreeMap<String, (f64, u32)> = std::collections::BTreeMap::new();
    for line in lines {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.get(policy).is_some_and(|policy| policy.ends_with("BestFit")) {
            let figure: f64 = fields[at_100].parse().expect("a figure");
            let sum = sums.entry(fields[workload].to_owned()).or_default();
            *sum = (sum.0 + figure, sum.1 + 1);
        }
    }
    sums.into_iter().map(|(workload, (sum, count))| (workload, sum / f64::from(count))).collect()
}
