//! Issue 18's bars for the Prometheus side, on every example's build and on generated projects
//! (another label prefix, tier names that map; see k8s_support): promtool checks the
//! generated rule file and the dashboard's queries and runs the rules' unit tests, and every
//! series a generated rule or panel reads is produced by the exporter (`placid-probe
//! --serve`), the static series or an earlier rule, or is one of the few named series of
//! kube-state-metrics and Kueue.

mod k8s_support;

use std::collections::BTreeSet;
use std::process::Command;

use k8s_support::generated_projects;
use placid_targets::ops::{dashboards, series, usage};
use placid_tests::prometheus::{metric_names, tool};
use placid_tests::{build_clean, examples};

const RULES: &str = "prometheus/rules.yaml";
const TESTS: &str = "prometheus/rules.test.yaml";
const DASHBOARD: &str = "prometheus/dashboards.rules.yaml";

/// The rule file, its tests and the dashboard's queries as rules, of one example.
struct Files {
    name: String,
    rules: String,
    tests: String,
    dashboard: String,
}

/// The files of every example with a Kubernetes target.
fn rule_files() -> Vec<Files> {
    let mut found = Vec::new();
    // The examples, and the generated projects: another label prefix, tier names that map.
    let generated = generated_projects().into_iter().map(|project| (project.name, project.artifacts));
    for (name, artifacts) in examples().into_iter().map(|name| (name.clone(), build_clean(&name).artifacts)).chain(generated) {
        let text = |path: &str| {
            artifacts.iter().find(|artifact| artifact.path == path).map(|artifact| String::from_utf8_lossy(&artifact.bytes).into_owned())
        };
        if let (Some(rules), Some(tests), Some(dashboard)) = (text(RULES), text(TESTS), text(DASHBOARD)) {
            found.push(Files { name, rules, tests, dashboard });
        }
    }
    assert!(
        found.len() >= 3,
        "the examples with a Kubernetes target have rules: {:?}",
        found.iter().map(|files| &files.name).collect::<Vec<_>>()
    );
    found
}

#[test]
fn promtool_checks_and_tests_every_examples_rules() {
    let Some(promtool) = tool("promtool_checks_and_tests_every_examples_rules", "promtool") else { return };
    for Files { name, rules, tests, dashboard } in rule_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
        std::fs::write(dir.path().join("rules.yaml"), &rules).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(dir.path().join("rules.test.yaml"), &tests).unwrap_or_else(|error| panic!("{error}"));
        std::fs::write(dir.path().join("dashboards.rules.yaml"), &dashboard).unwrap_or_else(|error| panic!("{error}"));
        for arguments in [&["check", "rules", "rules.yaml", "dashboards.rules.yaml"][..], &["test", "rules", "rules.test.yaml"]] {
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

/// The series of rule files (in order) that no exporter, static series or earlier rule
/// produces. Alert metrics the policy writes (`placid:metric:*`) may read other exporters'
/// series, but none in placid's namespace that placid does not produce; a migration's gates
/// (`placid_dashboard:policy_*`) are the services' own metrics and are not held to it.
fn unproduced(files: &[&str]) -> Vec<String> {
    let mut known: BTreeSet<String> = placid_probe::exporter::METRICS
        .iter()
        .chain(series::ALL)
        .chain(usage::EXTERNAL)
        .chain(dashboards::EXTERNAL)
        .map(|name| (*name).to_owned())
        .collect();
    let mut missing = Vec::new();
    for rules in files {
        missing.extend(unproduced_in(rules, &mut known));
    }
    missing
}

fn unproduced_in(rules: &str, known: &mut BTreeSet<String>) -> Vec<String> {
    let file: serde_yaml::Value = serde_yaml::from_str(rules).unwrap_or_else(|error| panic!("rules.yaml: {error}"));
    let rules: Vec<&serde_yaml::Value> =
        file["groups"].as_sequence().into_iter().flatten().flat_map(|group| group["rules"].as_sequence().into_iter().flatten()).collect();
    let mut missing = Vec::new();
    for rule in rules {
        let expr = rule["expr"].as_str().unwrap_or_default();
        let record = rule["record"].as_str().unwrap_or_default();
        if record.starts_with("placid_dashboard:policy_") {
            continue;
        }
        let from_policy = record.starts_with("placid:metric:");
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
    for files in rule_files() {
        assert_eq!(
            unproduced(&[&files.rules, &files.dashboard]),
            Vec::<String>::new(),
            "example {} reads series nothing produces",
            files.name
        );
        assert!(files.dashboard.contains("placid:nvlink_domain_utilization:ratio"), "{}", files.dashboard);
    }
    // The check can fail: a rule reading a series nobody serves, and one read before the
    // rule that records it.
    let bad = "groups:\n- name: g\n  rules:\n  - record: a:b\n    expr: placid_gpu_temperature_celsius + c:d\n  - record: c:d\n    expr: placid_gpu_info\n";
    assert_eq!(unproduced(&[bad]), ["c:d", "placid_gpu_temperature_celsius"]);
}

#[test]
fn the_dashboard_ships_in_a_sidecar_configmap_and_its_panels_are_the_checked_queries() {
    let build = build_clean("migration");
    let map = build.artifacts.iter().find(|artifact| artifact.path.ends_with("-dashboard.yaml")).unwrap_or_else(|| {
        panic!("no dashboard ConfigMap in {:?}", build.artifacts.iter().map(|artifact| &artifact.path).collect::<Vec<_>>())
    });
    let map: serde_yaml::Value = serde_yaml::from_slice(&map.bytes).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(map["kind"].as_str(), Some("ConfigMap"));
    assert_eq!(map["metadata"]["labels"]["grafana_dashboard"].as_str(), Some("1"), "{map:?}");
    let json = map["data"].as_mapping().and_then(|data| data.values().next()).and_then(|value| value.as_str()).unwrap_or_default();
    let dashboard: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|error| panic!("the dashboard is not JSON: {error}"));
    let panels = dashboard["panels"].as_array().cloned().unwrap_or_default();
    let titles: Vec<&str> = panels.iter().filter_map(|panel| panel["title"].as_str()).collect();
    for wanted in [
        "NVLink utilisation per domain",
        "Queue wait per tier",
        "Admitted GPUs per tier",
        "per team",
        "per cost center",
        "Preemptions",
        "Migration",
    ] {
        assert!(titles.iter().any(|title| title.contains(wanted)), "no panel `{wanted}` in {titles:?}");
    }
    let checked = build
        .artifacts
        .iter()
        .find(|artifact| artifact.path == DASHBOARD)
        .map(|artifact| String::from_utf8_lossy(&artifact.bytes).into_owned())
        .unwrap_or_default();
    let checked: serde_yaml::Value = serde_yaml::from_str(&checked).unwrap_or_else(|error| panic!("{error}"));
    let checked: BTreeSet<&str> =
        checked["groups"][0]["rules"].as_sequence().into_iter().flatten().filter_map(|rule| rule["expr"].as_str()).collect();
    for panel in &panels {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap_or_default();
            assert!(checked.contains(expr), "panel query not checked by promtool: {expr}");
        }
    }
}

/// Every alert of every example links a section of a page the same build wrote.
#[test]
fn every_alert_links_a_runbook_section_the_build_wrote() {
    let mut alerts = 0;
    for name in examples() {
        let build = build_clean(&name);
        let Some(rules) = build.artifacts.iter().find(|artifact| artifact.path == RULES) else { continue };
        let rules: serde_yaml::Value = serde_yaml::from_slice(&rules.bytes).unwrap_or_else(|error| panic!("{name}: {error}"));
        let groups = rules["groups"].as_sequence().cloned().unwrap_or_default();
        for rule in groups.iter().flat_map(|group| group["rules"].as_sequence().cloned().unwrap_or_default()) {
            let Some(alert) = rule["alert"].as_str() else { continue };
            alerts += 1;
            let url = rule["annotations"]["runbook_url"].as_str().unwrap_or_else(|| panic!("{name}: {alert} has no runbook_url"));
            let (page, section) = url.split_once('#').unwrap_or_else(|| panic!("{name}: {alert}'s {url} names no section"));
            let written = build
                .artifacts
                .iter()
                .find(|artifact| artifact.path == page)
                .unwrap_or_else(|| panic!("{name}: {alert} links {page}, which the build did not write"));
            let text = String::from_utf8_lossy(&written.bytes);
            assert!(text.contains(&format!("<a id=\"{section}\"></a>")), "{name}: {page} has no section {section} for {alert}");
            let placid_name = rule["labels"]["placid_alert"].as_str().unwrap_or_default();
            assert_eq!(section, format!("alert-{placid_name}"), "{name}: {alert} links another alert's section");
        }
    }
    assert!(alerts >= 2, "the examples have alerts to check ({alerts})");
}
