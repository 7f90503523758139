//! Every Kubernetes object of every example validates against the real schemas in
//! `../shared/schemas/` with unknown fields rejected: CRD schemas (Kueue, NFD, Argo CD,
//! prometheus-operator) are closed with `additionalProperties: false` here, since the API
//! server would silently prune a misspelt field; built-in kinds use the strict Kubernetes 1.34
//! JSON schemas. Metadata, which the CRD schemas leave open, is checked by hand (DNS-1123
//! names, label syntax), and the config files inside ConfigMaps (KubeSchedulerConfiguration,
//! Kueue's Configuration fragment and the Argo CD plugin) are read back through their typed structs, which deny unknown fields.

mod k8s_support;

use std::path::Path;

use jsonschema::Registry;
use k8s_support::{Emitted, emitted, kubernetes_examples};
use placid_lang::name::{LabelKey, is_dns_label, is_label_value};
use placid_targets::k8s::argo::ConfigManagementPlugin;
use placid_targets::k8s::kueue_config::KueueConfiguration;
use placid_targets::k8s::scheduler::KubeSchedulerConfiguration;
use placid_tests::crd::{self, errors};
use placid_tests::shared_dir;
use serde_json::{Value, json};

/// The file of a built-in kind in `k8s/v1.34.0-local-strict/` (`priorityclass-scheduling-v1.json`).
fn builtin_file(api_version: &str, kind: &str) -> String {
    let kind = kind.to_ascii_lowercase();
    match api_version.split_once('/') {
        Some((group, version)) => format!("{kind}-{}-{version}.json", group.split('.').next().unwrap_or(group)),
        None => format!("{kind}-{api_version}.json"),
    }
}

fn check_metadata(item: &Emitted, failures: &mut Vec<String>) {
    if !is_dns_label(item.name()) {
        failures.push(format!("{}: name `{}` is not a DNS-1123 label", item.path, item.name()));
    }
    if let Some(namespace) = item.namespace()
        && !is_dns_label(namespace)
    {
        failures.push(format!("{}: namespace `{namespace}` is not a DNS-1123 label", item.path));
    }
    for (key, value) in item.object["metadata"]["labels"].as_object().into_iter().flatten() {
        if LabelKey::new(key).is_err() || !value.as_str().is_some_and(is_label_value) {
            failures.push(format!("{}: label {key}={value} is invalid", item.path));
        }
    }
}

fn check_config_files(item: &Emitted, failures: &mut Vec<String>) {
    if item.kind() != "ConfigMap" {
        return;
    }
    for (key, value) in item.object["data"].as_object().into_iter().flatten() {
        let text = value.as_str().unwrap_or_default();
        let parsed = match key.as_str() {
            "scheduler-config.yaml" => serde_yaml::from_str::<KubeSchedulerConfiguration>(text).err(),
            "plugin.yaml" => serde_yaml::from_str::<ConfigManagementPlugin>(text).err(),
            "controller_manager_config.yaml" => serde_yaml::from_str::<KueueConfiguration>(text).err(),
            // The Grafana dashboard (targets/src/ops/dashboards.rs); its panels are checked by
            // tests/tests/prometheus_rules.rs.
            dashboard if dashboard.ends_with(".json") => serde_json::from_str::<Value>(text).err().map(serde::de::Error::custom),
            other => Some(serde::de::Error::custom(format!("unexpected ConfigMap key {other}"))),
        };
        if let Some(error) = parsed {
            failures.push(format!("{}: {key}: {error}", item.path));
        }
    }
}

#[test]
fn every_emitted_object_validates_against_its_schema_with_unknown_fields_rejected() {
    let Some(shared) = shared_dir("k8s schema validation") else { return };
    let schemas = shared.join("schemas");
    let crds = crd::schemas(&schemas.join("crds"));
    let builtin_dir = schemas.join("k8s").join("v1.34.0-local-strict");
    let read_json = |path: &Path| -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display())))
            .unwrap_or_else(|error| panic!("{} is not JSON: {error}", path.display()))
    };
    let definitions = read_json(&builtin_dir.join("_definitions.json"));
    let registry = Registry::new()
        .add("https://kubernetes.io/api/_definitions.json", &definitions)
        .and_then(|builder| builder.prepare())
        .unwrap_or_else(|error| panic!("cannot register _definitions.json: {error}"));

    let mut failures = Vec::new();
    let mut validated = 0;
    for example in kubernetes_examples() {
        for item in emitted(&example) {
            let api_version = item.object["apiVersion"].as_str().unwrap_or_default().to_owned();
            let kind = item.kind().to_owned();
            let validator = if let Some(schema) = crds.get(&(api_version.clone(), kind.clone())) {
                crd::validator(schema)
            } else {
                let file = builtin_dir.join(builtin_file(&api_version, &kind));
                if !file.is_file() {
                    failures.push(format!("{example}/{}: no schema for {api_version} {kind}", item.path));
                    continue;
                }
                jsonschema::options()
                    .with_registry(&registry)
                    .build(&read_json(&file))
                    .unwrap_or_else(|error| panic!("schema of {api_version} {kind} does not compile: {error}"))
            };
            for error in errors(&validator, &item.object) {
                failures.push(format!("{example}/{}: {error}", item.path));
            }
            check_metadata(&item, &mut failures);
            check_config_files(&item, &mut failures);
            validated += 1;
        }
    }
    assert!(failures.is_empty(), "schema violations:\n{}", failures.join("\n"));
    assert!(validated > 0, "no Kubernetes object was validated");
}

#[test]
fn the_closed_schemas_reject_a_misspelt_field_and_a_v1beta1_field() {
    let Some(shared) = shared_dir("k8s schema strictness") else { return };
    let crds = crd::schemas(&shared.join("schemas/crds"));
    let schema = crds
        .get(&("kueue.x-k8s.io/v1beta2".to_owned(), "ClusterQueue".to_owned()))
        .unwrap_or_else(|| panic!("no ClusterQueue v1beta2 schema"));
    let validator = crd::validator(schema);
    let good =
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "a"}, "spec": {"cohortName": "c"}});
    assert!(errors(&validator, &good).is_empty(), "{:?}", errors(&validator, &good));
    let old_field =
        json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "a"}, "spec": {"cohort": "c"}});
    assert!(!errors(&validator, &old_field).is_empty(), "the v1beta1 `cohort` field was accepted");
    let any_reclaim = json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "a"},
        "spec": {"preemption": {"reclaimWithinCohort": "Sometimes"}}});
    assert!(!errors(&validator, &any_reclaim).is_empty(), "a bad enum value was accepted");
}
