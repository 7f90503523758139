//! Issue 18's bars for the Prometheus side, on every example's build: promtool checks the
//! generated rule file and runs its unit tests, and every series a generated rule reads is
//! produced by the exporter (`placid-probe --serve`), the static series or an earlier rule.

use std::collections::BTreeSet;
use std::process::Command;

use placid_targets::ops::{series, usage};
use placid_tests::prometheus::{metric_names, tool};
use placid_tests::{build_clean, examples};

const RULES: &str = "kubernetes/prometheus/rules.yaml";
const TESTS: &str = "kubernetes/prometheus/rules.test.yaml";

/// `(example, rules.yaml, rules.test.yaml)` of every example with a Kubernetes target.
fn rule_files() -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for name in examples() {
        let build = build_clean(&name);
        let text = |path: &str| {
            build
                .artifacts
                .iter()
                .find(|artifact| artifact.path == path)
                .map(|artifact| String::from_utf8_lossy(&artifact.bytes).into_owned())
        };
        if let (Some(rules), Some(tests)) = (text(RULES), text(TESTS)) {
            found.push((name, rules, tests));
        }
    }
    assert!(found.len() >= 3, "the examples with a Kubernetes target have rules: {found:?}");
    found
}

#[test]
fn promtool_checks_and_tests_every_examples_rules() {
    let Some(promtool) = tool("promtool_checks_and_tests_every_examples_rules", "promtool") else { return };
    for (name, rules, tests) in rule_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
        std::fs::write(dir.path().join("rules.yaml"), &rules).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(dir.path().join("rules.test.yaml"), &tests).unwrap_or_else(|error| panic!("{error}"));
        for arguments in [["check", "rules", "rules.yaml"], ["test", "rules", "rules.test.yaml"]] {
            let output = Command::new(&promtool)
                .args(arguments)
                .current_dir(dir.path())
                .output()
                .unwrap_or_else(|error| panic!("promtool: {error}"));
            assert!(
                output.status.success(),
                "example {name}: promtool {} failed:\n{}{}",
                arguments.join(" "),
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
        assert!(tests.matches("eval_time").count() >= 10, "example {name} has too few promtool checks:\n{tests}");
    }
}

/// The series of one rule file that no exporter, static series or rule produces. Queries the
/// policy writes (`placid:metric:*`) may read other exporters' series, but none in placid's
/// namespace that placid does not produce.
fn unproduced(rules: &str) -> Vec<String> {
    let file: serde_yaml::Value = serde_yaml::from_str(rules).unwrap_or_else(|error| panic!("rules.yaml: {error}"));
    let rules: Vec<&serde_yaml::Value> =
        file["groups"].as_sequence().into_iter().flatten().flat_map(|group| group["rules"].as_sequence().into_iter().flatten()).collect();
    let mut known: BTreeSet<String> =
        placid_probe::exporter::METRICS.iter().chain(series::ALL).chain(usage::EXTERNAL).map(|name| (*name).to_owned()).collect();
    let mut missing = Vec::new();
    for rule in rules {
        let expr = rule["expr"].as_str().unwrap_or_default();
        let from_policy = rule["record"].as_str().is_some_and(|name| name.starts_with("placid:metric:"));
        for name in metric_names(expr) {
            let ours = name.starts_with("placid_") || name.starts_with("placid:");
            if !known.contains(&name) && (ours || !from_policy) {
                missing.push(name);
            }
        }
        if let Some(record) = rule["record"].as_str() {
            known.insert(record.to_owned());
        }
    }
    missing
}

#[test]
fn every_series_a_generated_rule_reads_is_produced() {
    for (name, rules, _) in rule_files() {
        assert_eq!(unproduced(&rules), Vec::<String>::new(), "example {name} reads series nothing produces");
    }
    // The check can fail: a rule reading a series nobody serves, and one read before the
    // rule that records it.
    let bad = "groups:\n- name: g\n  rules:\n  - record: a:b\n    expr: placid_gpu_temperature_celsius + c:d\n  - record: c:d\n    expr: placid_gpu_info\n";
    assert_eq!(unproduced(bad), ["c:d", "placid_gpu_temperature_celsius"]);
}
