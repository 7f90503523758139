//! `placid simulate --import openb` as CI recipes and outside checks call it: one JSON object
//! whose `allocation` maps "100" and "130" to the mean allocated percent, and a bad trace
//! refused with exit 1 and a coded diagnostic at its file, line and column.

use std::path::Path;
use std::process::{Command, Output};

fn placid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placid")).args(args).env("NO_COLOR", "1").output().expect("run placid")
}

const PODS_HEADER: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

/// Four 2-GPU nodes (8 GPUs) and pods asking for 8 GPUs in all, so 100 % arrives exactly.
fn write_trace(dir: &Path) -> (String, String) {
    let nodes = dir.join("openb_node_list_test.csv");
    let pods = dir.join("openb_pod_list_test.csv");
    let mut node_text = String::from("sn,cpu_milli,memory_mib,gpu,model\n");
    for index in 0..4 {
        node_text.push_str(&format!("n{index},32000,131072,2,{}\n", if index < 2 { "T4" } else { "P100" }));
    }
    let mut pod_text = String::from(PODS_HEADER);
    for (index, (gpus, milli, spec)) in [
        (1, 500, ""),
        (1, 500, ""),
        (2, 1000, "T4"),
        (1, 1000, "P100"),
        (0, 0, ""),
        (1, 250, "P100|T4"),
        (1, 750, ""),
        (2, 1000, ""),
        (1, 1000, ""),
    ]
    .iter()
    .enumerate()
    {
        pod_text.push_str(&format!("p{index},4000,8192,{gpus},{milli},{spec},LS,Running,0,10,0\n"));
    }
    std::fs::write(&nodes, node_text).expect("write nodes");
    std::fs::write(&pods, pod_text).expect("write pods");
    (nodes.to_string_lossy().into_owned(), pods.to_string_lossy().into_owned())
}

fn simulate(nodes: &str, pods: &str, placement: &str, format: &str) -> Output {
    placid(&[
        "simulate",
        "--import",
        "openb",
        "--nodes",
        nodes,
        "--pods",
        pods,
        "--placement",
        placement,
        "--seeds",
        "42-51",
        "--inflate",
        "1.3",
        "--format",
        format,
    ])
}

#[test]
fn the_json_contract_maps_arrived_percents_to_mean_allocation() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, pods) = write_trace(dir.path());
    for placement in ["best-fit", "random"] {
        let output = simulate(&nodes, &pods, placement, "json");
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON object on stdout");
        let allocation = report["allocation"].as_object().expect("an allocation object");
        assert_eq!(allocation.keys().collect::<Vec<_>>(), vec!["100", "130"], "{report}");
        let at_100 = allocation["100"].as_f64().expect("a number at 100");
        assert!((0.0..=100.0).contains(&at_100) && at_100 > 50.0, "{report}");
        assert_eq!(report["placement"], placement);
        assert_eq!(report["seeds"].as_array().map(Vec::len), Some(10));
        assert_eq!(report["runs"].as_array().map(Vec::len), Some(10));
        assert_eq!(report["nodes"], 4);
        assert_eq!(report["pods"], 9);
    }
}

#[test]
fn the_same_seeds_give_the_same_figures_and_text_summarises_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, pods) = write_trace(dir.path());
    let first = simulate(&nodes, &pods, "random", "json");
    let second = simulate(&nodes, &pods, "random", "json");
    assert_eq!(first.stdout, second.stdout, "a seeded run is reproducible");
    let text = simulate(&nodes, &pods, "best-fit", "text");
    assert_eq!(text.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("GPU allocated at 100 % arrived"), "{stdout}");
}

#[test]
fn a_bad_trace_exits_1_with_a_coded_diagnostic_at_its_field() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, _) = write_trace(dir.path());
    let pods = dir.path().join("bad.csv");
    std::fs::write(&pods, format!("{PODS_HEADER}p0,-4000,8192,1,1000,,LS,Running,0,10,0\np1,1,1,1,1000,A100,LS,Running,0,1,0\n"))
        .expect("write");
    let output = simulate(&nodes, &pods.to_string_lossy(), "best-fit", "json");
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    let diagnostics = report["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diagnostics.len(), 2, "{report}");
    assert_eq!(diagnostics[0]["code"], "placid::E122");
    assert_eq!(diagnostics[0]["location"]["line"], 2);
    assert_eq!(diagnostics[0]["location"]["column"], 4);
    assert_eq!(diagnostics[1]["code"], "placid::E123");
    assert!(report.get("allocation").is_none());

    let text = simulate(&nodes, &pods.to_string_lossy(), "best-fit", "text");
    assert_eq!(text.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&text.stderr).contains("placid::E122"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, pods) = write_trace(dir.path());
    assert_eq!(placid(&["simulate"]).status.code(), Some(2), "a mode is required");
    assert_eq!(placid(&["simulate", "--import", "openb", "--nodes", &nodes]).status.code(), Some(2), "--pods is required");
    let bad_seeds = placid(&["simulate", "--import", "openb", "--nodes", &nodes, "--pods", &pods, "--seeds", "9-1"]);
    assert_eq!(bad_seeds.status.code(), Some(2));
    let bad_inflate = placid(&["simulate", "--import", "openb", "--nodes", &nodes, "--pods", &pods, "--inflate", "9"]);
    assert_eq!(bad_inflate.status.code(), Some(2));
    let missing = placid(&["simulate", "--import", "openb", "--nodes", "/nonexistent/nodes.csv", "--pods", &pods]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("placid::E095"));
}

#[test]
fn a_score_of_the_project_places_like_the_built_in_it_spells() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, pods) = write_trace(dir.path());
    let project = dir.path().join("project");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let status = Command::new("cp").arg("-r").arg(repo.join("policy-examples/cluster")).arg(&project).status().expect("cp");
    assert!(status.success());
    std::fs::copy(repo.join("policy-examples/openb/best-fit.kdl"), project.join("policy/openb-best-fit.kdl")).expect("copy");
    let project = project.to_string_lossy().into_owned();
    let run = |placement: &str| {
        let output = placid(&[
            "simulate",
            &project,
            "--import",
            "openb",
            "--nodes",
            &nodes,
            "--pods",
            &pods,
            "--placement",
            placement,
            "--format",
            "json",
        ]);
        assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        (report["allocation"].clone(), report["runs"].clone())
    };
    assert_eq!(run("score:openb-best-fit"), run("best-fit"));

    let unknown = placid(&["simulate", &project, "--import", "openb", "--nodes", &nodes, "--pods", &pods, "--placement", "score:nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("placid::E096"));
}

/// Lists whose every pod would visit every node past the bound of one seed are refused
/// before the run (exit 2, E098), not placed for minutes: here 2,000 nodes and 20,000 pods,
/// 1.6e8 visits a seed.
#[test]
fn lists_past_the_visits_of_a_seed_are_refused_at_once() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, pods) = (dir.path().join("nodes.csv"), dir.path().join("pods.csv"));
    let node_text: String = std::iter::once("sn,cpu_milli,memory_mib,gpu,model\n".to_owned())
        .chain((0..2_000).map(|index| format!("n{index},32000,131072,2,T4\n")))
        .collect();
    let pod_text: String = std::iter::once(PODS_HEADER.to_owned())
        .chain((0..20_000).map(|index| format!("p{index},4000,8192,1,500,,LS,Running,0,10,0\n")))
        .collect();
    std::fs::write(&nodes, node_text).expect("write nodes");
    std::fs::write(&pods, pod_text).expect("write pods");
    let started = std::time::Instant::now();
    let output = simulate(&nodes.to_string_lossy(), &pods.to_string_lossy(), "best-fit", "json");
    assert_eq!(output.status.code(), Some(2), "{}", String::from_utf8_lossy(&output.stdout));
    assert!(String::from_utf8_lossy(&output.stdout).contains("placid::E098"), "{}", String::from_utf8_lossy(&output.stdout));
    assert!(started.elapsed() < std::time::Duration::from_secs(30), "took {:?}", started.elapsed());
}
