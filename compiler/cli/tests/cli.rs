//! The `placid` binary as users run it: exit codes, output formats, atomic builds, `fmt` and
//! `graph`, in temp directories.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples").join(name)
}

fn examples() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples"))
        .expect("policy-examples exists")
        .filter_map(Result::ok)
        .filter(|entry| entry.path().join("placid.kdl").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn placid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placid")).args(args).env("NO_COLOR", "1").output().expect("run placid")
}

fn copy_example(name: &str, to: &Path) {
    let status = Command::new("cp").arg("-r").arg(example(name)).arg(to).status().expect("cp");
    assert!(status.success());
}

#[test]
fn exit_codes_are_zero_one_two() {
    let ok = placid(&["check", example("cluster").to_str().expect("utf-8 path")]);
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stderr));

    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("p");
    copy_example("cluster", &project);
    std::fs::write(project.join("policy/tiers.kdl"), "tier \"P9\" { priority 1; preemption \"sometimes\" }\n").expect("write");
    let bad = placid(&["check", project.to_str().expect("utf-8 path")]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("placid::E005"));

    let missing = placid(&["check", "/nonexistent/placid-project"]);
    assert_eq!(missing.status.code(), Some(2));
    let usage = placid(&["check", "--no-such-flag"]);
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn json_diagnostics_carry_code_and_position() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("p");
    copy_example("cluster", &project);
    std::fs::write(project.join("policy/extra.kdl"), "pool \"empty\" { select arch=\"aarch64\" }\n").expect("write");
    let output = placid(&["check", project.to_str().expect("utf-8 path"), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    let first = &report["diagnostics"][0];
    assert_eq!(first["code"], "placid::E020");
    assert_eq!(first["name"], "empty-pool");
    assert_eq!(first["location"]["file"], "policy/extra.kdl");
    assert_eq!(first["location"]["line"], 1);
    assert_eq!(first["location"]["column"], 6);
}

#[test]
fn a_failed_build_leaves_the_previous_output_untouched() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("p");
    let out = dir.path().join("out");
    copy_example("cluster", &project);
    let first = placid(&["build", project.to_str().expect("utf-8 path"), "-o", out.to_str().expect("utf-8 path")]);
    assert_eq!(first.status.code(), Some(0), "{}", String::from_utf8_lossy(&first.stderr));
    let manifest = std::fs::read(out.join("manifest.json")).expect("manifest written");

    std::fs::write(project.join("policy/extra.kdl"), "pool \"empty\" { select arch=\"aarch64\" }\n").expect("write");
    let failed = placid(&["build", project.to_str().expect("utf-8 path"), "-o", out.to_str().expect("utf-8 path")]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(std::fs::read(out.join("manifest.json")).expect("manifest still there"), manifest);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(Result::ok)
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(".placid"))
        .collect();
    assert!(leftovers.is_empty(), "staging directories left behind: {leftovers:?}");
}

#[test]
fn examples_are_formatted_and_fmt_fixes_a_messy_file() {
    for name in examples() {
        let output = placid(&["fmt", "--check", example(&name).to_str().expect("utf-8 path")]);
        assert_eq!(output.status.code(), Some(0), "example {name} is not formatted: {}", String::from_utf8_lossy(&output.stdout));
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("p");
    copy_example("cluster", &project);
    std::fs::write(project.join("policy/extra.kdl"), "pool   \"more\"   {\n  select  arch=\"x86_64\"   // legacy\n}\n").expect("write");
    let check = placid(&["fmt", "--check", project.to_str().expect("utf-8 path")]);
    assert_eq!(check.status.code(), Some(1));
    let fix = placid(&["fmt", project.to_str().expect("utf-8 path")]);
    assert_eq!(fix.status.code(), Some(0));
    assert_eq!(
        std::fs::read_to_string(project.join("policy/extra.kdl")).expect("read"),
        "pool \"more\" {\n    select arch=\"x86_64\" // legacy\n}\n"
    );
    let again = placid(&["fmt", "--check", project.to_str().expect("utf-8 path")]);
    assert_eq!(again.status.code(), Some(0));
}

#[test]
fn graph_prints_the_topology_and_plans_as_dot() {
    let topology = placid(&["graph", example("cluster").to_str().expect("utf-8 path")]);
    assert_eq!(topology.status.code(), Some(0));
    let dot = String::from_utf8_lossy(&topology.stdout);
    assert!(dot.starts_with("graph topology {"));
    assert!(dot.contains("NVLink nvl-a") && dot.contains("6x NVLink"));
    let plans = placid(&["graph", "--kind", "plans", example("cluster").to_str().expect("utf-8 path")]);
    assert!(String::from_utf8_lossy(&plans.stdout).contains("plan asr-sweep (team speech)"));
}

#[test]
fn audit_binaries_exits_with_the_ci_gate() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).expect("mkdir");
    // This test binary is a real x86_64 (or aarch64) ELF without a riscv64 build.
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).expect("mkdir");
    std::fs::copy(std::env::current_exe().expect("test binary"), foreign.join("tool")).expect("copy");
    let path = |path: &Path| path.to_str().expect("utf-8 path").to_owned();

    let passing = placid(&["audit-binaries", "--format", "json", &path(&empty)]);
    assert_eq!(passing.status.code(), Some(0), "{}", String::from_utf8_lossy(&passing.stderr));
    let json: serde_json::Value = serde_json::from_slice(&passing.stdout).expect("JSON output");
    assert_eq!(json["passes"], true);

    let failing = placid(&["audit-binaries", &path(&foreign)]);
    assert_eq!(failing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&failing.stdout).contains("no riscv64 build"));

    let absent = placid(&["audit-binaries", &path(&dir.path().join("nope"))]);
    assert_eq!(absent.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&absent.stderr).contains("placid::E095"), "{}", String::from_utf8_lossy(&absent.stderr));
}

/// The cluster example plus a node in an NVLink domain whose GPUs have no NVLink between
/// them: a topology warning, never an error.
fn project_with_a_warning(dir: &Path) -> PathBuf {
    let project = dir.join("p");
    copy_example("cluster", &project);
    let nvl_a = project.join("inventory/nvl-a.kdl");
    let mut inventory = std::fs::read_to_string(&nvl_a).expect("read inventory");
    inventory.push_str(
        "node \"rv-a-09\" arch=\"riscv64\" rack=\"r1\" chassis=\"c9\" nvlink-domain=\"nvl-a\" capacity=\"reserved\" {\n    cpu harts=64\n    cost gpu-hour=(usd)3.10\n    gpu 0 model=\"H200\" memory=\"141GiB\"\n    gpu 1 model=\"H200\" memory=\"141GiB\"\n}\n",
    );
    std::fs::write(&nvl_a, inventory).expect("write inventory");
    project
}

#[test]
fn every_command_that_compiles_shows_the_warnings() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = project_with_a_warning(dir.path());
    let project = project.to_str().expect("utf-8 path");
    let check = placid(&["check", project]);
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stderr));
    let warning = String::from_utf8_lossy(&check.stderr).lines().find(|line| line.contains("placid::E")).map(str::to_owned);
    let warning = warning.expect("check reports the warning");
    for args in [
        vec!["graph", project],
        vec!["score", project, "--score", "cost-aware", "--job", "gpus=4"],
        vec!["explain", "--wat", "cost-aware", project],
    ] {
        let output = placid(&args);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(&warning),
            "{args:?} hid the warning: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn verify_and_build_print_one_json_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = project_with_a_warning(dir.path());
    let out = dir.path().join("out");
    let (project, out) = (project.to_str().expect("utf-8 path"), out.to_str().expect("utf-8 path"));
    let build = placid(&["build", project, "-o", out, "--format", "json"]);
    assert_eq!(build.status.code(), Some(0), "{}", String::from_utf8_lossy(&build.stderr));
    let report: serde_json::Value = serde_json::from_slice(&build.stdout).expect("one JSON document");
    assert_eq!(report["errors"], 0);
    assert!(!report["diagnostics"].as_array().expect("diagnostics").is_empty(), "the warning is in the document");

    let verify = placid(&["verify", out, project, "--format", "json"]);
    assert_eq!(verify.status.code(), Some(0), "{}", String::from_utf8_lossy(&verify.stderr));
    let report: serde_json::Value = serde_json::from_slice(&verify.stdout).expect("one JSON document");
    assert_eq!(report["findings"], serde_json::json!([]));
    assert!(!report["diagnostics"].as_array().expect("diagnostics").is_empty(), "the warning is in the document");
}

#[test]
fn command_failures_are_coded_diagnostics() {
    let example = example("cluster");
    let example = example.to_str().expect("utf-8 path");
    for (args, code) in [
        (vec!["score", example, "--score", "no-such-score", "--job", "gpus=4"], "placid::E096"),
        (vec!["score", example, "--score", "cost-aware", "--job", "gpus"], "placid::E097"),
        (vec!["score", example, "--score", "cost-aware", "--job", "colour=blue"], "placid::E097"),
        (vec!["build", example, "--stdout", "--target", "slurm"], "placid::E098"),
        (vec!["verify", "/nonexistent/placid-out", example], "placid::E095"),
    ] {
        let output = placid(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(code) && stderr.contains("help:"), "{args:?}: {stderr}");
    }
}

#[test]
fn svg_without_graphviz_is_an_environment_diagnostic() {
    let empty = tempfile::tempdir().expect("temp dir");
    let output = Command::new(env!("CARGO_BIN_EXE_placid"))
        .args(["graph", example("cluster").to_str().expect("utf-8 path"), "--svg"])
        .env("NO_COLOR", "1")
        .env("PATH", empty.path())
        .output()
        .expect("run placid");
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("placid::E099") && stderr.contains("Graphviz"), "{stderr}");
}

#[test]
fn a_running_job_that_does_not_fit_its_nodes_is_an_invalid_test_state() {
    let dir = tempfile::tempdir().expect("temp dir");
    let project = dir.path().join("p");
    copy_example("cluster", &project);
    std::fs::write(
        project.join("policy/too-big.kdl"),
        "test \"overfull\" {\n    running \"huge\" team=\"vision\" tier=\"P2\" gpus=64 pool=\"nvl-b\" {\n        nodes \"rv-b-01\"\n    }\n    job team=\"vision\" tier=\"P2\" gpus=1\n    expect \"placed\"\n}\n",
    )
    .expect("write");
    let output = placid(&["test", project.to_str().expect("utf-8 path")]);
    let report = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert_eq!(output.status.code(), Some(1), "{report}");
    assert!(report.contains("placid::E106") && report.contains("test `overfull`"), "{report}");
}

#[test]
fn an_output_that_cannot_be_created_is_unwritable() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a directory").expect("write");
    let out = file.join("out");
    let output = placid(&["build", example("cluster").to_str().expect("utf-8 path"), "--out", out.to_str().expect("utf-8 path")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("placid::E093"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).expect("read"), "not a directory", "the file in the way is left as it was");
}

#[test]
fn a_broken_example_checks_over_its_example() {
    let cluster = example("cluster");
    let broken = cluster.join("broken/E023-domain-too-small");
    let codes = |output: &Output| -> Vec<String> {
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
        report["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .map(|diagnostic| diagnostic["code"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    // Given as the project: its example under it, with its files in place of the example's.
    let direct = placid(&["check", broken.to_str().expect("utf-8 path"), "--format", "json"]);
    assert_eq!(direct.status.code(), Some(1));
    assert!(codes(&direct).contains(&"placid::E023".to_owned()), "{:?}", codes(&direct));
    // Or over any project, with --overlay.
    let overlaid =
        placid(&["check", cluster.to_str().expect("utf-8 path"), "--overlay", broken.to_str().expect("utf-8 path"), "--format", "json"]);
    assert_eq!((overlaid.status.code(), codes(&overlaid)), (Some(1), codes(&direct)));
    // One with a project file of its own is laid over its example too.
    let scored = placid(&["check", cluster.join("broken/E141-extender-score-unnamed").to_str().expect("utf-8 path"), "--format", "json"]);
    assert!(codes(&scored).contains(&"placid::E141".to_owned()), "{:?}", codes(&scored));
    // An overlay whose project file includes a pattern that leaves the project root.
    let outside = placid(&["check", cluster.join("broken/E010-include-outside-root").to_str().expect("utf-8 path"), "--format", "json"]);
    assert!(codes(&outside).contains(&"placid::E010".to_owned()), "{:?}", codes(&outside));
    let missing = placid(&["check", cluster.to_str().expect("utf-8 path"), "--overlay", "/nonexistent/overlay"]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn every_broken_example_given_as_the_project_reports_its_code() {
    let mut checked = 0;
    for name in examples() {
        let Ok(entries) = std::fs::read_dir(example(&name).join("broken")) else { continue };
        for variant in entries.filter_map(Result::ok).map(|entry| entry.path()) {
            let case = variant.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
            let output = placid(&["check", variant.to_str().expect("utf-8 path"), "--format", "json"]);
            let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
            let expected = format!("placid::{}", &case[..4]);
            let found =
                report["diagnostics"].as_array().is_some_and(|all| all.iter().any(|diagnostic| diagnostic["code"] == expected.as_str()));
            assert!(found, "{name}/{case}: no {expected} in {report}");
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} broken examples");
}
