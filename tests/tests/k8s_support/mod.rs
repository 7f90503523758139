//! Shared support of the `k8s_*` tests: the Kubernetes objects an example emits, parsed back
//! from the generated YAML files, and the tree written to a temp dir.

#![allow(dead_code)] // Each test file uses a different part of this module.

use std::path::Path;

use placid_tests::build_clean;
use serde_json::Value;

/// One emitted object: the file it came from and its content as JSON.
pub struct Emitted {
    /// Path of the artifact (`kubernetes/kueue/clusterqueue.vision.yaml`).
    pub path: String,
    /// The object.
    pub object: Value,
}

impl Emitted {
    /// `kind`.
    pub fn kind(&self) -> &str {
        self.object["kind"].as_str().unwrap_or("")
    }
    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or("")
    }
    /// `metadata.namespace`.
    pub fn namespace(&self) -> Option<&str> {
        self.object["metadata"]["namespace"].as_str()
    }
}

/// Every Kubernetes object of example `name` (synced and bootstrap), in path order.
pub fn emitted(name: &str) -> Vec<Emitted> {
    build_clean(name)
        .artifacts
        .into_iter()
        .filter(|artifact| artifact.path.starts_with("kubernetes/") && !artifact.path.ends_with("kustomization.yaml"))
        .map(|artifact| {
            let text = String::from_utf8(artifact.bytes).unwrap_or_else(|_| panic!("{} is not UTF-8", artifact.path));
            let object: Value = serde_yaml::from_str(&text).unwrap_or_else(|error| panic!("{} is not YAML: {error}", artifact.path));
            Emitted { path: artifact.path, object }
        })
        .collect()
}

/// The examples that enable the Kubernetes target.
pub fn kubernetes_examples() -> Vec<String> {
    placid_tests::examples().into_iter().filter(|name| build_clean(name).model.project.kubernetes.is_some()).collect()
}

/// Writes every artifact of example `name` under `root`.
pub fn write_tree(name: &str, root: &Path) {
    placid_driver::build::write_atomically(root, &build_clean(name).artifacts)
        .unwrap_or_else(|error| panic!("cannot write {}: {error}", root.display()));
}
