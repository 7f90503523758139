//! `placid test` as users and CI run it: every bundled example passes; a wrong expectation
//! fails with exit 1 and expected against actual; JSON and JUnit reports parse; `--filter`;
//! admission expectations are judged by the build's own admission policies.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples").join(name)
}

fn placid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_placid")).args(args).env("NO_COLOR", "1").output().expect("run placid")
}

/// A copy of the cluster example with `extra` added as a policy file.
fn cluster_with(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let status = Command::new("cp").arg("-r").arg(example("cluster")).arg(dir.path().join("p")).status().expect("cp");
    assert!(status.success());
    std::fs::write(dir.path().join("p/policy/extra.kdl"), extra).expect("write");
    dir
}

const WRONG: &str = "test \"spot-job-is-refused\" {\n    job team=\"vision\" tier=\"P2\" gpus=4 pool=\"x86\"\n    expect \"rejected\" reason=\"tier-not-allowed\"\n}\n";

#[test]
fn every_example_passes() {
    for name in ["cluster", "vit-sweep", "migration"] {
        let output = placid(&["test", example(name).to_str().expect("utf-8 path")]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(0), "{name}: {stdout}{}", String::from_utf8_lossy(&output.stderr));
        assert!(stdout.contains("test result: ok."), "{stdout}");
        assert!(!stdout.contains("running 0 tests"), "{name} has no tests");
    }
}

#[test]
fn a_wrong_expectation_fails_with_expected_and_actual() {
    let dir = cluster_with(WRONG);
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("test spot-job-is-refused ... FAILED"), "{stdout}");
    assert!(stdout.contains("test model-parallel-stays-in-one-domain ... ok"), "{stdout}");
    assert!(stdout.contains("placid::E105"), "{stdout}");
    assert!(stdout.contains("expected: rejected (tier-not-allowed)"), "{stdout}");
    assert!(stdout.contains("actual: placed in pool x86"), "{stdout}");
    assert!(stdout.contains("policy/extra.kdl:3:5"), "the failure points at the expectation: {stdout}");
    assert!(stdout.contains("test result: FAILED. 15 passed; 1 failed; 0 filtered out"), "{stdout}");
}

#[test]
fn filter_runs_only_matching_tests() {
    let dir = cluster_with(WRONG);
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--filter", "domain"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("test result: ok. 4 passed; 0 failed; 12 filtered out"), "{stdout}");
}

#[test]
fn json_report_parses_with_the_failure() {
    let dir = cluster_with(WRONG);
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--format", "json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    assert_eq!(report["passed"], 15);
    assert_eq!(report["failed"], 1);
    let failed: Vec<&serde_json::Value> =
        report["tests"].as_array().expect("tests").iter().filter(|test| test["passed"] == false).collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["name"], "spot-job-is-refused");
    assert_eq!(failed[0]["failures"][0]["code"], "placid::E105");
    assert_eq!(failed[0]["failures"][0]["location"]["file"], "policy/extra.kdl");
}

#[test]
fn junit_report_is_well_formed_xml() {
    // Test names are plain (E009), so the escaping of markup is unit-tested in the CLI; here
    // the failure's text, with its backticks and paths, must come out well-formed.
    let dir = cluster_with(WRONG);
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--format", "junit"]);
    assert_eq!(output.status.code(), Some(1));
    let xml = String::from_utf8(output.stdout).expect("UTF-8");
    let elements = well_formed(&xml).unwrap_or_else(|error| panic!("{error}\n{xml}"));
    assert_eq!(elements.iter().filter(|name| *name == "testcase").count(), 16);
    assert_eq!(elements.iter().filter(|name| *name == "failure").count(), 1);
    assert!(xml.contains("<testcase name=\"spot-job-is-refused\" classname=\"ml-training\">"), "{xml}");
}

/// Admission expectations the build's admission policies do not meet: a forbidden job
/// expected admitted, a refusal expected with a message no policy gives, and an allowed job
/// expected refused.
const WRONG_ADMISSION: &str = "test \"research-p1-admitted\" {\n    job team=\"research\" tier=\"P1\" gpus=1 pool=\"x86\"\n    expect \"admitted\"\n}\n\
test \"research-p1-wrong-message\" {\n    job team=\"research\" tier=\"P1\" gpus=1 pool=\"x86\"\n    expect \"refused-by-admission\" message=\"grace period\"\n}\n\
test \"vision-p2-refused\" {\n    job \"sweep\" team=\"vision\" tier=\"P2\" gpus=4 pool=\"x86\"\n    expect \"refused-by-admission\" job=\"sweep\"\n}\n";

#[test]
fn a_wrong_admission_expectation_fails_with_the_policy_message() {
    let dir = cluster_with(WRONG_ADMISSION);
    let project = dir.path().join("p");
    let output = placid(&["test", project.to_str().expect("utf-8 path")]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    for name in ["research-p1-admitted", "research-p1-wrong-message", "vision-p2-refused"] {
        assert!(stdout.contains(&format!("test {name} ... FAILED")), "{stdout}");
    }
    // The example's own admission tests still pass.
    assert!(stdout.contains("test research-is-refused-p1-by-admission ... ok"), "{stdout}");
    assert!(stdout.contains("test vision-p1-is-admitted ... ok"), "{stdout}");
    assert!(stdout.contains("test result: FAILED. 15 passed; 3 failed; 0 filtered out"), "{stdout}");
    assert!(stdout.contains("placid::E105"), "{stdout}");
    assert!(stdout.contains("expected: admitted"), "{stdout}");
    assert!(stdout.contains("actual: refused by admission: \"team research may not use tier P1"), "{stdout}");
    assert!(stdout.contains("expected: refused by admission with a message containing \"grace period\""), "{stdout}");
    assert!(stdout.contains("expected: refused by admission\n") || stdout.contains("expected: refused by admission "), "{stdout}");
    assert!(stdout.contains("actual: admitted"), "{stdout}");
    assert!(stdout.contains("policy/extra.kdl:3:5"), "the failure points at the expectation: {stdout}");
    assert_eq!(stdout.matches("3 error(s), 0 warning(s)").count(), 1, "the failures' count is said once: {stdout}");
    assert_eq!(stdout.matches(" error(s), ").count(), 1, "and only once: {stdout}");

    let json = placid(&["test", project.to_str().expect("utf-8 path"), "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON document");
    assert_eq!((report["passed"].as_u64(), report["failed"].as_u64()), (Some(15), Some(3)));
    let failed: Vec<&serde_json::Value> =
        report["tests"].as_array().expect("tests").iter().filter(|test| test["passed"] == false).collect();
    assert_eq!(failed[0]["name"], "research-p1-admitted");
    assert_eq!(failed[0]["failures"][0]["code"], "placid::E105");
    let message = failed[0]["failures"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("expected admitted, but the job is refused by admission: \"team research may not use tier P1"), "{message}");

    let junit = placid(&["test", project.to_str().expect("utf-8 path"), "--format", "junit"]);
    assert_eq!(junit.status.code(), Some(1));
    let xml = String::from_utf8(junit.stdout).expect("UTF-8");
    let elements = well_formed(&xml).unwrap_or_else(|error| panic!("{error}\n{xml}"));
    assert_eq!(elements.iter().filter(|name| *name == "failure").count(), 3);
    assert!(xml.contains("<testcase name=\"research-p1-wrong-message\" classname=\"ml-training\">"), "{xml}");
    assert!(xml.contains("message containing &quot;grace period&quot;"), "{xml}");
}

/// Below Kubernetes 1.34 no mutation maps a tagged workload: the route's validating policy
/// names the labels to set, and a workload written from the build's own template of the routed
/// tier and class, which carries them on the workload object, is admitted.
const UNMUTATED_ROUTES: &str = "test \"unlabelled-sweep\" {\n    job team=\"speech\" tier=\"P1\" class=\"model-parallel\" gpus=8 pool=\"nvl-b\" tag=\"sweep\"\n    expect \"refused-by-admission\" message=\"set the labels kueue.x-k8s.io/queue-name=p2, kueue.x-k8s.io/priority-class=p2 and placid.dev/class=data-parallel\"\n}\n\
test \"labelled-sweep\" {\n    job team=\"speech\" tier=\"P2\" class=\"data-parallel\" gpus=2 pool=\"mixed\" tag=\"sweep\"\n    expect \"admitted\"\n}\n";

#[test]
fn without_the_mutating_api_a_template_of_the_routed_tier_and_class_is_admitted() {
    let dir = cluster_with(UNMUTATED_ROUTES);
    let project = dir.path().join("p/placid.kdl");
    let text = std::fs::read_to_string(&project).expect("read placid.kdl");
    assert!(text.contains("target \"kubernetes\" version=\"1.34\""), "the example's Kubernetes version moved: {text}");
    std::fs::write(&project, text.replace("target \"kubernetes\" version=\"1.34\"", "target \"kubernetes\" version=\"1.33\""))
        .expect("write");
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--filter", "labelled-sweep"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout.contains("test unlabelled-sweep ... ok") && stdout.contains("test labelled-sweep ... ok"), "{stdout}");
}

#[test]
fn junit_names_the_project_errors_when_no_test_can_run() {
    let dir = cluster_with("test \"broken\" {\n    job team=\"nobody\" tier=\"P1\" gpus=1\n    expect \"admitted\"\n}\n");
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--format", "junit"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let xml = String::from_utf8(output.stdout).expect("UTF-8");
    let elements = well_formed(&xml).unwrap_or_else(|error| panic!("{error}\n{xml}"));
    assert_eq!(elements.iter().filter(|name| *name == "error").count(), 1, "{xml}");
    assert!(xml.contains("type=\"placid::E008\""), "{xml}");
    assert!(xml.contains("policy/extra.kdl:2:") && xml.contains("nobody"), "the error names its place and the name: {xml}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("placid::E008"), "the text form still goes to stderr");
}

#[test]
fn an_admission_expectation_without_a_kubernetes_target_is_a_project_error() {
    let dir = cluster_with("test \"admitted\" {\n    job team=\"vision\" tier=\"P1\" gpus=1\n    expect \"admitted\"\n}\n");
    let project = dir.path().join("p/placid.kdl");
    let text = std::fs::read_to_string(&project).expect("read placid.kdl");
    let start = text.find("target \"kubernetes\"").expect("a kubernetes target");
    let end = start + text[start..].find("\n}\n").expect("its block") + 3;
    std::fs::write(&project, format!("{}{}", &text[..start], &text[end..])).expect("write placid.kdl");
    // The example's own admission tests go too, so that only the new one is reported.
    std::fs::write(dir.path().join("p/policy/tests.kdl"), "").expect("write tests.kdl");
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("placid::E035"), "{stderr}");
    assert!(!String::from_utf8_lossy(&output.stdout).contains("test admitted ... ok"));
    let json = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--format", "json"]);
    assert_eq!(json.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).expect("one JSON document");
    let messages: Vec<&str> = report["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|diagnostic| diagnostic["code"] == "placid::E035")
        .filter_map(|diagnostic| diagnostic["message"].as_str())
        .collect();
    assert_eq!(
        messages,
        ["`expect \"admitted\"` is judged by the Kubernetes target's admission policies, and this project has no Kubernetes target"]
    );
}

#[test]
fn an_impossible_expectation_is_a_check_error() {
    let dir = cluster_with("test \"impossible\" {\n    job team=\"vision\" tier=\"P1\" gpus=64\n    expect \"placed\" pool=\"x86\"\n}\n");
    let output = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path")]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("placid::E104"), "{}", String::from_utf8_lossy(&output.stderr));
}

#[test]
fn a_missing_project_is_a_usage_error() {
    assert_eq!(placid(&["test", "/nonexistent/placid-project"]).status.code(), Some(2));
    assert_eq!(placid(&["test", "--format", "yaml"]).status.code(), Some(2));
}

/// Checks that `xml` is well-formed (one root, tags balanced, attributes quoted, only the
/// predefined entities) and returns the element names in document order.
fn well_formed(xml: &str) -> Result<Vec<String>, String> {
    let body = xml.strip_prefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n").ok_or("no XML declaration")?;
    let mut open: Vec<String> = Vec::new();
    let mut names = Vec::new();
    let mut rest = body;
    let mut roots = 0;
    while let Some(start) = rest.find('<') {
        check_text(&rest[..start])?;
        let end = rest[start..].find('>').ok_or("unclosed tag")? + start;
        let tag = &rest[start + 1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            if open.pop().as_deref() != Some(name) {
                return Err(format!("mismatched </{name}>"));
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name = tag.split_whitespace().next().ok_or("empty tag")?.to_owned();
        let mut attributes = &tag[name.len()..];
        while !attributes.trim().is_empty() {
            let equals = attributes.find("=\"").ok_or("attribute without a quoted value")?;
            let close = attributes[equals + 2..].find('"').ok_or("unterminated attribute")? + equals + 2;
            check_text(&attributes[equals + 2..close])?;
            attributes = &attributes[close + 1..];
        }
        if open.is_empty() {
            roots += 1;
        }
        names.push(name.clone());
        if !self_closing {
            open.push(name);
        }
    }
    check_text(rest)?;
    if roots != 1 || !open.is_empty() {
        return Err(format!("{roots} roots, unclosed {open:?}"));
    }
    Ok(names)
}

fn check_text(text: &str) -> Result<(), String> {
    if text.contains('<') {
        return Err("markup in text".to_owned());
    }
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        let end = rest[amp..].find(';').ok_or("bare &")? + amp;
        if !["amp", "lt", "gt", "quot", "apos"].contains(&&rest[amp + 1..end]) {
            return Err(format!("unknown entity &{};", &rest[amp + 1..end]));
        }
        rest = &rest[end + 1..];
    }
    Ok(())
}

#[test]
fn coverage_reports_what_the_tests_exercise() {
    let cluster = example("cluster");
    let text = placid(&["test", cluster.to_str().expect("utf-8 path"), "--coverage"]);
    assert_eq!(text.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&text.stdout);
    assert!(stdout.contains("\ncoverage: tiers 3/3, teams 3/3, pools 4/6, classes 2/3, routes 1/2, plan stages 2/6\n"), "{stdout}");
    assert!(stdout.contains("  routes not covered: sweep\n"), "{stdout}");
    // Without the flag, no coverage.
    let plain = placid(&["test", cluster.to_str().expect("utf-8 path")]);
    assert!(!String::from_utf8_lossy(&plain.stdout).contains("coverage"));

    // A routed test job covers its route, and the tier and class it is routed to.
    let dir = cluster_with(
        "test \"sla\" {\n    job team=\"vision\" tier=\"P2\" gpus=8 pool=\"nvl-a\" tag=\"prod-sla\"\n    expect \"placed\" pool=\"nvl-a\"\n}\n",
    );
    let json = placid(&["test", dir.path().join("p").to_str().expect("utf-8 path"), "--coverage", "--format", "json", "--filter", "sla"]);
    assert_eq!(json.status.code(), Some(0), "{}", String::from_utf8_lossy(&json.stderr));
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON on stdout");
    let coverage = &report["coverage"];
    assert_eq!(coverage["routes"]["covered"], serde_json::json!(["prod-sla"]));
    assert_eq!(coverage["tiers"]["covered"], serde_json::json!(["P0"]));
    assert_eq!(coverage["pools"]["covered"], serde_json::json!(["nvl-a"]));
    assert_eq!(coverage["plan_stages"]["covered"], serde_json::json!([]));
    assert_eq!(coverage["plan_stages"]["not_covered"].as_array().map(Vec::len), Some(6));

    let junit = placid(&["test", cluster.to_str().expect("utf-8 path"), "--coverage", "--format", "junit"]);
    assert!(String::from_utf8_lossy(&junit.stderr).contains("coverage: tiers 3/3"));
    assert!(String::from_utf8_lossy(&junit.stdout).starts_with("<?xml"));
}
