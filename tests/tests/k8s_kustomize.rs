//! The generated tree renders with the real `kubectl kustomize` (offline), both the synced
//! kustomization and the Argo CD bootstrap, and renders exactly the objects that
//! `placid build --target kubernetes --stdout` prints for the Argo CD plugin.

mod k8s_support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use k8s_support::{kubernetes_examples, write_tree};
use placid_tests::build_clean;
use serde_json::Value;

/// `kubectl`, or `None` (after saying so) when it is not installed outside CI.
fn kubectl(test: &str) -> Option<&'static str> {
    let found = Command::new("kubectl").args(["version", "--client"]).output().is_ok_and(|output| output.status.success());
    if found {
        return Some("kubectl");
    }
    if std::env::var("CI").is_ok_and(|value| value == "true") {
        panic!("{test}: kubectl is not installed; CI must install it");
    }
    eprintln!("{test}: NOT RUN: kubectl is not installed");
    None
}

/// (kind, namespace, name) of every document of a YAML stream.
fn identities(stream: &str) -> BTreeSet<(String, String, String)> {
    serde_yaml::Deserializer::from_str(stream)
        .map(|document| {
            let object: Value = serde::Deserialize::deserialize(document).unwrap_or_else(|error| panic!("bad YAML document: {error}"));
            let field = |value: &Value| value.as_str().unwrap_or_default().to_owned();
            (field(&object["kind"]), field(&object["metadata"]["namespace"]), field(&object["metadata"]["name"]))
        })
        .collect()
}

fn kustomize(kubectl: &str, dir: &Path) -> String {
    let output = Command::new(kubectl).arg("kustomize").arg(dir).output().unwrap_or_else(|error| panic!("cannot run kubectl: {error}"));
    assert!(output.status.success(), "kubectl kustomize {} failed:\n{}", dir.display(), String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap_or_else(|_| panic!("kubectl printed non-UTF-8"))
}

#[test]
fn kubectl_kustomize_renders_the_tree_and_the_bootstrap() {
    let Some(kubectl) = kubectl("kubectl kustomize") else { return };
    for example in kubernetes_examples() {
        let root = tempfile::tempdir().unwrap_or_else(|error| panic!("temp dir: {error}"));
        write_tree(&example, root.path());
        let rendered = identities(&kustomize(kubectl, &root.path().join("kubernetes")));
        let model = build_clean(&example).model;
        let stream = placid_targets::k8s::stream(&model).unwrap_or_else(|_| panic!("{example}: no stream"));
        assert_eq!(rendered, identities(&stream), "{example}: kustomize renders other objects than --stdout prints");
        assert!(rendered.iter().any(|(kind, _, _)| kind == "ClusterQueue"), "{example}: nothing rendered");
        let bootstrap = root.path().join("kubernetes").join("bootstrap");
        if bootstrap.is_dir() {
            let kinds: BTreeSet<String> = identities(&kustomize(kubectl, &bootstrap)).into_iter().map(|(kind, _, _)| kind).collect();
            assert!(kinds.contains("Application") && kinds.contains("AppProject"), "{example}: bootstrap lacks Argo CD objects: {kinds:?}");
        }
    }
}
