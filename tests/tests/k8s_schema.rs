//! Every Kubernetes object of every example validates against the real schemas in
//! `../shared/schemas/` with unknown fields rejected: CRD schemas (Kueue, NFD, Argo CD,
//! prometheus-operator) are closed with `additionalProperties: false` here, since the API
//! server would silently prune a misspelt field; built-in kinds use the strict Kubernetes 1.34
//! JSON schemas. Metadata, which the CRD schemas leave open, is checked by hand (DNS-1123
//! names, label syntax), and the two config files inside ConfigMaps (KubeSchedulerConfiguration
//! and the Argo CD plugin) are read back through their typed structs, which deny unknown fields.

mod k8s_support;

use std::collections::BTreeMap;
use std::path::Path;

use jsonschema::{Draft, Registry, Validator};
use k8s_support::{Emitted, emitted, kubernetes_examples};
use placid_lang::name::{LabelKey, is_label_value};
use placid_targets::k8s::argo::ConfigManagementPlugin;
use placid_targets::k8s::scheduler::KubeSchedulerConfiguration;
use placid_tests::shared_dir;
use serde_json::{Value, json};

/// CRD schemas by (apiVersion, kind), deprecated versions left out.
fn crd_schemas(schemas: &Path) -> BTreeMap<(String, String), Value> {
    let mut index = BTreeMap::new();
    let mut stack = vec![schemas.join("crds")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("cannot read {}: {error}", dir.display())).filter_map(Result::ok)
        {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|extension| extension != "yaml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
            for document in serde_yaml::Deserializer::from_str(&text) {
                let crd: Value = serde::Deserialize::deserialize(document).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
                if crd["kind"] != "CustomResourceDefinition" {
                    continue;
                }
                let group = crd["spec"]["group"].as_str().unwrap_or_default();
                let kind = crd["spec"]["names"]["kind"].as_str().unwrap_or_default();
                for version in crd["spec"]["versions"].as_array().into_iter().flatten() {
                    if version["deprecated"] == true {
                        continue;
                    }
                    let name = version["name"].as_str().unwrap_or_default();
                    let mut schema = version["schema"]["openAPIV3Schema"].clone();
                    close(&mut schema);
                    // Metadata is checked by hand below; the CRD leaves it open on purpose.
                    schema["properties"]["metadata"] = json!({"type": "object"});
                    index.insert((format!("{group}/{name}"), kind.to_owned()), schema);
                }
            }
        }
    }
    index
}

/// Makes an OpenAPI v3 structural schema strict JSON Schema: objects with `properties` reject
/// unknown fields (unless they preserve unknown fields), int-or-string and nullable become
/// JSON Schema types.
fn close(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else { return };
    let preserves = object.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if object.contains_key("properties") && !object.contains_key("additionalProperties") && !preserves {
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
    if object.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) && !object.contains_key("anyOf") {
        object.insert("anyOf".into(), json!([{"type": "integer"}, {"type": "string"}]));
    }
    if object.remove("nullable") == Some(Value::Bool(true))
        && let Some(Value::String(kind)) = object.get("type").cloned()
    {
        object.insert("type".into(), json!([kind, "null"]));
    }
    for key in ["properties", "patternProperties"] {
        if let Some(Value::Object(children)) = object.get_mut(key) {
            children.values_mut().for_each(close);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(child) = object.get_mut(key) {
            close(child);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(children)) = object.get_mut(key) {
            children.iter_mut().for_each(close);
        }
    }
}

/// The file of a built-in kind in `k8s/v1.34.0-local-strict/` (`priorityclass-scheduling-v1.json`).
fn builtin_file(api_version: &str, kind: &str) -> String {
    let kind = kind.to_ascii_lowercase();
    match api_version.split_once('/') {
        Some((group, version)) => format!("{kind}-{}-{version}.json", group.split('.').next().unwrap_or(group)),
        None => format!("{kind}-{api_version}.json"),
    }
}

fn errors(validator: &Validator, object: &Value) -> Vec<String> {
    validator.iter_errors(object).map(|error| format!("{} at {}", error, error.instance_path())).collect()
}

fn check_metadata(item: &Emitted, failures: &mut Vec<String>) {
    let dns_label = |text: &str| {
        !text.is_empty()
            && text.len() <= 63
            && text.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
            && !text.starts_with('-')
            && !text.ends_with('-')
    };
    if !dns_label(item.name()) {
        failures.push(format!("{}: name `{}` is not a DNS-1123 label", item.path, item.name()));
    }
    if let Some(namespace) = item.namespace()
        && !dns_label(namespace)
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
    let crds = crd_schemas(&schemas);
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
                jsonschema::options().with_draft(Draft::Draft7).build(schema)
            } else {
                let file = builtin_dir.join(builtin_file(&api_version, &kind));
                if !file.is_file() {
                    failures.push(format!("{example}/{}: no schema for {api_version} {kind}", item.path));
                    continue;
                }
                jsonschema::options().with_registry(&registry).build(&read_json(&file))
            };
            let validator = validator.unwrap_or_else(|error| panic!("schema of {api_version} {kind} does not compile: {error}"));
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
    let crds = crd_schemas(&shared.join("schemas"));
    let schema = crds
        .get(&("kueue.x-k8s.io/v1beta2".to_owned(), "ClusterQueue".to_owned()))
        .unwrap_or_else(|| panic!("no ClusterQueue v1beta2 schema"));
    let validator = jsonschema::options().with_draft(Draft::Draft7).build(schema).unwrap_or_else(|error| panic!("{error}"));
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
